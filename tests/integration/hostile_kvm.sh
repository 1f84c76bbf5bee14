#!/usr/bin/env bash
# Hostile local peers against the KVM collector: each
# attack next to a good VMM, with the exporter's scrapes, fds and memory
# checked while and after it runs. Peers: tests/fixtures/kvm/hostile_peer.py.
# Usage: tests/integration/hostile_kvm.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
FIXTURE="$B/tests/kvm_fixture"
PEER="$HERE/../fixtures/kvm/hostile_peer.py"
IO=3

require_lone_kvm "hostile KVM peers"
[ "$(id -u)" = 0 ] || { skip "hostile KVM peers" "needs root to act as other uids"; summary; exit 0; }

# The socket's folder must let other uids reach it, as /run/binstat_exporter does.
chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/s"
SOCK="$WORK/s/ho.sock"

start_fixture() { # start_fixture VMS VCPUS [env...]: sets FX once its guests ran
	local ready="$WORK/fixture.$RANDOM"
	env "${@:3}" "$FIXTURE" "$1" "$2" $IO "$ready" >>"$WORK/fixture.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$ready" ] && return 0; sleep 0.05; done
	return 1
}
scrape() { curl -s -m 10 "http://127.0.0.1:$1/metrics" >"$2"; }
value() { awk -v m="$2" '$1 == m { print $2 }' "$1"; }
dropped() { # dropped FILE REASON: the kvm collector's count for that reason (0 if none)
	local v
	v=$(value "$1" "binstat_collector_dropped_total{collector=\"kvm\",reason=\"$2\"}")
	echo "${v:-0}"
}
nfds() { ls "/proc/$1/fd" | wc -l; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
inode() { stat -c %i "$1" 2>/dev/null; }
lowest_free_fd() { local i=0; while [ -e "/proc/$1/fd/$i" ]; do i=$((i + 1)); done; echo $i; }

ho_config() { # ho_config FILE SOCKET [EXTRA YAML LINES UNDER handover:]
	{
		printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 3s\ncollectors:\n  kvm:\n    mode: per_vm\n' "$B/plugins"
		printf '    passive: false\n    handover:\n      socket: %s\n      allow_uids: [0, 65534]\n' "$2"
		printf '      allow_gids: [4242]\n      idle_timeout_seconds: 1\n'
		for l in "${@:3}"; do printf '      %s\n' "$l"; done
	} >"$1"
}

ho_config "$WORK/ho.yml" "$SOCK" "max_fds_per_peer: 3" "max_vms: 32"
P=$(free_port)
start_exporter "$WORK/ho.yml" "$P"
EXP=$LAST_PID

# 1. A blocking fd as a stats fd: /dev/kmsg's read never returns.
$PY "$PEER" kmsg "$SOCK"
sleep 0.3
t=$(scrape_ms "$P" "$WORK/1.txt")
check "kmsg: refused as not a KVM stats fd" test "$(dropped "$WORK/1.txt" handover_not_kvm_stats)" = 1
check "kmsg: the scrape succeeds at once (${t} ms)" sh -c "[ $t -lt 1000 ] && grep -q '^binstat_scrape_collector_success{collector=\"kvm\"} 1' '$WORK/1.txt'"

# 2. A good VMM right after: the watcher is not stuck. Two VMs of one vCPU
# are four fds; the peer may hold three.
FIXTURE_HANDOVER_OK=1 start_fixture 2 1 FIXTURE_HANDOVER="$SOCK"
GOOD=$FX
sleep 0.5
scrape "$P" "$WORK/2.txt"
check "good VMM: its fds arrive after the hostile peer" test "$(value "$WORK/2.txt" kvm_collector_stats_fds)" = 3
check "per-peer cap: the fourth fd is refused and counted" test "$(dropped "$WORK/2.txt" handover_fd_limit)" = 1
EXITS=$(value "$WORK/2.txt" 'kvm_vcpu_exits_total{vm="handed-0"}')

# 3. Sparse memfds that cost their sender nothing, 300 of them.
rss0=$(rss_kb "$EXP")
d0=$(dropped "$WORK/2.txt" handover_not_kvm_stats)
t0=$(date +%s%N)
$PY "$PEER" memfd "$SOCK" 300
sleep 0.3
scrape "$P" "$WORK/3.txt"
ms=$((($(date +%s%N) - t0) / 1000000))
check "memfds: all 300 refused before any read" test $(($(dropped "$WORK/3.txt" handover_not_kvm_stats) - d0)) = 300
check "memfds: 300 messages and a scrape took ${ms} ms (under 3 s)" test "$ms" -lt 3000
check "memfds: exporter RSS grew by $(($(rss_kb "$EXP") - rss0)) KiB (under 8 MiB)" test $(($(rss_kb "$EXP") - rss0)) -lt 8192

# 4. Zero-length messages carrying fds, 3,000 of them: none may stay open.
fd0=$(nfds "$EXP")
$PY "$PEER" zerolen "$SOCK" 3000
sleep 0.3
scrape "$P" "$WORK/4.txt"
check "zero-length messages: counted as malformed" test "$(dropped "$WORK/4.txt" handover_malformed)" = 3000
check "zero-length messages: no fd kept ($fd0 before, $(nfds "$EXP") after)" test "$(nfds "$EXP")" -le $((fd0 + 2))

# 5. A VM's stats fd that claims to be a vCPU's.
$PY "$PEER" mismatch "$SOCK"
sleep 0.2
scrape "$P" "$WORK/5.txt"
check "kind mismatch: refused and counted" test "$(dropped "$WORK/5.txt" handover_vcpu_mismatch)" = 1

# 5b. Reports of stats fds not made, forged at full speed on one connection:
# 64 counted at most (the burst; 16 a second after it), the rest refused as
# a flood and the connection closed.
$PY "$PEER" reports "$SOCK" 20000 >"$WORK/reports.out"
for _ in $(seq 50); do
	scrape "$P" "$WORK/5b.txt"
	[ "$(dropped "$WORK/5b.txt" handover_report_flood)" = 1 ] && break
	sleep 0.1
done
check "forged reports: at most 64 counted ($(dropped "$WORK/5b.txt" stats_fd_failed) of $(cat "$WORK/reports.out")), the flood counted once and its connection closed" \
	sh -c "[ $(dropped "$WORK/5b.txt" stats_fd_failed) -ge 1 ] && [ $(dropped "$WORK/5b.txt" stats_fd_failed) -le 66 ] && [ $(dropped "$WORK/5b.txt" handover_report_flood) = 1 ]"

# 6. Forgery: an allowed non-root peer names the good VMM (or pid 1) as the
# owner of its own vCPU's stats fd.
$PY "$PEER" forge "$SOCK" "$GOOD" 65534 >/dev/null
$PY "$PEER" forge "$SOCK" 1 65534 >/dev/null
sleep 0.2
scrape "$P" "$WORK/6.txt"
check "forgery: naming another uid's VMM or pid 1 is refused" test "$(dropped "$WORK/6.txt" handover_pid_refused)" = 2
check "forgery: the good VMM's exits are unchanged ($EXITS)" test "$(value "$WORK/6.txt" 'kvm_vcpu_exits_total{vm="handed-0"}')" = "$EXITS"
# Root may name any VMM, but its vCPU still never joins the VMM's own VM.
$PY "$PEER" forge "$SOCK" "$GOOD" 0 >/dev/null
sleep 0.2
scrape "$P" "$WORK/6b.txt"
check "root peer: its vCPU forms a VM of its own (2 VMs and 1)" test "$(value "$WORK/6b.txt" kvm_collector_vms)" = 3
check "root peer: the good VMM's VM still has 1 vCPU and the same exits" sh -c \
	"grep -q 'kvm_vm_info{vm=\"handed-0\".*vcpus=\"1\"' '$WORK/6b.txt' && [ \"\$(awk '\$1 == \"kvm_vcpu_exits_total{vm=\\\"handed-0\\\"}\" { print \$2 }' '$WORK/6b.txt')\" = '$EXITS' ]"

# 7. A non-root peer handing over its own VM is served, also when allowed
# only through a supplementary group.
$PY "$PEER" own "$SOCK" 65534 >"$WORK/own.out" &
OWN=$!
PIDS+=("$OWN")
$PY "$PEER" own "$SOCK" 4321 4242 >"$WORK/own2.out" &
OWN2=$!
PIDS+=("$OWN2")
for _ in $(seq 50); do grep -q ready "$WORK/own.out" "$WORK/own2.out" 2>/dev/null && [ "$(cat "$WORK/own.out" "$WORK/own2.out" | grep -c ready)" = 2 ] && break; sleep 0.1; done
sleep 0.3
scrape "$P" "$WORK/7.txt"
check "own VM as uid 65534: served, its name and claimed uuid marked (not a trusted owner)" \
	grep -q 'kvm_vm_info{vm="own-65534/uid-65534",name="own-65534",uuid="8f3c1d2e-0000-4000-8000-123456789abc/uid-65534",' "$WORK/7.txt"
check "own VM as uid 4321 in supplementary group 4242: served, marked" grep -q 'kvm_vm_info{vm="own-4321/uid-4321",' "$WORK/7.txt"
kill "$OWN" "$OWN2"

# 8. One uid holds 70 idle connections: it gets 8; other uids still hand over;
# the idle ones are closed after the idle timeout.
$PY "$PEER" hog "$SOCK" 70 65534 3 >"$WORK/hog.out" &
HOG=$!
PIDS+=("$HOG")
for _ in $(seq 50); do grep -q holding "$WORK/hog.out" && break; sleep 0.1; done
start_fixture 1 1 FIXTURE_HANDOVER="$SOCK"
F8=$FX
sleep 0.3
scrape "$P" "$WORK/8.txt"
check "lock-out: 62 of one uid's 70 connections refused" test "$(dropped "$WORK/8.txt" handover_too_many_from_uid)" = 62
check "lock-out: another uid's VMM still hands over" grep -q "kvm_vm_info{.*pid=\"$F8\"" "$WORK/8.txt"
sleep 1.5
scrape "$P" "$WORK/8b.txt"
check "idle connections closed after the idle timeout" test "$(dropped "$WORK/8b.txt" handover_idle_closed)" -ge 8
kill "$F8" "$HOG" 2>/dev/null

# 8b. One uid's 9 senders (each process hands over its own VM's stats fd
# and keeps its connection, as a VMM under the shim does; libvirt runs every
# QEMU as one uid): a sender's connection is not held to the 8 per uid, so
# all 9 are kept past the idle timeout and served. The same uid's empty
# connections are still capped at 8 meanwhile, and another uid's VMM still
# hands over. (uids 4322 and 4330-4337 are allowed through group 4242.)
scrape "$P" "$WORK/8c.txt"
uid0=$(dropped "$WORK/8c.txt" handover_too_many_from_uid)
snd0=$(value "$WORK/8c.txt" kvm_collector_handover_senders)
$PY "$PEER" senders "$SOCK" 9 4322 4242 30 >"$WORK/senders.out" &
SND=$!
PIDS+=("$SND")
for _ in $(seq 100); do grep -q held "$WORK/senders.out" && break; sleep 0.05; done
start_fixture 1 1 FIXTURE_HANDOVER="$SOCK"
F8B=$FX
sleep 1.5 # past the idle timeout (1 s): what is kept now is kept as a sender's
for _ in $(seq 30); do
	scrape "$P" "$WORK/8d.txt"
	[ "$(value "$WORK/8d.txt" kvm_collector_handover_senders)" = $((snd0 + 9)) ] && break
	sleep 0.1
done
check "held senders: one uid's 9 kept past the idle timeout ($(value "$WORK/8d.txt" kvm_collector_handover_senders))" \
	test "$(value "$WORK/8d.txt" kvm_collector_handover_senders)" = $((snd0 + 9))
check "held senders: the 9 senders' VMs all served" \
	test "$(grep -c '^kvm_vm_info{vm="sender-4322-[0-8]/uid-4322"' "$WORK/8d.txt")" = 9
check "held senders: another uid's VMM still hands over" grep -q "kvm_vm_info{.*pid=\"$F8B\"" "$WORK/8d.txt"
$PY "$PEER" hog "$SOCK" 10 4322 3 4242 >"$WORK/hog2.out" &
HOG2=$!
PIDS+=("$HOG2")
for _ in $(seq 50); do grep -q holding "$WORK/hog2.out" && break; sleep 0.1; done
scrape "$P" "$WORK/8d2.txt"
check "held senders: their uid's empty connections still capped at 8 (2 of 10 refused: $uid0 -> $(dropped "$WORK/8d2.txt" handover_too_many_from_uid))" \
	test "$(dropped "$WORK/8d2.txt" handover_too_many_from_uid)" = $((uid0 + 2))
kill "$HOG2"
# Senders are bounded by handover.max_vms (32 here): 3 more uids' 8 senders
# each fill it, those past it are refused and counted, and a sender of yet
# another uid then is refused too, its VM not served.
vms0=$(value "$WORK/8d2.txt" kvm_collector_vms)
full0=$(dropped "$WORK/8d2.txt" too_many_vms_or_vcpus)
FILL=()
for u in 4330 4331 4332; do
	$PY "$PEER" senders "$SOCK" 8 $u 4242 30 >"$WORK/fill.$u.out" &
	FILL+=($!)
	PIDS+=($!)
done
for u in 4330 4331 4332; do
	for _ in $(seq 100); do grep -q held "$WORK/fill.$u.out" && break; sleep 0.05; done
done
$PY "$PEER" senders "$SOCK" 1 4337 4242 30 >"$WORK/fill.4337.out" &
FILL+=($!)
PIDS+=($!)
for _ in $(seq 100); do grep -q held "$WORK/fill.4337.out" && break; sleep 0.05; done
for _ in $(seq 30); do
	scrape "$P" "$WORK/8e.txt"
	[ "$(dropped "$WORK/8e.txt" too_many_vms_or_vcpus)" = $((full0 + vms0 + 25 - 32)) ] && break
	sleep 0.1
done
check "held senders: handover.max_vms bounds them: 32 VMs held ($vms0 before, $(value "$WORK/8e.txt" kvm_collector_vms) now), $((vms0 + 25 - 32)) refused and counted" \
	sh -c "[ '$(value "$WORK/8e.txt" kvm_collector_vms)' = 32 ] && [ '$(dropped "$WORK/8e.txt" too_many_vms_or_vcpus)' = $((full0 + vms0 + 25 - 32)) ]"
check "held senders: $((32 - vms0)) more senders kept, no more ($(value "$WORK/8e.txt" kvm_collector_handover_senders))" \
	test "$(value "$WORK/8e.txt" kvm_collector_handover_senders)" = $((snd0 + 9 + 32 - vms0))
check "held senders: the sender past the cap not served" sh -c "! grep -q 'vm=\"sender-4337-0' '$WORK/8e.txt'"
kill "$SND" "$F8B" "${FILL[@]}"

# 9. Reload and --check-config keep the socket and what was handed over.
sleep 0.3
ino=$(inode "$SOCK")
scrape "$P" "$WORK/9a.txt"
before=$(value "$WORK/9a.txt" kvm_collector_stats_fds)
kill -HUP "$EXP"
sleep 0.5
scrape "$P" "$WORK/9.txt"
check "reload: the socket file is the same ($ino)" test "$(inode "$SOCK")" = "$ino"
check "reload: the handed-over fds are still served ($before)" test "$(value "$WORK/9.txt" kvm_collector_stats_fds)" = "$before"
start_fixture 1 1 FIXTURE_HANDOVER="$SOCK"
F9=$FX
sleep 0.3
scrape "$P" "$WORK/9b.txt"
check "reload: a sender connects after it" grep -q "kvm_vm_info{.*pid=\"$F9\"" "$WORK/9b.txt"
kill "$F9"
n9=$(value "$WORK/9b.txt" kvm_collector_stats_fds)
"$EXPORTER" --check-config --config.file="$WORK/ho.yml" >/dev/null
ho_config "$WORK/other.yml" "$WORK/s/other.sock"
"$EXPORTER" --check-config --config.file="$WORK/other.yml" >/dev/null
scrape "$P" "$WORK/9c.txt"
check "--check-config: the running socket is untouched" test "$(inode "$SOCK")" = "$ino"
check "--check-config: creates no socket of its own" test ! -e "$WORK/s/other.sock"
check "--check-config: the daemon still serves what it held" test "$(value "$WORK/9c.txt" kvm_collector_stats_fds)" -ge $((n9 - 2))
kill "$GOOD"

# 10. A VMM whose main thread sits in vfork(), with attach mode on: the
# daemon listens, scrapes succeed, the VMM is left untraced, signals work.
start_fixture 1 1 FIXTURE_NO_STATS=1 FIXTURE_VFORK=1
VF=$FX
printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 3s\ncollectors:\n  kvm:\n    attach: true\n' "$B/plugins" >"$WORK/attach.yml"
PA=$(free_port)
t0=$(date +%s%N)
start_exporter "$WORK/attach.yml" "$PA"
ok=$?
EXPA=$LAST_PID
check "vfork: the daemon listens ($((($(date +%s%N) - t0) / 1000000)) ms)" test $ok = 0
t=$(scrape_ms "$PA" "$WORK/10.txt")
check "vfork: the scrape succeeds (${t} ms)" grep -q '^binstat_scrape_collector_success{collector="kvm"} 1' "$WORK/10.txt"
check "vfork: the VMM is not left traced" sh -c "grep -q '^TracerPid:[[:space:]]*0$' /proc/$VF/status"
kill -HUP "$EXPA"
sleep 0.5
t0=$(date +%s%N)
kill -TERM "$EXPA"
for _ in $(seq 100); do kill -0 "$EXPA" 2>/dev/null || break; sleep 0.05; done
check "vfork: SIGHUP then SIGTERM stop it ($((($(date +%s%N) - t0) / 1000000)) ms)" sh -c "! kill -0 $EXPA 2>/dev/null"
kill "$VF"

# 11. A VMM a debugger already traces: attach says so, not "needs CAP_SYS_PTRACE".
if command -v strace >/dev/null; then
	start_fixture 1 1 FIXTURE_NO_STATS=1
	TR=$FX
	strace -p "$TR" -o /dev/null &
	STRACE=$!
	PIDS+=("$STRACE")
	for _ in $(seq 50); do grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$TR/status" && break; sleep 0.05; done
	PT=$(free_port)
	start_exporter "$WORK/attach.yml" "$PT"
	curl -s "http://127.0.0.1:$PT/metrics" >/dev/null
	check "traced VMM: attach skipped and logged as traced" grep -q 'attach skipped: the VMM is traced' "$WORK/exporter.log"
	check "traced VMM: no CAP_SYS_PTRACE complaint" sh -c "! grep -q 'attach refused: ptrace needs CAP_SYS_PTRACE' '$WORK/exporter.log'"
	kill "$STRACE" "$TR" "$LAST_PID"
else
	skip "traced VMM" "strace is not installed"
fi

# 11b. A VMM at its fd limit under attach mode: the injected
# KVM_GET_STATS_FD fails with EMFILE, counted as stats_fd_no_fds (not as
# an old kernel), and no VM is served; given room, the next look takes it.
start_fixture 1 1 FIXTURE_NO_STATS=1
LIM=$FX
read -r lsoft lhard < <(prlimit --pid "$LIM" --nofile --noheadings --output SOFT,HARD)
prlimit --pid "$LIM" --nofile="$(lowest_free_fd "$LIM")":"$lhard"
printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 3s\ncollectors:\n  kvm:\n    attach: true\n    rescan_interval_seconds: 1\n' \
	"$B/plugins" >"$WORK/attach-limit.yml"
PL=$(free_port)
start_exporter "$WORK/attach-limit.yml" "$PL"
EXPL=$LAST_PID
for _ in $(seq 50); do
	scrape "$PL" "$WORK/11b.txt"
	[ "$(dropped "$WORK/11b.txt" stats_fd_no_fds)" -ge 1 ] && break
	sleep 0.1
done
check "fd limit: attach counts the VM's stats fd KVM could not make ($(dropped "$WORK/11b.txt" stats_fd_no_fds) stats_fd_no_fds)" \
	test "$(dropped "$WORK/11b.txt" stats_fd_no_fds)" -ge 1
check "fd limit: not an old kernel, and no VM served" sh -c \
	"[ $(dropped "$WORK/11b.txt" stats_fd_unsupported) = 0 ] && ! grep -q 'kvm_vm_info{.*pid=\"$LIM\"' '$WORK/11b.txt'"
prlimit --pid "$LIM" --nofile="$lsoft":"$lhard"
for _ in $(seq 50); do
	scrape "$PL" "$WORK/11c.txt"
	grep -q "kvm_vm_info{.*pid=\"$LIM\"" "$WORK/11c.txt" && break
	sleep 0.1
done
check "fd limit: with room again, the next look takes the VM's stats fd" grep -q "kvm_vm_info{.*pid=\"$LIM\"" "$WORK/11c.txt"
kill "$LIM" "$EXPL"

# 12. Name squatting: VMMs of an untrusted uid (65534, in group kvm) named
# web1 like a trusted one (root's), started before, during and after the
# trusted one's restart. Whatever the order, the bare name is the trusted
# VM's, and the impostors' names carry their uid.
KVMGID=$(stat -c %g /dev/kvm)
mkdir -m 0777 "$WORK/sq"
start_named() { # start_named NAME [COMMAND PREFIX...]: a VMM named NAME; sets FX
	local ready="$WORK/sq/ready.$RANDOM"
	"${@:2}" "$FIXTURE" 1 1 $IO "$ready" -name "guest=$1" >>"$WORK/fixture.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$ready" ] && return 0; sleep 0.05; done
	return 1
}
NOBODY=(setpriv --reuid=65534 --regid=65534 --groups="$KVMGID")
label_of() { # label_of FILE PID: the vm label of the VMM's VM
	sed -n "s/^kvm_vm_info{vm=\"\([^\"]*\)\",.*,pid=\"$2\",.*/\1/p" "$1"
}
until_served() { # until_served PORT PID: scrapes (5 s at most) until the VMM's VM is served
	for _ in $(seq 50); do
		scrape "$1" "$WORK/sq.txt"
		[ -n "$(label_of "$WORK/sq.txt" "$2")" ] && return 0
		sleep 0.1
	done
	return 1
}
printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 3s\ncollectors:\n  kvm:\n    rescan_interval_seconds: 3600\n' \
	"$B/plugins" >"$WORK/sq.yml"
