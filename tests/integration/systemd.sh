#!/usr/bin/env bash
# systemd's protocols without systemd as PID 1: socket activation driven by
# systemd-socket-activate (the listening socket made before the exporter
# runs, handed over in LISTEN_FDS), and sd_notify read from NOTIFY_SOCKET
# by this script: READY, STATUS, RELOADING on SIGHUP, WATCHDOG pings at
# half of WATCHDOG_USEC, STOPPING on SIGTERM.
# Usage: tests/integration/systemd.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n' "$B/plugins" >"$WORK/cfg.yml"

# ---------------------------------------------------------- socket activation
if ! command -v systemd-socket-activate >/dev/null; then
	skip "socket activation" "systemd-socket-activate is not installed (package systemd)"
else
	PORT=$(free_port)
	systemd-socket-activate -l "127.0.0.1:$PORT" "$EXPORTER" --config.file="$WORK/cfg.yml" \
		--web.systemd-socket >"$WORK/activate.log" 2>&1 &
	PIDS+=($!)
	sleep 0.3
	check "before the first connection only the socket exists (no exporter yet)" \
		sh -c "! grep -q 'binstat_exporter started' '$WORK/activate.log'"
	# The first connection waits in the socket's backlog while the exporter starts.
	curl -s -m 10 -o "$WORK/act.txt" -w '%{http_code}' "http://127.0.0.1:$PORT/metrics" >"$WORK/act.code"
	check "the first scrape, made before the exporter ran, is answered ($(cat "$WORK/act.code"))" \
		test "$(cat "$WORK/act.code")" = 200
	check "the exporter listens on the inherited socket" grep -q "listening address=127.0.0.1:$PORT" "$WORK/activate.log"
	check "and serves its collectors there" grep -q '^example_events_total' "$WORK/act.txt"
	check "a second scrape on the same socket" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/-/ready")" = 200
fi
out=$("$EXPORTER" --config.file="$WORK/cfg.yml" --web.systemd-socket 2>&1); rc=$?
check "--web.systemd-socket without sockets: exit 1 saying so (rc $rc)" sh -c "[ $rc = 1 ] && echo '$out' | grep -q 'no socket activation file descriptors found'"
out=$("$EXPORTER" --web.systemd-socket --web.listen-address=:9 2>&1); rc=$?
check "--web.systemd-socket with --web.listen-address: exit 2" test $rc = 2

# ------------------------------------------------------------------ sd_notify
NSOCK="$WORK/notify.sock"
cat >"$WORK/notify.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
t0 = time.monotonic()
with open(sys.argv[2], "w", buffering=1) as log:
    while True:
        msg = s.recv(4096).decode()
        log.write("%.3f %s\n" % (time.monotonic() - t0, msg.replace("\n", " ")))
EOF
$PY "$WORK/notify.py" "$NSOCK" "$WORK/notify.log" &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$NSOCK" ] && break; sleep 0.05; done
PORT=$(free_port)
NOTIFY_SOCKET="$NSOCK" WATCHDOG_USEC=400000 "$EXPORTER" --config.file="$WORK/cfg.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
for _ in $(seq 100); do grep -q READY=1 "$WORK/notify.log" 2>/dev/null && break; sleep 0.05; done
check "READY=1 with a STATUS once it serves" grep -q 'READY=1 STATUS=serving 1 collectors' "$WORK/notify.log"
check "it answers when READY=1 is sent" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/-/ready")" = 200
sleep 1.2
pings=$(grep -c 'WATCHDOG=1' "$WORK/notify.log")
check "WATCHDOG=1 at half of WatchdogSec=0.4s: $pings pings in about 1.2 s (want 4 to 8)" test "$pings" -ge 4 -a "$pings" -le 8
kill -HUP "$EPID"
sleep 0.3
check "SIGHUP: RELOADING=1 with MONOTONIC_USEC, then READY=1 again" $PY - "$WORK/notify.log" <<'EOF'
import sys
lines = [l.split(" ", 1)[1] for l in open(sys.argv[1])]
i = next(i for i, l in enumerate(lines) if l.startswith("RELOADING=1 MONOTONIC_USEC="))
assert int(lines[i].split("MONOTONIC_USEC=")[1]) > 0
assert any(l.startswith("READY=1") for l in lines[i + 1:]), lines[i:]
EOF
kill -TERM "$EPID"
for _ in $(seq 100); do kill -0 "$EPID" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM: STOPPING=1" grep -q 'STOPPING=1' "$WORK/notify.log"
check "and the exporter exits" sh -c "! kill -0 $EPID 2>/dev/null"

