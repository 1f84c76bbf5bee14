#!/usr/bin/env bash
# KVM benchmark: a fixture VMM holding 1,000 VMs of 8 vCPUs (9,000 stats fds);
# the pread floor, scrape latency per VM and per vCPU, CPU, bytes, peak RSS;
# and QMP query-stats on a few real QEMU VMs for the per-VM cost of both.
# Usage: bench/kvm.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
WORK=$(mktemp -d /tmp/binstat-kvmbench.XXXXXX)
PY=/usr/bin/python3
VMS=${KVM_BENCH_VMS:-1000}
VCPUS=${KVM_BENCH_VCPUS:-8}
SCRAPES=20
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done; rm -rf "$WORK"' EXIT

if [ ! -w /dev/kvm ]; then
	echo "SKIP kvm bench: /dev/kvm is missing here"
	exit 0
fi
"$B/tests/kvm_fixture" "$VMS" "$VCPUS" -1 "$WORK/ready" >"$WORK/fixture.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 600); do [ -s "$WORK/ready" ] && break; sleep 0.1; done
[ -s "$WORK/ready" ] || { echo "fixture failed: $(cat "$WORK/fixture.log")"; exit 1; }
"$B/bench/bench_kvm_floor" "$(cat "$WORK/ready")"

port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# bench_mode MODE ENCODING: one exporter, SCRAPES scrapes, then its peak RSS.
bench_mode() {
	local mode=$1 enc=$2 p pid ticks cpu0 cpu1
	p=$(port)
	printf 'global:\n  plugin_dir: %s\n  scrape_timeout: 60s\ncollectors:\n  kvm:\n    mode: %s\n' \
		"$B/plugins" "$mode" >"$WORK/$mode.yml"
	"$B/binstat_exporter" --config.file="$WORK/$mode.yml" --web.listen-address="127.0.0.1:$p" \
		--log.level=warn &
	pid=$!
	PIDS+=($pid)
	# Warm up with the encoding measured: an uncompressed warm-up would set
	# the peak RSS of a gzip run.
	for _ in $(seq 300); do
		curl -s ${enc:+-H "Accept-Encoding: $enc" --compressed} "http://127.0.0.1:$p/metrics" |
			grep -q "^kvm_collector_vms $VMS" && break
		sleep 0.1
	done
	ticks=$(getconf CLK_TCK)
	cpu0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	for _ in $(seq $SCRAPES); do
		curl -s -o /dev/null ${enc:+-H "Accept-Encoding: $enc"} \
			-w '%{time_total} %{size_download}\n' "http://127.0.0.1:$p/metrics"
	done >"$WORK/times"
	cpu1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	sort -n "$WORK/times" | awk -v m="$mode${enc:+, $enc}" -v n=$SCRAPES -v c=$((cpu1 - cpu0)) -v t="$ticks" \
		-v rss="$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")" '
		{ v[NR] = $1; b = $2 }
		END { printf "kvm scrape %-14s p50 %.3f s, p99 %.3f s, %.1f MB served, CPU %.3f s/scrape, peak RSS %.1f MiB\n",
			m, v[int(n * 0.5 + 0.5)], v[n], b / 1e6, c / t / n, rss / 1024 }'
	kill "$pid"
	wait "$pid" 2>/dev/null
}
echo "kvm fixture: $VMS VMs x $VCPUS vCPUs"
bench_mode per_vm ""
bench_mode per_vm gzip
bench_mode per_vcpu ""
bench_mode per_vcpu gzip

# QMP query-stats on real QEMU VMs, for comparison of the per-VM cost.
QEMU=$(command -v qemu-system-x86_64)
if [ -z "$QEMU" ]; then
	echo "SKIP QMP comparison: qemu-system-x86_64 is not installed"
	exit 0
fi
for i in 1 2 3; do
	"$QEMU" -accel kvm -m 64 -smp "$VCPUS" -nographic -nodefaults -serial null -monitor none \
		-name "guest=bench$i" -qmp "unix:$WORK/q$i.sock,server=on,wait=off" >/dev/null 2>&1 &
	PIDS+=($!)
done
for i in 1 2 3; do for _ in $(seq 100); do [ -S "$WORK/q$i.sock" ] && break; sleep 0.05; done; done
$PY - "$WORK" <<'EOF'
import json, socket, sys, time
def qmp(path):
    s = socket.socket(socket.AF_UNIX); s.connect(path); f = s.makefile("rwb")
    f.readline()
    def call(cmd, **a):
        f.write(json.dumps({"execute": cmd, "arguments": a}).encode() + b"\n"); f.flush()
        while True:
            m = json.loads(f.readline())
            if "return" in m or "error" in m:
                return m
    call("qmp_capabilities")
    return call
calls = [qmp(f"{sys.argv[1]}/q{i}.sock") for i in (1, 2, 3)]
best = 1e9
for _ in range(20):
    t0 = time.perf_counter()
    for c in calls:
        c("query-stats", target="vm")
        c("query-stats", target="vcpu")
    best = min(best, (time.perf_counter() - t0) / len(calls))
print(f"QMP query-stats (vm + vcpu targets), 3 QEMU VMs of 8 vCPUs: {best * 1e3:.2f} ms per VM (best of 20)")
EOF
