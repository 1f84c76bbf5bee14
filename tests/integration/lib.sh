# Shared by the integration scripts: results, ports, starting the exporter.
# Source after setting B (the build folder).
EXPORTER="$B/binstat_exporter"
PY=/usr/bin/python3 # Debian's python-prometheus-client lives here, not in pyenv
WORK=$(mktemp -d /tmp/binstat-it.XXXXXX)
PASSED=0 FAILED=0 SKIPPED=0
PIDS=()

MAIN_PID=$BASHPID
# marked: the pids of the processes that carry this suite's mark in their
# environment, but this shell (in MARKED). Builtins only: a command run
# here would carry the mark itself.
marked() {
	local d kv
	MARKED=()
	for d in /proc/[0-9]*; do
		[ "${d#/proc/}" = "$MAIN_PID" ] && continue
		{ while IFS= read -r -d '' kv; do
			[ "$kv" = "BS_SUITE_MARK=$BS_SUITE_MARK" ] && { MARKED+=("${d#/proc/}"); break; }
		done <"$d/environ"; } 2>/dev/null
	done
}
# Every suite ends what it started: the processes in PIDS are killed, and
# any other that carries the mark 5 s later (a daemon behind a subshell
# that was killed in its place, a helper never waited for) fails the suite,
# named, and is killed too.
cleanup() {
	local rc=$? p arg cmd
	[ "$BASHPID" = "$MAIN_PID" ] || return 0 # not from a subshell
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for _ in $(seq 50); do
		marked
		[ ${#MARKED[@]} = 0 ] && break
		sleep 0.1
	done
	if [ ${#MARKED[@]} != 0 ]; then
		echo "FAIL - every process the suite started ends with it; still running:"
		for p in "${MARKED[@]}"; do
			cmd=""
			{ while IFS= read -r -d '' arg; do cmd="$cmd $arg"; done <"/proc/$p/cmdline"; } 2>/dev/null
			echo "       pid $p:$cmd"
			kill -9 "$p" 2>/dev/null
		done
		rc=1
	fi
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
exec 2> >(grep -v ' Killed ' >&2) # bash reports the daemons it kills at exit
# Inherited by every process the suite starts (not by the filter above).
export BS_SUITE_MARK="binstat-it-$$-$SRANDOM"

pass() { PASSED=$((PASSED + 1)); echo "ok   - $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $1"; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/       /'; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP - $1: $2"; }
check() { # check NAME COMMAND...: passes when the command succeeds
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$out"; fi
}

# Peak memory a test allows the exporter: ASan's shadow and quarantine need more.
MEM_LIMIT_KB=65536
ASAN_BUILD=
nm -D "$EXPORTER" 2>/dev/null | grep -q __asan_init && MEM_LIMIT_KB=262144 ASAN_BUILD=1

# rss_check NAME COMMAND...: a check that memory goes back to the kernel or
# stays flat; AddressSanitizer's allocator keeps freed memory in quarantine
# and never trims, so there it is a visible SKIP.
rss_check() {
	if [ -n "$ASAN_BUILD" ]; then
		skip "$1" "AddressSanitizer's allocator keeps freed memory (quarantine)"
	else
		check "$@"
	fi
}

# send_loopback BYTES: sends that many bytes over a TCP connection on 127.0.0.1.
send_loopback() {
	$PY - "$1" <<'EOF'
import socket, sys, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(65536):
        pass
t = threading.Thread(target=sink); t.start()
s = socket.create_connection(srv.getsockname()); s.sendall(b"x" * int(sys.argv[1])); s.close(); t.join()
EOF
}

# scrape_ms PORT FILE: scrapes into FILE and prints how many ms it took, as
# curl timed the request: on a loaded machine starting date and curl took
# seconds more than the request itself (1.02 s by curl, 2.9 s from date to
# date at a load of 10 on 2 cores), which is no time of the exporter's.
scrape_ms() {
	curl -s -o "$2" -w '%{time_total}' "http://127.0.0.1:$1/metrics" |
		awk '{ printf "%d\n", $1 * 1000 }'
}

# with_test_plugins [DIR]: the build's plugins and the test ones in one
# folder (default $WORK/plugins), named in PLUGINS.
with_test_plugins() {
	PLUGINS=${1:-$WORK/plugins}
	mkdir -p "$PLUGINS"
	ln -s "$B"/plugins/*.so "$B"/testplugins/*.so "$PLUGINS"/
}

free_port() {
	$PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_port PORT: true once something accepts connections on it, within
# 10 s. Connects only, sends nothing: no request is counted or limited.
wait_port() {
	for _ in $(seq 200); do
		(: >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# start_exporter CONFIG PORT [FLAGS...]: starts it and waits until it answers.
start_exporter() {
	local cfg=$1 port=$2; shift 2
	# EXPORTER_WRAP: a command to run it under (setpriv for the unprivileged tests).
	${EXPORTER_WRAP:-} "$EXPORTER" --config.file="$cfg" --web.listen-address="127.0.0.1:$port" "$@" \
		>>"$WORK/exporter.log" 2>&1 &
	LAST_PID=$!
	PIDS+=("$LAST_PID")
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$port/-/healthy" >/dev/null && return 0
		kill -0 "$LAST_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# settled_fds PID: how many fds the exporter holds once it holds no TCP
# connection but its listeners: a scrape's connection is closed by the
# exporter just after curl has its answer, so a count taken at once may
# still see it. Waits 5 s at most; prints the count then.
settled_fds() {
	for _ in $(seq 100); do
		ss -Htanp 2>/dev/null | grep "pid=$1," | grep -qv '^LISTEN' || break
		sleep 0.05
	done
	ls "/proc/$1/fd" | wc -l
}

metric() { # metric PORT NAME_WITH_LABELS: prints the value of one series
	curl -g -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'
}


# wait_for_metric PORT PATTERN: true once a scrape matches (grep), within
# 10 s by the clock, however long a scrape takes (each at most 5 s).
wait_for_metric() {
	local end=$(($(date +%s%N) + 10000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		curl -s --max-time 5 "http://127.0.0.1:$1/metrics" | grep -q "$2" && return 0
		sleep 0.1
	done
	return 1
}

# wait_for_log PATTERN [COUNT]: true once the exporter's log holds COUNT
# (default 1) lines matching PATTERN (grep), within 10 s.
wait_for_log() {
	for _ in $(seq 100); do
		[ "$(grep -c -- "$1" "$WORK/exporter.log" 2>/dev/null)" -ge "${2:-1}" ] && return 0
		sleep 0.1
	done
	return 1
}

# require_lone_kvm NAME: ends the script with a visible SKIP unless /dev/kvm
# works and no other VMM runs (the tests count every VM on the host).
require_lone_kvm() {
	local why="" n
	n=$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c 'anon_inode:kvm-vm$')
	[ -w /dev/kvm ] || why="/dev/kvm is missing or not writable here"
	[ -z "$why" ] && [ "$n" != 0 ] && why="$n VM(s) of other VMMs already run on this host and would change every count"
	[ -z "$why" ] && return 0
	skip "$1" "$why"
	summary
	exit 0
}

# example_processing WRITE_ALLOW: the head of a config sampling the example
# collector every 100 ms, writes open to WRITE_ALLOW; groups follow.
example_processing() {
	printf 'global:\n  plugin_dir: %s/plugins\ncollectors:\n  example: {}\nprocessing:\n' "$B"
	printf '  sample_interval: 100ms\n  write: true\n  write_allow: [%s]\n  groups:\n' "$1"
}

# until_samples URL RANGE N [SECONDS]: until the data file at URL shows the
# range statistic RANGE holding N samples (within SECONDS, default 10).
until_samples() {
	for _ in $(seq $((${4:-10} * 10))); do
		[ "$(curl -s "$1" | awk -v n="$2" '$1 == n { print $2 }')" -ge "$3" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# data_check FILE PYTHON: PYTHON's asserts over a /statistics/ data file:
# d maps a line's words but the last to the last ('x_tdigest count': '5'),
# f a line's first word to the rest ('x_range': ['5', '1', '1.000', '1']).
data_check() {
	$PY -c "
lines = [l.split() for l in open('$1')]
d = {' '.join(w[:-1]): w[-1] for w in lines}
f = {w[0]: w[1:] for w in lines}
$2"
}

promtool_clean() { # promtool_clean FILE: no error and no lint complaint
	local out
	out=$(promtool check metrics <"$1" 2>&1) || { echo "$out"; return 1; }
	[ -z "$out" ] || { echo "$out"; return 1; }
}

# run_prometheus SCRAPE_CONFIGS: a real Prometheus scraping (and evaluating
# rules) every second with these scrape_configs (YAML list items, which may
# be followed by other top-level keys); its own port in PROM_PORT.
run_prometheus() {
	PROM_PORT=$(free_port)
	printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n%s\n' "$1" \
		>"$WORK/prometheus.yml"
	prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
	PIDS+=($!)
}

# start_prometheus PORT: one scraping 127.0.0.1:PORT.
start_prometheus() {
	run_prometheus "  - job_name: binstat
    static_configs:
      - targets: ['127.0.0.1:$1']"
}

# prom_query PROM_PORT QUERY: the first result's value, or nothing.
prom_query() {
	curl -s --data-urlencode "query=$2" "http://127.0.0.1:$1/api/v1/query" |
		$PY -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}

# prom_wait PROM_PORT QUERY: prom_query until it has a value (30 s at most).
prom_wait() {
	local got=""
	for _ in $(seq 60); do
		got=$(prom_query "$1" "$2")
		[ -n "$got" ] && break
		sleep 0.5
	done
	echo "$got"
}

summary() { # prints the closing line and returns non-zero on any failure
	echo
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" = 0 ]
}
