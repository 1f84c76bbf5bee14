#!/usr/bin/env bash
# DCI benchmark: 200 suppliers of 100 counters each (one process, a serving
# thread per supplier); scrape latency p50/p99, exporter CPU per scrape and
# peak RSS. For scale: dci4stat gathering the same suppliers one by one.
# Usage: bench/dci.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
WORK=$(mktemp -d /tmp/binstat-dcibench.XXXXXX)
PY=/usr/bin/python3
SUPPLIERS=${DCI_BENCH_SUPPLIERS:-200}
STATS=${DCI_BENCH_STATS:-100}
SCRAPES=200
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; rm -rf "$WORK"' EXIT

mkdir -p "$WORK/sup"
"$B/bench/bench_dci_suppliers" "$WORK/sup" "$SUPPLIERS" "$STATS" >"$WORK/sup.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do grep -q ready "$WORK/sup.log" && break; sleep 0.05; done
grep -q ready "$WORK/sup.log" || { echo "suppliers failed: $(cat "$WORK/sup.log")"; exit 1; }

p=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  plugin_dir: %s\ncollectors:\n  kvm: {enabled: false}\n  dci:\n    supplier_dir: %s\n' \
	"$B/plugins" "$WORK/sup" >"$WORK/c.yml"
"$B/binstat_exporter" --config.file="$WORK/c.yml" --web.listen-address="127.0.0.1:$p" --log.level=warn &
pid=$!
PIDS+=($pid)
for _ in $(seq 100); do
	n=$(curl -s "http://127.0.0.1:$p/metrics" | grep -c '^dci_supplier_up{.*} 1$')
	[ "$n" = "$SUPPLIERS" ] && break
	sleep 0.1
done
series=$(curl -s "http://127.0.0.1:$p/metrics" | grep -c '^dci_bench_counter')
ticks=$(getconf CLK_TCK)
cpu0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
for _ in $(seq $SCRAPES); do
	curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$p/metrics"
done >"$WORK/times"
cpu1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
coll=$(curl -s "http://127.0.0.1:$p/metrics" | awk -F' ' '/^binstat_scrape_collector_duration_seconds\{collector="dci"\}/ { print $2 }')
echo "dci: $SUPPLIERS suppliers x $STATS statistics ($series series), $SCRAPES scrapes"
sort -n "$WORK/times" | awk -v n=$SCRAPES -v c=$((cpu1 - cpu0)) -v t="$ticks" -v coll="$coll" \
	-v rss="$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")" '
	{ v[NR] = $1 }
	END { printf "dci scrape: p50 %.1f ms, p99 %.1f ms (collector alone, last scrape %.1f ms), CPU %.2f ms/scrape, peak RSS %.1f MiB\n",
		v[int(n * 0.5 + 0.5)] * 1000, v[int(n * 0.99 + 0.5)] * 1000, coll * 1000, c / t / n * 1000, rss / 1024 }'
t0=$(date +%s%N)
"$B/dci4stat" -d "$WORK/sup" >/dev/null
echo "for scale: dci4stat, one supplier after another (connect, info, describe, read): $((($(date +%s%N) - t0) / 1000000)) ms"
