#!/usr/bin/env bash
# The Xen collector against Debian's real cxenstored and the real
# libxenstore, with tests/fixtures/xen/fakexen.c standing in for the hypervisor
# beneath libxengnttab and libxenevtchn: simulated guests (tests/fixtures/xen/guest.c,
# on lib/pvstats) advertise sets, answer, withdraw, die and misbehave.
# Usage: tests/integration/xen.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
FAKE="$B/tests/libfakexen.so"
GUEST="$B/tests/xen_guest"
XENSTORED=/usr/lib/xen-4.17/bin/xenstored
TIMEOUT=0.5

if [ ! -f "$B/plugins/xen.so" ]; then
	skip "xen" "the xen collector was not built (make found no libxen-dev)"
	summary
	exit 0
fi
if [ ! -x "$XENSTORED" ]; then
	skip "xen" "cxenstored ($XENSTORED, package xen-utils-4.17) is not installed"
	summary
	exit 0
fi
# Every wait here is bounded by the clock, not by a count of tries: a
# scrape that hangs must not stretch it (scrape itself gives up at 10 s).
# within SECONDS CMD...: true once CMD succeeds, tried every 0.1 s.
within() {
	local end=$(($(date +%s%N) + $1 * 1000000000))
	shift
	until "$@"; do
		[ "$(date +%s%N)" -lt "$end" ] || return 1
		sleep 0.1
	done
}
export FAKEXEN_DIR="$WORK/hv" XENSTORED_RUNDIR="$WORK/xs"
# The stand-in is built without sanitizers; an ASan daemon accepts it preloaded.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
mkdir -p "$FAKEXEN_DIR" "$XENSTORED_RUNDIR"
FAKEXEN_LAX=1 LD_PRELOAD="$FAKE" "$XENSTORED" -N -F "$WORK/xenstored.pid" >"$WORK/xenstored.log" 2>&1 &
PIDS+=("$!")
# Its start takes seconds on a loaded host, and its socket can be there
# before it takes connections (xs_open then failed): waited until it answers.
xs_up() { xenstore-read / >/dev/null 2>&1; }
within 20 xs_up
check "cxenstored serves on its socket with the stand-in beneath it" xenstore-write /probe 1

