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

# start_qemu NAME SMP [ARGS]: a guest named NAME with its QMP socket at
# $WORK/NAME.qmp; sets QPID. SHIM=1 preloads the shim.
start_qemu() {
	local qmp="$WORK/$1.qmp"
	${SHIM:+env LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so"} "$QEMU" -accel kvm -m 64 -smp "$2" \
		-nographic -nodefaults -serial null -monitor none -name "guest=$1,debug-threads=on" \
		-qmp "unix:$qmp,server=on,wait=off" "${@:3}" >>"$WORK/qemu.log" 2>&1 &
	QPID=$!
	PIDS+=("$QPID")
	for _ in $(seq 100); do [ -S "$qmp" ] && break; sleep 0.05; done
}

SHIM=1 start_qemu qemu-it 2 -uuid 0f0e0d0c-0b0a-4908-8706-050403020100
QMP="$WORK/qemu-it.qmp"

printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: per_vcpu\n' "$B/plugins" >"$WORK/kvm.yml"
PORT=$(free_port)
start_exporter "$WORK/kvm.yml" "$PORT"
EXP=$LAST_PID
check "shim: QEMU's VM and both vCPUs are found passively" \
	wait_for_metric "$PORT" 'kvm_vm_info{vm="qemu-it".*vcpus="2"'
check "identity: vmm is qemu-system-x86_64 with its uuid" sh -c "curl -s 'http://127.0.0.1:$PORT/metrics' | grep -q 'uuid=\"0f0e0d0c-0b0a-4908-8706-050403020100\",pid=\"$QPID\",vmm=\"qemu-system-x86_64\"'"
check "paused guest: every statistic equals QMP query-stats" \
	$PY "$HERE/qemu_compare.py" "$QMP" "http://127.0.0.1:$PORT/metrics" qemu-it
# The host view: QEMU's vCPU threads (named "CPU N/KVM", each created its
# vCPU) found, their schedstat served per vCPU.
curl -s "http://127.0.0.1:$PORT/metrics" >"$WORK/hv.txt"
check "host view: QEMU's two vCPU threads found" grep -q '^kvm_vm_info{vm="qemu-it",.*vcpus="2",vcpu_threads="2"}' "$WORK/hv.txt"
ok=1 how=""
for t in /proc/$QPID/task/*; do
	n=$(sed -n 's|^CPU \([0-9]*\)/KVM$|\1|p' "$t/comm")
	[ -n "$n" ] || continue
	want=$(cut -d' ' -f1 "$t/schedstat")
	got=$(awk -v s="kvm_vcpu_thread_cpu_seconds_total{vm=\"qemu-it\",vcpu=\"$n\"}" '$1 == s { print $2 }' "$WORK/hv.txt")
	awk "BEGIN { exit !(${got:-0} > 0 && ${got:-0} <= $want / 1e9 && $want / 1e9 - ${got:-0} < 0.5) }" || ok=0
	how="$how CPU $n/KVM: ${got:-none} s (schedstat $want ns);"
done
check "host view: each vCPU's time is its own thread's ($how)" test $ok = 1 -a -n "$how"
check "host view: QEMU's resident memory" grep -q "^kvm_vmm_resident_memory_bytes{vm=\"qemu-it\",pid=\"$QPID\"} [1-9]" "$WORK/hv.txt"
kill "$QPID"
for _ in $(seq 50); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.05; done
sleep 0.2
check "QEMU gone: no stats fd left in the exporter" test "$(ls -l "/proc/$EXP/fd" | grep -c 'kvm-v[a-z]*-stats')" = 0

# Attach mode: a stock QEMU (no shim) is made to open its own stats fds.
start_qemu qemu-attach 2
QMP2="$WORK/qemu-attach.qmp" QPID2=$QPID
printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: per_vcpu\n    attach: true\n    rescan_interval_seconds: 1\n' \
	"$B/plugins" >"$WORK/attach.yml"
PA=$(free_port)
start_exporter "$WORK/attach.yml" "$PA"
check "attach: a stock QEMU opens its VM's stats fd and the exporter reads it" \
	wait_for_metric "$PA" '^kvm_vm_info{vm="qemu-attach"'
qmp() { $PY "$HERE/qmp.py" "$@"; }
status=$(qmp "$QMP2" query-status)
check "attach: QMP still answers and the guest still runs ($status)" grep -q '"running": true' <<<"$status"
# vCPU stats fds are asked for only from a vCPU's own thread while it is
# out of KVM_RUN: pausing the guest parks them, and the next rescan attaches.
qmp "$QMP2" stop >/dev/null
check "attach: both vCPUs' stats fds, taken from their own threads while paused" \
	wait_for_metric "$PA" 'kvm_vm_info{vm="qemu-attach".*vcpus="2"'
check "attach: both vCPU threads found (QEMU's CPU N/KVM)" \
	wait_for_metric "$PA" 'kvm_vm_info{vm="qemu-attach".*vcpus="2",vcpu_threads="2"'
check "attach: every statistic equals QMP query-stats" \
	$PY "$HERE/qemu_compare.py" "$QMP2" "http://127.0.0.1:$PA/metrics" qemu-attach
qmp "$QMP2" cont >/dev/null
status=$(qmp "$QMP2" query-status)
check "attach: the guest runs again after cont" grep -q '"running": true' <<<"$status"
kill "$QPID2"

# vCPU hotplug: QEMU started with one of two possible vCPUs gets the second
# by device_add; with the shim holding its stats fd, it is served at the
# next look (rescans every second here), thread and all.
SHIM=1 start_qemu qemu-hotplug 1,maxcpus=2
QMP3="$WORK/qemu-hotplug.qmp" QPID3=$QPID
printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: per_vcpu\n    rescan_interval_seconds: 1\n' \
	"$B/plugins" >"$WORK/hotplug.yml"
PHP=$(free_port)
start_exporter "$WORK/hotplug.yml" "$PHP"
check "hotplug: one vCPU before" wait_for_metric "$PHP" 'kvm_vm_info{vm="qemu-hotplug".*vcpus="1",vcpu_threads="1"'
plugged=$($PY - "$HERE" "$QMP3" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
from qmp import QMP
q = QMP(sys.argv[2])
free = [c for c in q.call("query-hotpluggable-cpus") if "qom-path" not in c]
print(json.dumps({"return": q.call("device_add", driver=free[0]["type"], id="cpu1", **free[0]["props"])}))
EOF
)
check "hotplug: QEMU plugs the second vCPU ($plugged)" grep -q '"return": {}' <<<"$plugged"
check "hotplug: the new vCPU and its thread appear within a look" \
	wait_for_metric "$PHP" 'kvm_vm_info{vm="qemu-hotplug".*vcpus="2",vcpu_threads="2"'
check "hotplug: the new vCPU's statistics are served" \
	wait_for_metric "$PHP" '^kvm_vcpu_exits_total{vm="qemu-hotplug",vcpu="1"}'
kill "$QPID3"

# libvirt's metadata: a real libvirtd (session mode, as nobody with the kvm
# group, so nothing of the host's libvirt is touched) defines and starts a
# domain carrying OpenStack Nova's metadata and the shim (the README's
# <qemu:env>); kvm_vm_metadata_info joins it on QEMU's pid and uuid.
KVMGID=$(stat -c %g /dev/kvm)
if ! command -v virsh >/dev/null || ! [ -x /usr/sbin/libvirtd ]; then
	skip "libvirt metadata" "libvirt is not installed (apt-get install libvirt-daemon-system libvirt-clients)"
elif [ "$(stat -c %a /dev/kvm | cut -c2)" -lt 6 ]; then
	skip "libvirt metadata" "/dev/kvm is not open to its group, so a session libvirtd cannot use it"
else
	LV=$(mktemp -d /tmp/binstat-lv.XXXXXX)
	mkdir -p "$LV/run" "$LV/home"
	cp "$B/lib/libbinstat_kvm_shim.so" "$LV/shim.so"
	# The suite's mark goes to the session libvirtd and, through the
	# domain's <qemu:env>, to its QEMU: the leftover check finds both.
	sed -e "s|@SHIM@|$LV/shim.so|" -e "s|@MARK@|$BS_SUITE_MARK|" "$HERE/../fixtures/kvm/libvirt-domain.xml" >"$LV/dom.xml"
	chown -R 65534 "$LV"
	chmod 755 "$LV" "$LV/shim.so"
	chmod 700 "$LV/run"
	as_lv() {
		setpriv --reuid=65534 --regid=65534 --groups="$KVMGID" env -i PATH=/usr/bin:/usr/sbin:/bin \
			BS_SUITE_MARK="$BS_SUITE_MARK" HOME="$LV/home" XDG_RUNTIME_DIR="$LV/run" "$@"
	}
	virsh_lv() { as_lv timeout 60 virsh -q -c qemu:///session "$@"; }
	# Started here, not spawned by virsh (which passes it a cleaned
	# environment), so that it carries the suite's mark.
	lv_daemon() {
		as_lv /usr/sbin/libvirtd --daemon --timeout=120 || return 1
		for _ in $(seq 100); do [ -S "$LV/run/libvirt/libvirt-sock" ] && return 0; sleep 0.1; done
		return 1
	}
	lv_start() { lv_daemon && virsh_lv define "$LV/dom.xml" && virsh_lv start lv-web1; }
	check "libvirt: a real libvirtd defines and starts the domain" lv_start
	LVPID=$(cat "$LV/run/libvirt/qemu/run/lv-web1.pid" 2>/dev/null)
	marked
	check "libvirt: its session libvirtd and QEMU carry the suite's mark (the leftover check sees them)" \
		sh -c "echo ' ${MARKED[*]} ' | grep -q ' ${LVPID:-none} ' &&
		echo ' ${MARKED[*]} ' | grep -q ' $(cat "$LV/run/libvirt/libvirtd.pid" 2>/dev/null || echo none) '"
	# The session libvirtd runs QEMU as nobody, as the system one does as libvirt-qemu.
	printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    trusted_users: [root, 65534]\n    libvirt:\n      status_dir: %s\n      max_label_length: 20\n' \
		"$B/plugins" "$LV/run/libvirt/qemu/run" >"$WORK/libvirt.yml"
	PLV=$(free_port)
	start_exporter "$WORK/libvirt.yml" "$PLV"
	check "libvirt: Nova's metadata joined on QEMU's pid ($LVPID) and uuid, the 23-byte project name cut to 20" \
		wait_for_metric "$PLV" '^kvm_vm_metadata_info{vm="lv-web1",uuid="6a1c4f0e-1111-4222-8333-444455556666",domain="lv-web1",instance_name="web-frontend-1",flavor="m1.small",project_name="shop-payments-eu-wes",project_id="9f8e7d6c5b4a",user_name="alice",user_id="0a1b2c3d4e5f"} 1$'
	virsh_lv destroy lv-web1 >>"$WORK/libvirt.log" 2>&1
	check "libvirt: the domain's series go with it" \
		sh -c "sleep 0.5; ! curl -s http://127.0.0.1:$PLV/metrics | grep -q 'vm=\"lv-web1\"'"
	virsh_lv undefine lv-web1 >>"$WORK/libvirt.log" 2>&1
	kill "$(cat "$LV/run/libvirt/libvirtd.pid" 2>/dev/null)" 2>/dev/null
	rm -rf "$LV"
fi

summary
