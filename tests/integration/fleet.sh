#!/usr/bin/env bash
# The fleet set-up end to end, with two hosts that serve series of the same
# names: each host is a network namespace (its own localhost:10187) and a
# PID namespace (its exporter sees its own VMMs only), running a KVM VM named
# web1 when /dev/kvm is there, the example and test collectors, and a
# Prometheus agent with the SHIPPED monitoring/fleet/agent.yml (only the
# host name, the central URL and, for speed, the scrape interval changed).
# A third namespace runs the central Prometheus with the shipped central.yml,
# rules.yml and alerts.yml (paths, a 1 s evaluation and `for: 0s` changed;
# a lookback of 15 s instead of 5 minutes, so that a dead host's `up` goes
# stale in seconds).
# Checked centrally: every series, recording rule result, firing alert and
# dashboard query keeps the two hosts apart and names them.
# Usage: tests/integration/fleet.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
M="$ROOT/monitoring"
. "$HERE/lib.sh"

if ! command -v prometheus >/dev/null; then
	skip "the fleet of two hosts" "prometheus is not installed (tools/deps.sh test)"
	summary
	exit 0
fi
NS="bsfleet$$"
HOSTS=(hv01 hv02)
C="$NS-central"
fleet_cleanup() {
	cleanup
	for n in "${HOSTS[@]}" central; do ip netns del "$NS-$n" 2>/dev/null; done
}
trap fleet_cleanup EXIT
trap 'exit 143' TERM INT # so that a timeout still removes the namespaces
if ! ip netns add "$C" 2>"$WORK/netns.err"; then
	skip "the fleet of two hosts" "no network namespaces here: $(cat "$WORK/netns.err")"
	summary
	exit 0
fi
ip -n "$C" link set lo up

KVM=""
if [ -w /dev/kvm ] && [ -x "$B/tests/kvm_fixture" ]; then
	KVM=1
else
	skip "KVM VMs of the same name on both hosts" "/dev/kvm is missing or not writable: the example and test collectors' series only"
fi

# ---------------------------------------------------------- the two hosts
with_test_plugins
# Each host runs what alerts can be provoked with: a collector past its
# deadline (failing, and the scrape near its deadline), one writing
# invalid input (drops), and series of the same names on both hosts.
HOST_SH="$WORK/host.sh"
cat >"$HOST_SH" <<'EOF'
# host.sh DIR: one host's processes, as PID 1's children of its namespaces.
D=$1
if [ -n "$KVM" ]; then
	"$B/tests/kvm_fixture" 1 2 7 "$D/ready" -name guest=web1 >"$D/fixture.log" 2>&1 &
	for _ in $(seq 200); do [ -s "$D/ready" ] && break; sleep 0.05; done
fi
"$EXPORTER" --config.file="$D/cfg.yml" >"$D/exporter.log" 2>&1 &
prometheus --enable-feature=agent --config.file="$D/agent.yml" --storage.agent.path="$D/wal" \
	--web.listen-address=127.0.0.1:9090 >"$D/agent.log" 2>&1 &
wait
EOF
i=0
HPIDS=()
for h in "${HOSTS[@]}"; do
	i=$((i + 1))
	n="$NS-$h" D="$WORK/$h"
	mkdir -p "$D"
	ip netns add "$n"
	ip -n "$n" link set lo up
	# A link to the central namespace only: nothing of this machine's own
	# network is touched.
	ip -n "$n" link add veth0 type veth peer name "to$h" netns "$C"
	ip -n "$n" addr add "10.0.$i.2/24" dev veth0
	ip -n "$C" addr add "10.0.$i.1/24" dev "to$h"
	ip -n "$n" link set veth0 up
	ip -n "$C" link set "to$h" up
	{
		printf 'global:\n  plugin_dir: %s\ncollectors:\n' "$PLUGINS"
		[ -n "$KVM" ] && printf '  kvm: {}\n'
		printf '  example: {}\n  synthetic: {hostile: true}\n  slow: {sleep_seconds: 0.7}\n'
	} >"$D/cfg.yml"
	# The shipped agent config: this host's name, the central URL, and a 1 s
	# scrape instead of 15 s so that rates and alerts come in seconds.
	sed -e "s|host: hv01.example.org|host: $h|" \
		-e "s|http://prometheus.example.org:9090|http://10.0.$i.1:9090|" \
		-e 's|scrape_interval: 15s|scrape_interval: 1s|' "$M/fleet/agent.yml" >"$D/agent.yml"
	ip netns exec "$n" unshare --pid --fork --kill-child --mount-proc \
		env B="$B" EXPORTER="$EXPORTER" KVM="$KVM" bash "$HOST_SH" "$D" &
	HPIDS+=($!)
	PIDS+=($!)
done
# host_pid N: the root namespace's pid of host N's exporter.
host_pid() {
	local sh
	sh=$(pgrep -P "${HPIDS[$1]}" | head -1)
	pgrep -P "$sh" -f "^$EXPORTER" | head -1
}