toolstack() { LD_PRELOAD="$FAKE" "$GUEST" "$@"; }
guest() { # guest DOMID MODE [N]: a simulated guest, until it says ready
	LD_PRELOAD="$FAKE" "$GUEST" "$@" >"$WORK/guest$1.log" 2>&1 &
	LAST_GUEST=$!
	PIDS+=("$LAST_GUEST")
	within 20 grep -qs ready "$WORK/guest$1.log" && return 0
	echo "guest $1 ($2) not ready after 20 s; its log ends: $(tail -n 3 "$WORK/guest$1.log")"
	return 1
}
scrape() { curl -s --max-time 10 "http://127.0.0.1:$PORT/metrics"; }
dropped() { scrape | awk -v m="binstat_collector_dropped_total{collector=\"xen\",reason=\"$1\"}" '$1 == m { print $2 }'; }
set_labels() { echo "domid=\"$1\",domain=\"$2\",provider=\"$3\",set=\"$4\""; }
gnt_maps() { grep -c "$FAKEXEN_DIR/gnt" "/proc/$EXP/maps"; }
fds() { ls "/proc/$EXP/fd" | wc -l; }
# fd_list: the exporter's fds as "FD TARGET", sorted; fd_new LIST: those
# not in an earlier LIST (a number reused for another target counts),
# each with its fdinfo flags and, for a socket, what ss says of it (its
# peer for a stream socket, its owner), so a failure names what leaked. A
# connected datagram socket (u_dgr ESTAB) is the stand-in's wake socket to
# a peer it notified; a TCP one a scrape's connection.
fd_list() {
	local f
	for f in "/proc/$EXP/fd/"*; do
		printf '%s %s\n' "${f##*/}" "$(readlink "$f" 2>/dev/null)"
	done | sort
}
fd_new() {
	local fd target ino
	fd_list | comm -13 "$1" - | while read -r fd target; do
		echo "new fd $fd -> $target ($(grep -h '^flags' "/proc/$EXP/fdinfo/$fd" 2>/dev/null))"
		ino=$(sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' <<<"$target")
		[ -n "$ino" ] || continue
		ss -axpeH 2>/dev/null | awk -v i="$ino" '$6 == i || $8 == i' | sed 's/^/  unix: /'
		ss -atupeH 2>/dev/null | grep -w "ino:$ino" | sed 's/^/  inet: /'
	done
}
absent() { ! scrape | grep -q "$1"; }
# quiet: no scrape's connection open at the exporter's end, nor the HTTP
# watchdog's probe (a socketpair of which the exporter holds both ends,
# every 5 s): a baseline of fds taken then holds only what stays.
quiet() {
	local own
	own=$(fd_list | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p')
	[ -z "$(ss -Htn state established state close-wait "( sport = :$PORT )")" ] &&
		! ss -Hx | awk -v own="$own" 'BEGIN { n = split(own, a, "\n"); for (i = 1; i <= n; i++) s[a[i]] = 1 }
			s[$6] && s[$8] { found = 1 } END { exit !found }'
}
present() { scrape | grep -q "$1"; }
until_gone() { # until_gone PATTERN: true once a scrape no longer matches, within 10 s
	within 10 absent "$1" && return 0
	echo "still in a scrape after 10 s: $(scrape | grep -m 3 "$1")"
	return 1
}
# stop PID: SIGTERM, then gone within 10 s (a guest withdrawing waits 5 s
# at most for the agent), reaped; else SIGKILL, saying what it was doing.
exited() {
	local st=""
	{ read -r _ _ st _ <"/proc/$1/stat"; } 2>/dev/null
	[ -z "$st" ] || [ "$st" = Z ]
}
stop() {
	kill -TERM "$1" 2>/dev/null
	if ! within 10 exited "$1"; then
		echo "pid $1 ($(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)) still runs 10 s after SIGTERM: killed"
		kill -9 "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
	return 0
}

cat >"$WORK/xen.yml" <<EOF
collectors:
  kvm: {enabled: false}
  xen:
    create_stats_key: true
    timeout_seconds: $TIMEOUT
    rules:
      - match: {provider: "network-*", stat: bytes}
        name: "xen_netfront_{set}_{stat}"
        type: counter
        help: "Bytes the guest's network frontend counted."
EOF
PORT=$(free_port)
toolstack add 1 one
LD_PRELOAD="$FAKE" start_exporter "$WORK/xen.yml" "$PORT"
EXP=$LAST_PID
check "the agent found domain 1" wait_for_metric "$PORT" '^xen_pv_domains 1$'
check "create_stats_key: /local/domain/1/stats made, owned by the guest" \
	sh -c "xenstore-ls -p /local/domain/1 | grep -q '^stats = \"\".*(n1)$'"
within 5 quiet
BASE_FDS=$(fds)
fd_list >"$WORK/fds.base"

# ---- a well-behaved guest ----
guest 1 normal
TX=$(set_labels 1 one network-0 Tx)
check "normal: the set is live at once" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$TX} 1$"
scrape >"$WORK/a"
scrape >"$WORK/b"
pa=$(awk -v m="xen_pv_stat{$TX,stat=\"packets\"}" '$1 == m { print $2 }' "$WORK/a")
pb=$(awk -v m="xen_pv_stat{$TX,stat=\"packets\"}" '$1 == m { print $2 }' "$WORK/b")
check "normal: one update per request, so per scrape ($pa -> $pb)" test "$((pb - pa))" = 1
check "normal: the provider's dispatch returns once it has answered" grep -q '^dispatched$' "$WORK/guest1.log"
has() { check "normal: $1" grep -qxF -- "$1" "$WORK/b"; }
has "xen_pv_stat{$TX,stat=\"queue delta\"} -$pb"
has "xen_pv_stat{$TX,stat=\"load\"} $(awk -v p="$pb" 'BEGIN { printf "%g", p / 2 }')"
has "xen_pv_stat_text_info{$TX,stat=\"link\",value=\"up, 10Gb/s\"} 1"
has "# TYPE xen_netfront_tx_bytes_total counter"
has "xen_netfront_tx_bytes_total{$TX} $((pb * 1000))"
has "xen_pv_stats_set_statistics{$TX} 5"
check "normal: promtool accepts the output" sh -c "promtool check metrics <'$WORK/b'"
check "normal: two sets mapped (name pages unmapped after the copy)" test "$(gnt_maps)" = 2

check "advertised: the sets' keys in xenstore, event-channel written" sh -c "
	xenstore-exists /local/domain/1/stats/network-0/Tx/event-channel &&
	xenstore-exists /local/domain/1/stats/network-0/Rx/event-channel"
kill -TERM "$LAST_GUEST"
check "withdrawal: the sets' series go at once" until_gone "domid=\"1\""
unmapped() { [ "$(gnt_maps)" = 0 ]; }
within 10 unmapped
check "withdrawal: ports and mappings released ($(gnt_maps) maps)" unmapped
stop "$LAST_GUEST"
check "withdrawal: each set's keys, then the provider's key with no set left, gone from xenstore" sh -c "
	! xenstore-exists /local/domain/1/stats/network-0/Tx &&
	! xenstore-exists /local/domain/1/stats/network-0/Rx &&
	! xenstore-exists /local/domain/1/stats/network-0 &&
	xenstore-exists /local/domain/1/stats && [ -z \"\$(xenstore-list /local/domain/1/stats)\" ]"

# How a withdrawal learns that the agent closed its port: the guest asks Xen
# for its port's state (EVTCHNOP_status on DOMID_SELF); with a 5 s grace
# period it is done as soon as the agent unbinds. A guest that cannot make
# hypercalls (no privcmd) waits the whole grace period, here 1.5 s.
# withdraw_timed GRACE_MS: starts guest 1, makes it withdraw, and sets CLOSED
# (ports the agent was seen to close) and MS (how long it took) from its report.
withdraw_timed() {
	GUEST_GRACE_MS=$1 guest 1 normal
	wait_for_metric "$PORT" "^xen_pv_stats_set_up{$TX} 1$"
	kill -TERM "$LAST_GUEST"
	within 10 grep -q '^withdrawn:' "$WORK/guest1.log"
	LINE=$(grep '^withdrawn:' "$WORK/guest1.log")
	CLOSED=$(sed -n 's/.*agent closed \([0-9]\) of 2.*/\1/p' <<<"$LINE")
	MS=$(sed -n 's/.* in \([0-9]*\) ms$/\1/p' <<<"$LINE")
}
withdraw_timed 5000
check "withdrawal: the agent's unbind seen through the port's state ($LINE)" \
	test "${CLOSED:-x}" = 2 -a "${MS:-9999}" -lt 2000
check "withdrawal: then the sets' series are gone" until_gone "domid=\"1\""
FAKEXEN_NO_HYPERCALLS=1 withdraw_timed 1500
check "withdrawal without hypercalls: the grace period as the fallback ($LINE)" \
	test "${CLOSED:-x}" = 0 -a "${MS:-0}" -ge 3000
check "withdrawal without hypercalls: the series are gone too" until_gone "domid=\"1\""
within 10 unmapped
check "withdrawals: ports and mappings released ($(gnt_maps) maps)" unmapped

# ---- a domain that dies ----
toolstack add 2 two
guest 2 normal
check "domain 2: live" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$(set_labels 2 two network-0 Rx)} 1$"
toolstack remove 2
check "domain 2 destroyed: everything it had goes" until_gone 'domid="2"'
wait_for_metric "$PORT" '^xen_pv_domains 1$'
check "domain 2 destroyed: the domain count falls back ($(scrape | grep '^xen_pv_domains'))" \
	wait_for_metric "$PORT" '^xen_pv_domains 1$'
kill -TERM "$LAST_GUEST" 2>/dev/null

# ---- hostile guests, each on its own domain next to a good one ----
guest 1 normal
GOOD=$LAST_GUEST
check "good guest back" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$TX} 1$"
# The good guest's fds: the stand-in keeps a socket to each peer it wakes.
within 5 quiet
GOOD_FDS=$(fds)
fd_list >"$WORK/fds.good"
# baseline WHAT PATTERN: once PATTERN has left the output, only the good
# guest's two value pages stay mapped and the fds are back where they were.
# The series leave the output before the pages are unmapped, and the last
# scrape's connection is closed just after curl has its answer: the state
# is polled until it settles (10 s at most), then reported as it stands.
settled() { [ "$(gnt_maps)" = 2 ] && [ "$(fds)" -le "$GOOD_FDS" ]; }
settled_or_new() { settled || { fd_new "$WORK/fds.good"; return 1; }; }
baseline() {
	check "$1: its series leave the output" until_gone "$2"
	within 10 settled
	check "$1: mappings and fds back to the baseline within 10 s ($(gnt_maps) maps, $(fds) fds; want 2 and at most $GOOD_FDS)" \
		settled_or_new
}
DOM=10
# hostile MODE REASON STATS: the reason is counted, the set is live with
# STATS statistics (or not live: -), and the good guest is untouched.
hostile() {
	local mode=$1 reason=$2 stats=$3 labels out
	DOM=$((DOM + 1))
	toolstack add "$DOM" "bad$DOM"
	guest "$DOM" "$mode"
	labels=$(set_labels "$DOM" "bad$DOM" hostile "$mode")
	# The watch, the scan, a retry after the rest period: until the
	# refusal is counted and, for a set that stays, it is served.
	seen() {
		[ "$(dropped "$reason")" -ge 1 ] 2>/dev/null || return 1
		[ "$stats" = - ] || scrape | grep -qxF "xen_pv_stats_set_statistics{$labels} $stats"
	}
	within 10 seen
	out=$(scrape)
	check "$mode: counted as $reason" test "$(dropped "$reason")" -ge 1
	if [ "$stats" = - ]; then
		check "$mode: the set is refused" sh -c "! grep -q 'set=\"$mode\"' <<'EOF'
$out
EOF"
	else
		check "$mode: the set is live with its $stats good statistics" \
			grep -qxF "xen_pv_stats_set_statistics{$labels} $stats" <<<"$out"
		# Tuple i holds 10n + i: c, the third, has its own value, not the second's.
		check "$mode: c is the third tuple's value" \
			grep -qE "^xen_pv_stat\{$labels,stat=\"c\"\} [0-9]*2$" <<<"$out"
	fi
	check "$mode: the good guest is untouched" grep -qxF "xen_pv_stats_set_up{$TX} 1" <<<"$out"
	stop "$LAST_GUEST"
	toolstack remove "$DOM"
	baseline "$mode" "domid=\"$DOM\""
}
hostile badname bad_name 2
hostile nonul bad_name 2
hostile badtype unknown_type 2
hostile ecfirst no_refs 3
hostile outoforder refs_out_of_order -
hostile toomanyrefs too_many_pages -
hostile ungranted grant_refused -

