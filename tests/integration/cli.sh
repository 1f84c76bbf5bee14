#!/usr/bin/env bash
# What the operator meets first: the flags as node_exporter's, --help
# with the collectors, --check-config with the web config, the start-up
# log, and log lines as data (logfmt, JSON and journal entries whose
# fields are a collector's pairs).
# Usage: tests/integration/cli.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

with_test_plugins
cat >"$WORK/cfg.yml" <<YAML
global:
  plugin_dir: $PLUGINS
collectors:
  example:
    enabled: false
  synthetic: {}
  abi1:
    value: 7
  kvm: {}
YAML

# ---- a collector's pairs are fields --------------------------
P=$(free_port)
start_exporter "$WORK/cfg.yml" "$P" --log.format=json
wait_for_log '"first scan done"'
cp "$WORK/exporter.log" "$WORK/json.log"
check "json: every line is a JSON object" $PY -c "
import json
for l in open('$WORK/json.log'):
    assert isinstance(json.loads(l), dict), l"
check "json: KVM's first scan line holds its pairs as fields, msg alone" $PY -c "
import json
ls = [json.loads(l) for l in open('$WORK/json.log')]
l = [l for l in ls if l.get('msg') == 'first scan done']
assert len(l) == 1, ls
l = l[0]
assert l['collector'] == 'kvm' and l['vms'].isdigit() and l['stats_fds'].isdigit(), l
float(l['duration_ms'])"
check "json: an ABI 1 plugin's pair is a field too" $PY -c "
import json
ls = [json.loads(l) for l in open('$WORK/json.log')]
assert any(l.get('msg') == 'abi1 ready' and l.get('collector') == 'abi1' and l.get('value') == '7' for l in ls), ls"
check "json: a plugin's msg, level and collector keys take x_, never duplicate the line's" $PY -c "
import json
ls = [json.loads(l, object_pairs_hook=lambda p: (len(p) == len(dict(p)) or 1 / 0) and dict(p))
      for l in open('$WORK/json.log')]
l = [l for l in ls if l.get('msg') == 'odd keys']
assert l and l[0] == dict(l[0], level='info', collector='abi1', x_msg='INJECTED', x_level='debug',
                          x_collector='other'), ls"
kill "$LAST_PID"
wait "$LAST_PID" 2>/dev/null
: >"$WORK/exporter.log"
P=$(free_port)
start_exporter "$WORK/cfg.yml" "$P"
wait_for_log 'first scan done'
check "logfmt: KVM's first scan line holds its pairs as fields" \
	grep -Eq ' level=info msg="first scan done" collector=kvm vms=[0-9]+ stats_fds=[0-9]+ duration_ms=[0-9.]+$' "$WORK/exporter.log"

check "logfmt: a plugin's own msg, level and collector keys take x_" \
	grep -Eq ' level=info msg="odd keys" collector=abi1 x_msg=INJECTED x_level=debug x_collector=other$' "$WORK/exporter.log"

# ---- the start-up log says what runs and what guards it --------
check "start-up log: the collectors that run, failed and are off" \
	grep -Eq ' msg=collectors running=synthetic,abi1,kvm failed="" off=example$' "$WORK/exporter.log"
check "start-up log: no TLS, no auth, no rate limit, the request limit" \
	grep -Eq ' msg="web endpoint" web_config="" tls=off client_auth=off basic_auth=off users=0 rate_limit=off max_requests=40$' "$WORK/exporter.log"
kill "$LAST_PID"

# The journal: stderr a socket JOURNAL_STREAM names, a datagram socket
# bound where the test hook points: each line an entry, each pair a field.
check "journal: KVM's first scan line is an entry with its pairs as fields" $PY - "$EXPORTER" "$WORK" <<'EOF'
import os, signal, socket, struct, subprocess, sys, time
exe, work = sys.argv[1], sys.argv[2]
jpath = os.path.join(work, "journal.sock")
j = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
j.bind(jpath)
j.settimeout(0.2)
err_ours, err_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
st = os.fstat(err_theirs.fileno())
env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino),
           BINSTAT_TEST_JOURNAL_SOCKET=jpath)
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
p = subprocess.Popen([exe, "--config.file=%s/cfg.yml" % work,
                      "--web.listen-address=127.0.0.1:%d" % port],
                     stderr=err_theirs.fileno(), env=env)
