#!/usr/bin/env bash
# Integration tests against the running binary: both formats checked by the
# real consumers (promtool, python's strict OpenMetrics parser, Prometheus
# itself), HTTP behaviour, bad input, reload and shutdown.
# Usage: tests/integration/run.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

with_test_plugins

write_config() { # write_config FILE EXTRA_COLLECTOR_YAML
	cat >"$1" <<EOF
global:
  plugin_dir: $PLUGINS
  scrape_timeout: 5s
  scrape_timeout_offset: 200ms
collectors:
  example: {}
  synthetic:
    bench_series: 2000
$2
EOF
}

OM_ACCEPT='application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1'

om_parse() { # om_parse FILE: the strict parser must accept every line
	$PY - "$1" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
text = open(sys.argv[1], encoding="utf-8").read()
fams = list(text_string_to_metric_families(text))
names = {f.name for f in fams}
for want in ("example_events", "example_latency_seconds", "example_rpc_seconds",
             "example_build", "example_state", "example_mystery", "process_cpu_seconds"):
    assert want in names, want
types = {f.name: f.type for f in fams}
assert types["example_build"] == "info" and types["example_state"] == "stateset", types
ev = [s for f in fams if f.name == "example_events" for s in f.samples if s.labels.get("device") == "max"]
assert ev and ev[0].value == 2**64 - 1, ev
print(len(fams), "families")
EOF
}


# ---------------------------------------------------------------- main daemon
CFG="$WORK/main.yml"
write_config "$CFG" "  slow:
    sleep_seconds: 0"
PORT=$(free_port)
if ! start_exporter "$CFG" "$PORT"; then
	fail "exporter starts" "$(cat "$WORK/exporter.log")"
	summary
	exit 1
fi
pass "exporter starts on its config"
URL="http://127.0.0.1:$PORT"

curl -s -D "$WORK/text.h" "$URL/metrics" -o "$WORK/text.txt"
check "text format: Content-Type 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$WORK/text.h"
check "text format: promtool check metrics is clean" promtool_clean "$WORK/text.txt"
check "text format: python's Prometheus text parser accepts it" $PY -c "
from prometheus_client.parser import text_string_to_metric_families as p
assert len(list(p(open('$WORK/text.txt').read()))) > 10"
check "text format: exact 2^64-1 counter" grep -qx 'example_events_total{device="max"} 18446744073709551615' "$WORK/text.txt"

curl -s -D "$WORK/om.h" -H "Accept: $OM_ACCEPT" "$URL/metrics" -o "$WORK/om.txt"
check "OpenMetrics: negotiated from Prometheus 3's Accept" grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$WORK/om.h"
check "OpenMetrics: strict python parser accepts it" om_parse "$WORK/om.txt"
check "OpenMetrics: ends with # EOF" test "$(tail -c 6 "$WORK/om.txt")" = "# EOF"

curl -s -D "$WORK/gz.h" -H 'Accept-Encoding: gzip' -H "Accept: $OM_ACCEPT" "$URL/metrics" -o "$WORK/om.gz"
check "gzip: Content-Encoding set" grep -qi '^Content-Encoding: gzip' "$WORK/gz.h"
gunzip -c "$WORK/om.gz" >"$WORK/om-gz.txt" 2>"$WORK/gz.err"
check "gzip: body is valid gzip that the OpenMetrics parser accepts" om_parse "$WORK/om-gz.txt"
curl -s -H 'Accept-Encoding: gzip' "$URL/metrics" | gunzip -c >"$WORK/text-gz.txt"
check "gzip: text body passes promtool" promtool_clean "$WORK/text-gz.txt"

status() { curl -g -s -o /dev/null -w '%{http_code}' "$@"; }
check "keep-alive: a second scrape reuses the connection" test "$(curl -s -o /dev/null -o /dev/null \
	-w '%{num_connects}' "$URL/metrics" "$URL/metrics")" = 10