# A provider that never answers: its set is down, the scrape ends at the timeout.
toolstack add 20 mute
guest 20 silent
MUTE=$(set_labels 20 mute hostile silent)
within 10 present "^xen_pv_stats_set_timeouts_total{$MUTE} [1-9]"
ms=$(scrape_ms "$PORT" "$WORK/s")
check "silent: the set is down" grep -qxF "xen_pv_stats_set_up{$MUTE} 0" "$WORK/s"
check "silent: its timeouts counted" grep -q "^xen_pv_stats_set_timeouts_total{$MUTE} [1-9]" "$WORK/s"
check "silent: no values of it left in the output" sh -c "! grep -q '^xen_pv_stat{$MUTE' '$WORK/s'"
check "silent: the scrape took ${ms} ms (timeout ${TIMEOUT} s)" test "$ms" -lt 1000
check "silent: the good guest is fresh in the same scrape" grep -qxF "xen_pv_stats_set_up{$TX} 1" "$WORK/s"
stop "$LAST_GUEST"
toolstack remove 20
baseline silent 'domid="20"'

# A provider flooding its channel (XSA-332): it costs the others nothing.
toolstack add 21 noisy
guest 21 flood
within 10 present 'domid="21"'
cpu0=$(awk '{ print $14 + $15 }' "/proc/$EXP/stat")
t0=$(date +%s%N)
for _ in 1 2 3 4 5; do scrape >"$WORK/f"; done
ms=$((($(date +%s%N) - t0) / 1000000))
cpu=$(($(awk '{ print $14 + $15 }' "/proc/$EXP/stat") - cpu0))
check "flood: 5 scrapes in ${ms} ms, exporter CPU ${cpu} ticks" test "$ms" -lt 1500
check "flood: the extra signals counted" test "$(dropped spurious_event)" -ge 1
check "flood: the good guest is fresh" grep -qxF "xen_pv_stats_set_up{$TX} 1" "$WORK/f"
stop "$LAST_GUEST"
toolstack remove 21
baseline flood 'domid="21"'

