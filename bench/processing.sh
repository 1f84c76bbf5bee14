#!/usr/bin/env bash
# The processing's cost: N series of the synthetic test collector sampled
# at a rate, a quarter each into a range, a log2 array, a template of max
# and a linear CR histogram, and a t-digest; the exporter's CPU per second
# of wall time and its memory, against the same exporter without the
# processing. Then the t-digest's accuracy table.
# Usage: bench/processing.sh BUILD_DIR
set -eu
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/binstat-bench.XXXXXX)
SECONDS_MEASURED=${SECONDS_MEASURED:-20}
PID=
trap '[ -n "$PID" ] && kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

config() { # config SERIES INTERVAL WITH_PROCESSING
	cat <<EOF
global:
  plugin_dir: $B/testplugins
collectors:
  synthetic:
    bench_series: $1
EOF
	[ "$3" = 1 ] || return 0
	cat <<EOF
processing:
  sample_interval: $2
  max_sources: 200000
  groups:
    - name: ranges
      select: '{__name__=~"synthetic_bench_[0-9]*[0-2]_bytes"}'
      statistics: [{name: b_range, type: range}]
    - name: arrays
      select: '{__name__=~"synthetic_bench_[0-9]*[3-5]_bytes"}'
      statistics: [{name: b_array, type: array, scale: log2, range_min: 0, range_max: 1073741824}]
    - name: hists
      select: '{__name__=~"synthetic_bench_[0-9]*[67]_bytes"}'
      template: {name: b_voi, stats: [max, {crhist: {scheme: lin, lb: 0, ub: 1000000, stepinc: 100000}}]}
    - name: digests
      select: '{__name__=~"synthetic_bench_[0-9]*[89]_bytes"}'
      template: {name: b_td, stats: [{tdigest: {compression: 50}}]}
EOF
}

# run SERIES INTERVAL WITH_PROCESSING: prints "cpu_percent rss_kib passes pass_ms"
run() {
	config "$1" "$2" "$3" >"$WORK/p.yml"
	local port
	port=$(free_port)
	"$B/binstat_exporter" --config.file="$WORK/p.yml" --web.listen-address="127.0.0.1:$port" \
		--log.level=warn &
	PID=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/-/healthy" >/dev/null && break; sleep 0.05; done
	sleep 3 # the first passes make the sources
	local t0 c0 t1 c1
	t0=$(date +%s.%N) c0=$(cpu_ticks $PID)
	sleep $SECONDS_MEASURED
	t1=$(date +%s.%N) c1=$(cpu_ticks $PID)
	local rss passes pass_s
	rss=$(rss_kib $PID)
	passes=$(curl -s "http://127.0.0.1:$port/metrics?collect[]=processing" | awk '$1 == "binstat_processing_passes_total" {print $2}')
	pass_s=$(curl -s "http://127.0.0.1:$port/metrics?collect[]=processing" | awk '$1 == "binstat_processing_pass_seconds_total" {print $2}')
	kill $PID
	wait $PID 2>/dev/null || true
	PID=
	/usr/bin/python3 -c "
t = $t1 - $t0; ticks = $(getconf CLK_TCK)
print('%.2f %d %s %.2f' % (100 * ($c1 - $c0) / ticks / t, $rss, '${passes:-0}',
      1000 * float('${pass_s:-0}') / max(1, float('${passes:-0}'))))"
}

for spec in "10000 250ms" "100000 1s"; do
	set -- $spec
	read -r cpu0 rss0 _ _ <<<"$(run "$1" "$2" 0)"
	read -r cpu1 rss1 passes ms <<<"$(run "$1" "$2" 1)"
	echo "processing $1 series at $2: exporter CPU ${cpu1}% of a core (${cpu0}% without)," \
		"RSS $((rss1 / 1024)) MiB ($((rss0 / 1024)) MiB without: $(((rss1 - rss0) / 1024)) MiB for the processing)," \
		"a pass ${ms} ms ($passes passes)"
done
"$HERE/../tests/integration/tdigest.sh" "$B" | grep -v '^ok\|^$\|passed'
