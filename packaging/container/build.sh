#!/usr/bin/env bash
# The OCI image (`make image`): the project's own .deb and the Xen plugin's
# unpacked on a root of only their dependencies, which mmdebstrap extracts
# from Debian's mirror (no shell, no package manager, nothing pulled from a
# registry); the root is cached in build-image/, keyed by that list. What
# the exporter does not run is pruned; podman imports the rest.
# Usage: packaging/container/build.sh DEB_DIR IMAGE   (root: podman's store)
set -eu
DEBS=$(cd "$1" && pwd)
IMAGE=$2
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE="$TOP/build-image"
SUITE=bookworm
USER_ID=10187 # the image's user, binstat_exporter: its uid and gid

for tool in podman mmdebstrap dpkg-deb dpkg-buildflags cc setcap; do
	command -v $tool >/dev/null || { echo "make image: $tool is missing (tools/deps.sh test)" >&2; exit 1; }
done
MAIN=$(ls "$DEBS"/binstat-exporter_*.deb)
XEN=$(ls "$DEBS"/binstat-exporter-xen_*.deb 2>/dev/null || true)

# The root: what the packages depend on (the first of each alternative),
# extracted, not installed: no maintainer script runs, so neither dpkg nor
# a shell is needed in it. adduser (the postinst's) is not wanted: the
# image's user is written below.
deps() { dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/ //g'; }
PKGS=$({ deps "$MAIN"; [ -z "$XEN" ] || deps "$XEN"; } |
	grep -v -x -e '' -e adduser -e binstat-exporter | sort -u | paste -sd,)
KEY=$(printf '%s extract+debs %s\n' "$SUITE" "$PKGS" | sha256sum | cut -c1-12)
BASE="$CACHE/base-$KEY.tar"
mkdir -p "$CACHE"
if [ ! -s "$BASE" ]; then
	rm -rf "$CACHE"/base-*.tar "$CACHE"/base-*.tar.tmp.*
	echo "mmdebstrap: $SUITE, $PKGS"
	# Built aside and renamed: a run beside this one never takes half a root.
	# (--format: the name's ending does not say tar. The .debs are kept in
	# it for the package database written below.)
	mmdebstrap --quiet --format=tar --variant=extract --skip=essential/unlink,cleanup/apt/cache \
		--include="$PKGS" "$SUITE" "$BASE.tmp.$$"
	mv "$BASE.tmp.$$" "$BASE"
fi

STAGE="$CACHE/root"
rm -rf "$STAGE"
mkdir -p "$STAGE"
tar -xf "$BASE" -C "$STAGE"
dpkg-deb -x "$MAIN" "$STAGE"
[ -z "$XEN" ] || dpkg-deb -x "$XEN" "$STAGE"

# dpkg's database names every package in the image, each as installed, so
# that a scanner (trivy, grype, syft) finds them and their versions; dpkg
# itself is not there to read it.
for deb in "$STAGE"/var/cache/apt/archives/*.deb "$MAIN" $XEN; do
	dpkg-deb -f "$deb" | sed '1a Status: install ok installed'
	echo
done >"$STAGE/var/lib/dpkg/status"

# Pruned: what only a host with systemd, a person or another program reads
# (the units and their defaults file, manual pages, documentation but each
# package's copyright, dashboards and rules, the DCI4 tools, the VMMs' shim
# library), the locales, and glibc's iconv modules (libxml2 reads the UTF-8
# status files of libvirt; the KVM collector refuses any other encoding).
cd "$STAGE"
find usr/share/doc -type f ! -name copyright -delete
find usr/share -mindepth 1 -maxdepth 1 ! -name doc -exec rm -rf {} +
rm -rf etc/default lib/systemd usr/bin/dci4stat usr/bin/dci4-netdev \
	usr/lib/binstat_exporter/libbinstat_kvm_shim.so usr/lib/x86_64-linux-gnu/gconv \
	var/cache/* var/log/* var/lib/apt etc/apt etc/dpkg etc/fstab dev/*
find . -xtype l -delete # links left dangling by the pruning

# The health check a runtime execs (no curl or shell here), built with
# Debian's hardening flags as the packages are.
# shellcheck disable=SC2046
cc $(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get LDFLAGS) -s \
	-o usr/bin/binstat_healthcheck "$TOP/packaging/container/healthcheck.c"

# CAP_SYS_PTRACE as a file capability, permitted only: Docker and
# Kubernetes raise no added capability into a non-root user's sets (no
# ambient ones), so the image's user gets it from the file at execve when
# the runtime's bounding set holds it (--cap-add=SYS_PTRACE), and the KVM
# collector makes it effective. Not "+ep": with the effective bit, execve
# fails with EPERM in a container given no capability (DCI4 alone).
# No-new-privileges voids it (docs/operating.md, "Containers").
setcap cap_sys_ptrace+p usr/bin/binstat_exporter

# The user, and the directories the runtime mounts over.
mkdir -p etc tmp run/dci4 proc sys dev
chmod 1777 tmp
ln -sfn /run var/run # as on Debian: libxenstore looks for /var/run/xenstored/socket
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nbinstat_exporter:x:%s:%s::/nonexistent:/usr/sbin/nologin\n' \
	$USER_ID $USER_ID >etc/passwd
printf 'root:x:0:\nbinstat_exporter:x:%s:\n' $USER_ID >etc/group
chmod 0644 etc/passwd etc/group

EPOCH=$(dpkg-parsechangelog -l "$TOP/packaging/debian/changelog" -S Timestamp)
# --xattrs: the file capability (podman import keeps it).
tar --sort=name --mtime="@$EPOCH" --numeric-owner --xattrs --xattrs-include=security.capability \
	-cf "$CACHE/image.tar" .
cd "$TOP"

# The package's version, whatever the tag says (a test tags its own).
VERSION=$(dpkg-deb -f "$MAIN" Version)
OLD=$(podman image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
podman import --quiet \
	--change "USER=$USER_ID:$USER_ID" \
	--change 'ENV=PATH=/usr/bin' \
	--change 'ENTRYPOINT=["/usr/bin/binstat_exporter"]' \
	--change 'CMD=["--config.file=/etc/binstat_exporter/binstat_exporter.yml","--log.format=json"]' \
	--change 'EXPOSE=10187/tcp' \
	--change 'STOPSIGNAL=SIGTERM' \
	--change 'WORKDIR=/' \
	--change "LABEL=org.opencontainers.image.title=binstat_exporter" \
	--change "LABEL=org.opencontainers.image.version=$VERSION" \
	--change "LABEL=org.opencontainers.image.source=https://binstat.invalid/" \
	"$CACHE/image.tar" "$IMAGE" >/dev/null
NEW=$(podman image inspect -f '{{.Id}}' "$IMAGE")
# The image the tag named before: removed, or, while a container still
# runs it, said (podman keeps it, untagged, until that container goes).
if [ -n "$OLD" ] && [ "$OLD" != "$NEW" ] && ! podman rmi "$OLD" >/dev/null 2>&1; then
	users=$(podman ps -a --filter "ancestor=$OLD" --format '{{.Names}}' | paste -sd' ')
	echo "make image: the previous $IMAGE (${OLD:0:12}) is still used by: ${users:-a container}; remove it with podman rmi ${OLD:0:12} once they are gone" >&2
fi
rm -f "$CACHE/image.tar"

# What takes the space, for the docs.
size=$(podman image inspect -f '{{.Size}}' "$IMAGE")
echo "image $IMAGE: $((size / 1000000)) MB; the largest parts:"
du -sk "$STAGE"/usr/lib/x86_64-linux-gnu/* "$STAGE"/usr/lib/binstat_exporter "$STAGE"/usr/bin "$STAGE"/usr/share 2>/dev/null |
	sort -rn | head -8 | awk -v s="$STAGE/" '{ sub(s, "", $2); printf "  %6d KiB  %s\n", $1, $2 }'