# ----------------------------------------------------- the central server
# The shipped central config: the rules from this tree, and a 1 s
# evaluation instead of 30 s; the alerts with their for: shortened so that
# they fire in seconds (a templated copy). A series goes stale after
# --query.lookback-delta with no sample: 15 s here rather than 5 minutes,
# so that BinstatExporterSilent, which waits for a dead host's `up` to go
# stale, fires in seconds; still three times the agents' remote-write batch
# deadline (5 s), so that no live host's series goes stale between batches.
sed 's/for: [0-9]*m/for: 0s/' "$M/alerts.yml" >"$WORK/alerts-now.yml"
sed -e "s|/etc/prometheus/binstat/rules.yml|$M/rules.yml|" \
	-e "s|/etc/prometheus/binstat/alerts.yml|$WORK/alerts-now.yml|" \
	-e 's|evaluation_interval: 30s|evaluation_interval: 1s|' "$M/fleet/central.yml" >"$WORK/central.yml"
ip netns exec "$C" prometheus --config.file="$WORK/central.yml" --storage.tsdb.path="$WORK/central" \
	--web.enable-remote-write-receiver --web.listen-address=0.0.0.0:9090 \
	--query.lookback-delta=15s >"$WORK/central.log" 2>&1 &
PIDS+=($!)

# central.py CHECK ARGS...: the checks, run inside the central namespace;
# each polls with a bound and says what it saw on failure.
cat >"$WORK/central.py" <<'EOF'
import json, re, sys, time, urllib.parse, urllib.request
HOSTS = {"hv01", "hv02"}
def query(q):
    url = "http://127.0.0.1:9090/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        return json.load(urllib.request.urlopen(url, timeout=5))
    except Exception as e:
        return {"status": "error", "error": str(e)}
def result(q):
    r = query(q)
    return r["data"]["result"] if r.get("status") == "success" else []
def poll(what, seconds):
    end, got = time.time() + seconds, None
    while time.time() < end:
        ok, got = what()
        if ok:
            return got
        time.sleep(0.5)
    raise SystemExit("timed out; last seen: %s" % json.dumps(got)[:1500])
def apart(series, ignore=("instance", "host")):
    """Both hosts, each series naming its host in host and instance, and
    every other label set once per host: never one series for two hosts."""
    if any(s["metric"].get("host") not in HOSTS or
           s["metric"].get("instance") != s["metric"].get("host") for s in series):
        return False
    by = {}
    for s in series:
        key = tuple(sorted((k, v) for k, v in s["metric"].items() if k not in ignore))
        by.setdefault(key, set()).add(s["metric"]["host"])
    return bool(by) and all(h == HOSTS for h in by.values())
cmd = sys.argv[1]
if cmd == "apart":  # apart QUERY SECONDS: its series keep the hosts apart
    poll(lambda: (lambda r: (apart(r), r))(result(sys.argv[2])), float(sys.argv[3]))
elif cmd == "rules":  # rules RULES_YML SECONDS: each recording rule's result
    names = re.findall(r"record:\s*(\S+)", open(sys.argv[2]).read())
    end = time.time() + float(sys.argv[3])
    pending = set(names)
    while pending and time.time() < end:
        for n in list(pending):
            if apart(result(n)):
                pending.discard(n)
        time.sleep(0.5)
    for n in names:
        r = result(n)
        print("%s\t%s\t%d" % (n, "apart" if n not in pending else ("empty" if not r else "MERGED"), len(r)))
elif cmd == "alerts":  # alerts NAME,... SECONDS [HOST]: firing, once per host
    want = sys.argv[2].split(",")
    hosts = {sys.argv[4]} if len(sys.argv) > 4 else HOSTS
    def firing():
        r = json.load(urllib.request.urlopen("http://127.0.0.1:9090/api/v1/alerts", timeout=5))
        alerts = [a for a in r["data"]["alerts"] if a["state"] == "firing"]
        ok = True
        for name in want:
            mine = [a for a in alerts if a["labels"]["alertname"] == name]
            seen = {a["labels"].get("host") for a in mine}
            named = all(a["labels"].get("instance") == a["labels"].get("host") and
                        a["labels"]["host"] in a["annotations"]["summary"] for a in mine)
            keys = {}
            for a in mine:
                k = tuple(sorted((x, y) for x, y in a["labels"].items() if x not in ("host", "instance")))
                keys.setdefault(k, set()).add(a["labels"].get("host"))
            ok = ok and seen == hosts and named and all(v == hosts for v in keys.values())
        return ok, [(a["labels"], a["annotations"].get("summary")) for a in alerts]
    poll(firing, float(sys.argv[3]))
