#!/usr/bin/env bash
# basic_auth_users and rate_limit under load: a scraper with the right
# password is answered while 20 addresses keep sending wrong passwords
# (its first requests, not cached yet, and cached ones after); a bcrypt
# cost of 18 neither delays the start nor goes unsaid; a stranger at 30
# requests a second does not use up the scraper's rate limit; a password
# followed by a NUL and more is refused.
# Usage: tests/integration/webauth.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

if ! $PY -W ignore -c "import crypt; crypt.METHOD_BLOWFISH" 2>/dev/null; then
	skip "basic auth under load" "python3's crypt module (libxcrypt) is missing"
	summary
	exit 0
fi
bcrypt() { # bcrypt PASSWORD COST
	$PY -W ignore -c "import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << int(sys.argv[2]))))" "$1" "$2"
}
printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n' "$B/plugins" >"$WORK/cfg.yml"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
stopped_clean() { # stopped_clean NAME: stops the exporter EPID, checks it exits 0
	kill "$EPID" 2>/dev/null
	wait "$EPID"
	local rc=$?
	check "$1: stops cleanly (exit $rc; a leak under AddressSanitizer fails it)" test "$rc" = 0
}
refused() { # refused PORT REASON: binstat_exporter_http_refused_total of REASON
	curl -s -u s9:pw-9 "http://127.0.0.1:$1/metrics" |
		awk -v m="binstat_exporter_http_refused_total{reason=\"$2\"}" '$1 == m { print $2 }'
}

# ---- a bcrypt cost of 18 (exporter-toolkit's own test hash for bob, about
# 13 s a check here): start and reload do not wait for it, users of other
# costs are served at once, and the log says what the cost means.
printf "basic_auth_users:\n  alice: '%s'\n  bob: '%s'\n" "$(bcrypt alice123 10)" \
	'$2y$18$4VeFDzXIoPHKnKTU3O3GH.N.vZu06CVqczYZ8WvfzrddFU6tGqjR.' >"$WORK/cost18.yml"
