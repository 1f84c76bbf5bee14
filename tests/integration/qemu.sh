#!/usr/bin/env bash
# KVM collector against real QEMU (-accel kvm) with the preload shim: with
# the guest paused, every statistic the exporter reports equals QMP
# query-stats, histograms bucket by bucket.
# Usage: tests/integration/qemu.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
QEMU=$(command -v qemu-system-x86_64)

if [ -z "$QEMU" ]; then
	skip "QEMU comparison" "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
	summary
	exit
fi
require_lone_kvm "QEMU comparison"

QMP="$WORK/qmp.sock"
LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" "$QEMU" -accel kvm -m 64 -smp 2 -nographic \
	-nodefaults -serial null -monitor none -name guest=qemu-it,debug-threads=on \
	-uuid 0f0e0d0c-0b0a-4908-8706-050403020100 -qmp "unix:$QMP,server=on,wait=off" \
	>"$WORK/qemu.log" 2>&1 &
QPID=$!
PIDS+=("$QPID")
for _ in $(seq 100); do [ -S "$QMP" ] && break; sleep 0.05; done

printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: per_vcpu\n' "$B/plugins" >"$WORK/kvm.yml"
PORT=$(free_port)
start_exporter "$WORK/kvm.yml" "$PORT"
EXP=$LAST_PID
check "shim: QEMU's VM and both vCPUs are found passively" \
	wait_for_metric "$PORT" 'kvm_vm_info{vm="qemu-it".*vcpus="2"'
check "identity: vmm is qemu-system-x86_64 with its uuid" sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q 'uuid=\"0f0e0d0c-0b0a-4908-8706-050403020100\",pid=\"$QPID\",vmm=\"qemu-system-x86_64\"'"
check "paused guest: every statistic equals QMP query-stats" \
	$PY "$HERE/qemu_compare.py" "$QMP" "http://127.0.0.1:$PORT/metrics" qemu-it
kill "$QPID"
for _ in $(seq 50); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.05; done
sleep 0.2
check "QEMU gone: no stats fd left in the exporter" test "$(ls -l "/proc/$EXP/fd" | grep -c 'kvm-v[a-z]*-stats')" = 0

# Attach mode: a stock QEMU (no shim) is made to open its own stats fds.
QMP2="$WORK/qmp2.sock"
"$QEMU" -accel kvm -m 64 -smp 2 -nographic -nodefaults -serial null -monitor none \
	-name guest=qemu-attach,debug-threads=on -qmp "unix:$QMP2,server=on,wait=off" \
	>"$WORK/qemu2.log" 2>&1 &
QPID2=$!
PIDS+=("$QPID2")
for _ in $(seq 100); do [ -S "$QMP2" ] && break; sleep 0.05; done
printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: per_vcpu\n    attach: true\n    rescan_interval_seconds: 1\n' \
	"$B/plugins" >"$WORK/attach.yml"
PA=$(free_port)
start_exporter "$WORK/attach.yml" "$PA"
check "attach: a stock QEMU opens its VM's stats fd and the exporter reads it" \
	wait_for_metric "$PA" '^kvm_vm_info{vm="qemu-attach"'
qmp() { $PY - "$1" "${@:2}" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1]); f = s.makefile("rwb")
f.readline()
for cmd in ["qmp_capabilities"] + sys.argv[2:]:
    f.write(json.dumps({"execute": cmd}).encode() + b"\n"); f.flush()
    while True:
        m = json.loads(f.readline())
        if "return" in m or "error" in m:
            break
print(json.dumps(m.get("return")))
EOF
}
status=$(qmp "$QMP2" query-status)
check "attach: QMP still answers and the guest still runs ($status)" grep -q '"running": true' <<<"$status"
# vCPU stats fds are asked for only from a vCPU's own thread while it is
# out of KVM_RUN: pausing the guest parks them, and the next rescan attaches.
qmp "$QMP2" stop >/dev/null
check "attach: both vCPUs' stats fds, taken from their own threads while paused" \
	wait_for_metric "$PA" 'kvm_vm_info{vm="qemu-attach".*vcpus="2"'
check "attach: every statistic equals QMP query-stats" \
	$PY "$HERE/qemu_compare.py" "$QMP2" "http://127.0.0.1:$PA/metrics" qemu-attach
qmp "$QMP2" cont >/dev/null
status=$(qmp "$QMP2" query-status)
check "attach: the guest runs again after cont" grep -q '"running": true' <<<"$status"
kill "$QPID2"

summary