# Keys created and deleted in a tight loop: bounded work, nothing kept.
toolstack add 22 churner
guest 22 churn
sleep 2
ms=$(scrape_ms "$PORT" "$WORK/c")
check "churn: a scrape meanwhile takes ${ms} ms" test "$ms" -lt 500
check "churn: the good guest is fresh" grep -qxF "xen_pv_stats_set_up{$TX} 1" "$WORK/c"
stop "$LAST_GUEST"
toolstack remove 22
baseline churn 'domid="22"'
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$EXP/status")
check "churn: exporter peak memory ${hwm} kB (under $((MEM_LIMIT_KB / 1024)) MiB)" test "$hwm" -lt "$MEM_LIMIT_KB"

# Thousands of providers in one domain: the first 16 by name, the rest counted.
toolstack add 23 crowd
guest 23 providers 2000
kept() { [ "$(scrape | grep -c '^xen_pv_stats_set_up{domid="23"')" = 16 ]; }
within 10 kept
check "providers: 2000 offered, 16 kept ($(scrape | grep -c '^xen_pv_stats_set_up{domid="23"'))" kept
check "providers: counted as too_many_providers" test "$(dropped too_many_providers)" -ge 1
stop "$LAST_GUEST"
toolstack remove 23
baseline providers 'domid="23"'