# The units shipped: systemd's own checker, when it can run here.
ROOT=$(cd "$HERE/../.." && pwd)
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$WORK/units"
	sed "s|/usr/bin/binstat_exporter|$EXPORTER|g" "$ROOT/packaging/systemd/binstat_exporter.service" >"$WORK/units/binstat_exporter.service"
	cp "$ROOT/packaging/systemd/binstat_exporter.socket" "$WORK/units/"
	out=$(cd "$WORK/units" && systemd-analyze verify --man=no ./binstat_exporter.socket ./binstat_exporter.service 2>&1 |
		grep -v -e 'binstat_exporter.*User=' -e 'Failed to .*bus' -e 'network-online.target')
	check "systemd-analyze verify: the service and socket units are clean" test -z "$out"
	score=$(cd "$WORK/units" && systemd-analyze security --offline=true ./binstat_exporter.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for binstat_exporter.service: \([0-9.]*\).*/\1/p')
	check "systemd-analyze security: exposure $score, at most 2.5" $PY -c "assert 0 < float('$score') <= 2.5"
	# The unit's system call filter against what the exporter really calls:
	# traced through a KVM scrape (when /dev/kvm works), a reload and a stop.
	if command -v strace >/dev/null; then
		if [ -w /dev/kvm ]; then
			"$B/tests/kvm_fixture" 1 2 3 "$WORK/fx.ready" >/dev/null 2>&1 &
			PIDS+=($!)
			for _ in $(seq 100); do [ -s "$WORK/fx.ready" ] && break; sleep 0.05; done
		fi
		printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm: {}\n  example: {}\n' "$B/plugins" >"$WORK/sc.yml"
		SP=$(free_port)
		strace -f -qq -o "$WORK/strace.txt" "$EXPORTER" --config.file="$WORK/sc.yml" \
			--web.listen-address="127.0.0.1:$SP" >>"$WORK/exporter.log" 2>&1 &
		TP=$!
		PIDS+=("$TP")
		wait_for_metric "$SP" '^kvm_collector_vms' >/dev/null
		curl -s -o /dev/null "http://127.0.0.1:$SP/"
		EP=$(pgrep -P "$TP") # the exporter, strace's child: signals go to it
		kill -HUP "$EP"
		sleep 0.3
		kill -TERM "$EP"
		for _ in $(seq 100); do kill -0 "$TP" 2>/dev/null || break; sleep 0.05; done
		check "every system call the exporter made is in the unit's SystemCallFilter" $PY - \
			"$ROOT/packaging/systemd/binstat_exporter.service" "$WORK/strace.txt" <<'EOF'
import re, subprocess, sys
def expand(group, seen):
    out = subprocess.run(["systemd-analyze", "syscall-filter", group], capture_output=True, text=True).stdout
    names = set()
    for line in (l.strip() for l in out.splitlines()[1:]):
        if line.startswith("@") and line not in seen:
            seen.add(line)
            names |= expand(line, seen)
        elif line and not line.startswith(("#", "@")):
            names.add(line)
    return names
allow, deny = set(), set()
for line in open(sys.argv[1]):
    m = re.match(r"SystemCallFilter=(~?)(.*)", line.strip())
    if m:
        for g in m.group(2).split():
            (deny if m.group(1) else allow).update(expand(g, set()) if g.startswith("@") else {g})
used = {m.group(1) for l in open(sys.argv[2]) for m in [re.match(r"\d+\s+([a-z_0-9]+)\(", l)] if m}
assert len(used) > 30, used
blocked = sorted(s for s in used if s not in allow or s in deny)
assert not blocked, blocked
EOF
	else
		skip "the unit's system call filter" "strace is not installed"
	fi
	# What the unit lets the exporter have, as systemd reads it: one
	# capability, and no device but the standard ones and Xen's three.
	(cd "$WORK/units" && systemd-analyze security --offline=true ./binstat_exporter.service) >"$WORK/security.txt" 2>&1
	check "the only capability left is CAP_SYS_PTRACE" sh -c \
		"[ \"\$(grep -c '✗ CapabilityBoundingSet=~' '$WORK/security.txt')\" = 1 ] && grep -q '✗ CapabilityBoundingSet=~CAP_SYS_PTRACE ' '$WORK/security.txt'"
	check "devices: Xen's evtchn, gntdev and xenbus, no other special device" \
		grep -q 'device ACL with some special devices: char-rtc:r /dev/xen/xenbus:rw /dev/xen/gntdev:rw /dev/xen/evtchn:rw *[0-9]' "$WORK/security.txt"
	# The Xen drop-in, applied to the unit as systemd would apply it.
	mkdir -p "$WORK/units/binstat_exporter.service.d"
	cp "$ROOT/packaging/systemd/xen-as-root.conf" "$WORK/units/binstat_exporter.service.d/xen.conf"
	out=$(cd "$WORK/units" && SYSTEMD_UNIT_PATH="$WORK/units:" systemd-analyze verify --man=no binstat_exporter.service 2>&1 |
		grep -v -e 'Failed to .*bus' -e 'network-online.target')
	check "the Xen drop-in verifies with the unit" test -z "$out"
	(cd "$WORK/units" && SYSTEMD_UNIT_PATH="$WORK/units:" systemd-analyze security --offline=true binstat_exporter.service) >"$WORK/security-xen.txt" 2>&1
	check "with the drop-in: root, and still CAP_SYS_PTRACE only and the same devices" sh -c \
		"grep -q '✗ User=/DynamicUser=' '$WORK/security-xen.txt' && [ \"\$(grep -c '✗ CapabilityBoundingSet=~' '$WORK/security-xen.txt')\" = 1 ] &&
		 grep -q '/dev/xen/evtchn:rw' '$WORK/security-xen.txt'"
	rm -r "$WORK/units/binstat_exporter.service.d"
	# ExecStartPre checks the configuration ARGS names, not only the default.
	printf 'collectors:\n  nope: [\n' >"$WORK/broken.yml"
	pre=$(sed -n 's/^ExecStartPre=//p' "$ROOT/packaging/systemd/binstat_exporter.service" |
		sed "s|/usr/bin/binstat_exporter|$EXPORTER|; s|\$ARGS|--config.file=$WORK/broken.yml|")
	good=$(sed -n 's/^ExecStartPre=//p' "$ROOT/packaging/systemd/binstat_exporter.service" |
		sed "s|/usr/bin/binstat_exporter|$EXPORTER|; s|\$ARGS|--config.file=$WORK/cfg.yml|")
	check "ExecStartPre checks the file ARGS names: a good one passes" sh -c "$good >/dev/null 2>&1"
	check "... and a broken one fails it" sh -c "! $pre >/dev/null 2>&1"
	check "the service is Type=notify with a watchdog" sh -c "grep -qx 'Type=notify' '$ROOT/packaging/systemd/binstat_exporter.service' && grep -q '^WatchdogSec=' '$ROOT/packaging/systemd/binstat_exporter.service'"
else
	skip "systemd-analyze verify" "systemd-analyze is not installed"
fi

summary