PS=$(free_port)
start_exporter "$WORK/sq.yml" "$PS"
EXPS=$LAST_PID
start_named web1 "${NOBODY[@]}"
U1=$FX
until_served "$PS" "$U1"
check "squatting, before: the impostor's name is marked ($(label_of "$WORK/sq.txt" "$U1"))" \
	test "$(label_of "$WORK/sq.txt" "$U1")" = web1/uid-65534
start_named web1
T1=$FX
until_served "$PS" "$T1"
check "squatting, before: the trusted VM started after it is web1 ($(label_of "$WORK/sq.txt" "$T1"))" \
	test "$(label_of "$WORK/sq.txt" "$T1")" = web1
kill "$T1"
for _ in $(seq 50); do
	scrape "$PS" "$WORK/sq.txt"
	[ -z "$(label_of "$WORK/sq.txt" "$T1")" ] && break
	sleep 0.1
done
start_named web1 "${NOBODY[@]}"
U2=$FX
until_served "$PS" "$U2"
check "squatting, during the restart: no impostor takes the free name ($(label_of "$WORK/sq.txt" "$U1"), $(label_of "$WORK/sq.txt" "$U2"))" \
	sh -c "! grep -q '^kvm_vm_info{vm=\"web1\",' '$WORK/sq.txt' &&
		echo '$(label_of "$WORK/sq.txt" "$U2")' | grep -qx 'web1/uid-65534/kvm-[0-9]*'"
