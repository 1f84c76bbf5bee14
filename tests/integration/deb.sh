#!/usr/bin/env bash
# The Debian packages as an operator gets them: `make deb` (lintian clean),
# installed with apt-get on this machine, the installed daemon run as its
# user with the installed configuration and scraped, then removed and
# purged: no file of theirs left, the system user kept (as Debian's
# prometheus packages do).
# Usage: tests/integration/deb.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

for tool in dpkg-buildpackage dh lintian apt-get; do
	if ! command -v $tool >/dev/null; then
		skip "Debian packages" "$tool is not installed (tools/deps.sh test)"
		summary
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	skip "Debian packages" "installing them needs root"
	summary
	exit 0
fi
if dpkg-query -W -f='${Status}' binstat-exporter 2>/dev/null | grep -q "ok installed"; then
	skip "Debian packages" "binstat-exporter is already installed here; the test will not touch it"
	summary
	exit 0
fi

before=$(git -C "$ROOT" status --porcelain --untracked-files=all)
make -s -C "$ROOT" deb >"$WORK/deb.log" 2>&1
rc=$?
check "make deb builds the packages, and lintian finds nothing (exit $rc)" test $rc = 0
[ $rc = 0 ] || { tail -30 "$WORK/deb.log"; summary; exit 1; }
D="$ROOT/build-deb"
check "the work tree is as it was (git status)" test "$before" = "$(git -C "$ROOT" status --porcelain --untracked-files=all)"
for p in binstat-exporter binstat-exporter-xen libdci4-0 libdci4-dev libpvstats0 libpvstats-dev; do
	check "package $p built" sh -c "ls '$D'/${p}_*.deb >/dev/null"
done
check "libdci4-0 holds only the library (no header, no .so link)" sh -c \
	"dpkg -c '$D'/libdci4-0_*.deb | grep -q 'libdci4.so.0\$' && ! dpkg -c '$D'/libdci4-0_*.deb | grep -q '\\.h\$\\|libdci4.so\$'"
check "the daemon is built with bindnow and PIE" sh -c "dpkg --fsys-tarfile '$D'/binstat-exporter_*.deb |
	tar -xO ./usr/bin/binstat_exporter >'$WORK/daemon' && readelf -d '$WORK/daemon' | grep -q 'BIND_NOW\\|FLAGS.*NOW' && readelf -h '$WORK/daemon' | grep -q 'DYN'"

DEBS=("$D"/binstat-exporter_*.deb "$D"/libdci4-0_*.deb)
[ -f /usr/lib/x86_64-linux-gnu/libxenstore.so.4 ] && DEBS+=("$D"/binstat-exporter-xen_*.deb)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${DEBS[@]}" >"$WORK/apt.log" 2>&1
rc=$?
check "apt-get install ./*.deb (exit $rc)" test $rc = 0
check "the system user and its group exist" sh -c "getent passwd binstat_exporter && getent group binstat_exporter" 
dpkg -L binstat-exporter libdci4-0 >"$WORK/files.txt" 2>/dev/null
check "manual pages, dashboards, rules and units installed" sh -c "test -f /usr/share/man/man1/binstat_exporter.1.gz &&
	test -f /usr/share/binstat_exporter/dashboards/kvm.json && test -f /usr/share/binstat_exporter/monitoring/alerts.yml &&
	test -f /lib/systemd/system/binstat_exporter.service && test -f /lib/systemd/system/binstat_exporter.socket &&
	test -f /etc/default/binstat-exporter"

# No systemd runs here: the installed binary, as the unit would run it.
PORT=$(free_port)
setpriv --reuid=binstat_exporter --regid=binstat_exporter --clear-groups \
	--inh-caps=+sys_ptrace --ambient-caps=+sys_ptrace \
	/usr/bin/binstat_exporter --config.file=/etc/binstat_exporter/binstat_exporter.yml \
	--web.listen-address="127.0.0.1:$PORT" >"$WORK/installed.log" 2>&1 &
PIDS+=($!)
wait_for_metric "$PORT" '^binstat_scrape_collector_success' >/dev/null
curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/installed.txt"
check "the installed daemon, as its user, with the installed config, serves kvm and dci" sh -c \
	"grep -qx 'binstat_scrape_collector_success{collector=\"kvm\"} 1' '$WORK/installed.txt' &&
	 grep -qx 'binstat_scrape_collector_success{collector=\"dci\"} 1' '$WORK/installed.txt'"
check "it loads its plugins from /usr/lib/binstat_exporter/plugins" grep -q '^kvm_collector_vms' "$WORK/installed.txt"
kill "${PIDS[-1]}"
wait "${PIDS[-1]}" 2>/dev/null

PKGS=$(dpkg-query -W -f='${Package} ${Status}\n' binstat-exporter binstat-exporter-xen libdci4-0 2>/dev/null |
	awk '/ok installed/ {print $1}')
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $PKGS >"$WORK/purge.log" 2>&1
rc=$?
check "apt-get purge (exit $rc)" test $rc = 0
left=""
while read -r f; do
	{ [ -e "$f" ] || [ -L "$f" ]; } && [ ! -d "$f" ] && left="$left $f"
done <"$WORK/files.txt"
check "no file of the packages left after purge${left:+:$left}" test -z "$left"
check "the configuration folder is gone with the purge" test ! -e /etc/binstat_exporter
check "the system user is kept, as Debian's prometheus packages keep theirs" getent passwd binstat_exporter

# The RPM packages from the spec, built by Debian's rpmbuild.
if command -v rpmbuild >/dev/null; then
	make -s -C "$ROOT" rpm >"$WORK/rpm.log" 2>&1
	rc=$?
	check "make rpm builds the six RPM packages, every installed file packaged (exit $rc)" \
		test $rc = 0 -a "$(ls "$ROOT"/build-rpm/RPMS/*/*.rpm 2>/dev/null | wc -l)" = 6
	R=$(ls "$ROOT"/build-rpm/RPMS/*/binstat_exporter-0*.rpm 2>/dev/null)
	check "the RPM's unit reads /etc/sysconfig/binstat-exporter" sh -c "cd '$WORK' && rpm2cpio '$R' | cpio -id --quiet &&
		grep -q '^EnvironmentFile=-/etc/sysconfig/binstat-exporter' '$WORK/usr/lib/systemd/system/binstat_exporter.service'"
else
	skip "RPM packages" "rpmbuild is not installed (package rpm)"
fi

summary