check "HEAD /metrics is 200 with no body" test "$(curl -s -I "$URL/metrics" -o /dev/null -w '%{http_code} %{size_download}')" = "200 0"
check "POST is 405" test "$(status -X POST "$URL/metrics")" = 405
check "405 names the allowed methods" sh -c "curl -s -D - -X DELETE '$URL/metrics' | grep -qi '^Allow: GET, HEAD'"
check "unknown path is 404" test "$(status "$URL/nope")" = 404
check "/-/healthy is 200" test "$(status "$URL/-/healthy")" = 200
check "/-/ready is 200" test "$(status "$URL/-/ready")" = 200
check "landing page links the metrics and shows the version" sh -c "curl -s '$URL/' | grep -q 'href=\"/metrics\"' && curl -s '$URL/' | grep -q 'Version 0'"

curl -g -s "$URL/metrics?collect[]=example" -o "$WORK/sel.txt"
check "collect[]=example keeps example" grep -q '^example_events_total' "$WORK/sel.txt"
check "collect[]=example leaves out slow" sh -c "! grep -q 'collector=\"slow\"' '$WORK/sel.txt'"
check "collect[]=nope is 400 naming it" sh -c "curl -g -s -w ' %{http_code}' '$URL/metrics?collect[]=nope' | tr '\n' ' ' | grep -q 'collector: nope  400$'"
curl -g -s "$URL/metrics?exclude[]=synthetic&exclude[]=slow" -o "$WORK/excl.txt"
check "exclude[]: the excluded collectors are left out" sh -c "! grep -q '^synthetic_\|collector=\"slow\"\|collector=\"synthetic\"' '$WORK/excl.txt'"
check "exclude[]: the others are scraped" grep -qx 'binstat_scrape_collector_success{collector="example"} 1' "$WORK/excl.txt"
check "exclude[]=nope is 400 naming it" sh -c "curl -g -s -w ' %{http_code}' '$URL/metrics?exclude[]=nope' | tr '\n' ' ' | grep -q 'collector: nope  400$'"
check "collect[] with exclude[] is 400 saying so" sh -c "curl -g -s -w ' %{http_code}' '$URL/metrics?collect[]=example&exclude[]=slow' | tr '\n' ' ' | grep -q 'cannot be combined  400$'"
raw_status() { # raw_status PORT PATH HEADER_NAME HEADER_VALUE: requests too big for argv
	$PY - "$@" <<'EOF'
import socket, sys
port, path, hname, hval = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
if path == "MANY":
    path = "/metrics?" + "&".join(["collect[]=example"] * 10000)
if hval.startswith("BIG"):
    hval = "a" * int(hval[3:])
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{hname}: {hval}\r\nConnection: close\r\n\r\n".encode())
data = b""
while chunk := s.recv(65536):
    data += chunk
print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "none")
EOF
}
code=$(raw_status "$PORT" MANY X-Test 1)
check "10,000 collect[] parameters get a 4xx, not a crash ($code)" test "${code:0:1}" = 4
code=$(raw_status "$PORT" /metrics Accept BIG200000)
check "a 200 kB Accept header gets a 4xx ($code)" test "${code:0:1}" = 4
code=$(raw_status "$PORT" /metrics Accept BIG30000)
check "a 30 kB Accept header is parsed and served ($code)" test "$code" = 200
check "still serving after the hostile requests" test "$(status "$URL/metrics")" = 200

# Prometheus' deadline: slow overruns, the rest arrives in time.
write_config "$WORK/slow.yml" "  slow:
    sleep_seconds: 3"
P2=$(free_port)
start_exporter "$WORK/slow.yml" "$P2"
t0=$(date +%s.%N)
curl -s -H 'X-Prometheus-Scrape-Timeout-Seconds: 1' "http://127.0.0.1:$P2/metrics" -o "$WORK/deadline.txt"
took=$($PY -c "print(round($(date +%s.%N) - $t0, 2))")
check "deadline: response in about the scrape timeout (${took}s)" $PY -c "assert $took < 1.5"
check "deadline: slow reported failed" grep -qx 'binstat_scrape_collector_success{collector="slow"} 0' "$WORK/deadline.txt"
check "deadline: example still delivered" grep -qx 'binstat_scrape_collector_success{collector="example"} 1' "$WORK/deadline.txt"
check "deadline: synthetic still delivered" grep -qx 'binstat_scrape_collector_success{collector="synthetic"} 1' "$WORK/deadline.txt"
check "deadline: synthetic's series present" grep -q '^synthetic_bench_1_bytes' "$WORK/deadline.txt"

