#!/usr/bin/env bash
# The Debian packages as an operator gets them: `make deb` (lintian clean),
# installed with apt-get on this machine, the installed daemon run as its
# user with the installed configuration and scraped, then removed and
# purged: no file of theirs left, the system user kept (as Debian's
# prometheus packages do). Also: the changelog, the web-config example
# against the keys the exporter reads, the units' alias, the -dev package
# with a collector built out of the tree, and the RPM's units.
# Usage: tests/integration/deb.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

# What needs no package built: the sources as shipped.
WEBCONF_EXAMPLE="$ROOT/config/web-config.yml"
# Every key webconf.c reads (the string literals its readers get, and the
# five headers it allows) must be documented in the example, even if
# commented out.
keys=$(grep -oE '(conf_get_[a-z0-9]+|conf_child|str_list|pem_pair)\((t|h|r|u|root), "[a-z0-9_]+"(, "[a-z0-9_]+")?' \
	"$ROOT/exporter/web/webconf.c" | grep -oE '"[a-z0-9_]+"' | tr -d '"' | sort -u)
keys="$keys $(sed -n '/header_rules\[/,/^};/p' "$ROOT/exporter/web/webconf.c" | grep -oE '^ *\{"[A-Za-z-]+"' | tr -d ' {"')"
missing=""
for k in $keys; do grep -qE "^ *#? *$k:" "$WEBCONF_EXAMPLE" || missing="$missing $k"; done
check "the web-config example documents every key webconf.c reads ($(echo $keys | wc -w))${missing:+, not:$missing}" \
	sh -c "[ -z '$missing' ] && [ $(echo $keys | wc -w) -ge 20 ]"
if command -v dpkg-parsechangelog >/dev/null; then
	CHANGES=$(dpkg-parsechangelog -l "$ROOT/packaging/debian/changelog" -S Changes 2>&1)
	items=$(grep -c '^  \*' <<<"$CHANGES")
	absent=""
	for w in KVM Xen DCI4 Processing TLS socket alias binstat-exporter-dev; do
		grep -qi -- "$w" <<<"$CHANGES" || absent="$absent $w"
	done
	check "debian/changelog parses, and its entry lists the release's changes ($items items)${absent:+; it never names:$absent}" \
		test "$items" -ge 8 -a -z "$absent"
else
	skip "debian/changelog" "dpkg-parsechangelog is not installed (package dpkg-dev)"
fi

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
for p in binstat-exporter binstat-exporter-dev binstat-exporter-xen libdci4-0 libdci4-dev libpvstats0 libpvstats-dev; do
	check "package $p built" sh -c "ls '$D'/${p}_*.deb >/dev/null"
done
check "libdci4-0 holds only the library (no header, no .so link)" sh -c \
	"dpkg -c '$D'/libdci4-0_*.deb | grep -q 'libdci4.so.0\$' && ! dpkg -c '$D'/libdci4-0_*.deb | grep -q '\\.h\$\\|libdci4.so\$'"
check "binstat-exporter-dev holds collector.h, binstat-collector.pc and the example's source; the daemon's package no header" sh -c \
	"dpkg -c '$D'/binstat-exporter-dev_*.deb >'$WORK/dev.txt' && grep -q ' ./usr/include/binstat/collector.h\$' '$WORK/dev.txt' &&
	 grep -q ' ./usr/share/pkgconfig/binstat-collector.pc\$' '$WORK/dev.txt' &&
	 grep -q ' ./usr/share/doc/binstat-exporter-dev/examples/example.c\$' '$WORK/dev.txt' &&
	 ! dpkg -c '$D'/binstat-exporter_*.deb | grep -q '/usr/include'"
check "the web-config example is in the daemon's package's examples, uncompressed, once" sh -c \
	"dpkg -c '$D'/binstat-exporter_*.deb | grep web-config >'$WORK/wc.txt'; cat '$WORK/wc.txt';
	 [ \$(wc -l <'$WORK/wc.txt') = 1 ] && grep -q ' ./usr/share/doc/binstat-exporter/examples/web-config.yml\$' '$WORK/wc.txt'"
