#!/usr/bin/env bash
# KVM collector against real /dev/kvm: a fixture VMM (tests/fixtures/kvm/fixture.c)
# runs guest code with a known number of port I/O exits; the exporter, a
# separate process, must find it, report it exactly, and let go of it.
# Usage: tests/integration/kvm.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
FIXTURE="$B/tests/kvm_fixture"
IO=7

require_lone_kvm "KVM collector tests"

# start_fixture VMS VCPUS IO [ARGS]: sets FX to the fixture's pid once its guests ran.
start_fixture() {
	local ready="$WORK/fixture.$RANDOM"
	"$FIXTURE" "$1" "$2" "$3" "$ready" "${@:4}" >>"$WORK/fixture.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$ready" ] && return 0; sleep 0.05; done
	return 1
}

kvm_config() { # kvm_config FILE MODE
	printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    mode: %s\n    rescan_interval_seconds: 3600\n' \
		"$B/plugins" "$2" >"$1"
}

scrape() { curl -s "http://127.0.0.1:$1/metrics" >"$2"; }
value() { awk -v m="$2" '$1 == m { print $2 }' "$1"; } # value FILE SERIES
scrape_until_fds() { # scrape_until_fds PORT FILE N: until the exporter holds N stats fds
	for _ in $(seq 50); do
		scrape "$1" "$2"
		[ "$(value "$2" kvm_collector_stats_fds)" = "$3" ] && return
		sleep 0.1
	done
}
held_stats_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'kvm-v[a-z]*-stats'; }

start_fixture 2 2 $IO -name guest=web1,debug-threads=on -uuid 8f3c1d2e-0000-4000-8000-123456789abc
check "fixture ran its guests" test $? = 0
F1=$FX

kvm_config "$WORK/vcpu.yml" per_vcpu
PV=$(free_port)
start_exporter "$WORK/vcpu.yml" "$PV"
EXP=$LAST_PID
scrape "$PV" "$WORK/vcpu.txt"
check "per-vCPU: both VMs found" test "$(value "$WORK/vcpu.txt" kvm_collector_vms)" = 2
check "per-vCPU: 6 stats fds held (2 VMs + 4 vCPUs)" test "$(value "$WORK/vcpu.txt" kvm_collector_stats_fds)" = 6
check "per-vCPU: the exporter's own fd table agrees" test "$(held_stats_fds "$EXP")" = 6
check "identity: -name guest=web1 is the vm label, -uuid in kvm_vm_info" \
	grep -q 'kvm_vm_info{vm="web1",name="web1",uuid="8f3c1d2e-0000-4000-8000-123456789abc",pid="'"$F1"'",vmm="kvm_fixture"' "$WORK/vcpu.txt"
check "identity: the second VM of the same VMM gets a unique label" grep -q 'kvm_vm_info{vm="web1/kvm-' "$WORK/vcpu.txt"

# Exactly IO port exits and one halt on every vCPU. Where KVM runs the guest
# directly, each `out` is an I/O exit (io_exits); where it emulates it (as
# PVM does here), io_exits stays 0 and every userspace exit is in `exits`,
# which also counts an exit for a host interrupt that lands while the
# guest runs (seen once in a few dozen runs here): up to two are allowed.
ok=1 how=""
for s in $(grep '^kvm_vcpu_halt_exits_total' "$WORK/vcpu.txt" | sed 's/^kvm_vcpu_halt_exits_total//; s/ .*//'); do
	halt=$(value "$WORK/vcpu.txt" "kvm_vcpu_halt_exits_total$s")
	io=$(value "$WORK/vcpu.txt" "kvm_vcpu_io_exits_total$s")
	exits=$(value "$WORK/vcpu.txt" "kvm_vcpu_exits_total$s")
	if [ "$halt" != 1 ]; then ok=0; how="halt_exits $halt on $s"; fi
	if [ "$io" = $IO ]; then how=${how:-"io_exits = $IO"}
	elif [ "$io" = 0 ] && [ "$exits" -ge $((IO + 1)) ] && [ "$exits" -le $((IO + 3)) ]; then
		how=${how:-"port I/O emulated: io_exits 0, exits = $IO + 1 (+ $((exits - IO - 1)) for host interrupts)"}
	else ok=0; how="io_exits $io, exits $exits on $s"; fi
