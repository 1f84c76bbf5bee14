#!/usr/bin/env bash
# The configuration file as start, reload (SIGHUP) and --check-config see
# it, under one rule: a file that is empty, torn, nested too deep, holds
# two documents or names a collector that cannot start is refused by all
# three, and a refused reload keeps what runs and says why. A reload takes
# a file, and the web config and its certificates, only once it has settled.
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

# A file written in place one line per write, 2 ms apart, with a SIGHUP
# between each two lines: a reload takes a file only once it has stood
# unchanged for a second, so no prefix of it (such as "global:" with its
# plugin_dir, which runs no collector) is ever taken, and the whole file
# is, about a second after its last write.
cp "$WORK/good.yml" "$WORK/lines.yml"
out=$($PY - "$WORK/live.yml" "$WORK/lines.yml" "$EXP" "$P" <<'EOF'
import os, re, signal, sys, time, urllib.request
path, whole, pid, port = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(whole).read().splitlines(True)
def scrape():
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
prefixes, slowest = 0, 0.0
for _ in range(3):
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    for i, line in enumerate(lines):
        if i:
            os.kill(pid, signal.SIGHUP)
        time.sleep(0.002)
        os.write(fd, line.encode())
    os.close(fd)
    end = time.time()
    # Until a reload after the last write has been taken: the file in force.
    while time.time() < end + 8:
        m = scrape()
        ts = re.search(r"^binstat_exporter_config_last_reload_success_timestamp_seconds (\S+)", m, re.M)
        if ts and float(ts.group(1)) > end:
            break
        time.sleep(0.05)
    slowest = max(slowest, time.time() - end)
    if 'binstat_scrape_collector_success{collector="example"} 1' not in scrape():
        prefixes += 1
print(prefixes, int(slowest * 1000))
EOF
)
read -r prefixes ms <<<"$out"
check "a file written line by line under SIGHUPs: no prefix taken in 3 saves (${prefixes:-?} taken)" test "${prefixes:-1}" = 0
check "a file written line by line under SIGHUPs: the whole file taken within 3 s of its last write (${ms:-?} ms)" \
	test "${ms:-9999}" -lt 3000
check "a file written line by line under SIGHUPs: the exporter still serves example" \
	test "$(metric "$P" 'binstat_scrape_collector_success{collector="example"}')" = 1
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

# The web config is re-read at a request that finds it changed. Saved in
# place, in several writes a few ms apart, it is never taken half-written
# ("basic_auth_users:" with no user yet would turn basic auth off): a
# client without credentials polling all along never gets a 200, and the
# completed save (a new password) is taken within a few seconds.
printf "basic_auth_users:\n  alice: '%s'\n" "$HASH" >"$WORK/web.yml"
kill -HUP "$EXP"
for _ in $(seq 100); do [ "$(web_ok)" = 1 ] && break; sleep 0.1; done
HASH2=$($PY -c "import crypt; print(crypt.crypt('n3w', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<4)))" 2>/dev/null)
out=$($PY - "$WORK/web.yml" "$P" "$HASH" "$HASH2" <<'EOF'
import base64, os, sys, threading, time, urllib.error, urllib.request
path, port, h1, h2 = sys.argv[1:5]
url = f"http://127.0.0.1:{port}/metrics"
def code(auth=None):
    rq = urllib.request.Request(url)
    if auth:
        rq.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        return urllib.request.urlopen(rq, timeout=5).status
    except urllib.error.HTTPError as e:
        return e.code
stop, got = False, {"200": 0, "all": 0}
def poll():
    while not stop:
        got["all"] += 1
        if code() == 200:
            got["200"] += 1
poller = threading.Thread(target=poll)
poller.start()
for i in range(10):
    h = h2 if i == 9 else h1
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    for part in ("basic_auth_users:\n", "  alice: '", h, "'\n"):
        time.sleep(0.005)
        os.write(fd, part.encode())
    os.close(fd)
    time.sleep(0.03)
end = time.time()
while time.time() < end + 8 and code("alice:n3w") != 200:
    time.sleep(0.05)
taken = int((time.time() - end) * 1000)
stop = True
poller.join()
print(got["200"], got["all"], taken)
EOF
)
read -r ok200 nreq ms <<<"$out"
check "a web config saved in place 10 times under requests: 0 answers of 200 without credentials (${ok200:-?} of ${nreq:-?})" \
	test "${ok200:-1}" = 0
check "a web config saved in place: the completed save taken within 3 s of its last write (${ms:-?} ms)" \
	test "${ms:-9999}" -lt 3000
# A SIGHUP right after a complete write waits for it to settle and takes
# it, with no request in between to take it instead.
n=$(grep -c "web endpoint" "$WORK/exporter.log")
printf "basic_auth_users:\n  alice: '%s'\n" "$HASH" >"$WORK/web.yml"
kill -HUP "$EXP"
wait_for_log "web endpoint" $((n + 1))
check "a web config written just before a SIGHUP: taken by it (the old password works again)" \
	test "$(code -u alice:s3cret "http://127.0.0.1:$P/metrics")" = 200
kill -TERM "$EXP"
wait "$EXP"
summary