# Prometheus' timeout shorter than the offset: the deadline's floor, said.
for _ in 1 2; do
	curl -s -H 'X-Prometheus-Scrape-Timeout-Seconds: 0.1' "$URL/metrics?collect[]=example" -o "$WORK/short.txt"
done
check "a timeout under the offset: the deadline is cut to 0.05 s" \
	grep -qx 'binstat_scrape_timeout_seconds 0.05' "$WORK/short.txt"
check "... and said at warn, once for two scrapes" \
	test "$(grep -c 'scrape_timeout_offset leaves a scrape no time.*prometheus_timeout_seconds=0.1 scrape_timeout_offset_seconds=0.2' "$WORK/exporter.log")" = 1

# --web.max-requests: the second scrape at once gets 503.
P3=$(free_port)
start_exporter "$WORK/slow.yml" "$P3" --web.max-requests=1
curl -s -o /dev/null "http://127.0.0.1:$P3/metrics" &
FIRST=$!
sleep 0.3
check "beyond --web.max-requests is 503" test "$(status "http://127.0.0.1:$P3/metrics")" = 503
wait "$FIRST"

# A client that never reads a large response holds one slot, not the daemon.
write_config "$WORK/big.yml" ""
sed -i 's/bench_series: 2000/bench_series: 300000/' "$WORK/big.yml"
P4=$(free_port)
start_exporter "$WORK/big.yml" "$P4" --web.connection-timeout=3
$PY - "$P4" <<'EOF' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
time.sleep(6)  # never read
EOF
SLOWPID=$!
sleep 1
check "slow reader: others still get scrapes" test "$(status "http://127.0.0.1:$P4/metrics")" = 200
rss=$(metric "$P4" process_resident_memory_bytes)
check "slow reader: memory stays bounded (RSS ${rss%.*} bytes)" $PY -c "assert float('$rss') < 400e6"
t0=$(date +%s.%N)
kill -TERM "$LAST_PID"
ok=0
for _ in $(seq 60); do kill -0 "$LAST_PID" 2>/dev/null || { ok=1; break; }; sleep 0.1; done
took=$($PY -c "print(round($(date +%s.%N) - $t0, 2))")
check "SIGTERM with a stalled client: exits within 5 s (${took}s)" test $ok = 1
wait "$LAST_PID"; rc=$?
check "SIGTERM: exit status 0" test $rc = 0
kill "$SLOWPID" 2>/dev/null; wait "$SLOWPID" 2>/dev/null

# Reload: a bad file keeps the running config; a good one replaces it.
cp "$CFG" "$WORK/reload.yml"
P5=$(free_port)
start_exporter "$WORK/reload.yml" "$P5"
RPID=$LAST_PID
echo "collectors: [oops" >"$WORK/reload.yml"
kill -HUP "$RPID"
wait_for_metric "$P5" "^binstat_exporter_config_last_reload_successful 0$"
check "bad reload: last_reload_successful is 0" test "$(metric "$P5" binstat_exporter_config_last_reload_successful)" = 0
check "bad reload: old collectors keep working" test "$(metric "$P5" 'binstat_scrape_collector_success{collector="example"}')" = 1
check "bad reload: the log says why, with line and column" grep -Eq 'reload failed.*reload.yml:[0-9]+:[0-9]+: ' "$WORK/exporter.log"
# An offset that leaves a scrape no time: refused with the value's place,
# by --check-config and by a reload, which keeps the running config.
write_config "$WORK/offset.yml" ""
sed -i 's/^  scrape_timeout_offset: 200ms$/  scrape_timeout_offset: 6s/' "$WORK/offset.yml"
"$EXPORTER" --check-config --config.file="$WORK/offset.yml" >"$WORK/offset.out" 2>&1; rc=$?
check "--check-config: scrape_timeout_offset 6s over scrape_timeout 5s fails (exit $rc)" test $rc = 1
check "--check-config: ... naming the offset's file, line and column" \
	grep -q "offset.yml:4:26: 'scrape_timeout_offset' (6s) must be less than 'scrape_timeout' (5s)" "$WORK/offset.out"