done
check "guest exits reported exactly on 4 vCPUs ($how)" test $ok = 1 -a "$(grep -c '^kvm_vcpu_halt_exits_total' "$WORK/vcpu.txt")" = 4
check "histogram: halt_wait as seconds with 32 log buckets and +Inf" \
	test "$(grep -c 'kvm_vcpu_halt_wait_seconds_bucket{vm="web1",vcpu="0",' "$WORK/vcpu.txt")" = 32
check "histogram: the paired total is its _sum, not a separate counter" \
	sh -c "grep -q '^kvm_vcpu_halt_wait_seconds_sum{vm=\"web1\",vcpu=\"0\"}' '$WORK/vcpu.txt' && ! grep -q halt_wait_seconds_total '$WORK/vcpu.txt'"
check "per-vCPU output passes promtool" sh -c "promtool check metrics <'$WORK/vcpu.txt'"
curl -s -H 'Accept: application/openmetrics-text' "http://127.0.0.1:$PV/metrics" >"$WORK/vcpu.om"
check "per-vCPU OpenMetrics passes the strict parser" $PY -c "
from prometheus_client.openmetrics.parser import text_string_to_metric_families as p
list(p(open('$WORK/vcpu.om').read()))"

# Per-VM mode sums the same vCPUs.
kvm_config "$WORK/vm.yml" per_vm
PM=$(free_port)
start_exporter "$WORK/vm.yml" "$PM"
scrape "$PM" "$WORK/vm.txt"
scrape "$PV" "$WORK/vcpu2.txt"
sum_vcpus() { awk -v p="$2{vm=\"web1\"," 'index($1, p) == 1 { s += $2 } END { print s + 0 }' "$1"; }
check "per-VM: exits are the sum of the vCPUs' ($(sum_vcpus "$WORK/vcpu2.txt" kvm_vcpu_exits_total))" \
	test "$(value "$WORK/vm.txt" 'kvm_vcpu_exits_total{vm="web1"}')" = "$(sum_vcpus "$WORK/vcpu2.txt" kvm_vcpu_exits_total)"
check "per-VM: halt exits 2 (two vCPUs halted once)" test "$(value "$WORK/vm.txt" 'kvm_vcpu_halt_exits_total{vm="web1"}')" = 2
check "per-VM: histogram count summed over vCPUs" \
	test "$(value "$WORK/vm.txt" 'kvm_vcpu_halt_wait_seconds_count{vm="web1"}')" = "$(sum_vcpus "$WORK/vcpu2.txt" kvm_vcpu_halt_wait_seconds_count)"
check "per-VM: no vcpu label" sh -c "! grep -q 'vcpu=\"' '$WORK/vm.txt'"
check "per-VM output passes promtool" sh -c "promtool check metrics <'$WORK/vm.txt'"

# One thread creating several VMs: KVM gives the three VMs one stats id
# (kvm-TID) and their vCPUs the same ids twice over. Every VM is served;
# the vCPUs, which nothing the kernel shows ties to one VM, are served as
# their thread's group and said so, never summed into a VM they may not
# belong to. VM i makes IO + i*STEP port exits on each of its 2 vCPUs.
STEP=5
# exits_match FILE SERIES_LABELS GOT WANT VCPUS: exactly, where io_exits
# counts them; where port I/O is emulated (io_exits 0, exits less halts),
# up to two more a vCPU for host interrupts that land while the guest runs,
# as for the exits checked above.
exits_match() {
	[ "$3" = "$4" ] && return 0
	[ "$(value "$1" "kvm_vcpu_io_exits_total$2")" = 0 ] && [ "$3" -gt "$4" ] &&
		[ "$3" -le $(($4 + 2 * $5)) ]
}
# exits_of FILE SERIES_LABELS: the guest's port exits, as the kernel counts them here.
exits_of() {
	local io ex
	io=$(value "$1" "kvm_vcpu_io_exits_total$2")
	ex=$(value "$1" "kvm_vcpu_exits_total$2")
	if [ "${io:-0}" != 0 ]; then echo "$io"; else echo $((${ex:-0} - ${3:-0})); fi
}
FIXTURE_ONE_THREAD=1 FIXTURE_EXITS_STEP=$STEP start_fixture 3 2 $IO -name guest=multi
FM=$FX
kvm_config "$WORK/multi.yml" per_vm
PMU=$(free_port)
start_exporter "$WORK/multi.yml" "$PMU"
scrape "$PMU" "$WORK/multi.txt"
# (web1's VMM, 2 VMs and 6 fds, still runs.)
check "one thread, 3 VMs: every VM's stats fd is served (3 VMs + the thread's vCPU group; was 1 VM)" \
	test "$(value "$WORK/multi.txt" kvm_collector_vms)" = 6 -a "$(value "$WORK/multi.txt" kvm_collector_stats_fds)" = 15