check "the daemon is built with bindnow and PIE" sh -c "dpkg --fsys-tarfile '$D'/binstat-exporter_*.deb |
	tar -xO ./usr/bin/binstat_exporter >'$WORK/daemon' && readelf -d '$WORK/daemon' | grep -q 'BIND_NOW\\|FLAGS.*NOW' && readelf -h '$WORK/daemon' | grep -q 'DYN'"

DEBS=("$D"/binstat-exporter_*.deb "$D"/binstat-exporter-dev_*.deb "$D"/libdci4-0_*.deb)
[ -f /usr/lib/x86_64-linux-gnu/libxenstore.so.4 ] && DEBS+=("$D"/binstat-exporter-xen_*.deb)
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${DEBS[@]}" >"$WORK/apt.log" 2>&1
rc=$?
check "apt-get install ./*.deb (exit $rc)" test $rc = 0
check "the system user and its group exist" sh -c "getent passwd binstat_exporter && getent group binstat_exporter" 
dpkg -L binstat-exporter binstat-exporter-dev libdci4-0 >"$WORK/files.txt" 2>/dev/null
check "manual pages, dashboards, rules and units installed" sh -c "test -f /usr/share/man/man1/binstat_exporter.1.gz &&
	test -f /usr/share/binstat_exporter/dashboards/kvm.json && test -f /usr/share/binstat_exporter/monitoring/alerts.yml &&
	test -f /lib/systemd/system/binstat_exporter.service && test -f /lib/systemd/system/binstat_exporter.socket &&
	test -f /etc/default/binstat-exporter"

