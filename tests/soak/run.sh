#!/usr/bin/env bash
# The soak: the exporter built from the tree, with the KVM collector
# (passive discovery and the hand-over socket), the DCI collector and a
# processing: section sampling KVM series, run for SECONDS (default 600)
# while real KVM VMs start and stop (half of them under the preload shim,
# which hands their stats fds over), DCI4 suppliers come and go, SIGHUP
# reloads it every 15 s (the file alternately unchanged and changed),
# /metrics is scraped twice a second and hostile HTTP clients come and go.
# Every 30 s it reads the exporter's RSS, fds and threads from /proc and
# the soak VMs it serves; at the end a table and a verdict (the bounds are
# printed with it). Not part of `make check`: `make soak`.
# Usage: tests/soak/run.sh BUILD_DIR [SECONDS]
set -u
B=$(cd "${1:-build}" && pwd)
SECS=${2:-600}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../integration/lib.sh"
HOSTILE="$HERE/../integration/hostile_client.py"
FAKE="$HERE/../fixtures/dci4/fake_supplier.py"
FIXTURE="$B/tests/kvm_fixture"
SHIM="$B/lib/libbinstat_kvm_shim.so"
SUPPLIER="$B/tests/dci4_test_supplier"
MAX_VMS=8          # soak VMs alive at once at most
VM_EVERY=3         # seconds between two VM starts
SUP_EVERY=4        # seconds between two supplier starts
MAX_SUPS=4         # suppliers alive at once at most
RELOAD_EVERY=15
SAMPLE_EVERY=30
RSS_BOUND_PCT=10   # the last third's RSS floor at most this much above the first third's
RSS_PEAK_PCT=25    # and its peak at most this much above the first third's