# A provider whose port closes while its keys stay (a driver that crashed;
# under load a scrape can also come between a guest's unbind and the agent
# seeing its withdrawal): asked with no one at the other end, the set is
# down, and once its domain goes nothing of it stays open.
toolstack add 24 gone
guest 24 vanish
VANISH=$(set_labels 24 gone hostile vanish)
check "vanish: the set is live" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$VANISH} 1$"
stop "$LAST_GUEST"
check "vanish: its port closed, the set is down" \
	wait_for_metric "$PORT" "^xen_pv_stats_set_up{$VANISH} 0$"
toolstack remove 24
baseline vanish 'domid="24"'

stop "$GOOD"
check "the good guest withdrawn" until_gone 'domid="1"'
# ---- xenstored restarted under the running agent ----
guest 1 normal
G1=$LAST_GUEST
check "restart: the set is live before" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$TX} 1$"
kill -9 "$(cat "$WORK/xenstored.pid")"
sleep 0.5
scrape >"$WORK/down1"
sleep 0.3
scrape >"$WORK/down2"
d1=$(awk -v m="xen_pv_stat{$TX,stat=\"packets\"}" '$1 == m { print $2 }' "$WORK/down1")
d2=$(awk -v m="xen_pv_stat{$TX,stat=\"packets\"}" '$1 == m { print $2 }' "$WORK/down2")
check "xenstored down: the live set is still sampled ($d1 -> $d2)" test "$((d2 - d1))" = 1
kill -9 "$G1"
FAKEXEN_LAX=1 LD_PRELOAD="$FAKE" "$XENSTORED" -N -F "$WORK/xenstored.pid" >>"$WORK/xenstored.log" 2>&1 &
PIDS+=("$!")
within 20 xs_up
# A fresh store, as after a crash: the toolstack and the guest write theirs again.
toolstack add 1 one
guest 1 normal
G1=$LAST_GUEST
check "xenstored restarted: the agent reconnects and the set is live again" \
	wait_for_metric "$PORT" "^xen_pv_stats_set_up{$TX} 1$"
check "xenstored restarted: logged" grep -q 'xenstore connection made again' "$WORK/exporter.log"
check "xenstored restarted: the old set's pages released, the new set's mapped ($(gnt_maps))" \
	test "$(gnt_maps)" = 2
kill -TERM "$G1"
check "xenstored restarted: withdrawal still seen through the new connection" until_gone 'domid="1"'