start_named web1
T2=$FX
until_served "$PS" "$T2"
check "squatting, restarted: the trusted VM is web1 again ($(label_of "$WORK/sq.txt" "$T2"))" \
	test "$(label_of "$WORK/sq.txt" "$T2")" = web1
start_named web1 "${NOBODY[@]}"
U3=$FX
until_served "$PS" "$U3"
check "squatting, after: web1 is the trusted VMM's alone, the three impostors marked" sh -c "
	[ \$(grep -c '^kvm_vm_info{vm=\"web1\",' '$WORK/sq.txt') = 1 ] &&
	[ '$(label_of "$WORK/sq.txt" "$T2")' = web1 ] &&
	echo '$(label_of "$WORK/sq.txt" "$U3")' | grep -qx 'web1/uid-65534/kvm-[0-9]*' &&
	[ '$(label_of "$WORK/sq.txt" "$U1")' = web1/uid-65534 ]"
# A trusted name that looks marked is the trusted VM's too: the impostor
# that holds it (named web2, marked web2/uid-65534) is named again.
start_named web2 "${NOBODY[@]}"
U4=$FX
until_served "$PS" "$U4"
start_named web2/uid-65534
T3=$FX
until_served "$PS" "$T3"
check "squatting: a trusted VM named like a marked one takes that name ($(label_of "$WORK/sq.txt" "$T3"), $(label_of "$WORK/sq.txt" "$U4"))" sh -c "
	[ '$(label_of "$WORK/sq.txt" "$T3")' = web2/uid-65534 ] &&
	echo '$(label_of "$WORK/sq.txt" "$U4")' | grep -qx 'web2/uid-65534/kvm-[0-9]*'"
