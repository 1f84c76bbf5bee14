#!/usr/bin/env bash
# The dashboards against live data: one exporter with the KVM fixture's VMs,
# dci4-netdev's suppliers and a Xen guest under the stand-in hypervisor, a
# real Prometheus scraping it, and every query of every panel asked: each
# must return at least one series, and each panel's unit must fit the unit
# suffix of the metrics it draws. First, with no KVM needed, the queries'
# text (dashboard_queries.py): $job and $instance filters, the host kept in
# every aggregation and legend, the recording rules read where one exists.
# (tests/integration/fleet.sh asks the same queries of a central server fed
# by two hosts.)
# Usage: tests/integration/dashboards.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"

# ---- the queries' text ----
$PY "$HERE/dashboard_queries.py" "$ROOT/dashboards" "$ROOT/monitoring/rules.yml" >"$WORK/text.txt" 2>&1
check "every dashboard has a \$job variable, and \$instance filtered on it" \
	sh -c "! grep -q 'variable' '$WORK/text.txt'"
check "every query filters on \$job and \$instance" sh -c "! grep -q 'is not filtered' '$WORK/text.txt'"
check "every aggregation and legend of a panel drawn per host keeps the host" \
	sh -c "! grep -q 'sums the hosts\\|does not name the host' '$WORK/text.txt'"
check "every such aggregation and join keeps every label of the target (without, ignoring; not by, on)" \
	sh -c "! grep -q 'keeps only the labels\\|matches only the labels' '$WORK/text.txt'"
check "the dashboards read the recording rules where one exists, and only rules that exist" \
	sh -c "! grep -q 'computes rate\\|does not record' '$WORK/text.txt'"
check "no other fault in the queries' text" test ! -s "$WORK/text.txt"
sed 's/^/       /' "$WORK/text.txt"

require_lone_kvm "dashboards against live data"

# ---- the sources: VMs, DCI4 suppliers, a Xen guest ----
READY="$WORK/fixture.ready"
"$B/tests/kvm_fixture" 2 2 7 "$READY" -name guest=dash1 >"$WORK/fixture.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 200); do [ -s "$READY" ] && break; sleep 0.05; done
check "the KVM fixture runs 2 VMs" test -s "$READY"

ND="$WORK/dci4"
mkdir -p "$ND"
"$B/dci4-netdev" -d "$ND" -i 100 >"$WORK/netdev.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$ND/dci4-netdev.lo.sock" ] && break; sleep 0.05; done
check "dci4-netdev serves its suppliers" test -S "$ND/dci4-netdev.lo.sock"

XEN=""
XENSTORED=/usr/lib/xen-4.17/bin/xenstored
FAKE="$B/tests/libfakexen.so"
if [ -f "$B/plugins/xen.so" ] && [ -x "$XENSTORED" ]; then
	export FAKEXEN_DIR="$WORK/hv" XENSTORED_RUNDIR="$WORK/xs"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	mkdir -p "$FAKEXEN_DIR" "$XENSTORED_RUNDIR"
	FAKEXEN_LAX=1 LD_PRELOAD="$FAKE" "$XENSTORED" -N -F "$WORK/xenstored.pid" >"$WORK/xenstored.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do [ -S "$XENSTORED_RUNDIR/socket" ] && break; sleep 0.05; done
	LD_PRELOAD="$FAKE" "$B/tests/xen_guest" add 1 dash >/dev/null 2>&1
	XEN=1
else
	skip "the Xen dashboard" "no xen plugin or no cxenstored (xen-utils-4.17) here"
fi

# The shipped configuration's DCI rules (dci4-netdev's counters), with
# this test's folders.
$PY - "$ROOT/config/binstat_exporter.yml" "$ND" "$B/plugins" "$XEN" >"$WORK/cfg.yml" <<'EOF'
import sys
src, nd, plugins, xen = sys.argv[1:]
out = []
for line in open(src):
    if line.startswith("global:"):
        out.append(line + "  plugin_dir: %s\n" % plugins)
        continue
    out.append(line.replace("supplier_dir: /run/dci4", "supplier_dir: " + nd))
text = "".join(out)
if xen:
    text += "  xen:\n    create_stats_key: true\n"
