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

if [ ! -w /dev/kvm ] || [ -z "$QEMU" ]; then
	skip "QEMU comparison" "needs /dev/kvm and qemu-system-x86_64 (apt-get install qemu-system-x86)"
	summary
	exit
fi

# The counts below assume the fixture's VMs are the only ones on this host.
other_vmms() { ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c 'anon_inode:kvm-vm$'; }
if [ "$(other_vmms)" != 0 ]; then
	skip "KVM tests" "$(other_vmms) VM(s) of other VMMs already run on this host and would change every count"
	summary
	exit
fi

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
found=0
for _ in $(seq 100); do
	curl -s "http://127.0.0.1:$PORT/metrics" | grep -q 'kvm_vm_info{vm="qemu-it".*vcpus="2"' && { found=1; break; }
	sleep 0.1
done
check "shim: QEMU's VM and both vCPUs are found passively" test $found = 1
check "identity: vmm is qemu-system-x86_64 with its uuid" sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q 'uuid=\"0f0e0d0c-0b0a-4908-8706-050403020100\",pid=\"$QPID\",vmm=\"qemu-system-x86_64\"'"
check "paused guest: every statistic equals QMP query-stats" \
	$PY "$HERE/qemu_compare.py" "$QMP" "http://127.0.0.1:$PORT/metrics" qemu-it
kill "$QPID"
for _ in $(seq 50); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.05; done
sleep 0.2
check "QEMU gone: no stats fd left in the exporter" test "$(ls -l "/proc/$EXP/fd" | grep -c 'kvm-v[a-z]*-stats')" = 0

summary