# A nameless VM (no -name, no -uuid) keeps the kernel's id as its name
# whoever runs it: an untrusted VMM's VMs are that id marked
# (kvm-TID/uid-65534), one for each of its two VMs, as a root VMM's is the
# bare id.
start_nameless() { # start_nameless VMS [COMMAND PREFIX...]: a VMM with no -name; sets FX
	local ready="$WORK/sq/ready.$RANDOM"
	"${@:2}" "$FIXTURE" "$1" 1 $IO "$ready" >>"$WORK/fixture.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$ready" ] && return 0; sleep 0.05; done
	return 1
}
named_by_id() { # named_by_id FILE PID MARK: every VM of PID is vm="STATS_ID$MARK"; prints them
	awk -v pid="$2" -v mark="$3" 'index($0, "kvm_vm_info{") == 1 && index($0, ",pid=\"" pid "\",") {
		vm = $0; sub(/^kvm_vm_info\{vm="/, "", vm); sub(/".*/, "", vm)
		id = $0; sub(/.*,stats_id="/, "", id); sub(/".*/, "", id)
		printf "%s ", vm; n++; if (id !~ /^kvm-[0-9]+$/ || vm != id mark) bad++
	} END { print ""; exit !(n && !bad) }' "$1"
}
start_nameless 2 "${NOBODY[@]}"
U5=$FX
start_nameless 1
T4=$FX
for _ in $(seq 50); do
	scrape "$PS" "$WORK/nl.txt"
	[ "$(grep -c "^kvm_vm_info{.*,pid=\"$U5\"," "$WORK/nl.txt")" = 2 ] &&
		grep -q "^kvm_vm_info{.*,pid=\"$T4\"," "$WORK/nl.txt" && break
	sleep 0.1
done
NL_U=$(named_by_id "$WORK/nl.txt" "$U5" /uid-65534)
ok_u=$?
NL_T=$(named_by_id "$WORK/nl.txt" "$T4" "")
ok_t=$?
check "nameless VMs of an untrusted VMM keep the kernel's id, marked: $NL_U" \
	sh -c "[ $ok_u = 0 ] && [ \$(grep -c '^kvm_vm_info{.*,pid=\"$U5\",' '$WORK/nl.txt') = 2 ]"
check "a nameless VM of a root VMM is the kernel's id: $NL_T" test $ok_t = 0
kill "$U1" "$U2" "$U3" "$U4" "$U5" "$T2" "$T3" "$T4" "$EXPS"

# 13. No fd left (RLIMIT_NOFILE reached): the fds a peer hands over then
# are lost, counted as handover_no_fds (not malformed) and logged once at
# warn; a connection that comes meanwhile waits in the backlog while the
# watcher rests rather than spin, and hand-over works once fds free.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
nulls() { ls -l "/proc/$1/fd" | grep -c ' /dev/null$'; }
$PY "$PEER" starved "$SOCK" 50 "$WORK/go" >"$WORK/starved.out" &
STV=$!
PIDS+=("$STV")
for _ in $(seq 100); do grep -q connected "$WORK/starved.out" && break; sleep 0.05; done
scrape "$P" "$WORK/13a.txt"
mal0=$(dropped "$WORK/13a.txt" handover_malformed)
null0=$(nulls "$EXP")
read -r soft hard < <(prlimit --pid "$EXP" --nofile --noheadings --output SOFT,HARD)
warned0=$(grep -c 'hand-over lost for want of fds' "$WORK/exporter.log")
prlimit --pid "$EXP" --nofile="$(lowest_free_fd "$EXP")":"$hard"
cpu0=$(ticks "$EXP")
touch "$WORK/go"
for _ in $(seq 100); do grep -q sent "$WORK/starved.out" && break; sleep 0.05; done
$PY "$PEER" hog "$SOCK" 1 0 30 >"$WORK/late.out" &
LATE=$!
PIDS+=("$LATE")
for _ in $(seq 20); do [ $(($(ticks "$EXP") - cpu0)) -ge 50 ] && break; sleep 0.05; done
cpu=$(($(ticks "$EXP") - cpu0))
prlimit --pid "$EXP" --nofile="$soft":"$hard"
for _ in $(seq 50); do
	scrape "$P" "$WORK/13.txt"
	[ "$(dropped "$WORK/13.txt" handover_no_fds)" -ge 51 ] && break
	sleep 0.1
done
check "no fds: the 50 fds lost and the waiting connection counted as handover_no_fds ($(dropped "$WORK/13.txt" handover_no_fds))" \
	test "$(dropped "$WORK/13.txt" handover_no_fds)" -ge 51
check "no fds: none counted as malformed ($mal0 -> $(dropped "$WORK/13.txt" handover_malformed))" \
	test "$(dropped "$WORK/13.txt" handover_malformed)" = "$mal0"
check "no fds: the watcher rests rather than spin ($cpu ticks over a second)" test "$cpu" -lt 30
check "no fds: one warn line for all of it" \
	test "$(($(grep -c 'level=warn.*hand-over lost for want of fds' "$WORK/exporter.log") - warned0))" = 1
check "no fds: none of the fds sent is kept (/dev/null held: $null0 -> $(nulls "$EXP"))" \
	test "$(nulls "$EXP")" = "$null0"
start_fixture 1 1 FIXTURE_HANDOVER="$SOCK"
F13=$FX
for _ in $(seq 50); do
	scrape "$P" "$WORK/13b.txt"
	grep -q "kvm_vm_info{.*pid=\"$F13\"" "$WORK/13b.txt" && break
	sleep 0.1
done
check "no fds: once fds free, a VMM hands over again" grep -q "kvm_vm_info{.*pid=\"$F13\"" "$WORK/13b.txt"
kill "$STV" "$LATE" "$F13"

summary