check "one thread, 3 VMs: four distinct vm labels" \
	test "$(grep '^kvm_vm_info{vm="multi[^"]*",name="multi"' "$WORK/multi.txt" | sed 's/.*{vm="\([^"]*\)".*/\1/' | sort -u | wc -l)" = 4
group=$(grep -o 'kvm_vm_info{vm="multi/kvm-[0-9]*/\*"' "$WORK/multi.txt" | sed 's/.*vm="//; s/"$//')
check "one thread, 3 VMs: the 6 vCPUs are served as the thread's group ($group), counted" \
	test -n "$group" -a "$(value "$WORK/multi.txt" kvm_collector_vcpus_of_unknown_vm)" = 6
want=$((2 * (IO + IO + STEP + IO + 2 * STEP)))
got=$(exits_of "$WORK/multi.txt" "{vm=\"$group\"}" 6)
check "one thread, 3 VMs: the group's port exits are all of them ($got = $want)" \
	exits_match "$WORK/multi.txt" "{vm=\"$group\"}" "$got" "$want" 6
check "one thread, 3 VMs: logged, naming the VMM and the group" \
	grep -q "one thread created several VMs.*pid=$FM.*vm=$group" "$WORK/exporter.log"
kill "$FM"

# The same VMM handing its fds over names each VM (name=handed-I): that
# grouping is the VMM's own word, so each VM gets its own vCPUs and exits.
handover_config() { # handover_config FILE SOCKET UID
	printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    passive: false\n    handover:\n      socket: %s\n      allow_uids: [%s]\n' \
		"$B/plugins" "$2" "$3" >"$1"
}
handover_config "$WORK/homulti.yml" "$WORK/homulti.sock" "$(id -u)"
PHM=$(free_port)
start_exporter "$WORK/homulti.yml" "$PHM"
FIXTURE_HANDOVER="$WORK/homulti.sock" FIXTURE_ONE_THREAD=1 FIXTURE_EXITS_STEP=$STEP start_fixture 3 2 $IO
FHM=$FX
scrape_until_fds "$PHM" "$WORK/homulti.txt" 9
check "one thread, 3 VMs handed over by name: 3 VMs, 9 fds" \
	test "$(value "$WORK/homulti.txt" kvm_collector_vms)" = 3 -a "$(value "$WORK/homulti.txt" kvm_collector_stats_fds)" = 9
for i in 0 1 2; do
	want=$((2 * (IO + i * STEP)))
	got=$(exits_of "$WORK/homulti.txt" "{vm=\"handed-$i\"}" 2)
	check "one thread, VM $i handed over by name: its own exits ($got = $want)" \
		exits_match "$WORK/homulti.txt" "{vm=\"handed-$i\"}" "$got" "$want" 2
done
kill "$FHM"

