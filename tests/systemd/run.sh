#!/usr/bin/env bash
# The shipped units under a real systemd as PID 1: a Debian root built by
# mmdebstrap (cached in build-systemd/, keyed by its package list), booted
# by systemd-nspawn with /dev/kvm bound in and a network of its own, the
# .deb installed in it with apt. There the sandbox is enforced, which
# tests/integration/systemd.sh can only check offline.
# Usage: tests/systemd/run.sh BUILD_DIR (as root; `make check-systemd`)
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/tests/integration/lib.sh"

SUITE=bookworm
CACHE="$ROOT/build-systemd"
URL=http://127.0.0.1:10187
UNIT=binstat_exporter
DROPIN=/etc/systemd/system/$UNIT.service.d
VM=sysdvm # the name of the other user's VM
NVMS=40   # enough VMs that a scrape's body outlasts the socket buffers

for tool in systemd-nspawn mmdebstrap nsenter dpkg-buildpackage; do
	if ! command -v $tool >/dev/null; then
		skip "systemd as PID 1" "$tool is not installed (tools/deps.sh test)"
		summary
		exit 0
	fi
done
if [ "$(id -u)" != 0 ]; then
	skip "systemd as PID 1" "booting a container needs root"
	summary
	exit 0
fi

# ------------------------------------------------------------ the container
NSPAWN="" CPID="" STAGE="$WORK/stage"
# ct CMD...: runs CMD in the container (its namespaces, root, its PATH).
ct() {
	timeout 60 nsenter -t "$CPID" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		SYSTEMD_COLORS=0 SYSTEMD_PAGER= "$@"
}
journal() { ct journalctl --no-pager -o short-precise "$@"; }
stop_container() {
	[ -n "$NSPAWN" ] || return 0
	if [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
		journal -b >"$WORK/journal-all.txt" 2>&1 # kept with KEEP_WORK=1
		if [ "$FAILED" != 0 ]; then
			echo "---- journal of $UNIT (last 150 lines)"
			journal -u "$UNIT" -n 150 2>&1 | sed 's/^/    /'
		fi
		ct systemctl poweroff --no-block >/dev/null 2>&1
	fi
	for _ in $(seq 150); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$NSPAWN" 2>/dev/null; then
		echo "the container did not power off within 30 s: killing it"
		[ -n "$CPID" ] && kill -9 "$CPID" 2>/dev/null # its PID 1: the whole PID namespace goes
		for _ in $(seq 50); do kill -0 "$NSPAWN" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$NSPAWN" 2>/dev/null
	fi
	wait "$NSPAWN" 2>/dev/null
	NSPAWN=""
}
trap 'stop_container; cleanup' EXIT
trap 'exit 130' INT TERM

# The packages, built as deb.sh builds them.
make -s -C "$ROOT" deb >"$WORK/deb.log" 2>&1
rc=$?
check "make deb (exit $rc)" test $rc = 0
[ $rc = 0 ] || { tail -30 "$WORK/deb.log"; summary; exit 1; }
mkdir -p "$STAGE"
cp "$ROOT"/build-deb/binstat-exporter_*.deb "$ROOT"/build-deb/libdci4-0_*.deb "$STAGE/"
[ -x "$B/tests/kvm_fixture" ] && cp "$B/tests/kvm_fixture" "$STAGE/"

# The root: systemd and what the packages depend on, from Debian's mirror,
# so that apt-get installs the .deb inside without a network. Rebuilt when
# that list changes; the old one is removed.
deps() { # the packages a .deb depends on, the first of each alternative
	dpkg-deb -f "$1" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/ //g'
}
PKGS=$({
	printf '%s\n' systemd systemd-sysv dbus curl
	for d in "$STAGE"/*.deb; do deps "$d"; done
} | grep -v -e '^$' -e '^libdci4-0$' | sort -u | paste -sd,)
KEY=$(printf '%s minbase %s\n' "$SUITE" "$PKGS" | sha256sum | cut -c1-12)
ROOTFS="$CACHE/root-$KEY"
if [ ! -d "$ROOTFS" ]; then
	mkdir -p "$CACHE"
	find "$CACHE" -maxdepth 1 -name 'root-*' ! -name 'root-*.tmp.*' -exec rm -rf {} +
	t0=$(date +%s)
	# Built aside and renamed: a run beside this one never boots half a root.
	mmdebstrap --variant=minbase --include="$PKGS" "$SUITE" "$ROOTFS.tmp.$$" >"$WORK/mmdebstrap.log" 2>&1
	rc=$?
	check "mmdebstrap builds the root ($PKGS; $(($(date +%s) - t0)) s, exit $rc)" test $rc = 0
	[ $rc = 0 ] || { tail -30 "$WORK/mmdebstrap.log"; rm -rf "$ROOTFS.tmp.$$"; summary; exit 1; }
	mv -T "$ROOTFS.tmp.$$" "$ROOTFS" 2>/dev/null || rm -rf "$ROOTFS.tmp.$$"
else
	pass "the cached root $ROOTFS has the packages ($PKGS)"
fi

# Booted read-only beneath a tmpfs (--volatile=overlay): every run starts
# from the same root and leaves it as it was. --private-network: port 10187
# and the loopback are the container's own. nspawn's own system call
# filter, beneath the unit's, lacks pidfd_getfd (systemd 252): without it
# every pidfd_getfd in the container fails with EPERM, which no host has.
KVM_BIND=()
HAVE_KVM=""
if [ -c /dev/kvm ] && [ -x "$STAGE/kvm_fixture" ]; then
	KVM_BIND=(--bind=/dev/kvm)
	HAVE_KVM=1
fi
systemd-nspawn -D "$ROOTFS" --volatile=overlay --boot --register=no --keep-unit --private-network \
	--system-call-filter=pidfd_getfd --machine="binstat-sysd-$$" "${KVM_BIND[@]}" --bind-ro="$STAGE:/srv/binstat" --console=pipe \
	>"$WORK/console.log" 2>&1 </dev/null &
NSPAWN=$!
for _ in $(seq 300); do
	CPID=$(pgrep -P "$NSPAWN" | head -1)
	[ -n "$CPID" ] && [ "$(cat "/proc/$CPID/comm" 2>/dev/null)" = systemd ] && break
	CPID=""
	kill -0 "$NSPAWN" 2>/dev/null || break
	sleep 0.1
done
# Polled: until systemd's bus is up, systemctl only fails.
state=""
for _ in $(seq 300); do
	[ -n "$CPID" ] || break
	state=$(ct systemctl is-system-running 2>/dev/null)
	case $state in running | degraded | maintenance | stopping) break ;; esac
	sleep 0.3
done
check "systemd boots as PID 1 in the container: $state" test "$state" = running
if [ "$state" != running ]; then
	tail -30 "$WORK/console.log"
	summary
	exit 1
fi

# scrape FILE [CURL_ARGS...]: a scrape from inside into FILE; prints the HTTP code.
scrape() {
	local f=$1
	shift
	ct curl -s -m 30 -o /run/scrape.txt -w '%{http_code}' "$@" "$URL/metrics"
	ct cat /run/scrape.txt >"$f" 2>/dev/null
}
# until_ok SECONDS CMD...: CMD until it succeeds, at most SECONDS.
until_ok() {
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
prop() { ct systemctl show -p "$1" --value "${2:-$UNIT}"; }
serves() { [ "$(ct curl -s -m 5 -o /dev/null -w '%{http_code}' "$URL/-/ready")" = 200 ]; }
# journal_json FILE [ARGS]: the unit's journal entries as JSON lines.
journal_json() { ct journalctl --no-pager -u "$UNIT" -o json "${@:2}" >"$1"; }

# ------------------------------------- 1. install the .deb, start, scrape
# The other user's VMM first (root's, as a transient service of the
# container's systemd): the exporter's first scan then finds it (KVM's
# uevents do not reach a network namespace of the container's own).
if [ -n "$HAVE_KVM" ]; then
	ct systemd-run --unit=vmm --quiet /srv/binstat/kvm_fixture $NVMS 2 5 /run/vmm.ready -name "guest=$VM" \
		>"$WORK/vmm.log" 2>&1
	until_ok 30 ct test -s /run/vmm.ready
	check "a VMM of root runs $NVMS real KVM VMs in the container" ct test -s /run/vmm.ready
fi
ct sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -q /srv/binstat/*.deb' >"$WORK/apt.log" 2>&1
rc=$?
check "apt-get install the .deb in the container, dependencies resolved (exit $rc)" test $rc = 0
[ $rc = 0 ] || tail -20 "$WORK/apt.log"
check "the unit installed is the shipped one" cmp "$ROOT/packaging/systemd/$UNIT.service" \
	<(ct cat /lib/systemd/system/$UNIT.service)
ct systemctl start $UNIT >"$WORK/start.log" 2>&1
rc=$?
check "systemctl start $UNIT (exit $rc)" sh -c "[ $rc = 0 ] || { cat '$WORK/start.log'; false; }"
check "systemctl is-active: $(ct systemctl is-active $UNIT)" ct systemctl is-active --quiet $UNIT
until_ok 20 serves
code=$(scrape "$WORK/first.txt")
check "a scrape from inside: HTTP $code with the exporter's own series" sh -c "[ '$code' = 200 ] &&
	grep -q '^binstat_exporter_build_info{' '$WORK/first.txt' &&
	grep -qx 'binstat_scrape_collector_success{collector=\"kvm\"} 1' '$WORK/first.txt'"
MPID=$(prop MainPID)
capeff() { ct sed -n 's/^CapEff:\t//p' "/proc/$1/status"; }
who=$(ct stat -c %U "/proc/$MPID")/$(capeff "$MPID")
check "the service runs as binstat_exporter with CAP_SYS_PTRACE alone: $who" \
	test "$who" = binstat_exporter/0000000000080000

# ---------------------- 2. the other user's VMM found with that capability
if [ -n "$HAVE_KVM" ]; then
	VPID=$(prop MainPID vmm)
	has_vm() {
		scrape "$WORK/vm.txt" >/dev/null
		[ "$(grep -c "^kvm_vm_info{vm=\"$VM" "$WORK/vm.txt")" -ge "$NVMS" ] 2>/dev/null
	}
	until_ok 30 has_vm
	check "root's VMM (uid $(ct stat -c %u /proc/"$VPID")) and its $NVMS VMs are in the scrape" sh -c \
		"[ \$(grep -c '^kvm_vm_info{vm=\"$VM.*pid=\"$VPID\"' '$WORK/vm.txt') = $NVMS ] &&
		 grep -qx 'kvm_collector_vms $NVMS' '$WORK/vm.txt'"
else
	skip "a VMM of another user found with the unit's capability" "no /dev/kvm here (or no tests/kvm_fixture)"
fi

# ------------------------ 7. the journal holds the log lines' fields
journal_json "$WORK/journal.json"
check "the journal: \"first scan done\" with COLLECTOR=kvm and VMS, STATS_FDS, DURATION_MS as fields" \
	$PY - "$WORK/journal.json" "$([ -n "$HAVE_KVM" ] && echo $NVMS || echo 0)" <<'EOF'
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
scans = [e for e in entries if "first scan done" in str(e.get("MESSAGE", ""))]
assert scans, "no 'first scan done' line in the journal"
e = scans[0]
missing = [k for k in ("COLLECTOR", "VMS", "STATS_FDS", "DURATION_MS") if k not in e]
assert not missing, "fields missing: %s in %s" % (missing, {k: v for k, v in e.items() if not k.startswith("_")})
assert e["COLLECTOR"] == "kvm", e["COLLECTOR"]
assert int(e["VMS"]) >= int(sys.argv[2]), e["VMS"]
float(e["DURATION_MS"])
EOF

# -------------------------------------- 3. systemctl reload during a scrape
# A client in the container's network namespace (only that: the script and
# its files are the host's) reads the first 64 KiB through a small window
# and stalls: the exporter's send blocks on full socket buffers,
# mid-response; then, told to, it reads on. The namespace's send buffers
# are capped at 64 KiB (tcp_wmem is per namespace): else the kernel takes
# the whole body at once and the exporter is done with it.
nsenter -t "$CPID" -n sysctl -q -w net.ipv4.tcp_wmem="4096 16384 65536"
sendq() { nsenter -t "$CPID" -n ss -Htn state established '( sport = :10187 )' | awk '{ s += $2 } END { print s + 0 }'; }
stall_scrape() { # stall_scrape NAME: true once the exporter is stuck mid-response
	rm -f "$WORK/$1".*
	nsenter -t "$CPID" -n $PY "$HERE/slow_scrape.py" 127.0.0.1 10187 65536 "$WORK/$1.started" "$WORK/$1.go" \
		"$WORK/$1.txt" >"$WORK/$1.code" 2>"$WORK/$1.err" &
	STALLED=$!
	PIDS+=("$STALLED")
	until_ok 20 test -e "$WORK/$1.started" && until_ok 10 test "$(sendq)" -gt 0
}
finish_scrape() { # finish_scrape NAME: lets it read on; waits for it (30 s at most)
	touch "$WORK/$1.go"
	for _ in $(seq 300); do kill -0 "$STALLED" 2>/dev/null || break; sleep 0.1; done
}
# unit_log PATTERN: the unit's journal has a line matching it.
unit_log() { journal -u $UNIT | grep -q -e "$1"; }
if [ -n "$HAVE_KVM" ]; then
	stall_scrape reload
	q=$(sendq)
	ct systemctl reload $UNIT
	rc=$?
	check "systemctl reload (exit $rc) while the exporter had $q bytes of a scrape not yet sent" \
		test "$rc" = 0 -a "$q" -gt 0
	finish_scrape reload
	code=$(cat "$WORK/reload.code")
	check "the scrape completes: HTTP $code, $(wc -c <"$WORK/reload.txt" 2>/dev/null) bytes ending in # EOF" sh -c \
		"[ '$code' = 200 ] && [ \"\$(tail -1 '$WORK/reload.txt')\" = '# EOF' ] && grep -q '^kvm_collector_vms' '$WORK/reload.txt'"
else
	skip "reload during a scrape" "no /dev/kvm here: without VMs the body is too small to hold the exporter mid-response"
	ct systemctl reload $UNIT
	rc=$?
	check "systemctl reload (exit $rc)" test "$rc" = 0
fi
check "the service stays active, same MainPID" test "$(ct systemctl is-active $UNIT)/$(prop MainPID)" = "active/$MPID"
until_ok 10 unit_log 'configuration reloaded'
check "the journal shows the reload" unit_log 'configuration reloaded'
check "and it serves after it" serves

# ----------------------------- the sandbox enforced: anything refused?
journal -u $UNIT >"$WORK/unit.log"
journal -k >"$WORK/kernel.log" 2>/dev/null
trouble=$(grep -i -E 'seccomp|EPERM|not permitted|denied|EACCES|level=(warn|error)' "$WORK/unit.log")
check "no refusal (seccomp, EPERM, denied) nor warning in the unit's journal so far" test -z "$trouble"
[ -n "$trouble" ] && echo "$trouble" | head -20 | sed 's/^/    /'

# -------------------------------------------------------- 4. the watchdog
# A drop-in with a short WatchdogSec; the main process stopped (SIGSTOP)
# sends no more pings. systemd aborts it (SIGABRT, then SIGKILL) and
# Restart=on-failure starts it again.
ct mkdir -p $DROPIN
printf '[Service]\nWatchdogSec=2s\n' | ct sh -c "cat >$DROPIN/50-test-watchdog.conf"
ct systemctl daemon-reload
ct systemctl restart $UNIT
until_ok 20 serves
old_pid=$(prop MainPID) old_n=$(prop NRestarts)
check "with the drop-in: WatchdogUSec=2s" test "$(prop WatchdogUSec)" = 2s
ct sh -c "kill -STOP $old_pid"
t0=$(date +%s%N)
restarted() { [ "$(prop NRestarts)" -gt "$old_n" ] && [ "$(prop MainPID)" != "$old_pid" ] && [ "$(prop MainPID)" != 0 ] &&
	ct systemctl is-active --quiet $UNIT; }
until_ok 40 restarted
ms=$((($(date +%s%N) - t0) / 1000000))
check "the stopped exporter is restarted by the watchdog within $ms ms (NRestarts $old_n -> $(prop NRestarts), MainPID $old_pid -> $(prop MainPID))" restarted
check "the journal says: watchdog timeout" unit_log 'Watchdog timeout'
until_ok 20 serves
check "and it serves again" serves
ct rm -f $DROPIN/50-test-watchdog.conf
ct systemctl daemon-reload
ct systemctl restart $UNIT
until_ok 20 serves

# ---------------------------------------------- 6. stop within TimeoutStopSec
# With a scrape stuck mid-response (a client that stopped reading), where
# there are VMs to make one: the exporter must not wait for it.
limit=$(prop TimeoutStopUSec)
limit_ms=10000
[[ $limit =~ ^([0-9]+)s$ ]] && limit_ms=$((BASH_REMATCH[1] * 1000))
busy=""
[ -n "$HAVE_KVM" ] && stall_scrape stop && busy=", a scrape stuck mid-response"
cursor=$(ct journalctl -n 0 --show-cursor | sed -n 's/^-- cursor: //p')
t0=$(date +%s%N)
ct systemctl stop $UNIT
ms=$((($(date +%s%N) - t0) / 1000000))
[ -n "$HAVE_KVM" ] && finish_scrape stop
check "systemctl stop$busy: $ms ms, under half of TimeoutStopSec=$limit" test "$ms" -lt $((limit_ms / 2))
check "the service ends inactive with result success: $(prop ActiveState)/$(prop Result)" \
	test "$(prop ActiveState)/$(prop Result)" = inactive/success
stop_log() { journal -u $UNIT --after-cursor="$cursor"; }
no_stop_trouble() { ! stop_log | grep -e 'timed out' -e SIGKILL -e 'Failed with'; }
check "the journal of the stop: no time-out, no SIGKILL" no_stop_trouble

# ------------------------------------ 5. socket activation through the .socket
ct sh -c "cp /etc/default/binstat-exporter /run/default.saved &&
	echo 'ARGS=\"--web.systemd-socket\"' >>/etc/default/binstat-exporter"
ct systemctl start $UNIT.socket
check "the socket listens, the service does not run: $(ct systemctl is-active $UNIT.socket)/$(ct systemctl is-active $UNIT)" \
	test "$(ct systemctl is-active $UNIT.socket)/$(ct systemctl is-active $UNIT)" = active/inactive
code=$(scrape "$WORK/activated.txt")
check "a connection to :10187 starts the service and is answered: HTTP $code" sh -c \
	"[ '$code' = 200 ] && grep -q '^binstat_exporter_build_info{' '$WORK/activated.txt'"
check "the service is active, started by the socket" ct systemctl is-active --quiet $UNIT
cmdline=$(ct cat "/proc/$(prop MainPID)/cmdline" | tr '\0' ' ')
check "it runs with --web.systemd-socket: $cmdline" grep -q -- --web.systemd-socket <<<"$cmdline"
ct systemctl stop $UNIT.socket $UNIT
ct cp /run/default.saved /etc/default/binstat-exporter

# -------------------------- 9. the package's name finds the unit (Alias=)
ct systemctl start $UNIT
until_ok 20 serves
out=$(ct systemctl status --no-pager binstat-exporter 2>&1)
rc=$?
check "systemctl status binstat-exporter finds $UNIT.service (exit $rc)" sh -c \
	"[ $rc = 0 ] && echo '$out' | head -1 | grep -q '$UNIT.service'"

# -------------------------- 8. the capability taken away by a drop-in
if [ -n "$HAVE_KVM" ]; then
	printf '[Service]\nAmbientCapabilities=\nCapabilityBoundingSet=\n' |
		ct sh -c "cat >$DROPIN/50-test-nocap.conf"
	ct systemctl daemon-reload
	ct systemctl restart $UNIT
	until_ok 20 serves
	INV=$(prop InvocationID)
	MPID=$(prop MainPID)
	eff=$(capeff "$MPID")
	check "with the drop-in: no capability at all (CapEff $eff)" test "$eff" = 0000000000000000
	scanned() { ct journalctl --no-pager -u $UNIT _SYSTEMD_INVOCATION_ID="$INV" | grep -q 'first scan done'; }
	until_ok 30 scanned
	ct journalctl --no-pager -u $UNIT _SYSTEMD_INVOCATION_ID="$INV" -o json >"$WORK/nocap.json"
	check "a warning naming CAP_SYS_PTRACE in the journal" $PY - "$WORK/nocap.json" <<'EOF'
import json, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
warn = [e for e in entries if "CAP_SYS_PTRACE" in str(e.get("MESSAGE", ""))
        and (e.get("PRIORITY") == "4" or "level=warn" in str(e.get("MESSAGE")) or '"level":"warn"' in str(e.get("MESSAGE")))]
assert warn, "no warn line with CAP_SYS_PTRACE among: %s" % [e.get("MESSAGE") for e in entries]
EOF
	code=$(scrape "$WORK/nocap.txt")
	drops=$(awk '$1 == "binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"}" { print $2 }' "$WORK/nocap.txt")
	check "binstat_collector_dropped_total{collector=\"kvm\",reason=\"vmm_not_permitted\"} > 0: ${drops:-absent}" \
		test "${drops:-0}" -gt 0
	check "root's VMs are not shown (HTTP $code)" sh -c "[ '$code' = 200 ] && ! grep -q '^kvm_vm_info{vm=\"$VM' '$WORK/nocap.txt'"
	ct rm -f $DROPIN/50-test-nocap.conf
	ct systemctl daemon-reload
else
	skip "the finding without CAP_SYS_PTRACE" "no /dev/kvm here (or no tests/kvm_fixture)"
fi

summary
