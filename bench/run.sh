#!/usr/bin/env bash
# Scrape benchmark over HTTP with the synthetic test collector: 1,000,000
# series as text, gzip and OpenMetrics; how scrape time, CPU and memory grow
# from 1,000 to 1,000,000 series; and what a scrape costs on a kept-alive
# connection against a new one. (The writer and its peer: bench/writer.sh.)
# Usage: bench/run.sh BUILD_DIR
set -eu
B=$(cd "${1:-build}" && pwd)
WORK=$(mktemp -d /tmp/binstat-bench.XXXXXX)
SCRAPES=20
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
TICKS=$(getconf CLK_TCK)

# start SERIES: an exporter serving SERIES synthetic series, in $PID at $PORT.
start() {
	[ -n "$PID" ] && { kill "$PID"; wait "$PID" 2>/dev/null || true; }
	PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 60s\ncollectors:\n  synthetic:\n    bench_series: %s\n' \
		"$B/testplugins" "$1" >"$WORK/bench.yml"
	"$B/binstat_exporter" --config.file="$WORK/bench.yml" --web.listen-address="127.0.0.1:$PORT" \
		--log.level=warn &
	PID=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/-/healthy" >/dev/null && break; sleep 0.05; done
	# Warm up with gzip, as the growth rows scrape: an uncompressed warm-up
	# would set their peak RSS (it holds up to the 32 MiB spill budget as text).
	curl -s -o /dev/null -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT/metrics"
}
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }

# scrape_stats LABEL CURL_ARGS...: p50/p99 latency, bytes and exporter CPU per scrape.
scrape_stats() {
	local label=$1
	shift
	local cpu0 cpu1
	cpu0=$(cpu)
	for _ in $(seq $SCRAPES); do
		curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "$@" "http://127.0.0.1:$PORT/metrics"
	done >"$WORK/times"
	cpu1=$(cpu)
	sort -n "$WORK/times" | awk -v label="$label" -v n=$SCRAPES -v cpu=$((cpu1 - cpu0)) -v t="$TICKS" '
		{ v[NR] = $1; bytes = $2 }
		END { printf "scrape %-18s 1000000 series: p50 %.3f s, p99 %.3f s, %.1f MB served, exporter CPU %.3f s/scrape\n",
			label, v[int(n * 0.5 + 0.5)], v[n], bytes / 1e6, cpu / t / n }'
}
start 1000000
scrape_stats "text"
scrape_stats "text, gzip" -H 'Accept-Encoding: gzip'
scrape_stats "OpenMetrics, gzip" -H 'Accept-Encoding: gzip' -H 'Accept: application/openmetrics-text'
echo "exporter peak RSS over $((3 * SCRAPES + 1)) scrapes: $(awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$PID/status")"

# Growth: the same scrapes (gzip, as Prometheus asks) from 10^3 to 10^6
# series. Linear growth keeps CPU per series within +-25% from 10^4 up; at
# 10^3 the exporter's own metrics and the HTTP exchange weigh as much.
printf '%-9s %9s %10s %10s %12s\n' series p50 CPU "peak RSS" "CPU/series" >"$WORK/growth"
for n in 1000 10000 100000 1000000; do
	start "$n"
	# At least 20 scrapes and 2 s of them: CPU is counted in 10 ms ticks.
	cpu0=$(cpu)
	k=0
	until=$(($(date +%s%N) + 2000000000))
	while [ $k -lt $SCRAPES ] || [ "$(date +%s%N)" -lt $until ]; do
		curl -s -o /dev/null -H 'Accept-Encoding: gzip' -w '%{time_total}\n' "http://127.0.0.1:$PORT/metrics"
		k=$((k + 1))
	done | sort -n >"$WORK/times"
	cpu1=$(cpu)
	awk -v n="$n" -v s="$(wc -l <"$WORK/times")" -v c=$((cpu1 - cpu0)) -v t="$TICKS" \
		-v rss="$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")" '
		{ v[NR] = $1 }
		END { printf "%-9d %7.1f ms %7.1f ms %6.1f MiB %9.0f ns\n", n, v[int(s * 0.5 + 0.5)] * 1000,
			c / t / s * 1000, rss / 1024, c / t / s / n * 1e9 }' "$WORK/times" >>"$WORK/growth"
done
echo "growth with the series served (synthetic collector, gzip, at least $SCRAPES scrapes and 2 s each):"
cat "$WORK/growth"
awk 'NR > 2 { c = $(NF - 1); lo = (lo == "" || c < lo) ? c : lo; hi = c > hi ? c : hi }
	END { mid = (lo + hi) / 2; printf "growth, 10^4 to 10^6 series: CPU per series %.0f-%.0f ns, +-%.0f%% around the middle (goal: +-25%%)\n",
		lo, hi, (hi - lo) / 2 / mid * 100 }' "$WORK/growth"

# Keep-alive: 200 scrapes of 1,000 series by one client, on one connection
# and on a new connection each (Connection: close), the exporter's CPU per
# scrape and the client's time per scrape.
start 1000
for how in kept new; do
	cpu0=$(cpu)
	args=()
	for _ in $(seq 200); do args+=(-o /dev/null "http://127.0.0.1:$PORT/metrics"); done
	close=()
	[ $how = new ] && close=(-H 'Connection: close')
	curl -s "${close[@]}" -w '%{time_total}\n' -H 'Accept-Encoding: gzip' "${args[@]}" |
		sort -n >"$WORK/times"
	cpu1=$(cpu)
	awk -v how="$how" -v c=$((cpu1 - cpu0)) -v t="$TICKS" '{ v[NR] = $1 }
		END { printf "scrapes of 1,000 series on %s: p50 %.2f ms, exporter CPU %.3f ms/scrape\n",
			how == "kept" ? "one kept-alive connection" : "a new connection each", v[int(NR / 2 + 0.5)] * 1000, c / t / NR * 1000 }' "$WORK/times"
done
