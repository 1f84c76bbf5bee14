#!/usr/bin/env bash
# The t-digest against Debian's github.com/influxdata/tdigest at the same
# compression, on the same 10^6 samples of four distributions and five
# seeds (bench/tdigest_compare.c): ours must be no worse in total.
# Usage: tests/integration/tdigest.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
SRC=/usr/share/gocode/src/github.com/influxdata/tdigest

if ! command -v go >/dev/null || [ ! -d "$SRC" ]; then
	skip "t-digest peer" "needs golang-go and golang-github-influxdata-tdigest-dev"
	summary
	exit 0
fi
if ! GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$WORK/gocache" \
	go build -o "$WORK/peer" "$HERE/../../bench/peer/tdigest.go" >"$WORK/go.log" 2>&1; then
	fail "t-digest peer builds" "$(cat "$WORK/go.log")"
	summary
	exit 1
fi
"$B/bench/tdigest_compare" "$WORK/peer" 100 1000000 >"$WORK/table.txt" 2>&1
rc=$?
sed 's/^/       /' "$WORK/table.txt"
check "t-digest: rank error no worse than influxdata/tdigest at compression 100" test $rc = 0
"$B/bench/tdigest_compare" "$WORK/peer" 500 300000 >"$WORK/table500.txt" 2>&1
rc=$?
tail -1 "$WORK/table500.txt" | sed 's/^/       /'
check "t-digest: no worse at compression 500 either" test $rc = 0
summary
