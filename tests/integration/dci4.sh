#!/usr/bin/env bash
# DCI4 over its Linux transport: a test supplier (two effective suppliers in
# one process, every statistic type) and dci4stat, the generic display.
# Usage: tests/integration/dci4.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
DIR="$WORK/dci4"
mkdir -p "$DIR"

"$B/tests/dci4_test_supplier" "$DIR" >"$WORK/supplier.out" 2>&1 &
SUP=$!
PIDS+=("$SUP")
for _ in $(seq 100); do grep -q ready "$WORK/supplier.out" 2>/dev/null && break; sleep 0.05; done
check "two effective suppliers, one socket each" test "$(ls "$DIR" | tr '\n' ' ')" = "test.unit0.sock test.unit1.sock "

"$B/dci4stat" -d "$DIR" >"$WORK/stat.txt" 2>&1
check "dci4stat: exit 0" test $? = 0
want() { check "dci4stat: $1" grep -qF -- "$1" "$WORK/stat.txt"; }
want "unit0: A test supplier for dci4stat"
want "module test_supplier 1.02, network driver, interface 1.01"
want "temperature_delta                -5"
want "flags                            0x0102"
want "netmask                          255.255.255.0"
want "link_up                          yes"
want "promiscuous                      never"
want "driver                           virtio_net"
want "mac                              52:54:00:12:34:57"
want "ipv4                             192.168.0.11"
want "last_change                      2023-11-14 22:13:20 UTC"
want "uptime                           2.50 seconds"
check "dci4stat: 11 statistics per supplier, the unused one not shown" test "$(grep -cE '^    [a-z0-9_]+ {2,}' "$WORK/stat.txt")" = 22
p1=$(awk '$1 == "packets_received" { print $2; exit }' "$WORK/stat.txt")
sleep 0.2
p2=$("$B/dci4stat" -d "$DIR" test.unit0 | awk '$1 == "packets_received" { print $2 }')
check "dci4stat: one supplier by name, its counter moving ($p1 -> $p2)" test "${p2:-0}" -gt "${p1:-0}"

kill "$SUP"
wait "$SUP"
check "a supplier that exits removes its sockets" test -z "$(ls "$DIR")"
"$B/dci4stat" -d "$DIR" >"$WORK/none.txt" 2>&1
check "dci4stat with no suppliers: exit 0, nothing printed" test $? = 0 -a ! -s "$WORK/none.txt"

summary
