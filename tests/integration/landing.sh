#!/usr/bin/env bash
# The landing page as an operator sees it: rendered by headless Chromium
# (a screenshot taken, the rendered text checked), not only fetched.
# Usage: tests/integration/landing.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

# A plugin folder whose name is markup: the error that quotes it must show
# as text, not become part of the page.
with_test_plugins "$WORK/p<i>x</i>"
cat >"$WORK/cfg.yml" <<YAML
global:
  plugin_dir: "$PLUGINS"
  scrape_timeout: 1s
collectors:
  example: {}
  synthetic:
    hostile: true
  slow:
    sleep_seconds: 3
YAML
PORT=$(free_port)
start_exporter "$WORK/cfg.yml" "$PORT" || { fail "exporter starts" "$(cat "$WORK/exporter.log")"; summary; exit 1; }
URL="http://127.0.0.1:$PORT"
curl -s -o /dev/null "$URL/metrics"
curl -s "$URL/" -o "$WORK/page.html"
check "the page is HTML with the version" grep -q '<p>Version 0' "$WORK/page.html"
check "a collector past its deadline: failed, and why" \
	grep -qE '<td class="bad">failed [^<]*\(.* s ago\): deadline exceeded</td>' "$WORK/page.html"
# A reload naming a plugin that is not there is refused, the reason
# quoting its folder's markup as text; the file put back is taken again.
cp "$WORK/cfg.yml" "$WORK/good.yml"
echo "  nosuch: {}" >>"$WORK/cfg.yml"
kill -HUP "$LAST_PID"
for _ in $(seq 100); do curl -s "$URL/" | grep -q 'class="bad">failed .*collector nosuch' && break; sleep 0.1; done
curl -s "$URL/" -o "$WORK/refused.html"
check "a refused reload names the collector and why" grep -q 'class="bad">failed .*collector nosuch: cannot load plugin' "$WORK/refused.html"
check "a path with markup in an error is escaped" grep -q 'p&lt;i&gt;x&lt;/i&gt;/nosuch.so' "$WORK/refused.html"
cp "$WORK/good.yml" "$WORK/cfg.yml"
kill -HUP "$LAST_PID"
for _ in $(seq 100); do curl -s "$URL/" | grep -q '<th>Last load</th><td class="ok">succeeded' && break; sleep 0.1; done
check "HEAD / has no body" test "$(curl -s -I "$URL/" -o /dev/null -w '%{http_code} %{size_download}')" = "200 0"

if ! command -v chromium >/dev/null; then
	skip "landing page in Chromium" "chromium is not installed (tools/deps.sh test)"
	summary
	exit 0
fi
chrome() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$WORK/chromium" --window-size=1280,900 "$@" 2>>"$WORK/chromium.log"
}
chrome --screenshot="$WORK/landing.png" "$URL/" >/dev/null
check "Chromium took a screenshot of the page" $PY - "$WORK/landing.png" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1280, 900) and len(d) > 20000, (w, h, len(d))
PY
# The text as rendered: the DOM after parsing, tags stripped.
chrome --dump-dom "$URL/" | $PY -c '
import html, re, sys
t = re.sub(r"<[^>]+>", " ", sys.stdin.read())
print(re.sub(r"\s+", " ", html.unescape(t)))' >"$WORK/text.txt"
has() { grep -qF -- "$1" "$WORK/text.txt" || { echo "not in the page: $1"; cat "$WORK/text.txt"; return 1; }; }
check "rendered: each collector by name" sh -c "$(declare -f has); WORK='$WORK'; has 'example' && has 'synthetic' && has 'slow'"
check "rendered: the last scrape's success and duration" sh -c "$(declare -f has); WORK='$WORK'; has 'succeeded' && has ' ms'"
check "rendered: what a collector found" sh -c "$(declare -f has); WORK='$WORK'; has '8 families, one of each metric type'"
check "rendered: why a collector failed" sh -c "$(declare -f has); WORK='$WORK'; has 's ago): deadline exceeded'"
check "rendered: drops by reason" sh -c "$(declare -f has); WORK='$WORK'; has 'synthetic_reason: 3'"
check "rendered: the configuration file and its last load" sh -c "$(declare -f has); WORK='$WORK'; has '$WORK/cfg.yml' && has 'Last load succeeded'"
check "rendered: links to the metrics" grep -q 'href="/metrics"' "$WORK/page.html"
echo "collectors: [" >>"$WORK/cfg.yml"
kill -HUP "$LAST_PID"
for _ in $(seq 100); do curl -s "$URL/" | grep -q 'did not find expected node content' && break; sleep 0.1; done
chrome --dump-dom "$URL/" >"$WORK/after.html"
check "rendered: a failed reload, with the reason" grep -q 'class="bad">failed .*did not find expected node content' "$WORK/after.html"
summary