PORT=$(free_port)
t0=$(date +%s%N)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/cost18.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
healthy_ms=none
for _ in $(seq 300); do # 15 s at most: a start held by the hash shows as a number
	if [ "$(code --max-time 5 -u alice:alice123 "http://127.0.0.1:$PORT/-/healthy")" = 200 ]; then
		healthy_ms=$((($(date +%s%N) - t0) / 1000000))
		break
	fi
	sleep 0.05
done
check "a user of cost 18 beside alice's cost 10: alice answered ${healthy_ms} ms after the start (2,000 at most)" \
	test "$healthy_ms" != none -a "${healthy_ms/none/99999}" -le 2000
check "... and /metrics as alice: 200" \
	test "$(code --max-time 5 -u alice:alice123 "http://127.0.0.1:$PORT/metrics")" = 200
check "... the log warns about bob's cost with the time it takes" \
	wait_for_log 'bcrypt cost this host cannot check.*user=bob cost=18 estimated_seconds='
kill -HUP "$EPID"
check "... a SIGHUP: reloaded without waiting for the hash" wait_for_log 'web endpoint' 2
check "... mallory, unknown, refused at once" \
	test "$(code --max-time 3 -u mallory:x "http://127.0.0.1:$PORT/metrics")" = 401
stopped_clean "the cost-18 exporter"

# ---- the password's bytes, all of them: one followed by a NUL and junk is
# not the password.
{
	echo "basic_auth_users:"
	for i in 0 1 2 3 4 5 6 7 8 9; do echo "  s$i: '$(bcrypt "pw-$i" 10)'"; done
} >"$WORK/scrapers.yml"
PORT=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/scrapers.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
wait_port "$PORT"
URL="http://127.0.0.1:$PORT"
nul_auth="Authorization: Basic $(printf 's9:pw-9\0junk' | base64 -w0)"
check "a password followed by a NUL and junk: 401" test "$(code -H "$nul_auth" "$URL/metrics")" = 401
check "... the password alone: 200" test "$(code -u s9:pw-9 "$URL/metrics")" = 200
check "... and still 401 once it is cached" test "$(code -H "$nul_auth" "$URL/metrics")" = 401

# ---- 20 addresses x 16 keep-alive connections sending wrong passwords as
# fast as they are answered, more than the 256 connections kept. bcrypt
# runs in a pool of two with a share per address; a request past it is
# refused at once (429, counted auth_busy), and a connection waiting for
# it may be evicted.
# The scraper's requests as users s0-s8, each checked for the first time,
# then cached ones as s9: at least 9 of 10 of each answered within 5 s.
exec 7< <(exec timeout 100 "$HERE/auth_client.py" wrongpw "$PORT" 127.0.2.1x20 16 90 s0 2>&1)
APID=$!
PIDS+=("$APID")
for _ in $(seq 100); do # until the attack fills the pool
	[ -n "$(refused "$PORT" auth_busy)" ] && break
	sleep 0.05
done
scrapes() { # scrapes fresh|cached: how many of 10 scrapes are answered 200, and their codes
	local ok=0 bad=0 i u c codes=""
	for i in 0 1 2 3 4 5 6 7 8 9; do
		u="s9:pw-9"
		[ "$1" = fresh ] && u="s$((i % 9)):pw-$((i % 9))" # s0 twice: s9 is cached
		c=$(code --max-time 5 -u "$u" "$URL/metrics")
		codes="$codes $c"
		if [ "$c" = 200 ]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
		[ $bad -ge 2 ] && break # 9 of 10 out of reach: no need to wait on
	done
	echo "$ok ($codes)"
}
fresh=$(scrapes fresh)
cached=$(scrapes cached)
busy=$(refused "$PORT" auth_busy)
kill "$APID" 2>/dev/null
attack=$(cat <&7)
exec 7<&-
check "320 connections from 20 addresses sending wrong passwords: $fresh of 10 scrapes by users not yet verified answered" \
	test "${fresh%% *}" -ge 9
check "... and $cached of 10 by a verified (cached) user" test "${cached%% *}" -ge 9
check "... the wrong passwords past the pool refused at once and counted (auth_busy ${busy:-none}; the attack saw $attack)" \
	test "${busy:-0}" -gt 0
stopped_clean "the exporter under wrong passwords"

# ---- rate_limit as the toolkit documents it (100ms, burst 20), and a
# stranger without credentials at 30 requests a second from the scraper's
# own address and another: the scraper's requests are never 429.
{
	cat "$WORK/scrapers.yml"
	printf 'rate_limit:\n  interval: 100ms\n  burst: 20\n'
} >"$WORK/rate.yml"
PORT=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/rate.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
wait_port "$PORT"
URL="http://127.0.0.1:$PORT"
code -u s0:pw-0 "$URL/metrics" >/dev/null # verified once, as a scraper's first scrape is
exec 7< <(exec "$HERE/auth_client.py" anon "$PORT" 127.0.0.1 30 7 2>&1)
exec 8< <(exec "$HERE/auth_client.py" anon "$PORT" 127.0.3.1 30 7 2>&1)
for _ in $(seq 100); do # until the stranger has drained the address's shared bucket
	[ -n "$(refused "$PORT" rate_limit)" ] && break
	sleep 0.05
done
codes=""
for _ in $(seq 20); do
	codes="$codes $(code --max-time 5 -u s0:pw-0 "$URL/metrics")"
	sleep 0.2 # the scraper's own pace, 5 a second: within its bucket
done
stranger=$(cat <&7) other=$(cat <&8)
exec 7<&- 8<&-
check "a stranger at 30 requests a second: 20 of 20 scrapes 200 ($codes)" \
	test "$(tr ' ' '\n' <<<"$codes" | grep -c '^200$')" = 20
check "... the stranger itself is limited ($stranger)" grep -q '429:' <<<"$stranger"
check "... and so is one at another address, on its own bucket ($other)" grep -q '429:' <<<"$other"
stopped_clean "the rate-limited exporter"

# ---- the same rate_limit on a fresh exporter, and 3 clients at 40 wrong
# passwords a second each from the scraper's own address, guessing other
# users' names and an unknown one: each name's guesses drain their own
# bucket, so the scraper's first check (not cached yet) and the next are
# answered (they were 429 on the address's shared bucket).
PORT=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/rate.yml" \
	--web.listen-address="127.0.0.1:$PORT" >>"$WORK/exporter.log" 2>&1 &
EPID=$!
PIDS+=("$EPID")
wait_port "$PORT"
URL="http://127.0.0.1:$PORT"
exec 7< <(exec "$HERE/auth_client.py" anon "$PORT" 127.0.0.1 40 6 s1 2>&1)
exec 8< <(exec "$HERE/auth_client.py" anon "$PORT" 127.0.0.1 40 6 s2 2>&1)
exec 9< <(exec "$HERE/auth_client.py" anon "$PORT" 127.0.0.1 40 6 mallory 2>&1)
for _ in $(seq 100); do # until the guesses are refused on their buckets
	[ -n "$(refused "$PORT" rate_limit)" ] && break
	sleep 0.05
done
codes=""
for _ in $(seq 10); do
	codes="$codes $(code --max-time 5 -u s0:pw-0 "$URL/metrics")"
	sleep 0.2
done
g1=$(cat <&7) g2=$(cat <&8) g3=$(cat <&9)
exec 7<&- 8<&- 9<&-
check "3 x 40 wrong passwords a second from the scraper's address: $(tr ' ' '\n' <<<"$codes" | grep -c '^200$') of 10 scrapes 200, the first not cached ($codes)" \
	test "$(tr ' ' '\n' <<<"$codes" | grep -c '^200$')" -ge 9 -a "${codes:1:3}" = 200
check "... the guesses limited on their own buckets ($g1; $g2; $g3)" \
	grep -q '429:' <<<"$g1 $g2 $g3"
stopped_clean "the exporter guessed at from the scraper's address"

summary
