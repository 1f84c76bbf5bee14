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

# dci4-netdev: every interface a supplier; loopback traffic shows up.
ND="$WORK/netdev"
mkdir -p "$ND"
"$B/dci4-netdev" -d "$ND" -i 100 >"$WORK/netdev.log" 2>&1 &
NDP=$!
PIDS+=("$NDP")
for _ in $(seq 100); do [ -S "$ND/dci4-netdev.lo.sock" ] && break; sleep 0.05; done
check "dci4-netdev: one supplier per interface (lo among them)" test -S "$ND/dci4-netdev.lo.sock" -a \
	"$(ls "$ND" | wc -l)" = "$(ls /sys/class/net | wc -l)"
rx() { "$B/dci4stat" -d "$ND" dci4-netdev.lo | awk '$1 == "rx_bytes" { print $2 }'; }
before=$(rx)
send_loopback 2000000
sleep 0.4
after=$(rx)
check "dci4-netdev: lo rx_bytes rose by at least the 2 MB sent ($before -> $after)" \
	test "$((after - before))" -ge 2000000
check "dci4-netdev: lo shown with its address and link" sh -c \
	"'$B/dci4stat' -d '$ND' dci4-netdev.lo | grep -q 'ipv4 *127.0.0.1' && '$B/dci4stat' -d '$ND' dci4-netdev.lo | grep -q 'link_up *yes'"
kill "$NDP"
wait "$NDP"
check "dci4-netdev: its sockets go when it stops" test -z "$(ls "$ND")"

summary