print(text, end="")
EOF
PORT=$(free_port)
if [ -n "$XEN" ]; then
	LD_PRELOAD="$FAKE" start_exporter "$WORK/cfg.yml" "$PORT"
	LD_PRELOAD="$FAKE" "$B/tests/xen_guest" 1 normal >"$WORK/guest.log" 2>&1 &
	PIDS+=($!)
else
	start_exporter "$WORK/cfg.yml" "$PORT"
fi
check "the exporter serves the three collectors' sources" wait_for_metric "$PORT" '^kvm_collector_vms 2$'
[ -n "$XEN" ] && check "the Xen guest's set is live" wait_for_metric "$PORT" '^xen_pv_stats_set_up{.*} 1$'
# With the recording rules the dashboards read, evaluated every second.
run_prometheus "  - job_name: binstat
    static_configs:
      - targets: ['127.0.0.1:$PORT']
rule_files: ['$ROOT/monitoring/rules.yml']"
check "Prometheus stores the exporter's series" test -n "$(prom_wait "$PROM_PORT" 'kvm_collector_vms')"
check "the recording rules have rates (two scrapes at least)" \
	test -n "$(prom_wait "$PROM_PORT" 'binstat:kvm_vm_exits:rate5m')"

# ---- every query of every panel ----
$PY - "$ROOT/dashboards" "$PROM_PORT" "$XEN" >"$WORK/panels.txt" <<'EOF'
import json, pathlib, re, sys, urllib.parse, urllib.request
folder, port, xen = sys.argv[1], sys.argv[2], sys.argv[3]
units = {"seconds": {"s", "ms", "percentunit"}, "bytes": {"bytes", "decbytes", "Bps", "binBps"}}
def suffix(expr):
    names = set(re.findall(r"\b([a-z_:][a-z0-9_:]*)\s*[{\[]", expr)) - {"by", "without", "on", "ignoring"}
    kinds = set()
    for n in names:
        if n.count(":") == 2:
            n = n.split(":")[1]  # a recording rule, level:metric:operations
        base = re.sub(r"_(total|bucket|sum|count)$", "", n)
        for k in units:
            if base.endswith("_" + k):
                kinds.add(k)
    return names, kinds
for f in sorted(pathlib.Path(folder).glob("*.json")):
    if f.name == "xen.json" and not xen:
        continue
    for p in json.load(open(f))["panels"]:
        default = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
        over = {}
        for o in p.get("fieldConfig", {}).get("overrides", []):
            if o["matcher"]["id"] == "byFrameRefID":
                for prop in o["properties"]:
                    if prop["id"] == "unit":
                        over[o["matcher"]["options"]] = prop["value"]
        for t in p.get("targets", []):
            q = (t["expr"].replace("$__rate_interval", "1m").replace("$job", ".*")
                 .replace("$instance", ".*").replace("$vm", ".*"))
            url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
            r = json.load(urllib.request.urlopen(url))
            n = len(r["data"]["result"]) if r["status"] == "success" else -1
            unit = over.get(t["refId"], default)
            names, kinds = suffix(t["expr"])
            bad_unit = any(unit not in units[k] for k in kinds if unit is not None) or \
                (unit in units["seconds"] and unit != "percentunit" and "seconds" not in kinds) or \
                (unit in units["bytes"] and "bytes" not in kinds)
            print("%s\t%s\t%s\t%d\t%s\t%s" % (f.name, p["title"], t["refId"], n, unit,
                                              "unit-mismatch" if bad_unit else "unit-ok"))
EOF
total=$(wc -l <"$WORK/panels.txt")
empty=$(awk -F'\t' '$4 < 1' "$WORK/panels.txt")
check "every query of every panel returns a series ($total queries)" test -z "$empty" -a "$total" -gt 20
[ -n "$empty" ] && echo "$empty" | sed 's/^/       empty: /'
mismatch=$(grep 'unit-mismatch' "$WORK/panels.txt")
check "every panel's unit fits its metrics' unit suffix" test -z "$mismatch"
[ -n "$mismatch" ] && echo "$mismatch" | sed 's/^/       /'
check "the variables' queries find the hosts and VMs" sh -c "
	curl -g -s 'http://127.0.0.1:$PROM_PORT/api/v1/label/instance/values?match[]=binstat_scrape_collector_success{collector=\"dci\"}' | grep -q '127.0.0.1:$PORT' &&
	curl -g -s 'http://127.0.0.1:$PROM_PORT/api/v1/label/vm/values?match[]=kvm_vm_info' | grep -q dash1"

summary
