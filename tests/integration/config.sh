#!/usr/bin/env bash
# The configuration file as start, reload (SIGHUP) and --check-config see
# it, under one rule: a file that is empty, torn, nested too deep, holds
# two documents or names a collector that cannot start is refused by all
# three, and a refused reload keeps what runs and says why.
# Usage: tests/integration/config.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

with_test_plugins
good() { printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n%s' "$PLUGINS" "${1:-}" >"$2"; }
good "" "$WORK/good.yml"

# check_refused NAME FILE PATTERN: --check-config exits 1 naming PATTERN,
# and a start exits non-zero with it in the log.
check_refused() {
	local out rc
	out=$("$EXPORTER" --check-config --config.file="$2" 2>&1); rc=$?
	check "--check-config refuses $1 (exit $rc)" sh -c '[ "$1" = 1 ] && echo "$2" | grep -q -- "$3"' _ "$rc" "$out" "$3"
	out=$(timeout 10 "$EXPORTER" --config.file="$2" --web.listen-address="127.0.0.1:$(free_port)" 2>&1); rc=$?
	check "a start refuses $1 (exit $rc)" sh -c '[ "$1" = 1 ] && echo "$2" | grep -q -- "$3"' _ "$rc" "$out" "$3"
}

: >"$WORK/empty.yml"
check_refused "an empty file" "$WORK/empty.yml" "empty.yml: no configuration in it"
printf '# only a comment\n\n   \n' >"$WORK/comments.yml"
check_refused "a file of comments and blanks" "$WORK/comments.yml" "comments.yml: no configuration in it"
printf 'global: {}\n---\ncollectors:\n  example: {}\n' >"$WORK/two.yml"
check_refused "a second YAML document" "$WORK/two.yml" "two.yml:2:1: a second YAML document"
good "  ghost: {}
" "$WORK/ghost.yml"
check_refused "a collector whose plugin is missing" "$WORK/ghost.yml" "collector ghost: cannot load plugin: .*ghost.so"
check "--check-config takes {} for an empty configuration" sh -c "echo '{}' >'$WORK/braces.yml' && '$EXPORTER' --check-config --config.file='$WORK/braces.yml'"

# Nested flow sequences take libyaml time growing with the square of their
# depth (160 KB of them took 17 s): refused at the depth cap, at once.
$PY -c "open('$WORK/deep.yml', 'w').write('[' * 160000)"
t0=$(date +%s%N)
out=$(timeout 60 "$EXPORTER" --check-config --config.file="$WORK/deep.yml" 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "160 KB of '[': refused in well under a second (${ms} ms, exit $rc)" \
	sh -c '[ "$1" = 1 ] && [ "$2" -lt 1000 ]' _ "$rc" "$ms"
check "160 KB of '[': the error names the depth and its place ($out)" grep -q "deep.yml:1:65: nested deeper than 64 levels" <<<"$out"

# The web config is read by the same parser, under the same limits.
for f in deep two; do
	t0=$(date +%s%N)
	out=$(timeout 60 "$EXPORTER" --check-config --config.file="$WORK/good.yml" --web.config.file="$WORK/$f.yml" 2>&1); rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	want=$([ $f = deep ] && echo "$f.yml:1:65: nested deeper than 64 levels" || echo "$f.yml:2:1: a second YAML document")
	check "a web config of $f.yml: refused with its place in ${ms} ms (exit $rc)" \
		sh -c '[ "$1" = 1 ] && [ "$2" -lt 1000 ] && echo "$3" | grep -q -- "$4"' _ "$rc" "$ms" "$out" "$want"
done

# Reloads. Each refused one keeps the running collectors, sets
# last_reload_successful to 0 and logs why; a good file is taken again.
P=$(free_port)
cp "$WORK/good.yml" "$WORK/live.yml"
start_exporter "$WORK/live.yml" "$P" || { fail "exporter starts" "$(cat "$WORK/exporter.log")"; summary; exit 1; }
EXP=$LAST_PID
# reload_refused NAME PATTERN: SIGHUP, then the landing page shows the
# refusal with PATTERN (the log holds back a sixth line of a kind in one
# second), the metric is 0 and example still answers.
reload_refused() {
	kill -HUP "$EXP"
	for _ in $(seq 100); do
		curl -s "http://127.0.0.1:$P/" | grep -q "class=\"bad\">failed .*$2" && break
		sleep 0.1
	done
	check "reload of $1: refused, saying why" sh -c "curl -s 'http://127.0.0.1:$P/' | grep -q 'class=\"bad\">failed .*$2'"
	check "reload of $1: last_reload_successful 0" test "$(metric "$P" binstat_exporter_config_last_reload_successful)" = 0
	check "reload of $1: the running collectors stay" \
		test "$(metric "$P" 'binstat_scrape_collector_success{collector="example"}')" = 1
}
reload_taken() {
	local n
	n=$(grep -c "configuration reloaded" "$WORK/exporter.log")
	kill -HUP "$EXP"
	wait_for_log "configuration reloaded" $((n + 1))
	check "reload of $1: taken" test "$(metric "$P" binstat_exporter_config_last_reload_successful)" = 1
}
# A file truncated, then a SIGHUP before it is written again, as `cat >
# file` or a full disk leaves it: never taken, however often.
for i in 1 2 3; do
	: >"$WORK/live.yml"
	reload_refused "a truncated file ($i)" "live.yml: no configuration in it"
	cp "$WORK/good.yml" "$WORK/live.yml"
	reload_taken "the file written again ($i)"
done
check "a refused reload logs an error saying why" \
	grep -q 'level=error msg="reload failed, keeping the running configuration" err=".*live.yml: no configuration in it' "$WORK/exporter.log"
printf '# all commented out\n' >"$WORK/live.yml"
reload_refused "a file of comments" "live.yml: no configuration in it"
cp "$WORK/two.yml" "$WORK/live.yml"
reload_refused "two documents" "live.yml:2:1: a second YAML document"
cp "$WORK/deep.yml" "$WORK/live.yml"
reload_refused "160 KB of '['" "live.yml:1:65: nested deeper than 64 levels"
cp "$WORK/ghost.yml" "$WORK/live.yml"
reload_refused "a misspelt collector" "collector ghost: cannot load plugin"
check "no refused file was logged as reloaded (3 taken)" \
	test "$(grep -c 'configuration reloaded' "$WORK/exporter.log")" = 3
kill -TERM "$EXP"
wait "$EXP"
rc=$?
check "the exporter exits cleanly after the refused reloads (no leak under ASan; exit $rc)" test $rc = 0

# The web config torn the same way: empty at a reload while the one in
# force holds a user would drop the password. Refused; the user stays.
HASH=$($PY -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<4)))" 2>/dev/null)
printf "basic_auth_users:\n  alice: '%s'\n" "$HASH" >"$WORK/web.yml"
P=$(free_port)
"$EXPORTER" --config.file="$WORK/good.yml" --web.config.file="$WORK/web.yml" \
	--web.listen-address="127.0.0.1:$P" >>"$WORK/exporter.log" 2>&1 &
EXP=$!
PIDS+=("$EXP")
wait_port "$P"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
web_ok() { curl -s -u alice:s3cret "http://127.0.0.1:$P/metrics" | awk '$1 == "binstat_exporter_web_config_last_reload_successful" { print $2 }'; }
: >"$WORK/web.yml"
kill -HUP "$EXP"
for _ in $(seq 100); do [ "$(web_ok)" = 0 ] && break; sleep 0.1; done
check "an empty web config at a reload: refused (web_config_last_reload_successful $(web_ok))" test "$(web_ok)" = 0
check "an empty web config at a reload: the password still asked ($(code "http://127.0.0.1:$P/metrics"))" \
	test "$(code "http://127.0.0.1:$P/metrics")" = 401
check "an empty web config at a reload: logged with the advice to rename" \
	grep -q 'web config rejected.*web.yml: empty at a reload.*replace it by rename' "$WORK/exporter.log"
kill -TERM "$EXP"
wait "$EXP"
summary
