#!/usr/bin/env bash
# Writer benchmark against the peer, client_golang's expfmt (Debian's
# package): both format the same 1,000,000 series on core 0, alternated
# three times so that both see the same machine; the ratio is of the best
# median of each side.
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
done | tee "$WORK/runs" | grep -v '^peer' | sed -n '1,3p'
grep '^peer' "$WORK/runs" | head -2
# "... median 0.171 s = 5.83 M series/s ...": the best median per side and format.
awk '/ series x 3 labels: median / {
	side = $1; fmt = ($0 ~ /OpenMetrics/) ? "OpenMetrics" : "text 0.0.4"
	for (i = 1; i <= NF; i++) if ($i == "=") rate = $(i + 1)
	if (rate > best[side, fmt]) best[side, fmt] = rate
}
END {
	split("text 0.0.4|OpenMetrics", f, "|")
	for (k = 1; k <= 2; k++)
		printf "writer / client_golang, %s: %.2f / %.2f M series/s (best median of 3 alternated runs) = %.1fx (goal: 3x)\n",
			f[k], best["writer", f[k]], best["peer", f[k]], best["writer", f[k]] / best["peer", f[k]]
}' "$WORK/runs"