cp "$WORK/offset.yml" "$WORK/reload.yml"
kill -HUP "$RPID"
for _ in $(seq 50); do grep -q "reload failed.*reload.yml:4:26: 'scrape_timeout_offset'" "$WORK/exporter.log" && break; sleep 0.1; done
check "reload: an offset over the timeout is refused, with its place" grep -q "reload failed.*reload.yml:4:26: 'scrape_timeout_offset'" "$WORK/exporter.log"
check "reload: ... and the old collectors keep working" test "$(metric "$P5" 'binstat_scrape_collector_success{collector="example"}')" = 1
write_config "$WORK/reload.yml" "    hostile: true"
kill -HUP "$RPID"
wait_for_metric "$P5" "^binstat_exporter_config_last_reload_successful 1$"
check "good reload: last_reload_successful is 1" test "$(metric "$P5" binstat_exporter_config_last_reload_successful)" = 1
check "good reload: new options in effect" sh -c "curl -s 'http://127.0.0.1:$P5/metrics' | grep -q '^synthetic_hostile'"
check "drops are counted by collector and reason" sh -c "curl -s 'http://127.0.0.1:$P5/metrics' | grep -q 'binstat_collector_dropped_total{collector=\"synthetic\",reason=\"duplicate_series\"}'"

# Start-up errors are clear and non-zero.
"$EXPORTER" --config.file="$CFG" --web.listen-address="127.0.0.1:$PORT" >"$WORK/busy.log" 2>&1
rc=$?
check "busy port: exits non-zero" test $rc != 0
check "busy port: says the address is in use" grep -q "cannot listen on '127.0.0.1:$PORT': Address already in use" "$WORK/busy.log"
"$EXPORTER" --config.file="$WORK/missing.yml" >"$WORK/missing.log" 2>&1
check "missing config: exits non-zero naming the file" sh -c "[ $? != 0 ] && grep -q 'missing.yml: No such file' '$WORK/missing.log'"
out=$("$EXPORTER" --check-config --config.file="$CFG" 2>&1)
check "--check-config: configuration OK" test "$out" = "configuration OK"
printf 'collectors:\n  example:\n    bench_seres: 1\n' >"$WORK/typo.yml"
"$EXPORTER" --check-config --config.file="$WORK/typo.yml" >"$WORK/typo.out" 2>&1; rc=$?
check "--check-config: a typo fails (exit $rc)" test $rc = 1
check "--check-config: the error has file, line and column" grep -q "typo.yml:3:5: unknown key 'bench_seres'" "$WORK/typo.out"
printf 'global:\n  plugin_dir: %s\ncollectors:\n  badabi: {}\n' "$PLUGINS" >"$WORK/abi.yml"
"$EXPORTER" --check-config --config.file="$WORK/abi.yml" >"$WORK/abi.out" 2>&1; rc=$?
check "--check-config: ABI mismatch fails (exit $rc)" test $rc = 1
check "--check-config: ABI mismatch named with its file" grep -q 'badabi.so: collector ABI version' "$WORK/abi.out"
check "--version" sh -c "'$EXPORTER' --version | grep -q '^binstat_exporter 0'"
check "--help" sh -c "'$EXPORTER' --help | grep -q -- '--web.listen-address'"
check "unknown flag: exit 2" sh -c "'$EXPORTER' --web.nope=1 2>/dev/null; [ \$? = 2 ]"
for bad in 127.0.0.1:99999 127.0.0.1:0 127.0.0.1:80x :-1 '[::1:80' 127.0.0.1; do
	out=$("$EXPORTER" --config.file="$CFG" --web.listen-address="$bad" 2>&1); rc=$?
	check "--web.listen-address=$bad: exit 2 naming it ($out)" grep -qF "bad value '$bad' for" <<<"$([ $rc = 2 ] && echo "$out")"
done
# --no-collector / --collector override enabled: (the last flag wins), and
# the scrape says which ran; --web.disable-exporter-metrics drops our own.
printf 'global:\n  plugin_dir: %s\ncollectors:\n  example:\n    enabled: false\n  synthetic: {}\n' "$PLUGINS" >"$WORK/flags.yml"
P8=$(free_port)
start_exporter "$WORK/flags.yml" "$P8" --no-collector.synthetic --collector.example --no-collector.example \
	--collector.example --web.disable-exporter-metrics