# ---- a set over three pages ----
# The bench guest's 150 statistics: statistic j counts (j + 1) per update,
# so every value read from its own slot, across the page boundaries,
# divides into the same number of updates.
LD_PRELOAD="$FAKE" "$GUEST" bench 1 1 1 150 0 >"$WORK/guest100.log" 2>&1 &
PIDS+=("$!")
within 20 grep -qs ready "$WORK/guest100.log"
B3=$(set_labels 100 bench100 provider-0 set-0)
check "three pages: the set is live" wait_for_metric "$PORT" "^xen_pv_stats_set_up{$B3} 1$"
scrape | grep "^xen_pv_stat{$B3," >"$WORK/pages3"
check "three pages: 150 statistics, each its own slot's value ($(grep -c . "$WORK/pages3"))" \
	awk -F'"' '{ split($0, f, "} "); j = substr($10, 9) + 1
		if (f[2] % j || (u && f[2] / j != u) || f[2] == 0) bad = 1; u = f[2] / j }
		END { exit bad || NR != 150 }' "$WORK/pages3"
toolstack remove 100
check "three pages: gone with its domain" until_gone 'domid="100"'


check "after every guest: no mappings left" test "$(gnt_maps)" = 0
back() { [ "$(fds)" -le "$BASE_FDS" ]; }
back_or_new() { back || { fd_new "$WORK/fds.base"; return 1; }; }
within 10 back
check "after every guest: fds back to the baseline ($BASE_FDS -> $(fds))" \
	back_or_new
kill -TERM "$EXP"
within 10 exited "$EXP" || echo "the exporter still runs 10 s after SIGTERM"
kill -9 "$EXP" 2>/dev/null
wait "$EXP"
rc=$?
[ $rc = 0 ] || tail -30 "$WORK/exporter.log"
check "the exporter exits cleanly (no leak under ASan)" test $rc = 0

# ---- processing of Xen series: a statistic and a template each ----
# The normal guest's packets grows by one per request, and between scrapes
# only the sampler asks: taken by delta, every X is exactly 1.
cp "$WORK/xen.yml" "$WORK/xenp.yml"
cat >>"$WORK/xenp.yml" <<EOF
processing:
  sample_interval: 100ms
  groups:
    - name: pkts
      select: 'xen_pv_stat{domid="1",set="Tx",stat="packets"}'
      x: delta
      statistics: [{name: xpk_range, type: range}, {name: xpk_n, type: value}]
      template: {name: xpk_voi, stats: [sum, max, min, {dvhist: {values: [1]}}]}
EOF
# The agent finds the guest's set a little after it starts, and the sampler
# looks again at a collector without selected series after 1, 2, 4, 8 s
# (docs/processing.md): the first samples come within seconds; 45 s bounds
# a loaded machine.
guest 1 normal
G1=$LAST_GUEST
PORT=$(free_port)
LD_PRELOAD="$FAKE" start_exporter "$WORK/xenp.yml" "$PORT"
XP=$LAST_PID
SURL="http://127.0.0.1:$PORT/statistics"
check "Xen processing: the guest's packet count is sampled" \
	until_samples "$SURL/pkts/0/data" xpk_range 5 45
curl -s "$SURL/pkts/0/data" >"$WORK/xpk.txt"
check "Xen processing: every delta is 1, counted alike by the statistics and the template" \
	data_check "$WORK/xpk.txt" "
n, lo, avg, hi = f['xpk_range']
assert (lo, avg, hi) == ('1', '1.000', '1'), f
assert d['xpk_n'] == d['xpk_voi_sum'] == d['xpk_voi_dvhist [1,1]'] == n, d
assert d['xpk_voi_max'] == d['xpk_voi_min'] == '1' and d['xpk_voi_dvhist oob'] == '0', d"
scrape >"$WORK/xpm.txt"
check "Xen processing: on /metrics too" sh -c "
	grep -q '^xpk_range_max{domid=\"1\",.*} 1$' '$WORK/xpm.txt' &&
	grep -q '^xpk_voi_dvhist_bucket{domid=\"1\",.*le=\"1.0\"} [1-9]' '$WORK/xpm.txt' &&
	promtool check metrics <'$WORK/xpm.txt' >/dev/null"
stop "$G1"
stop "$XP"

summary