# The alias: postinst's deb-systemd-helper enables the service, which makes
# the Alias= link as systemctl enable does; the socket is not enabled, so
# its alias appears only when the operator enables it (systemctl offline).
S=/etc/systemd/system
check "the service enabled on install, under both names" sh -c \
	"[ \"\$(readlink $S/binstat-exporter.service)\" = /lib/systemd/system/binstat_exporter.service ] &&
	 [ -L $S/multi-user.target.wants/binstat_exporter.service ] &&
	 [ \"\$(systemctl --root=/ is-enabled binstat-exporter.service)\" = alias ] &&
	 [ \"\$(systemctl --root=/ is-enabled binstat_exporter.service)\" = enabled ]"
check "the socket not enabled on install, nor its alias" sh -c "[ ! -e $S/binstat-exporter.socket ] && [ ! -e $S/sockets.target.wants/binstat_exporter.socket ]"
systemctl --root=/ enable binstat_exporter.socket >"$WORK/enable.log" 2>&1
check "systemctl enable binstat_exporter.socket makes its alias binstat-exporter.socket" sh -c \
	"[ \"\$(readlink $S/binstat-exporter.socket)\" = /lib/systemd/system/binstat_exporter.socket ] &&
	 [ \"\$(systemctl --root=/ is-enabled binstat-exporter.socket)\" = alias ]"

# stop_daemon: SIGTERM to the last daemon started, which must be the
# daemon itself and be gone within 5 s.
stop_daemon() {
	local pid=${PIDS[-1]} comm
	comm=$(cat "/proc/$pid/comm" 2>/dev/null)
	kill "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	wait "$pid" 2>/dev/null
	check "the daemon started last was the daemon itself ($comm) and stopped on SIGTERM" \
		sh -c "[ '$comm' = binstat_exporte ] && ! kill -0 $pid 2>/dev/null"
}

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
stop_daemon

# The web-config example as shipped, with a certificate and key made by
# openssl beside a copy of it, run by the installed daemon as its user.
chmod 0711 "$WORK"
WC="$WORK/webconf"
mkdir -m 0755 "$WC"
cp /usr/share/doc/binstat-exporter/examples/web-config.yml "$WC/"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$WC/exporter.key" \
	-out "$WC/exporter.crt" -days 2 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 >"$WORK/openssl.log" 2>&1
chmod 0600 "$WC/exporter.key"
# A command line, not a function: `as_user DAEMON &` would background a
# subshell, and its pid, killed, would leave the daemon running.
AS_USER=(setpriv --reuid=binstat_exporter --regid=binstat_exporter --clear-groups)
PORT=$(free_port)
"${AS_USER[@]}" timeout 10 /usr/bin/binstat_exporter --config.file=/etc/binstat_exporter/binstat_exporter.yml \
	--web.config.file="$WC/web-config.yml" --web.listen-address="127.0.0.1:$PORT" >"$WORK/wc-root.log" 2>&1
rc=$?
check "a key only root may read stops the service's user at start, saying so (rc $rc)" sh -c \
	"[ $rc = 1 ] && grep -q 'failed to read key_file.*Permission denied' '$WORK/wc-root.log'"
chown root:binstat_exporter "$WC/exporter.key"
chmod 0640 "$WC/exporter.key"
"${AS_USER[@]}" /usr/bin/binstat_exporter --config.file=/etc/binstat_exporter/binstat_exporter.yml \
	--web.config.file="$WC/web-config.yml" --web.listen-address="127.0.0.1:$PORT" >"$WORK/wc.log" 2>&1 &
PIDS+=($!)
wait_port "$PORT"
curl -s -D "$WORK/wc.head" -o /dev/null --cacert "$WC/exporter.crt" "https://127.0.0.1:$PORT/metrics"
check "the example, its key given to the group binstat_exporter, is served: HTTPS, basic auth on (401), its headers" sh -c \
	"grep -q 'tls=on' '$WORK/wc.log' && grep -q '^HTTP/1.1 401' '$WORK/wc.head' &&
	 grep -qi '^X-Content-Type-Options: nosniff' '$WORK/wc.head' && grep -qi '^X-Frame-Options: deny' '$WORK/wc.head'"
stop_daemon

# A collector built out of the tree, from binstat-exporter-dev alone: the
# example's installed source, the installed header found by pkg-config, the
# plugin loaded by the installed daemon from a folder of its own.
OOT="$WORK/oot"
mkdir -p -m 0755 "$OOT/plugins"
cp /usr/share/doc/binstat-exporter-dev/examples/example.c "$OOT/"
CF=$(pkg-config --cflags binstat-collector 2>&1)
check "pkg-config finds binstat-collector; its plugindir is the installed daemon's ($(pkg-config --variable=plugindir binstat-collector))" sh -c \
	"pkg-config --exists binstat-collector && [ -f \"\$(pkg-config --variable=plugindir binstat-collector)/kvm.so\" ] &&
	 [ \"\$(pkg-config --variable=abi_version binstat-collector)\" -ge 1 ]"
(cd "$OOT" && cc -std=gnu11 -Wall -Wextra -Werror $CF -fPIC -fvisibility=hidden -shared -o plugins/example.so example.c &&
	cc -std=gnu11 $CF -M example.c) >"$OOT/build.log" 2>&1
rc=$?
check "the example collector builds out of the tree with pkg-config --cflags binstat-collector (rc $rc), from /usr/include/binstat/collector.h" sh -c \
	"[ $rc = 0 ] && grep -q '/usr/include/binstat/collector.h' '$OOT/build.log' && ! grep -q '$ROOT' '$OOT/build.log'"
printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n' "$OOT/plugins" >"$OOT/cfg.yml"
chmod 0644 "$OOT/cfg.yml"
PORT=$(free_port)
"${AS_USER[@]}" /usr/bin/binstat_exporter --config.file="$OOT/cfg.yml" --web.listen-address="127.0.0.1:$PORT" >"$OOT/run.log" 2>&1 &
PIDS+=($!)
wait_for_metric "$PORT" '^binstat_scrape_collector_success' >/dev/null
curl -s "http://127.0.0.1:$PORT/metrics" >"$OOT/metrics.txt"
check "the installed daemon loads it and serves its families" sh -c \
	"grep -qx 'binstat_scrape_collector_success{collector=\"example\"} 1' '$OOT/metrics.txt' &&
	 grep -q '^example_events_total' '$OOT/metrics.txt'"
stop_daemon

# The daemons this suite started (its mark in their environment, not any
# binstat_exporter process: another run may share the machine) are gone.
marked
left=""
for p in "${MARKED[@]}"; do
	c=""
	{ read -r c <"/proc/$p/comm"; } 2>/dev/null
	[ "$c" = binstat_exporte ] && left="$left $p"
done
check "no daemon this suite started runs before the purge${left:+: pids$left}" test -z "$left"
PKGS=$(dpkg-query -W -f='${Package} ${Status}\n' binstat-exporter binstat-exporter-dev binstat-exporter-xen libdci4-0 2>/dev/null |
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
check "the units' links are gone with the purge, aliases and the socket the operator enabled included" sh -c \
	"! ls -d $S/binstat?exporter.* $S/*.wants/binstat_exporter.* 2>/dev/null"
check "the system user is kept, as Debian's prometheus packages keep theirs" getent passwd binstat_exporter

# The RPM packages from the spec, built by Debian's rpmbuild.
if command -v rpmbuild >/dev/null; then
	make -s -C "$ROOT" rpm >"$WORK/rpm.log" 2>&1
	rc=$?
	check "make rpm builds the seven RPM packages, every installed file packaged (exit $rc)" \
		test $rc = 0 -a "$(ls "$ROOT"/build-rpm/RPMS/*/*.rpm 2>/dev/null | wc -l)" = 7
	R=$(ls "$ROOT"/build-rpm/RPMS/*/binstat_exporter-0*.rpm 2>/dev/null)
	mkdir -p "$WORK/rpm"
	(cd "$WORK/rpm" && rpm2cpio "$R" | cpio -id --quiet)
	U="$WORK/rpm/usr/lib/systemd/system"
	check "the RPM's unit reads /etc/sysconfig/binstat-exporter" \
		grep -q '^EnvironmentFile=-/etc/sysconfig/binstat-exporter' "$U/binstat_exporter.service"
	check "the RPM's units and defaults file name /etc/sysconfig only, and the examples where the RPM has them" sh -c \
		"! grep -n '/etc/default\\|/usr/share/doc' '$U'/binstat_exporter.* '$WORK/rpm/etc/sysconfig/binstat-exporter' &&
		 grep -q /etc/sysconfig/binstat-exporter '$U/binstat_exporter.socket' &&
		 grep -q /usr/share/binstat_exporter/examples/web-config.yml '$WORK/rpm/etc/sysconfig/binstat-exporter' &&
		 test -f '$WORK/rpm/usr/share/binstat_exporter/examples/web-config.yml'"
	check "the RPM's units have the aliases" sh -c "grep -qx 'Alias=binstat-exporter.service' '$U/binstat_exporter.service' &&
		grep -qx 'Alias=binstat-exporter.socket' '$U/binstat_exporter.socket'"
	check "binstat_exporter-devel holds the header, binstat-collector.pc and example.c, the daemon's package no header" sh -c \
		"rpm -qlp '$ROOT'/build-rpm/RPMS/noarch/binstat_exporter-devel-*.rpm >'$WORK/rpmdev.txt' &&
		 grep -qx /usr/include/binstat/collector.h '$WORK/rpmdev.txt' && grep -qx /usr/share/pkgconfig/binstat-collector.pc '$WORK/rpmdev.txt' &&
		 grep -q '/usr/share/doc/.*/example.c$' '$WORK/rpmdev.txt' &&
		 ! rpm -qlp '$R' | grep -q /usr/include"
else
	skip "RPM packages" "rpmbuild is not installed (package rpm)"
fi

summary