curl -s "http://127.0.0.1:$P8/metrics" -o "$WORK/flags.txt"
check "--collector.example runs a collector the file disables" grep -qx 'binstat_scrape_collector_success{collector="example"} 1' "$WORK/flags.txt"
check "--no-collector.synthetic stops one the file enables" sh -c "! grep -q 'collector=\"synthetic\"' '$WORK/flags.txt'"
check "--web.disable-exporter-metrics: no process_* or binstat_exporter_*" sh -c "! grep -q '^process_\|^binstat_exporter_' '$WORK/flags.txt'"
check "without it both are served" sh -c "grep -q '^process_cpu_seconds_total' '$WORK/text.txt' && grep -q '^binstat_exporter_build_info' '$WORK/text.txt'"
check "build_info says what deflates gzip" grep -Eq '^binstat_exporter_build_info\{.*deflate="(isa-l|zlib)"' "$WORK/text.txt"
out=$("$EXPORTER" --check-config --config.file="$WORK/flags.yml" --collector.nosuch 2>&1); rc=$?
check "--collector.NAME of no plugin: a bad flag, exit 2 naming it and the known ones (exit $rc)" \
	sh -c "[ $rc = 2 ] && echo \"\$1\" | grep -q \"unknown collector 'nosuch'.*know .*example\"" _ "$out"

# A plugin that cannot be loaded refuses the start, naming each one.
write_config "$WORK/broken.yml" "  nothere: {}
  badabi: {}"
out=$(timeout 10 "$EXPORTER" --config.file="$WORK/broken.yml" --web.listen-address="127.0.0.1:$(free_port)" 2>&1); rc=$?
check "unloadable plugins: the start fails (exit $rc)" sh -c "[ $rc = 1 ]"
check "unloadable plugins: each named with its reason" \
	sh -c 'echo "$1" | grep -q "collector nothere: cannot load plugin.*collector badabi: .*badabi.so: collector ABI version"' _ "$out"

# IPv6 and several listen addresses.
P7=$(free_port)
if $PY -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	"$EXPORTER" --config.file="$CFG" --web.listen-address="[::1]:$P7" --web.listen-address="127.0.0.1:$P7" >>"$WORK/exporter.log" 2>&1 &
	PIDS+=($!)
	sleep 0.5
	check "IPv6 listen address" test "$(status "http://[::1]:$P7/-/healthy")" = 200
	check "second listen address" test "$(status "http://127.0.0.1:$P7/-/healthy")" = 200
else
	skip "IPv6 listen address" "no IPv6 loopback on this machine"
fi

# The real consumer: Prometheus scrapes us (OpenMetrics, gzip) and stores the series.
start_prometheus "$PORT"
PP=$PROM_PORT
got=$(prom_wait "$PP" 'example_events_total{device="max"}')
check "Prometheus scrapes and stores our series (got '$got')" test "$got" = "18446744073709552000"
up=$(curl -s "http://127.0.0.1:$PP/api/v1/query?query=up" | $PY -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])' 2>/dev/null)
check "Prometheus sees the target up" test "$up" = 1
hist=$(prom_query "$PP" 'example_latency_seconds_bucket{device="vda",le="1.0"}')
check "Prometheus reads the histogram bucket le=1.0 as 10 (got '$hist')" test "$hist" = 10

# Every dashboard query is valid PromQL (Grafana's variables substituted).
$PY - "$HERE/../../dashboards" >"$WORK/queries.txt" <<'EOF'
import json, pathlib, sys
for f in pathlib.Path(sys.argv[1]).glob("*.json"):
    for p in json.load(open(f))["panels"]:
        for t in p.get("targets", []):
            print(t["expr"].replace("$__rate_interval", "1m").replace("$job", ".*").replace("$instance", ".*").replace("$vm", ".*"))
EOF
bad=0
while IFS= read -r q; do
	out=$(curl -s --data-urlencode "query=$q" "http://127.0.0.1:$PP/api/v1/query")
	echo "$out" | grep -q '"status":"success"' || { bad=1; echo "bad query: $q: $out"; }
done <"$WORK/queries.txt"
check "dashboard queries ($(wc -l <"$WORK/queries.txt")) are accepted by Prometheus" test $bad = 0