err_theirs.close()

def parse(d):
    f, i = {}, 0
    while i < len(d):
        nl = d.index(b"\n", i)
        line = d[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            n = struct.unpack("<Q", d[nl + 1:nl + 9])[0]
            v = d[nl + 9:nl + 9 + n]
            assert d[nl + 9 + n:nl + 10 + n] == b"\n"
            i = nl + 10 + n
        f.setdefault(k.decode(), []).append(v.decode())
    return f

def seen(msg):
    return any(e["MESSAGE"] == [msg] for e in entries)

# The KVM collector's first scan and the start-up summary come from two
# threads, in either order: wait for both.
entries, end = [], time.monotonic() + 10
try:
    while time.monotonic() < end and not (seen("first scan done") and seen("collectors")):
        try:
            entries.append(parse(j.recv(65536)))
        except socket.timeout:
            pass
finally:
    p.send_signal(signal.SIGTERM)
    p.wait(10)
scan = [e for e in entries if e["MESSAGE"] == ["first scan done"]]
assert scan, entries
e = scan[0]
assert e["PRIORITY"] == ["6"] and e["COLLECTOR"] == ["kvm"], e
assert e["VMS"][0].isdigit() and e["STATS_FDS"][0].isdigit(), e
float(e["DURATION_MS"][0])
assert e["SYSLOG_IDENTIFIER"] == ["binstat_exporter"], e
assert set(e) == {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "COLLECTOR", "VMS", "STATS_FDS",
                  "DURATION_MS"}, sorted(e)
assert any(x["MESSAGE"] == ["collectors"] and "RUNNING" in x for x in entries), entries
odd = [x for x in entries if x["MESSAGE"] == ["odd keys"]]
assert odd and odd[0]["COLLECTOR"] == ["abi1"] and odd[0]["X_COLLECTOR"] == ["other"] and \
    odd[0]["X_MSG"] == ["INJECTED"] and odd[0]["X_LEVEL"] == ["debug"], odd
err_ours.setblocking(False)
try:
    left = err_ours.recv(65536)
except BlockingIOError:
    left = b""
assert left == b"", left  # every line went to the journal
EOF

# ---- --check-config checks the web config as a start does ------
printf 'tls_server_config:\n  cert_file: %s/missing.crt\n  key_file: %s/missing.key\n' "$WORK" "$WORK" >"$WORK/web-missing.yml"
"$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.config.file="$WORK/web-missing.yml" >"$WORK/wm.out" 2>&1
rc=$?
check "--check-config: a web config naming missing files fails (exit $rc)" test $rc = 1
P=$(free_port)
"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/web-missing.yml" \
	--web.listen-address="127.0.0.1:$P" >"$WORK/wm.start" 2>&1
why=$(sed -n 's/.*msg="cannot load the web config" err="\(.*\)"$/\1/p' "$WORK/wm.start")
check "--check-config: ... with the error a start gives ($why)" \
	sh -c "[ -n '$why' ] && grep -qxF 'cannot load the web config: $why' '$WORK/wm.out'"
if command -v openssl >/dev/null; then
	for n in a b; do
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
			-subj /CN=localhost -keyout "$WORK/$n.key" -out "$WORK/$n.crt" >/dev/null 2>&1
	done
	HASH=$($PY -c "import crypt; print(crypt.crypt('s3cret', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1<<4)))" 2>/dev/null)
	printf 'tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: b.crt\nbasic_auth_users:\n  alice: "%s"\nrate_limit:\n  interval: 100ms\n  burst: 5\n' "$HASH" >"$WORK/web-good.yml"
	out=$("$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.config.file="$WORK/web-good.yml" 2>"$WORK/good.err")
	check "--check-config: a good web config passes ($out)" test "$out" = "configuration OK"
	printf 'tls_server_config:\n  cert_file: a.crt\n  key_file: b.key\n' >"$WORK/web-mismatch.yml"
	"$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.config.file="$WORK/web-mismatch.yml" >"$WORK/mm.out" 2>&1
	rc=$?
	check "--check-config: a key not of its certificate fails, as at start (exit $rc)" \
		sh -c "[ $rc = 1 ] && grep -q '^cannot load the web config: ' '$WORK/mm.out'"
	# the start-up log with everything on
	: >"$WORK/exporter.log"
	P=$(free_port)
	"$EXPORTER" --config.file="$WORK/cfg.yml" --web.config.file="$WORK/web-good.yml" \
		--web.listen-address="127.0.0.1:$P" --web.max-requests=0 >>"$WORK/exporter.log" 2>&1 &
	PIDS+=($!)
	WPID=$!
	wait_for_log 'msg="web endpoint"'
	check "start-up log: TLS, client certificates, basic auth, rate limit, no request limit" \
		grep -Eq " msg=\"web endpoint\" web_config=$WORK/web-good.yml tls=on client_auth=RequireAndVerifyClientCert basic_auth=on users=1 rate_limit=\"one request per 0.100 s, burst 5\" max_requests=\"no limit\"$" "$WORK/exporter.log"
	# A reload that drops every user and the rate
	# limit says so in the same summary line.
	printf 'tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n' >"$WORK/web-good.yml"
	kill -HUP "$WPID"
	wait_for_log 'msg="web endpoint"' 2
	check "reload: the web endpoint line again, with no users and no rate limit" \
		grep -Eq " msg=\"web endpoint\" web_config=$WORK/web-good.yml tls=on client_auth=NoClientCert basic_auth=off users=0 rate_limit=off max_requests=\"no limit\"$" "$WORK/exporter.log"
	kill "$WPID"
else
	skip "--check-config with a good web config" "no openssl here"
fi

# ---- node_exporter's habits ----------------------------------
flag_err() { # flag_err FLAG WANT: exit 2 and the message
	local out rc
	out=$("$EXPORTER" --config.file="$WORK/cfg.yml" "$1" 2>&1)
	rc=$?
	check "$1: exit 2 and \"$2\" (got $rc: $out)" sh -c "[ $rc = 2 ] && echo \"\$1\" | grep -qF -- \"\$2\"" _ "$out" "$2"
}
flag_err -v "unknown short flag '-v', try --help"
flag_err -V "unknown short flag '-V', try --help"
flag_err --verbose "unknown long flag '--verbose', try --help"
flag_err --log.level=verbose "bad value 'verbose' for --log.level: one of debug, info, warn, error"
flag_err --log.format=text "bad value 'text' for --log.format: one of logfmt, json"
flag_err --web.max-requests=-1 "bad value '-1' for --web.max-requests"

"$EXPORTER" --config.file="$WORK/cfg.yml" --help >"$WORK/help.txt" 2>&1
check "--help: exit 0" test $? = 0
"$EXPORTER" --config.file="$WORK/cfg.yml" --help-long >"$WORK/helplong.txt" 2>&1
check "--help-long: exit 0, the same help" sh -c "[ $? = 0 ] && cmp -s '$WORK/help.txt' '$WORK/helplong.txt'"
check "-h: the same help" sh -c "'$EXPORTER' --config.file='$WORK/cfg.yml' -h | cmp -s - '$WORK/help.txt'"
check "--help lists the collectors with their state" sh -c "
	grep -Eqx '  synthetic +on' '$WORK/help.txt' &&
	grep -Eqx '  kvm +on' '$WORK/help.txt' &&
	grep -Eqx '  example +off +\(enabled: false\)' '$WORK/help.txt' &&
	grep -Eqx '  slow +off +\(not in the configuration\)' '$WORK/help.txt'"
"$EXPORTER" --config.file="$WORK/cfg.yml" --collector.disable-defaults --collector.example \
	--no-collector.kvm --help >"$WORK/help-dd.txt" 2>&1
check "--help with --collector.disable-defaults says what runs and why" sh -c "
	grep -Eqx '  synthetic +off +\(--collector.disable-defaults\)' '$WORK/help-dd.txt' &&
	grep -Eqx '  example +on +\(--collector.NAME\)' '$WORK/help-dd.txt' &&
	grep -Eqx '  kvm +off +\(--no-collector.NAME\)' '$WORK/help-dd.txt'"

# --collector.disable-defaults: only the collectors named by flags run.
P=$(free_port)
start_exporter "$WORK/cfg.yml" "$P" --collector.disable-defaults --collector.example --collector.slow
curl -s "http://127.0.0.1:$P/metrics" -o "$WORK/dd.txt"
check "--collector.disable-defaults: --collector.example runs (its file says enabled: false)" \
	grep -qx 'binstat_scrape_collector_success{collector="example"} 1' "$WORK/dd.txt"
check "--collector.disable-defaults: --collector.slow runs with its defaults (not in the file)" \
	grep -q 'binstat_scrape_collector_success{collector="slow"}' "$WORK/dd.txt"
check "--collector.disable-defaults: the file's others do not run" \
	sh -c "! grep -q 'collector=\"\(synthetic\|abi1\|kvm\)\"' '$WORK/dd.txt'"

# --web.max-requests=0: no limit (node_exporter's meaning); =1 still 503s.
cat >"$WORK/slow.yml" <<YAML
global:
  plugin_dir: $PLUGINS
collectors:
  slow:
    sleep_seconds: 1
YAML
concurrent_codes() { # concurrent_codes PORT: the codes of three scrapes at once
	for _ in 1 2 3; do
		curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$1/metrics" &
	done | sort | tr '\n' ' '
	wait
}
P=$(free_port)
start_exporter "$WORK/slow.yml" "$P" --web.max-requests=0
codes=$(concurrent_codes "$P")
check "--web.max-requests=0: three scrapes at once all 200 ($codes)" test "$codes" = "200 200 200 "
P=$(free_port)
start_exporter "$WORK/slow.yml" "$P" --web.max-requests=1
codes=$(concurrent_codes "$P")
check "--web.max-requests=1: two of three at once are 503 ($codes)" test "$codes" = "200 503 503 "

# ---- --check-config resolves the listen addresses
for addr in nosuchhost.invalid:10187 256.1.1.1:10187; do
	"$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.listen-address=$addr >"$WORK/la.out" 2>&1
	rc=$?
	check "--check-config --web.listen-address=$addr: exit 1, as a start ($rc: $(cat "$WORK/la.out"))" \
		sh -c "[ $rc = 1 ] && grep -q \"^cannot start: listen address '$addr': \" '$WORK/la.out'"
done
out=$("$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.listen-address=127.0.0.1:1 2>/dev/null)
check "--check-config: a resolvable address passes, not bound ($out)" test "$out" = "configuration OK"

# ---- empty web config, unknown collector names
out=$("$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --web.config.file= 2>/dev/null)
check "--web.config.file= (empty): no web config, as node_exporter ($out)" test "$out" = "configuration OK"
flag_err --collector.Kvm "unknown collector 'Kvm' (--collector.Kvm): the configuration and $PLUGINS know example,synthetic,abi1,kvm,"
flag_err --no-collector.nosuch "unknown collector 'nosuch' (--no-collector.nosuch)"
flag_err --collector. "--collector. needs a collector name"
flag_err --collector.= "--collector. needs a collector name"
flag_err --no-collector.= "--no-collector. needs a collector name"
flag_err --collector.kvm=true "flag --collector.kvm takes no value"

# ---- the built-in processing follows the flags
cat >"$WORK/proc.yml" <<YAML
global:
  plugin_dir: $PLUGINS
collectors:
  synthetic: {}
processing:
  sample_interval: 250ms
  groups:
    - name: syn
      select: '{__name__=~"synthetic.*"}'
      statistics:
        - {name: syn_max, type: value}
YAML
if ! "$EXPORTER" --check-config --config.file="$WORK/proc.yml" >"$WORK/proc.check" 2>&1; then
	skip "processing and the --collector flags" "the processing: section is refused here: $(cat "$WORK/proc.check")"
else
	"$EXPORTER" --config.file="$WORK/proc.yml" --help >"$WORK/help-proc.txt" 2>&1
	check "--help lists the processing, on, and why" \
		grep -Eqx '  processing +on +\(built in: the processing: section\)' "$WORK/help-proc.txt"
	check "--help without a processing: section: processing off" \
		grep -Eqx '  processing +off +\(built in: no processing: section\)' "$WORK/help.txt"
	for flags in "--no-collector.processing" "--collector.disable-defaults --collector.synthetic"; do
		: >"$WORK/exporter.log"
		P=$(free_port)
		# shellcheck disable=SC2086
		start_exporter "$WORK/proc.yml" "$P" $flags
		wait_for_log 'msg=collectors'
		check "$flags: the processing does not run, and is said off" \
			grep -Eq ' msg=collectors running=synthetic failed="" off=processing$' "$WORK/exporter.log"
		kill "$LAST_PID"
	done
	: >"$WORK/exporter.log"
	P=$(free_port)
	start_exporter "$WORK/proc.yml" "$P" --collector.disable-defaults --collector.processing
	wait_for_log 'msg=collectors'
	check "--collector.disable-defaults --collector.processing: the processing alone runs" \
		grep -Eq ' msg=collectors running=processing failed="" off=' "$WORK/exporter.log"
	kill "$LAST_PID"
	out=$("$EXPORTER" --check-config --config.file="$WORK/cfg.yml" --collector.processing 2>&1)
	rc=$?
	check "--collector.processing without a processing: section is refused (exit $rc: $out)" \
		sh -c "[ $rc = 1 ] && echo \"\$1\" | grep -q 'no processing: section'" _ "$out"
fi

# The DCI4 programs answer --help.
for prog in dci4-netdev dci4stat; do
	out=$("$B/$prog" --help 2>&1)
	rc=$?
	check "$prog --help: exit 0 and its options" sh -c "[ $rc = 0 ] && echo \"\$1\" | grep -q -- '-h, --help' && echo \"\$1\" | grep -q -- '--dir=DIR'" _ "$out"
done
check "dci4-netdev --help names --interval" sh -c "'$B/dci4-netdev' --help | grep -q -- '--interval=MS'"
out=$("$B/dci4-netdev" -i 5 2>&1)
check "dci4-netdev -i 5: exit 2 saying why" sh -c "[ $? = 2 ] && echo \"\$1\" | grep -q \"bad interval '5'\"" _ "$out"

# A collector written in C++ builds against the header alone and loads.
if ! command -v g++ >/dev/null; then
	skip "a C++ collector" "g++ is not installed"
else
	mkdir -p "$WORK/cxx"
	g++ -std=c++17 -O2 -fPIC -fvisibility=hidden -shared -Wall -Wextra -Werror -I"$HERE/../../include" \
		-o "$WORK/cxx/cxx.so" "$HERE/../fixtures/plugins/cxx.cc" 2>"$WORK/cxx.err"
	check "a C++ collector builds with -Wall -Wextra -Werror ($(head -c 200 "$WORK/cxx.err"))" test -f "$WORK/cxx/cxx.so"
	printf 'global:\n  plugin_dir: %s\ncollectors:\n  cxx: {}\n' "$WORK/cxx" >"$WORK/cxx.yml"
	CP=$(free_port)
	start_exporter "$WORK/cxx.yml" "$CP"
	check "... and the exporter loads it and serves its series" \
		sh -c "curl -s 'http://127.0.0.1:$CP/metrics' | grep -qx 'cxx_up 1'"
fi

summary
