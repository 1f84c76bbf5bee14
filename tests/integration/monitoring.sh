#!/usr/bin/env bash
# The monitoring content against real parts: promtool checks and unit-tests
# the rules; a real Prometheus evaluates the alerts over the exporter and
# fires one at a real Alertmanager, whose webhook this script receives; and
# the fleet set-up, an agent-mode Prometheus remote-writing to a central
# one, delivers the exporter's series with the host's label.
# Usage: tests/integration/monitoring.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
M="$ROOT/monitoring"
. "$HERE/lib.sh"

check "promtool check rules: the recording rules and alerts" promtool check rules "$M/rules.yml" "$M/alerts.yml"
check "promtool test rules: every alert, firing and not firing" promtool test rules "$M/tests/alerts_test.yml"
check "promtool test rules: two hosts' same-named VMs stay apart in every rule and alert" \
	promtool test rules "$M/tests/fleet_test.yml"
# The unit tests must be able to fail: the same tests against a broken alert.
mkdir -p "$WORK/broken/tests"
sed 's/> 0.8 \* binstat_scrape_timeout_seconds/> 1.8 * binstat_scrape_timeout_seconds/' "$M/alerts.yml" >"$WORK/broken/alerts.yml"
cp "$M/rules.yml" "$WORK/broken/"
cp "$M/tests/alerts_test.yml" "$WORK/broken/tests/"
check "promtool test rules fails on a broken alert" sh -c "! promtool test rules '$WORK/broken/tests/alerts_test.yml' >/dev/null 2>&1"

with_test_plugins
printf 'global:\n  plugin_dir: %s\ncollectors:\n  example: {}\n  synthetic:\n    fail: true\n' "$PLUGINS" >"$WORK/cfg.yml"
PORT=$(free_port)
start_exporter "$WORK/cfg.yml" "$PORT" || { fail "exporter starts" "$(cat "$WORK/exporter.log")"; summary; exit 1; }

# ------------------------------------------------ an alert to Alertmanager
AM=$(command -v prometheus-alertmanager || command -v alertmanager)
if [ -z "$AM" ]; then
	skip "an alert reaches Alertmanager" "prometheus-alertmanager is not installed (tools/deps.sh test)"
else
	HOOK_PORT=$(free_port)
	cat >"$WORK/hook.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        open(sys.argv[2], "ab").write(body + b"\n")
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
	$PY "$WORK/hook.py" "$HOOK_PORT" "$WORK/hook.json" &
	PIDS+=($!)
	AM_PORT=$(free_port)
	cat >"$WORK/am.yml" <<EOF
route:
  receiver: hook
  group_wait: 1s
  group_interval: 1s
receivers:
  - name: hook
    webhook_configs:
      - url: http://127.0.0.1:$HOOK_PORT/
EOF
	"$AM" --config.file="$WORK/am.yml" --storage.path="$WORK/am" \
		--web.listen-address="127.0.0.1:$AM_PORT" --cluster.listen-address= >"$WORK/am.log" 2>&1 &
	PIDS+=($!)
	# The shipped alerts, with for: shortened so that one fires in seconds.
	sed 's/for: [0-9]*m/for: 0s/' "$M/alerts.yml" >"$WORK/alerts-now.yml"
	run_prometheus "  - job_name: binstat
    static_configs:
      - targets: ['127.0.0.1:$PORT']
rule_files: ['$M/rules.yml', '$WORK/alerts-now.yml']
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:$AM_PORT']"
	got=""
	for _ in $(seq 60); do
		grep -q BinstatCollectorFailing "$WORK/hook.json" 2>/dev/null && { got=1; break; }
		sleep 0.5
	done
	check "Alertmanager's webhook receives BinstatCollectorFailing from a real Prometheus" test -n "$got"
	check "... for the failing collector only (synthetic, not example)" $PY - "$WORK/hook.json" <<'EOF'
import json, sys
alerts = [a for l in open(sys.argv[1]) if l.strip() for a in json.loads(l)["alerts"]
          if a["labels"]["alertname"] == "BinstatCollectorFailing"]
assert alerts and {a["labels"]["collector"] for a in alerts} == {"synthetic"}, alerts
assert alerts[0]["annotations"]["summary"].startswith("Collector synthetic on 127.0.0.1:"), alerts[0]
EOF
	check "every recording rule and alert evaluates without error over the live exporter" $PY - "$PROM_PORT" <<'EOF'
import json, sys, urllib.request
groups = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/v1/rules" % sys.argv[1]))["data"]["groups"]
rules = [r for g in groups for r in g["rules"]]
assert len(rules) == 20, len(rules)  # 6 recording rules, 14 alerts
bad = [(r["name"], r.get("health"), r.get("lastError")) for r in rules if r.get("health") != "ok"]
assert not bad, bad
EOF
fi

# --------------------------------------------- agent mode -> central server
CENTRAL=$(free_port)
mkdir -p "$WORK/central" "$WORK/agent"
printf 'global:\n  evaluation_interval: 1s\n' >"$WORK/central.yml"
prometheus --config.file="$WORK/central.yml" --storage.tsdb.path="$WORK/central/tsdb" \
	--web.enable-remote-write-receiver --web.listen-address="127.0.0.1:$CENTRAL" \
	>"$WORK/central.log" 2>&1 &
PIDS+=($!)
# The shipped agent config, pointed at this test's exporter and server.
sed -e "s|localhost:10187|127.0.0.1:$PORT|" -e "s|http://prometheus.example.org:9090|http://127.0.0.1:$CENTRAL|" \
	-e 's|scrape_interval: 15s|scrape_interval: 1s|' -e 's|host: hv01.example.org.*|host: hv-test|' \
	"$M/fleet/agent.yml" >"$WORK/agent.yml"
AGENT=$(free_port)
prometheus --enable-feature=agent --config.file="$WORK/agent.yml" --storage.agent.path="$WORK/agent/wal" \
	--web.listen-address="127.0.0.1:$AGENT" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
got=$(prom_wait "$CENTRAL" 'example_events_total{host="hv-test",job="binstat",device="max"}')
check "fleet: the agent's remote write delivers the exporter's series centrally, with the host label ($got)" \
	test "$got" = 18446744073709552000
check "fleet: the agent stores nothing itself (agent mode answers no queries)" \
	sh -c "! curl -sf 'http://127.0.0.1:$AGENT/api/v1/query?query=up' >/dev/null"
check "fleet: the shipped central config loads" promtool check config "$M/fleet/central.yml" --syntax-only

summary
