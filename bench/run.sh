#!/usr/bin/env bash
# Scrape benchmark: the exporter serving 1,000,000 series from the synthetic test
# collector, timed over HTTP (the writer and its peer: bench/writer.sh).
# Usage: bench/run.sh BUILD_DIR
set -eu
B=$(cd "${1:-build}" && pwd)
WORK=$(mktemp -d /tmp/binstat-bench.XXXXXX)
SCRAPES=20
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT

PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 60s\ncollectors:\n  synthetic:\n    bench_series: 1000000\n' \
	"$B/testplugins" >"$WORK/bench.yml"
"$B/binstat_exporter" --config.file="$WORK/bench.yml" --web.listen-address="127.0.0.1:$PORT" \
	--log.level=warn &
PID=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/-/healthy" >/dev/null && break; sleep 0.05; done

# scrape_stats LABEL CURL_ARGS...: p50/p99 latency, bytes and exporter CPU per scrape.
scrape_stats() {
	local label=$1
	shift
	local ticks cpu0 cpu1
	ticks=$(getconf CLK_TCK)
	cpu0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
	for _ in $(seq $SCRAPES); do
		curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "$@" "http://127.0.0.1:$PORT/metrics"
	done >"$WORK/times"
	cpu1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
	sort -n "$WORK/times" | awk -v label="$label" -v n=$SCRAPES -v cpu=$((cpu1 - cpu0)) -v t="$ticks" '
		{ v[NR] = $1; bytes = $2 }
		END { printf "scrape %-18s 1000000 series: p50 %.3f s, p99 %.3f s, %.1f MB served, exporter CPU %.3f s/scrape\n",
			label, v[int(n * 0.5 + 0.5)], v[n], bytes / 1e6, cpu / t / n }'
}
curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" # warm up
scrape_stats "text"
scrape_stats "text, gzip" -H 'Accept-Encoding: gzip'
scrape_stats "OpenMetrics, gzip" -H 'Accept-Encoding: gzip' -H 'Accept: application/openmetrics-text'
echo "exporter peak RSS over $((3 * SCRAPES + 1)) scrapes: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$PID/status")"
