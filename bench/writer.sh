#!/usr/bin/env bash
# Writer benchmark against the peer, client_golang's expfmt (Debian's
# package): both format the same 1,000,000 series on core 0, alternated
# three times so that both see the same machine. The peer writes into a
# bytes.Buffer it reuses, so memory already touched; the writer is measured
# that way for the ratio, and into new memory (its pages faulted in, as a
# large scrape's output is) beside it. Ratios are of the best medians.
# Usage: bench/writer.sh BUILD_DIR
set -eu
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d /tmp/binstat-writer.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/prometheus/client_golang ]; then
	taskset -c 0 "$B/bench/bench_writer"
	echo "SKIP writer / client_golang ratio: Go or Debian's client_golang is not installed" \
		"(tools/deps.sh bench)"
	exit 0
fi
GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$WORK/gocache" \
	go build -o "$WORK/peer" "$HERE/peer/client_golang.go"
for _ in 1 2 3; do
	taskset -c 0 "$B/bench/bench_writer"
	taskset -c 0 "$WORK/peer"
done | tee "$WORK/runs" | grep -v '^peer' | sed -n '1,5p'
grep '^peer' "$WORK/runs" | head -2
# "... median 0.171 s = 5.83 M series/s ...": the best median per side and format.
awk '/ series x 3 labels: median / {
	side = $1; fmt = ($0 ~ /OpenMetrics/) ? "OpenMetrics" : "text 0.0.4"
	for (i = 1; i <= NF; i++) if ($i == "=") rate = $(i + 1)
	if (rate > best[side, fmt]) best[side, fmt] = rate
}
/^writer floor:/ {
	for (i = 1; i <= NF; i++) {
		if ($i == "new") fresh = $(i + 2)
		if ($i == "touched") warm = $(i + 2)
	}
	if (fresh_best == "" || fresh < fresh_best) fresh_best = fresh
	if (warm_best == "" || warm < warm_best) warm_best = warm
}
END {
	split("text 0.0.4|OpenMetrics", f, "|")
	for (k = 1; k <= 2; k++) {
		t = best["writer(touched)", f[k]]; n = best["writer(new)", f[k]]; p = best["peer", f[k]]
		printf "writer / client_golang, %s, both into touched memory: %.2f / %.2f M series/s = %.1fx (goal: 3x); into new memory the writer makes %.2f M series/s (%.1fx)\n",
			f[k], t, p, t / p, n, n / p
	}
	# A round of 10^6 series takes 1 / rate seconds (rate in M series/s).
	n = best["writer(new)", "text 0.0.4"]; t = best["writer(touched)", "text 0.0.4"]
	printf "writer / memcpy of its output (83 MB): into new memory %.1fx (goal: within 4x), into touched memory %.1fx\n",
		(1 / n) / fresh_best, (1 / t) / warm_best
}' "$WORK/runs"
