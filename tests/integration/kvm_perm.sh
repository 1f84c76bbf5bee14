#!/usr/bin/env bash
# The KVM collector run without the right to read other users' VMMs (no
# CAP_SYS_PTRACE), beside real VMs of root's (tests/fixtures/kvm/fixture.c): each
# VMM it sees but may not read is counted (a gauge and a drop reason), said
# once at warn with the fix, and shown on the landing page; its own VMs,
# and those it may read, are served as before.
# Usage: tests/integration/kvm_perm.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
IO=3

require_lone_kvm "KVM collector without CAP_SYS_PTRACE"
command -v setpriv >/dev/null || { skip "KVM collector without CAP_SYS_PTRACE" "setpriv is missing"; summary; exit 0; }

# nobody must run the exporter and read its plugins: the build may sit
# where it cannot (a home directory), so it runs from a copy in $WORK.
chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/bin" "$WORK/bin/plugins" "$WORK/run"
chmod 0777 "$WORK/run"
cp "$B/binstat_exporter" "$WORK/bin/"
cp "$B"/plugins/*.so "$WORK/bin/plugins/"
cp "$B/tests/kvm_fixture" "$WORK/bin/"
chmod -R a+rX "$WORK/bin"
EXPORTER="$WORK/bin/binstat_exporter"
FIXTURE="$WORK/bin/kvm_fixture"
KVMGID=$(stat -c %g /dev/kvm)
NOCAPS="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
PTRACE="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+sys_ptrace --ambient-caps=-all,+sys_ptrace --bounding-set=-all,+sys_ptrace"

start_fixture() { # start_fixture NAME [COMMAND PREFIX...]: a VMM of one VM; sets FX once it ran
	local ready="$WORK/run/ready.$RANDOM"
	"${@:2}" "$FIXTURE" 1 2 $IO "$ready" -name "guest=$1" >>"$WORK/fixture.log" 2>&1 &
	FX=$!
	PIDS+=("$FX")
	for _ in $(seq 200); do [ -s "$ready" ] && return 0; sleep 0.05; done
	return 1
}
config() { # config FILE [RESCAN_SECONDS]
	printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm:\n    rescan_interval_seconds: %s\n    trusted_users: [root, 65534]\n' \
		"$WORK/bin/plugins" "${2:-3600}" >"$1"
	chmod 0644 "$1"
}
scrape() { curl -s "http://127.0.0.1:$1/metrics" >"$2"; }
value() { awk -v m="$2" '$1 == m { print $2 }' "$1"; } # value FILE SERIES
until_value() { # until_value PORT FILE SERIES VALUE: scrapes (10 s at most) until it reads so
	for _ in $(seq 100); do
		scrape "$1" "$2"
		[ "$(value "$2" "$3")" = "$4" ] && return 0
		sleep 0.1
	done
	return 1
}
GAUGE=kvm_collector_vmms_not_permitted
DROP='binstat_collector_dropped_total{collector="kvm",reason="vmm_not_permitted"}'
warns() { grep -c 'level=warn.*CAP_SYS_PTRACE' "$WORK/exporter.log"; }

# ---- 1. no capability, beside root's VMs: one found by its threads at
# the first walk, one named by KVM's uevent later; and beside processes of
# another user that name a thread as QEMU names a vCPU ("CPU 0/KVM"), a
# name any user may take: those are no VMMs and count nothing ----
mkfifo -m 0666 "$WORK/hold"
for _ in 1 2 3; do
	setpriv --reuid=4242 --regid=4242 --clear-groups bash -c \
		'printf "CPU 0/KVM" >/proc/$$/comm && read -r -t 600 _ <>"$0"' "$WORK/hold" &
	PIDS+=("$!")
done
check "three processes of uid 4242 with a thread named CPU 0/KVM" sh -c \
	"for _ in \$(seq 50); do [ \$(grep -lx 'CPU 0/KVM' /proc/[0-9]*/task/*/comm 2>/dev/null | wc -l) -ge 3 ] && exit 0; sleep 0.1; done; exit 1"
start_fixture root1
check "a root VMM runs" test $? = 0
R1=$FX
config "$WORK/nocap.yml"
P=$(free_port)
EXPORTER_WRAP=$NOCAPS start_exporter "$WORK/nocap.yml" "$P"
EXP=$LAST_PID
check "the exporter runs as nobody with no capability" sh -c \
	"grep -q '^Uid:[[:space:]]*65534' /proc/$EXP/status && grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$EXP/status"
scrape "$P" "$WORK/1.txt"
check "no capability: root's VM is not served (it cannot be)" test "$(value "$WORK/1.txt" kvm_collector_vms)" = 0
check "no capability: the VMM is counted in $GAUGE, the forged names not" test "$(value "$WORK/1.txt" $GAUGE)" = 1
check "no capability: and in the drop reason vmm_not_permitted" test "$(value "$WORK/1.txt" "$DROP")" = 1
check "said once at warn: CAP_SYS_PTRACE missing, and the unit's fix" sh -c \
	"grep 'level=warn' '$WORK/exporter.log' | grep 'CAP_SYS_PTRACE' | grep 'AmbientCapabilities=CAP_SYS_PTRACE' | grep -q 'missing=CAP_SYS_PTRACE' && [ $(warns) = 1 ]"
curl -s "http://127.0.0.1:$P/" >"$WORK/1.html"
check "landing page: a warning line naming the fix" grep -qF \
	'<span class="bad">warning: 1 VMM process(es) not readable (missing CAP_SYS_PTRACE): grant CAP_SYS_PTRACE, AmbientCapabilities=CAP_SYS_PTRACE in the unit, --cap-add=SYS_PTRACE in a container</span>' "$WORK/1.html"
check "landing page: the drop reason in its column" grep -q 'vmm_not_permitted: 1' "$WORK/1.html"
check "metrics output still passes promtool" sh -c "promtool check metrics <'$WORK/1.txt'"

start_fixture root2 # after the first walk: only KVM's uevent brings it
R2=$FX
check "a root VMM started later is counted too (uevent)" until_value "$P" "$WORK/2.txt" $GAUGE 2
check "each VMM counted once in the drop reason" test "$(value "$WORK/2.txt" "$DROP")" = 2
kill "$R2"
check "a VMM that exits leaves the gauge" until_value "$P" "$WORK/3.txt" $GAUGE 1
kill "$R1"
check "the last one gone: the gauge is 0" until_value "$P" "$WORK/4.txt" $GAUGE 0
curl -s "http://127.0.0.1:$P/" >"$WORK/4.html"
check "landing page: no warning once none is left" sh -c "! grep -q 'not readable' '$WORK/4.html'"
check "no further warn while the count only fell" test "$(warns)" = 1
start_fixture root3
R3=$FX
check "from 0 again: counted" until_value "$P" "$WORK/5.txt" $GAUGE 1
check "from 0 again within 10 minutes: not said again (once per 10 minutes at most)" test "$(warns)" = 1
check "the one line says it is the first episode" grep -q 'level=warn.*CAP_SYS_PTRACE.*episodes=1' "$WORK/exporter.log"
kill "$EXP"

# ---- 2. no capability, a VM of its own beside root's ----
start_fixture own setpriv --reuid=65534 --regid=65534 --groups="$KVMGID"
OWN=$FX
: >"$WORK/exporter.log"
P=$(free_port)
EXPORTER_WRAP=$NOCAPS start_exporter "$WORK/nocap.yml" "$P"
EXP=$LAST_PID
scrape "$P" "$WORK/6.txt"
check "own VM: served, with its vCPUs" sh -c \
	"grep -q 'kvm_vm_info{vm=\"own\",.*pid=\"$OWN\"' '$WORK/6.txt' && [ '$(value "$WORK/6.txt" kvm_collector_vms)' = 1 ] && [ '$(value "$WORK/6.txt" kvm_collector_stats_fds)' = 3 ]"
check "own VM: root's VMM counted beside it" test "$(value "$WORK/6.txt" $GAUGE)" = 1
check "own VM: root's VM not served" sh -c "! grep -q 'vm=\"root3\"' '$WORK/6.txt'"
check "own VM: said once at warn" test "$(warns)" = 1
kill "$EXP"

# ---- 3. with CAP_SYS_PTRACE, as the unit runs it: nothing unreadable ----
: >"$WORK/exporter.log"
P=$(free_port)
EXPORTER_WRAP=$PTRACE start_exporter "$WORK/nocap.yml" "$P"
EXP=$LAST_PID
scrape "$P" "$WORK/7.txt"
check "CAP_SYS_PTRACE: root's and nobody's VMs served, none counted unreadable" sh -c \
	"[ '$(value "$WORK/7.txt" kvm_collector_vms)' = 2 ] && [ '$(value "$WORK/7.txt" $GAUGE)' = 0 ] && ! grep -q vmm_not_permitted '$WORK/7.txt'"
check "CAP_SYS_PTRACE: no warning" test "$(warns)" = 0
kill "$EXP"

# ---- 4. root in a user namespace of its own: the capability holds there only ----
if unshare --user --map-root-user true 2>/dev/null; then
	: >"$WORK/exporter.log"
	P=$(free_port)
	EXPORTER_WRAP="unshare --user --map-root-user" start_exporter "$WORK/nocap.yml" "$P"
	EXP=$LAST_PID
	scrape "$P" "$WORK/8.txt"
	check "user namespace: both VMMs counted, what is missing named" sh -c \
		"[ '$(value "$WORK/8.txt" $GAUGE)' = 2 ] && grep 'level=warn' '$WORK/exporter.log' | grep -q 'missing=user_namespace'"
	kill "$EXP"
else
	skip "user namespace" "unshare --user is refused here"
fi
kill "$OWN" "$R3"

# ---- 5. many unreadable VMMs under a low fd limit (ulimit -n 48): at most
# a quarter of it watched by pidfds, the rest counted without a watch (and
# recounted by each walk), and the exporter's own VM still served ----
NOFILE=48
MANY=()
for i in $(seq 20); do
	start_fixture "many$i" || break
	MANY+=("$FX")
done
check "20 root VMMs run" test "${#MANY[@]}" = 20
start_fixture own5 setpriv --reuid=65534 --regid=65534 --groups="$KVMGID"
OWN=$FX
config "$WORK/walk.yml" 2
: >"$WORK/exporter.log"
P=$(free_port)
EXPORTER_WRAP="prlimit --nofile=$NOFILE:$NOFILE $NOCAPS" start_exporter "$WORK/walk.yml" "$P"
EXP=$LAST_PID
check "fd limit $NOFILE: all 20 unreadable VMMs counted" until_value "$P" "$WORK/9.txt" $GAUGE 20
check "fd limit $NOFILE: the exporter's own VM still served" sh -c \
	"grep -q 'kvm_vm_info{vm=\"own5\",.*pid=\"$OWN\"' '$WORK/9.txt' && [ '$(value "$WORK/9.txt" kvm_collector_vms)' = 1 ]"
PIDFDS=$(ls -l "/proc/$EXP/fd" | grep -c 'anon_inode:\[pidfd\]')
check "fd limit $NOFILE: pidfds held within a quarter of it, the own VMM's included ($PIDFDS)" \
	test "$PIDFDS" -le $((NOFILE / 4 + 1))
check "fd limit $NOFILE: nothing lost for want of fds" sh -c "! grep -q 'no_fds\|Too many open files' '$WORK/9.txt' '$WORK/exporter.log'"
kill "${MANY[@]}"
check "the unwatched ones leave the gauge by the next walk" until_value "$P" "$WORK/10.txt" $GAUGE 0
kill "$EXP" "$OWN"

# ---- 6. a /proc mounted hidepid=invisible, no capability: other users'
# VMMs are invisible, which is said once at start with the fix ----
mkdir -m 0755 "$WORK/hproc"
if mount -t proc -o hidepid=invisible proc "$WORK/hproc" 2>/dev/null; then
	printf '    proc: %s\n' "$WORK/hproc" | cat "$WORK/nocap.yml" - >"$WORK/hide.yml"
	chmod 0644 "$WORK/hide.yml"
	: >"$WORK/exporter.log"
	P=$(free_port)
	EXPORTER_WRAP=$NOCAPS start_exporter "$WORK/hide.yml" "$P"
	scrape "$P" "$WORK/11.txt"
	check "hidepid=invisible: said once at warn, with the fix" sh -c \
		"[ \$(grep -c 'level=warn.*hidepid=invisible.*' '$WORK/exporter.log') = 1 ] && grep 'hidepid=invisible' '$WORK/exporter.log' | grep -q 'AmbientCapabilities=CAP_SYS_PTRACE'"
	curl -s "http://127.0.0.1:$P/" >"$WORK/11.html"
	check "hidepid=invisible: the landing page says so, with the fix" \
		grep -q 'hidepid=invisible.*AmbientCapabilities=CAP_SYS_PTRACE' "$WORK/11.html"
	# A VM of root's started now, made by its main thread as QEMU makes
	# them: KVM's uevent names a PID this /proc hides.
	HE=$LAST_PID
	start_fixture hidden env FIXTURE_ONE_THREAD=1
	check "hidepid=invisible: root's new VMM, named by KVM's uevent, is counted" \
		until_value "$P" "$WORK/11.txt" $GAUGE 1
	kill "$FX"
	check "... and leaves the count when it exits (its pidfd)" until_value "$P" "$WORK/11.txt" $GAUGE 0
	kill "$HE"
	: >"$WORK/exporter.log"
	P=$(free_port)
	EXPORTER_WRAP=$PTRACE start_exporter "$WORK/hide.yml" "$P"
	scrape "$P" "$WORK/12.txt"
	check "hidepid=invisible with CAP_SYS_PTRACE: nothing hidden, nothing said" sh -c "! grep -q hidepid '$WORK/exporter.log'"
	kill "$LAST_PID"
	umount "$WORK/hproc"
else
	skip "hidepid" "cannot mount a proc with hidepid here"
fi

summary