# Loops in the background are subshells (not marked): ended here first,
# then every process carrying the suite's mark, then lib.sh's cleanup,
# which fails the run if any is left. Runs on any exit, SIGINT included.
LOOPS=()
soak_exit() {
	local rc=$? p
	[ "$BASHPID" = "$MAIN_PID" ] || return 0 # not from a subshell
	for p in "${LOOPS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${LOOPS[@]}"; do wait "$p" 2>/dev/null; done
	marked
	for p in "${MARKED[@]}"; do kill "$p" 2>/dev/null; done
	for _ in $(seq 50); do
		marked
		[ ${#MARKED[@]} = 0 ] && break
		sleep 0.1
	done
	for p in "${MARKED[@]}"; do kill -9 "$p" 2>/dev/null; done
	(exit "$rc")
	cleanup
}
trap soak_exit EXIT
trap 'exit 130' INT TERM

for f in "$FIXTURE" "$SHIM" "$SUPPLIER" "$EXPORTER"; do
	[ -x "$f" ] || [ -f "$f" ] || { fail "$f is built" "run make soak, which builds it"; exit 1; }
done
if [ ! -w /dev/kvm ]; then
	skip "soak with KVM VM churn" "/dev/kvm is missing or not writable here"
	summary
	exit 0
fi

now() { date +%s; }
T0=$(now)
END=$((T0 + SECS))
mkdir -p "$WORK/dci"
: >"$WORK/vm.events" >"$WORK/sup.events" >"$WORK/scrapes" >"$WORK/reloads" >"$WORK/hostile.events"
: >"$WORK/vms.alive"
echo 0 >"$WORK/sups.alive"

# config FILE VARIANT: variant a samples exits; b also the VMs' page gauge
# and keeps 30 exit histories rather than 60 (a changed definition).
config() {
	local hist=60
	[ "$2" = b ] && hist=30
	cat >"$1.tmp" <<-EOF
	global:
	  plugin_dir: $B/plugins
	collectors:
	  kvm:
	    mode: per_vm
	    passive: true
	    rescan_interval_seconds: 10
	    handover:
	      socket: $WORK/kvm.sock
	      allow_uids: [$(id -u)]
	  dci:
	    supplier_dir: $WORK/dci
	    timeout_seconds: 1
	processing:
	  sample_interval: 250ms
	  source_ttl: 20s
	  groups:
	    - name: exits
	      select: 'kvm_vcpu_exits_total'
	      x: delta
	      statistics:
	        - {name: soak_exits, type: value, mode: products, range_min: 0}
	        - {name: soak_exits_per_second, type: history, mode: products, period: 1s, entries_max: $hist}
	        - {name: soak_exits_recent, type: raw, entries_max: 16}
	      template:
	        name: soak_exits_voi
	        stats:
	          - sum
	          - max
	          - tdigest: {compression: 100, quantiles: [0.5, 0.99]}
	EOF
	if [ "$2" = b ]; then
		cat >>"$1.tmp" <<-EOF
		    - name: pages
		      select: 'kvm_vm_pages_4k'
		      statistics:
		        - {name: soak_pages_range, type: range, range_min: 0, range_max: 1000000000}
		EOF
	fi
	mv "$1.tmp" "$1" # replaced by rename, as docs/operating.md says
}

# A crash leaves its core in WORK, which is then kept (core_pattern permitting).
cd "$WORK" || exit 1
ulimit -c unlimited 2>/dev/null
CFG="$WORK/soak.yml"
config "$CFG" a
PORT=$(free_port)
start_exporter "$CFG" "$PORT" || { fail "the exporter starts" "$(tail -5 "$WORK/exporter.log")"; exit 1; }
EXP=$LAST_PID

# fd_classes PID: "all stats pidfds sockets procstat" from the exporter's
# fd table: its KVM stats fds and pidfds (one a VMM), its sockets (HTTP
# connections, suppliers, hand-over peers) and the files of VMMs and their
# threads under /proc it keeps open; what is left is the fds it holds
# whatever runs.
fd_classes() {
	ls -l "/proc/$1/fd" 2>/dev/null | awk '
		/ -> / { n++ }
		/anon_inode:kvm-v[a-z]*-stats/ { s++ }
		/anon_inode:\[pidfd\]/ { p++ }
		/-> socket:/ { k++ }
		/-> \/proc\// { t++ }
		END { print n + 0, s + 0, p + 0, k + 0, t + 0 }'
}
# thread_classes PID: "all per-connection" in one read of its threads:
# libmicrohttpd's thread per HTTP connection comes and goes with clients.
thread_classes() { cat /proc/"$1"/task/*/comm 2>/dev/null | awk '{ n++ } /^MHD-connection$/ { c++ } END { print n + 0, c + 0 }'; }
status_of() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
vm_lines() { grep -o '^kvm_vm_info{vm="soak-[0-9]*' "$1" | sed 's/.*vm="//' | sort -u; }

# Before any churn: the baseline the teardown must come back to.
curl -s "http://127.0.0.1:$PORT/metrics" >/dev/null
settled_fds "$EXP" >/dev/null
read -r BASE_FDS BASE_STATS BASE_PIDFDS _ BASE_PROC < <(fd_classes "$EXP")
BASE_THREADS=$(status_of "$EXP" Threads)
BASE_RSS=$(status_of "$EXP" VmRSS)
echo "# soak: ${SECS} s, exporter pid $EXP on port $PORT; baseline fds $BASE_FDS (KVM stats $BASE_STATS, pidfds $BASE_PIDFDS, /proc files $BASE_PROC: other VMMs'), threads $BASE_THREADS, RSS $BASE_RSS KiB"

# kill_own PID WORD: SIGTERM to PID only while its command line still
# holds WORD: bash reaps a child that ended by itself (a supplier that
# vanishes), and its pid may since be another process's or thread's.
kill_own() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -q -- "$2" && kill "$1" 2>/dev/null; }

# ---- VM churn: one VMM of one VM every VM_EVERY s, the odd ones under the
# preload shim handing over, the oldest stopped past MAX_VMS.
vm_loop() {
	local n=0 alive=() names=() ready vcpus p
	while [ "$(now)" -lt "$END" ]; do
		if [ ${#alive[@]} -ge $MAX_VMS ]; then
			kill_own "${alive[0]}" kvm_fixture
			wait "${alive[0]}" 2>/dev/null
			echo "stopped ${names[0]}" >>"$WORK/vm.events"
			alive=("${alive[@]:1}") names=("${names[@]:1}")
			printf '%s\n' "${names[@]}" >"$WORK/vms.alive.tmp"
			mv "$WORK/vms.alive.tmp" "$WORK/vms.alive"
		fi
		n=$((n + 1))
		ready="$WORK/vm.$n.ready"
		vcpus=$((1 + (n / 2) % 2))
		if ((n % 2)); then
			LD_PRELOAD="$SHIM" BINSTAT_KVM_HANDOVER="$WORK/kvm.sock" BINSTAT_KVM_NAME="soak-$n" \
				"$FIXTURE" 1 $vcpus 7 "$ready" -name "guest=soak-$n" >>"$WORK/fixture.log" 2>&1 &
		else
			"$FIXTURE" 1 $vcpus 7 "$ready" -name "guest=soak-$n" >>"$WORK/fixture.log" 2>&1 &
		fi
		p=$!
		for _ in $(seq 200); do [ -s "$ready" ] && break; sleep 0.05; done
		if [ -s "$ready" ]; then
			echo "started soak-$n" >>"$WORK/vm.events"
		else
			echo "failed soak-$n" >>"$WORK/vm.events"
		fi
		alive+=("$p") names+=("soak-$n")
		printf '%s\n' "${names[@]}" >"$WORK/vms.alive.tmp"
		printf '%s\n' "${alive[@]}" >"$WORK/vms.pids.tmp"
		mv "$WORK/vms.alive.tmp" "$WORK/vms.alive"
		mv "$WORK/vms.pids.tmp" "$WORK/vms.pids"
		sleep $VM_EVERY
	done
}

# ---- supplier churn: a supplier every SUP_EVERY s, each of another kind
# (the C test supplier, well-behaved, large, partial replies, a reset, a
# statistic that grows, one dying mid-reply), the oldest stopped past
# MAX_SUPS; a stopped supplier's socket goes with it, as a supplier's does.
sup_loop() {
	local n=0 alive=() socks=() modes=(c normal big partial reset changing vanish) mode name p c_up=0
	while [ "$(now)" -lt "$END" ]; do
		if [ ${#alive[@]} -ge $MAX_SUPS ]; then
			kill_own "${alive[0]}" supplier
			wait "${alive[0]}" 2>/dev/null
			[ "${socks[0]}" = c ] && c_up=0
			[ "${socks[0]}" = c ] || rm -f "$WORK/dci/${socks[0]}.sock"
			echo "stopped ${socks[0]}" >>"$WORK/sup.events"
			alive=("${alive[@]:1}") socks=("${socks[@]:1}")
		fi
		mode=${modes[n % ${#modes[@]}]}
		n=$((n + 1))
		[ "$mode" = c ] && [ $c_up = 1 ] && mode=normal
		name="sup$n-$mode"
		if [ "$mode" = c ]; then
			"$SUPPLIER" "$WORK/dci" >"$WORK/sup.$n.out" 2>&1 &
			p=$! name=c c_up=1
		else
			$PY "$FAKE" "$WORK/dci" "$name" "$mode" >"$WORK/sup.$n.out" 2>&1 &
			p=$!
		fi
		for _ in $(seq 100); do grep -q ready "$WORK/sup.$n.out" 2>/dev/null && break; sleep 0.05; done
		echo "started $name" >>"$WORK/sup.events"
		alive+=("$p") socks+=("$name")
		echo "${#alive[@]}" >"$WORK/sups.alive"
		sleep $SUP_EVERY
	done
	for p in "${!alive[@]}"; do
		kill_own "${alive[p]}" supplier
		wait "${alive[p]}" 2>/dev/null
		[ "${socks[p]}" = c ] || rm -f "$WORK/dci/${socks[p]}.sock"
		echo "stopped ${socks[p]}" >>"$WORK/sup.events"
	done
	echo 0 >"$WORK/sups.alive"
}

# ---- reloads: SIGHUP every RELOAD_EVERY s, the file unchanged and changed
# in turn (a, a, b, b, a, ...); each must log "configuration reloaded".
reload_loop() {
	local k=0 n variant
	while :; do
		sleep $RELOAD_EVERY
		[ "$(now)" -lt "$END" ] || break
		k=$((k + 1))
		variant=a
		(((k / 2) % 2)) && variant=b
		n=$(grep -c 'configuration reloaded' "$WORK/exporter.log")
		config "$CFG" $variant
		kill -HUP "$EXP" 2>/dev/null
		for _ in $(seq 100); do
			[ "$(grep -c 'configuration reloaded' "$WORK/exporter.log")" -gt "$n" ] && break
			sleep 0.1
		done
		if [ "$(grep -c 'configuration reloaded' "$WORK/exporter.log")" -gt "$n" ]; then
			echo "ok $variant" >>"$WORK/reloads"
		else
			echo "failed $variant" >>"$WORK/reloads"
		fi
	done
}

# ---- scrapes: /metrics twice a second by the clock (and /statistics/
# every tenth), each line the HTTP status (000: no answer within 20 s).
scrape_loop() {
	local k=0 next code wait_ns
	next=$(date +%s%N)
	while [ "$(now)" -lt "$END" ]; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$PORT/metrics")
		echo "$code" >>"$WORK/scrapes"
		k=$((k + 1))
		if ((k % 10 == 0)); then
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 "http://127.0.0.1:$PORT/statistics/")
			echo "statistics $code" >>"$WORK/scrapes.statistics"
		fi
		next=$((next + 500000000))
		wait_ns=$((next - $(date +%s%N)))
		[ $wait_ns -gt 500000000 ] && wait_ns=500000000
		[ $wait_ns -gt 0 ] && sleep "$(printf '0.%09d' $wait_ns)"
	done
}

# ---- hostile clients: 4 addresses x 4 connections, each kind for 8 s in
# turn, then 2 s of quiet.
hostile_loop() {
	local k=0 modes=(slowloris idle noread pipeline slowread body keepalive tlshold) mode left
	while :; do
		left=$((END - $(now)))
		[ $left -gt 1 ] || break
		mode=${modes[k % ${#modes[@]}]}
		k=$((k + 1))
		[ $left -gt 8 ] && left=8
		timeout 30 $PY "$HOSTILE" "$PORT" "$mode" 127.0.3.1x4 4 "$left" >/dev/null 2>&1
		echo "$mode $?" >>"$WORK/hostile.events"
		sleep 2
	done
}

# ---- every SAMPLE_EVERY s: the exporter from /proc and one scrape.
count() { grep -c "$1" "$2" 2>/dev/null; }
sample() { # sample T: a row of the table
	local all stats pidfds socks procstat rss threads conns served running sources
	read -r all stats pidfds socks procstat < <(fd_classes "$EXP")
	rss=$(status_of "$EXP" VmRSS)
	read -r threads conns < <(thread_classes "$EXP")
	curl -s --max-time 20 "http://127.0.0.1:$PORT/metrics" >"$WORK/sample.prom"
	served=$(vm_lines "$WORK/sample.prom" | wc -l)
	running=$(wc -l <"$WORK/vms.alive")
	sources=$(awk '$1 == "binstat_processing_sources" { print $2 }' "$WORK/sample.prom")
	printf '%s %s %s %s %s %s %s %s %s %s %s %s %s\n' "$1" "$rss" "$all" "$stats" "$pidfds" "$socks" \
		$((all - stats - pidfds - socks - procstat)) "$threads" "$conns" "$served" "$running" \
		"$(cat "$WORK/sups.alive" 2>/dev/null || echo 0)" "${sources:-0}" >>"$WORK/table"
	echo "$(count '^200$' "$WORK/scrapes")/$(wc -l <"$WORK/scrapes")" >>"$WORK/table.scrapes"
}
CRASH=""
: >"$WORK/table" >"$WORK/table.scrapes"
sample 0
vm_loop &
LOOPS+=($!)
sup_loop &
LOOPS+=($!)
reload_loop &
LOOPS+=($!)
scrape_loop &
LOOPS+=($!)
hostile_loop &
LOOPS+=($!)

next=$((T0 + SAMPLE_EVERY))
while [ "$(now)" -lt "$END" ]; do
	if ! kill -0 "$EXP" 2>/dev/null; then
		wait "$EXP"
		st=$?
		CRASH="the exporter exited at $(($(now) - T0)) s, status $st"
		[ $st -gt 128 ] && CRASH="$CRASH (SIG$(kill -l $((st - 128))))"
		KEEP_WORK=1
		CRASH="$CRASH; its log, and any core, kept in $WORK"
		break
	fi
	if [ "$(now)" -ge "$next" ]; then
		sample $((next - T0))
		paste -d' ' "$WORK/table" "$WORK/table.scrapes" | tail -1
		next=$((next + SAMPLE_EVERY))
	fi
	sleep 1
done
[ -z "$CRASH" ] && sample "$(($(now) - T0))"

# The loops end at the deadline by themselves (a scrape, a hostile run or a
# VM start at most before): 60 s at most, else they are ended.
for p in "${LOOPS[@]}"; do
	for _ in $(seq 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
LOOPS=()

echo
echo "  t(s) RSS(KiB)  fds: all kvm-stats pidfds sockets rest  threads: all per-conn  VMs served/running  suppliers  sources  scrapes 200/all"
paste -d' ' "$WORK/table" "$WORK/table.scrapes" |
	awk '{ printf "%6s %8s  %9s %9s %6s %7s %4s  %12s %8s  %11s/%-7s %10s %8s  %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 }'
echo

if [ -n "$CRASH" ]; then
	fail "no crash" "$CRASH; log: $(tail -8 "$WORK/exporter.log")"
	summary
	exit 1
fi
pass "no crash: the exporter ran the ${SECS} s"

# The soak VMs still running are served, each once, within 15 s of the churn's end.
want=$(sort "$WORK/vms.alive" | tr '\n' ' ')
for _ in $(seq 30); do
	curl -s --max-time 20 "http://127.0.0.1:$PORT/metrics" >"$WORK/end.prom"
	got=$(vm_lines "$WORK/end.prom" | tr '\n' ' ')
	[ "$got" = "$want" ] && break
	sleep 0.5
done
check "the soak VMs running at the end are the ones served ($want)" test "$got" = "$want"

# Teardown: every soak VM and supplier stopped; none of them served after,
# and the exporter's fds and threads back to the baseline.
while read -r p; do kill_own "$p" kvm_fixture; done <"$WORK/vms.pids"
while read -r p; do
	for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
done <"$WORK/vms.pids"
VMS_STOPPED_END=$(wc -l <"$WORK/vms.alive")
for _ in $(seq 100); do
	curl -s --max-time 20 "http://127.0.0.1:$PORT/metrics" >"$WORK/after.prom"
	[ -z "$(vm_lines "$WORK/after.prom")" ] && break
	sleep 0.2
done
check "no soak VM served once all are stopped" test -z "$(vm_lines "$WORK/after.prom")"
# (Other VMMs on the host may come and go meanwhile: their stats fds and
# pidfds are left out, and the exporter's count read just before its fds.)
for _ in $(seq 100); do
	stats_held=$(metric "$PORT" kvm_collector_stats_fds)
	settled_fds "$EXP" >/dev/null
	read -r END_FDS END_STATS END_PIDFDS _ END_PROC < <(fd_classes "$EXP")
	END_THREADS=$(status_of "$EXP" Threads)
	[ $((END_FDS - END_STATS - END_PIDFDS - END_PROC)) = $((BASE_FDS - BASE_STATS - BASE_PIDFDS - BASE_PROC)) ] &&
		[ "$END_THREADS" = "$BASE_THREADS" ] && [ "$END_STATS" = "$stats_held" ] && break
	sleep 0.2
done
END_RSS=$(status_of "$EXP" VmRSS)
check "fds back to the baseline: $END_FDS, of them $END_STATS KVM stats fds, $END_PIDFDS pidfds and $END_PROC /proc files (other VMMs'), was $BASE_FDS ($BASE_STATS, $BASE_PIDFDS, $BASE_PROC)" \
	test $((END_FDS - END_STATS - END_PIDFDS - END_PROC)) = $((BASE_FDS - BASE_STATS - BASE_PIDFDS - BASE_PROC))
check "the KVM stats fds the exporter holds are the ones it counts ($END_STATS, kvm_collector_stats_fds $stats_held)" \
	test "$END_STATS" = "$stats_held"
check "threads back to the baseline ($END_THREADS, was $BASE_THREADS)" test "$END_THREADS" = "$BASE_THREADS"

# Flat: the last third's peaks against the first third's (the row at 0 s,
# before any churn, left out).
ROWS=$(($(wc -l <"$WORK/table") - 1))
THIRD=$((ROWS / 3))
[ $THIRD -ge 1 ] || THIRD=1
peak() { tail -n +2 "$WORK/table" | sed -n "$1" | awk -v c="$2" 'BEGIN { m = 0 } $c > m { m = $c } END { print m }'; }
floor() { tail -n +2 "$WORK/table" | sed -n "$1" | awk -v c="$2" 'NR == 1 || $c < m { m = $c } END { print m }'; }
rss1=$(peak "1,${THIRD}p" 2) rss3=$(peak "$((ROWS - THIRD + 1)),\$p" 2)
low1=$(floor "1,${THIRD}p" 2) low3=$(floor "$((ROWS - THIRD + 1)),\$p" 2)
rest1=$(peak "1,${THIRD}p" 7) rest3=$(peak "$((ROWS - THIRD + 1)),\$p" 7)
tail -n +2 "$WORK/table" | awk '{ print $8 - $9 }' >"$WORK/own_threads"
own1=$(sed -n "1,${THIRD}p" "$WORK/own_threads" | sort -n | tail -1)
own3=$(sed -n "$((ROWS - THIRD + 1)),\$p" "$WORK/own_threads" | sort -n | tail -1)
# A leak raises the floor; what the connections and VMs of the moment
# hold (a thread's stack, a burst of hostile clients) moves the peaks.
check "RSS flat: last third's floor $low3 KiB within +${RSS_BOUND_PCT}% of the first third's $low1 KiB" \
	test $((low3 * 100)) -le $((low1 * (100 + RSS_BOUND_PCT)))
check "RSS bounded: last third's peak $rss3 KiB within +${RSS_PEAK_PCT}% of the first third's $rss1 KiB" \
	test $((rss3 * 100)) -le $((rss1 * (100 + RSS_PEAK_PCT)))
check "fds flat: those not tied to a VM or a connection peak at $rest3 in the last third, at most the first third's $rest1" \
	test "$rest3" -le "$rest1"
check "threads flat: those not serving a connection peak at $own3 in the last third, at most the first third's $own1" \
	test "$own3" -le "$own1"
ANSWERED=$(count '^200$' "$WORK/scrapes")
TOTAL=$(wc -l <"$WORK/scrapes")
check "every scrape answered 200: $ANSWERED of $TOTAL" test "$ANSWERED" = "$TOTAL" -a "$TOTAL" -gt 0
STATS_OK=$(count ' 200$' "$WORK/scrapes.statistics")
STATS_ALL=$(wc -l <"$WORK/scrapes.statistics" 2>/dev/null || echo 0)
check "every /statistics/ listing answered 200: $STATS_OK of $STATS_ALL" test "$STATS_OK" = "$STATS_ALL"
RL_OK=$(count '^ok' "$WORK/reloads")
RL_ALL=$(wc -l <"$WORK/reloads")
RL_CHANGED=$(awk 'NR > 1 && $2 != prev { c++ } { prev = $2 } END { print c + 0 }' "$WORK/reloads")
check "every reload taken: $RL_OK of $RL_ALL ($RL_CHANGED with the file changed)" test "$RL_OK" = "$RL_ALL" -a "$RL_ALL" -gt 0
check "last reload successful" test "$(awk '$1 == "binstat_exporter_config_last_reload_successful" { print $2 }' "$WORK/after.prom")" = 1
VM_STARTED=$(count '^started' "$WORK/vm.events")
VM_FAILED=$(count '^failed' "$WORK/vm.events")
VM_STOPPED=$(($(count '^stopped' "$WORK/vm.events") + VMS_STOPPED_END))
check "VMs started: $VM_STARTED ($(grep -c '^started soak-[0-9]*[13579]$' "$WORK/vm.events") under the shim), stopped $VM_STOPPED, $VM_FAILED failed to start" \
	test "$VM_FAILED" = 0 -a "$VM_STARTED" -gt 0
SUP_STARTED=$(count '^started' "$WORK/sup.events")
SUP_STOPPED=$(count '^stopped' "$WORK/sup.events")
echo "       suppliers started $SUP_STARTED, stopped $SUP_STOPPED; hostile client runs $(wc -l <"$WORK/hostile.events")"

kill "$EXP"
for _ in $(seq 100); do kill -0 "$EXP" 2>/dev/null || break; sleep 0.1; done
check "the exporter stops on SIGTERM" sh -c "! kill -0 $EXP 2>/dev/null"
wait "$EXP" 2>/dev/null
check "the exporter exits 0" test $? = 0
echo "summary: RSS first $(awk 'NR == 2 { print $2 }' "$WORK/table") last $(awk 'END { print $2 }' "$WORK/table") max $(peak '1,$p' 2) KiB (baseline $BASE_RSS, after the teardown $END_RSS);" \
	"fds $BASE_FDS -> $END_FDS; threads $BASE_THREADS -> $END_THREADS; scrapes $ANSWERED/$TOTAL;" \
	"VMs $VM_STARTED started / $VM_STOPPED stopped; suppliers $SUP_STARTED / $SUP_STOPPED; reloads $RL_OK/$RL_ALL"
summary