elif cmd == "dashboards":  # dashboards FOLDER: every panel query, centrally
    import pathlib
    bad, both, empty = [], 0, 0
    for f in sorted(pathlib.Path(sys.argv[2]).glob("*.json")):
        for p in json.load(open(f))["panels"]:
            for t in p.get("targets", []):
                q = (t["expr"].replace("$__rate_interval", "1m").replace("$job", ".*")
                     .replace("$instance", ".*").replace("$vm", ".*"))
                r = query(q)
                where = "%s %s %s" % (f.name, p["title"], t["refId"])
                if r.get("status") != "success":
                    bad.append("%s: not valid: %s" % (where, r.get("error")))
                    continue
                res = r["data"]["result"]
                if not res:
                    empty += 1  # a collector this test does not run (DCI, Xen)
                    continue
                legend = t.get("legendFormat", "")
                names = [re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: s["metric"].get(m.group(1), ""), legend)
                         for s in res]
                if p["type"] in ("stat", "heatmap"):
                    continue  # one figure or distribution for the selection, by design
                if len(set(names)) != len(names):
                    bad.append("%s: legends repeat: %s" % (where, sorted(names)))
                if {s["metric"].get("instance") for s in res} != HOSTS:
                    bad.append("%s: not both hosts by instance: %s" % (where, [s["metric"] for s in res][:4]))
                else:
                    both += 1
    print("%d queries draw both hosts apart, %d have no data here" % (both, empty))
    if bad:
        raise SystemExit("\n".join(bad))
EOF
central() { ip netns exec "$C" "$PY" "$WORK/central.py" "$@"; }

# ------------------------------------------------------------- the checks
check "both agents deliver centrally: up once per host, instance named after the host" \
	central apart 'up{job="binstat"} == 1' 60
check "the same-named series of two hosts stay two series" central apart 'example_events_total{device="max"}' 30
check "a series with a host label of its own (example_build_info) stays one per host, its label kept as exported_host" \
	central apart 'example_build_info{exported_host="example"}' 30
[ -n "$KVM" ] && check "KVM: VM web1 of hv01 and of hv02 stay two series" \
	central apart 'kvm_vcpu_exits_total{vm="web1"}' 30

central rules "$M/rules.yml" 30 >"$WORK/rules.txt" 2>&1
merged=$(awk -F'\t' '$2 != "apart" && $2 != "empty"' "$WORK/rules.txt")
apart_n=$(awk -F'\t' '$2 == "apart"' "$WORK/rules.txt" | wc -l)
check "every recording rule with data keeps the hosts apart ($apart_n of $(wc -l <"$WORK/rules.txt"))" \
	test -z "$merged" -a "$apart_n" -ge 1
[ -n "$merged" ] && sed 's/^/       /' <<<"$merged"
[ -n "$KVM" ] && check "KVM: web1's exit rate is recorded once per host" \
	grep -q '^binstat:kvm_vm_exits:rate5m	apart' "$WORK/rules.txt"
while IFS=$'\t' read -r name state _; do
	[ "$state" = empty ] && skip "recording rule $name over two hosts" \
		"no input for it in this test (tests/fleet_test.yml covers it)"
done <"$WORK/rules.txt"
check "every rule and alert evaluates without error centrally" ip netns exec "$C" "$PY" -c "
import json, urllib.request
g = json.load(urllib.request.urlopen('http://127.0.0.1:9090/api/v1/rules'))['data']['groups']
bad = [(r['name'], r.get('lastError')) for x in g for r in x['rules'] if r.get('health') != 'ok']
assert not bad, bad"

check "the alerts provoked on both hosts fire once per host, labelled and summarised with it" \
	central alerts BinstatCollectorFailing,BinstatScrapeNearDeadline,BinstatInputDropsRising 60

# A configuration rejected on both hosts: each reload fails on its own.
for i in 0 1; do
	echo 'collectors: [broken' >"$WORK/${HOSTS[$i]}/cfg.yml"
	kill -HUP "$(host_pid "$i")"
done
check "a configuration rejected on both hosts: BinstatConfigReloadFailed once per host" \
	central alerts BinstatConfigReloadFailed 30

check "every dashboard query is valid centrally and draws the two hosts apart, each under its own legend" \
	central dashboards "$ROOT/dashboards"

check "the central server rejected no sample of either host (no two hosts' series collided)" \
	sh -c "! grep -i 'out of order\\|duplicate sample' '$WORK/central.log'"

# hv02's exporter gone: the alert names hv02, not both.
kill -9 "$(host_pid 1)"
check "an exporter down on hv02 only: BinstatExporterDown names hv02 alone" \
	central alerts BinstatExporterDown 30 hv02

# Then hv02 dies whole: its PID namespace killed (unshare's --kill-child),
# the agent with the exporter, so no stale marker is sent and its `up` just
# stops arriving; BinstatExporterDown cannot see that. hv01 goes on.
kill -9 "${HPIDS[1]}"
check "hv02 gone whole (agent and exporter killed): BinstatExporterSilent names hv02 alone" \
	central alerts BinstatExporterSilent 60 hv02

summary