# Every configuration shipped in config/ is valid (docs that cannot rot).
ROOT_CFG=$(cd "$HERE/../.." && pwd)/config
for f in "$ROOT_CFG"/binstat_exporter.yml "$ROOT_CFG"/examples/*.yml; do
	sed "s|^global:|global:\n  plugin_dir: $PLUGINS|" "$f" >"$WORK/shipped.yml"
	grep -q '^global:' "$f" || printf 'global:\n  plugin_dir: %s\n' "$PLUGINS" >>"$WORK/shipped.yml"
	check "shipped config $(basename "$f") passes --check-config" "$EXPORTER" --check-config --config.file="$WORK/shipped.yml"
done

# make install honours PREFIX and DESTDIR, and the installed binary looks for
# plugins in the library folder, not the build tree.
ROOT=$(cd "$HERE/../.." && pwd)
make -s -C "$ROOT" B="$B" PREFIX=/usr DESTDIR="$WORK/root" install >"$WORK/install.log" 2>&1
check "make install: binary, plugin, header and config in DESTDIR" test -x "$WORK/root/usr/bin/binstat_exporter" \
	-a -f "$WORK/root/usr/lib/binstat_exporter/plugins/example.so" \
	-a -f "$WORK/root/usr/include/binstat/collector.h" -a -f "$WORK/root/etc/binstat_exporter/binstat_exporter.yml"
check "make install: dashboards, rules and examples under share/" test -f "$WORK/root/usr/share/binstat_exporter/dashboards/kvm.json" \
	-a -f "$WORK/root/usr/share/binstat_exporter/monitoring/alerts.yml" -a -f "$WORK/root/usr/share/binstat_exporter/monitoring/tests/alerts_test.yml" \
	-a -f "$WORK/root/usr/share/binstat_exporter/examples/processing.yml"
for m in man1/binstat_exporter.1 man1/dci4stat.1 man1/dci4-netdev.1 man5/binstat_exporter.yml.5; do
	check "man page $m installed and rendered by groff without a warning" \
		sh -c "test -f '$WORK/root/usr/share/man/$m' && [ -z \"\$(groff -man -ww -z '$WORK/root/usr/share/man/$m' 2>&1)\" ]"
done
check "the man page names every flag --help names" $PY - "$EXPORTER" "$ROOT/man/binstat_exporter.1" <<'EOF'
import re, subprocess, sys
helptext = subprocess.run([sys.argv[1], "--help"], capture_output=True, text=True).stdout
flags = set(re.findall(r"--([a-z][a-z.-]+[a-z])", helptext)) - {"collector.NAME", "no-collector.NAME"}
page = open(sys.argv[2]).read().replace("\\-", "-")
missing = sorted(f for f in flags if f not in page)
assert not missing, missing
EOF
# The development files: a program built against the installed library
# with nothing but pkg-config's answer, and run against it.
printf '#include <dci4_supplier.h>\nint main(void) { return dci4_supplier_open == 0; }\n' >"$WORK/uses_dci4.c"
export PKG_CONFIG_SYSROOT_DIR="$WORK/root" PKG_CONFIG_LIBDIR="$WORK/root/usr/lib/pkgconfig"
check "libdci4's headers, link and pkg-config file build a program" \
	sh -c "cc -o '$WORK/uses_dci4' '$WORK/uses_dci4.c' \$(pkg-config --cflags --libs libdci4)"
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
check "... which runs against libdci4.so.0" env LD_LIBRARY_PATH="$WORK/root/usr/lib" "$WORK/uses_dci4"
check "installed rules pass their own tests" promtool test rules "$WORK/root/usr/share/binstat_exporter/monitoring/tests/alerts_test.yml"
printf 'collectors:\n  example: {}\n' >"$WORK/installed.yml"
"$WORK/root/usr/bin/binstat_exporter" --check-config --config.file="$WORK/installed.yml" >"$WORK/installed.out" 2>&1
check "installed binary: default plugin folder is /usr/lib/binstat_exporter/plugins" \
	grep -q "/usr/lib/binstat_exporter/plugins/example.so" "$WORK/installed.out"
printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n' "$WORK/root/usr/lib/binstat_exporter/plugins" >"$WORK/installed.yml"
check "installed binary: loads the installed plugin" "$WORK/root/usr/bin/binstat_exporter" --check-config --config.file="$WORK/installed.yml"

summary