# The host's view: each vCPU's thread found (each creates and runs its own
# vCPU, as QEMU's do), and what the scheduler counted for it. The VMM and a
# busy loop share one CPU, so the spinning vCPUs also wait for it (steal).
taskset -c 0 sh -c 'while :; do :; done' &
BUSY=$!
PIDS+=("$BUSY")
FIXTURE_SPIN=1 taskset -c 0 "$FIXTURE" 1 2 $IO "$WORK/spin.ready" -name guest=spin >>"$WORK/fixture.log" 2>&1 &
FS=$!
PIDS+=("$FS")
for _ in $(seq 100); do [ -s "$WORK/spin.ready" ] && break; sleep 0.05; done
holds() { awk "BEGIN { exit !($1) }"; } # holds EXPR: awk arithmetic
thread_sum() { # thread_sum FILE FAMILY: over spin's vCPUs
	awk -v p="$2{vm=\"spin\"," 'index($1, p) == 1 { s += $2 } END { printf "%.3f", s }' "$1"
}
# schedstat_sum FIELD: over the fixture's spinning threads, as the kernel gives it
schedstat_sum() {
	local t s=0
	for t in /proc/$FS/task/*; do
		[ "$(basename "$t")" = "$FS" ] && continue
		grep -q '^kvm-' "$t/comm" && continue # KVM's own worker thread
		s=$((s + $(cut -d' ' -f"$1" "$t/schedstat")))
	done
	echo "$s"
}
for _ in $(seq 60); do
	scrape "$PV" "$WORK/spin1.txt"
	grep -q '^kvm_vm_info{vm="spin",.*vcpus="2",vcpu_threads="2"}' "$WORK/spin1.txt" && break
	sleep 0.1
done
check "host view: both vCPU threads of spin found (vcpu_threads=\"2\")" \
	grep -q '^kvm_vm_info{vm="spin",.*vcpus="2",vcpu_threads="2"}' "$WORK/spin1.txt"
sleep 1
scrape "$PV" "$WORK/spin2.txt"
ns_cpu=$(schedstat_sum 1)
cpu1=$(thread_sum "$WORK/spin1.txt" kvm_vcpu_thread_cpu_seconds_total)
cpu2=$(thread_sum "$WORK/spin2.txt" kvm_vcpu_thread_cpu_seconds_total)
wait1=$(thread_sum "$WORK/spin1.txt" kvm_vcpu_thread_wait_seconds_total)
wait2=$(thread_sum "$WORK/spin2.txt" kvm_vcpu_thread_wait_seconds_total)
check "host view: vCPU time on CPU rises while the guest spins (+$(awk "BEGIN { print $cpu2 - $cpu1 }") s in 1 s)" \
	holds "$cpu2 - $cpu1 > 0.2"
check "host view: and the wait for the shared CPU, the guest's steal (+$(awk "BEGIN { print $wait2 - $wait1 }") s)" \
	holds "$wait2 - $wait1 > 0.2"
check "host view: the figures are those threads' schedstat (${cpu2} s; ${ns_cpu} ns a moment later)" \
	holds "$ns_cpu / 1e9 >= $cpu2 && $ns_cpu / 1e9 - $cpu2 < 0.5"
check "host view: timeslices counted" test "$(thread_sum "$WORK/spin2.txt" kvm_vcpu_thread_timeslices_total | cut -d. -f1)" -gt 2
rss=$(value "$WORK/spin2.txt" "kvm_vmm_resident_memory_bytes{vm=\"spin\",pid=\"$FS\"}")
vmrss=$(awk '/^VmRSS/ { print $2 * 1024 }' "/proc/$FS/status")
check "host view: the VMM's resident memory ($rss bytes; VmRSS $vmrss)" \
	holds "${rss:-0} > 0 && (${rss:-0} - $vmrss)^2 < ($vmrss / 5)^2"
check "host view: the VMM's major faults" grep -q "^kvm_vmm_major_page_faults_total{vm=\"spin\",pid=\"$FS\"} [0-9]" "$WORK/spin2.txt"
scrape "$PM" "$WORK/spinvm.txt"
check "host view, per VM: the vCPU threads summed" grep -q '^kvm_vcpu_thread_cpu_seconds_total{vm="spin"} [0-9.]*$' "$WORK/spinvm.txt"
check "host view: passes promtool" sh -c "promtool check metrics <'$WORK/spin2.txt'"
# An unplugged vCPU (the VMM closed its stats fd) goes at the next look at
# the VMM, its copy and its thread's file closed: nothing stays pinned.
kvm_config "$WORK/unplug.yml" per_vcpu
sed -i 's/rescan_interval_seconds: 3600/rescan_interval_seconds: 1/' "$WORK/unplug.yml"
PU=$(free_port)
start_exporter "$WORK/unplug.yml" "$PU"
EXPU=$LAST_PID
wait_for_metric "$PU" '^kvm_vm_info{vm="spin",.*vcpus="2",vcpu_threads="2"}'
fds_before=$(held_stats_fds "$EXPU")
kill -USR1 "$FS"
gone=0
for _ in $(seq 60); do
	scrape "$PU" "$WORK/unplug.txt"
	grep -q '^kvm_vm_info{vm="spin",.*vcpus="1",vcpu_threads="1"}' "$WORK/unplug.txt" && { gone=1; break; }
	sleep 0.1
done
check "unplug: the vCPU is gone at the next look, the other stays" test $gone = 1
check "unplug: the exporter holds one stats fd fewer ($fds_before before)" \
	test "$(held_stats_fds "$EXPU")" = $((fds_before - 1))
kill "$FS" "$BUSY"

# A VMM started now is found through KVM's uevent (the rescan is an hour away).
start_fixture 1 1 $IO
F2=$FX
found=0
for _ in $(seq 60); do
	scrape "$PV" "$WORK/late.txt"
	[ "$(value "$WORK/late.txt" kvm_collector_vms)" = 3 ] && { found=1; break; }
	sleep 0.1
done
check "a new VMM is found through its uevent, without a rescan (vms: $(value "$WORK/late.txt" kvm_collector_vms))" test $found = 1

# When a VMM exits, its series go and the exporter holds none of its fds.
kill "$F1"
gone=0
for _ in $(seq 50); do
	[ "$(held_stats_fds "$EXP")" = 2 ] && { gone=1; break; }
	sleep 0.05
done
check "VMM exit: the exporter closes its fds at once (2 left, the other VMM's)" test $gone = 1
scrape "$PV" "$WORK/after.txt"
check "VMM exit: its series are gone at the next scrape" sh -c "! grep -q 'vm=\"web1' '$WORK/after.txt'"
check "VMM exit: the other VMM is still reported" test "$(value "$WORK/after.txt" kvm_collector_vms)" = 1
kill "$F2"
for _ in $(seq 50); do [ "$(held_stats_fds "$EXP")" = 0 ] && break; sleep 0.05; done
check "all VMMs gone: no stats fd left in the exporter" test "$(held_stats_fds "$EXP")" = 0

# The hand-over socket: an exporter with passive discovery off receives the
# stats fds from the VMM itself, and refuses peers not on its allow-list.
handover_config "$WORK/ho.yml" "$WORK/ho.sock" "$(id -u)"
PH=$(free_port)
start_exporter "$WORK/ho.yml" "$PH"
EXPH=$LAST_PID
FIXTURE_HANDOVER="$WORK/ho.sock" start_fixture 2 2 $IO
FH=$FX
scrape_until_fds "$PH" "$WORK/ho.txt" 6
check "hand-over: the VMM's 6 stats fds arrive over the socket" test "$(value "$WORK/ho.txt" kvm_collector_stats_fds)" = 6
check "hand-over: identity from the message" grep -q 'kvm_vm_info{vm="handed-1",name="handed-1",uuid="",pid="'"$FH"'",vmm="fixture"' "$WORK/ho.txt"
check "hand-over: the guest's halt counted" test "$(value "$WORK/ho.txt" 'kvm_vcpu_halt_exits_total{vm="handed-0"}')" = 2
kill "$FH"
for _ in $(seq 50); do [ "$(held_stats_fds "$EXPH")" = 0 ] && break; sleep 0.05; done
check "hand-over: the sender's exit closes its fds" test "$(held_stats_fds "$EXPH")" = 0
# A restart under a sender that keeps its connection (the preload shim with
# BINSTAT_KVM_HANDOVER): its connection outlives the idle timeout, which
# still closes a silent peer that sent nothing; at the exporter's end the
# sender reconnects and sends again, so its VMs are back within seconds.
handover_config "$WORK/hr.yml" "$WORK/hr.sock" "$(id -u)"
printf '      idle_timeout_seconds: 1\n' >>"$WORK/hr.yml"
PR=$(free_port)
start_exporter "$WORK/hr.yml" "$PR"
EXPR=$LAST_PID
# (The shim before the sanitizer's runtime in the ASan build's fixture.)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" BINSTAT_KVM_HANDOVER="$WORK/hr.sock" start_fixture 2 1 $IO
FR=$FX
scrape_until_fds "$PR" "$WORK/hr1.txt" 4
check "restart: the shim hands over 2 VMs and their vCPUs (4 stats fds), one sender" sh -c \
	"[ '$(value "$WORK/hr1.txt" kvm_collector_vms)' = 2 ] && [ '$(value "$WORK/hr1.txt" kvm_collector_stats_fds)' = 4 ] &&
	[ '$(value "$WORK/hr1.txt" kvm_collector_handover_senders)' = 1 ]"
# silent_peer: connects and waits (5 s at most) for the exporter to close it.
silent_peer() {
	$PY -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.settimeout(5)
sys.exit(s.recv(1) != b"")' "$WORK/hr.sock"
}
sockets_of() { ls -l "/proc/$1/fd" | grep -o 'socket:\[[0-9]*\]' | sort | tr '\n' ' '; }
S0=$(sockets_of "$FR")
IDLE='binstat_collector_dropped_total{collector="kvm",reason="handover_idle_closed"}'
silent_peer
closed=$?
scrape "$PR" "$WORK/hr2.txt"
check "restart: past the idle timeout the silent peer is closed ($(value "$WORK/hr2.txt" "$IDLE")), the sender kept" sh -c \
	"[ $closed = 0 ] && [ '$(value "$WORK/hr2.txt" "$IDLE")' = 1 ] && [ '$(value "$WORK/hr2.txt" kvm_collector_handover_senders)' = 1 ]"
# A reload (SIGHUP) passes the sender's connection on as a sender's: it is
# still the same one after another idle timeout.
n=$(grep -c 'configuration reloaded' "$WORK/exporter.log")
kill -HUP "$EXPR"
for _ in $(seq 50); do [ "$(grep -c 'configuration reloaded' "$WORK/exporter.log")" -gt "$n" ] && break; sleep 0.1; done
silent_peer
closed=$?
scrape "$PR" "$WORK/hr2b.txt"
check "restart: after a reload and an idle timeout, the sender keeps its one connection ($S0)" sh -c \
	"[ $closed = 0 ] && [ '$(sockets_of "$FR")' = '$S0' ] && [ '$(value "$WORK/hr2b.txt" kvm_collector_handover_senders)' = 1 ] &&
	[ '$(value "$WORK/hr2b.txt" kvm_collector_vms)' = 2 ]"
check "restart: the landing page names the sender" sh -c \
	"curl -s http://127.0.0.1:$PR/ | grep -q '1 hand-over senders connected'"
kill "$EXPR"
for _ in $(seq 100); do kill -0 "$EXPR" 2>/dev/null || break; sleep 0.05; done
t0=$(date +%s%N)
start_exporter "$WORK/hr.yml" "$PR"
EXPR=$LAST_PID
for _ in $(seq 100); do
	scrape "$PR" "$WORK/hr3.txt"
	[ "$(value "$WORK/hr3.txt" kvm_collector_stats_fds)" = 4 ] && break
	sleep 0.1
done
back_ms=$((($(date +%s%N) - t0) / 1000000))
check "restart: the 2 VMs are back ${back_ms} ms after the new exporter started, from the sender" sh -c \
	"[ '$(value "$WORK/hr3.txt" kvm_collector_vms)' = 2 ] && [ '$(value "$WORK/hr3.txt" kvm_collector_handover_senders)' = 1 ] && [ $back_ms -lt 5000 ]"
check "restart: the new exporter says VMs come back as senders reconnect" \
	grep -q 'listening for hand-over: no VM is held until senders connect' "$WORK/exporter.log"
# The shim names the VM from its environment (libvirt's <qemu:env>).
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 BINSTAT_KVM_NAME=web9 \
	BINSTAT_KVM_UUID=0c5e2a4d-0000-4000-8000-00000000000f LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" \
	BINSTAT_KVM_HANDOVER="$WORK/hr.sock" start_fixture 1 1 $IO
FN=$FX
check "restart: the shim names its VM by BINSTAT_KVM_NAME and BINSTAT_KVM_UUID" \
	wait_for_metric "$PR" '^kvm_vm_info{vm="web9",name="web9",uuid="0c5e2a4d-0000-4000-8000-00000000000f",pid="'"$FN"'",vmm="kvm_fixture"'
# A stats fd KVM cannot make for want of fds: the fixture lowers its
# RLIMIT_NOFILE once its VM is made, leaving room for its vCPU's fd alone,
# so the shim's KVM_GET_STATS_FD on that vCPU fails with EMFILE. The shim
# reports it over its connection (stats_fd_no_fds, exactly one); the VM's
# own stats fd, made before, is served.
NOFDS='binstat_collector_dropped_total{collector="kvm",reason="stats_fd_no_fds"}'
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 FIXTURE_NOFILE=1 BINSTAT_KVM_NAME=nofds \
	LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" BINSTAT_KVM_HANDOVER="$WORK/hr.sock" start_fixture 1 1 $IO
FF=$FX
for _ in $(seq 50); do
	scrape "$PR" "$WORK/hr4.txt"
	[ -n "$(value "$WORK/hr4.txt" "$NOFDS")" ] && grep -q '^kvm_vm_info{vm="nofds"' "$WORK/hr4.txt" && break
	sleep 0.1
done
check "no fds: the shim reports the vCPU stats fd KVM could not make (stats_fd_no_fds $(value "$WORK/hr4.txt" "$NOFDS"))" \
	test "$(value "$WORK/hr4.txt" "$NOFDS")" = 1
check "no fds: the VM's stats fd made before it is served" grep -q '^kvm_vm_info{vm="nofds",.*vcpus="0"' "$WORK/hr4.txt"
check "no fds: the capability was there (no stats_fd_unsupported)" sh -c "! grep -q 'reason=\"stats_fd_unsupported\"' '$WORK/hr4.txt'"
kill "$FR" "$FN" "$FF" "$EXPR"
# Many VMMs of one uid (libvirt runs every QEMU as libvirt-qemu), each
# keeping its shim's connection: all served, and all back after a restart.
# Only connections that hold no handed-over fd are capped at 8 per uid.
for _ in $(seq 100); do kill -0 "$EXPR" 2>/dev/null || break; sleep 0.05; done
start_exporter "$WORK/hr.yml" "$PR"
EXPR=$LAST_PID
MANY=()
for i in $(seq 0 11); do
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 BINSTAT_KVM_NAME=many$i \
		LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" BINSTAT_KVM_HANDOVER="$WORK/hr.sock" start_fixture 1 1 $IO
	MANY+=("$FX")
done
many_served() { # many_served FILE: 12 VMs from 12 senders, every one by name
	scrape "$PR" "$1"
	[ "$(value "$1" kvm_collector_vms)" = 12 ] && [ "$(value "$1" kvm_collector_handover_senders)" = 12 ] &&
		[ "$(grep -c '^kvm_vm_info{vm="many[0-9]*"' "$1")" = 12 ]
}
for _ in $(seq 50); do many_served "$WORK/many1.txt" && break; sleep 0.1; done
check "one uid's 12 VMMs under the shim: all 12 VMs served, 12 senders ($(value "$WORK/many1.txt" kvm_collector_vms), $(value "$WORK/many1.txt" kvm_collector_handover_senders))" \
	many_served "$WORK/many1.txt"
kill "$EXPR"
for _ in $(seq 100); do kill -0 "$EXPR" 2>/dev/null || break; sleep 0.05; done
start_exporter "$WORK/hr.yml" "$PR"
EXPR=$LAST_PID
for _ in $(seq 100); do many_served "$WORK/many2.txt" && break; sleep 0.1; done
check "one uid's 12 VMMs: all 12 back after a restart ($(value "$WORK/many2.txt" kvm_collector_vms), $(value "$WORK/many2.txt" kvm_collector_handover_senders))" \
	many_served "$WORK/many2.txt"
kill "${MANY[@]}" "$EXPR"
# A refused shim (its uid not on allow_uids: the exporter accepts and
# closes) backs off: 0.1 s doubling to 5 s, so its 5th try comes 1.5 s
# after its first at the soonest (before: 0.4 s, 10 tries a second).
handover_config "$WORK/hn.yml" "$WORK/hn.sock" $(($(id -u) + 1))
PN=$(free_port)
start_exporter "$WORK/hn.yml" "$PN"
EXPN=$LAST_PID
REFUSED='binstat_collector_dropped_total{collector="kvm",reason="handover_refused"}'
t0=$(date +%s%N)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD="$B/lib/libbinstat_kvm_shim.so" BINSTAT_KVM_HANDOVER="$WORK/hn.sock" start_fixture 1 1 $IO
FRF=$FX
for _ in $(seq 200); do
	scrape "$PN" "$WORK/hn.txt"
	[ "$(value "$WORK/hn.txt" "$REFUSED")" = 5 ] && break
	sleep 0.02
done
refused_ms=$((($(date +%s%N) - t0) / 1000000))
check "refused shim: 5 tries took ${refused_ms} ms from its start (doubling: 1500 at least)" \
	sh -c "[ '$(value "$WORK/hn.txt" "$REFUSED")' = 5 ] && [ $refused_ms -ge 1500 ]"
kill "$FRF" "$EXPN"
# A handed-over VMM's vCPU threads are found too (no look at its fds runs).
FIXTURE_HANDOVER="$WORK/ho.sock" FIXTURE_SPIN=1 start_fixture 1 2 $IO
FHS=$FX
check "hand-over: the vCPU threads of a handed-over VMM found, their time served" \
	wait_for_metric "$PH" '^kvm_vcpu_thread_cpu_seconds_total{vm="handed-0"} [0-9]'
check "hand-over: kvm_vm_info says both threads are known" \
	wait_for_metric "$PH" '^kvm_vm_info{vm="handed-0",.*vcpus="2",vcpu_threads="2"}'
kill "$FHS"
# More peers of one uid at once than the 8 the collector serves: the rest are counted and closed.
$PY - "$WORK/ho.sock" <<'EOF'
import socket, sys, time
held = []
for _ in range(70):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(0.5)
EOF
scrape "$PH" "$WORK/ho3.txt"
check "hand-over: peers past 8 of one uid at once are refused and counted, the exporter stays up" \
	grep -qE 'binstat_collector_dropped_total\{collector="kvm",reason="handover_too_many_from_uid"\} 62' "$WORK/ho3.txt"
handover_config "$WORK/ho2.yml" "$WORK/ho2.sock" 4242
PH2=$(free_port)
start_exporter "$WORK/ho2.yml" "$PH2"
FIXTURE_HANDOVER="$WORK/ho2.sock" start_fixture 1 1 $IO
F5=$FX
scrape "$PH2" "$WORK/ho2.txt"
check "hand-over: a peer not on the allow-list is refused and counted" \
	sh -c "grep -q '^kvm_collector_stats_fds 0' '$WORK/ho2.txt' && grep -q 'binstat_collector_dropped_total{collector=\"kvm\",reason=\"handover_refused\"} 1' '$WORK/ho2.txt'"
kill "$F5"

# A VMM whose binary was replaced under it (a package upgrade): its exe link
# reads "... (deleted)", which is no part of the vmm label.
cp "$FIXTURE" "$WORK/vmm-up"
FIXTURE="$WORK/vmm-up" start_fixture 1 1 $IO -name guest=upgraded
FU=$FX
rm "$WORK/vmm-up" && cp "$FIXTURE" "$WORK/vmm-up"
kvm_config "$WORK/up.yml" per_vm
PU=$(free_port)
start_exporter "$WORK/up.yml" "$PU"
scrape "$PU" "$WORK/up.txt"
check "replaced VMM binary: the link says (deleted)" sh -c "readlink /proc/$FU/exe | grep -q ' (deleted)\$'"
check "replaced VMM binary: vmm label without ' (deleted)', one kvm_vm_info" sh -c \
	"[ \$(grep -c '^kvm_vm_info{vm=\"upgraded\",' '$WORK/up.txt') = 1 ] && grep -q '^kvm_vm_info{vm=\"upgraded\",.*vmm=\"vmm-up\"' '$WORK/up.txt'"
kill "$FU" "$LAST_PID"
# A binary really named "... (deleted)", not deleted, keeps its name.
cp "$FIXTURE" "$WORK/qemu (deleted)"
FIXTURE="$WORK/qemu (deleted)" start_fixture 1 1 $IO -name guest=named
FN=$FX
PN=$(free_port)
start_exporter "$WORK/up.yml" "$PN"
scrape "$PN" "$WORK/named.txt"
check "a binary named 'qemu (deleted)', not deleted: vmm keeps its whole name" \
	grep -q '^kvm_vm_info{vm="named",.*vmm="qemu (deleted)"' "$WORK/named.txt"
kill "$FN" "$LAST_PID"

# Filters: only one stat, only some VMs.
start_fixture 1 1 $IO -name guest=keep
F3=$FX
start_fixture 1 1 $IO -name guest=skip
F4=$FX
printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    host_view: false\n    stats:\n      include: [halt_exits, exits]\n    vms:\n      exclude: ["sk*"]\n' \
	"$B/plugins" >"$WORK/filter.yml"
PF=$(free_port)
start_exporter "$WORK/filter.yml" "$PF"
scrape "$PF" "$WORK/filter.txt"
check "filters: included stats only" test "$(grep -c '^kvm_vcpu_' "$WORK/filter.txt")" = 2
check "filters: excluded VM left out" sh -c "grep -q 'vm=\"keep\"' '$WORK/filter.txt' && ! grep -q 'vm=\"skip\"' '$WORK/filter.txt'"
check "host_view: false: no VMM memory, no thread series" sh -c "! grep -qE '^kvm_(vmm_|vcpu_thread_)' '$WORK/filter.txt'"
kill "$F3" "$F4"

summary
