"""The dashboards' queries read as text, with no Prometheus: each dashboard
filters on $job and $instance, every aggregation and legend of a panel
drawn per host keeps the host and every other label of the target (job,
a site, a cluster: `without` the labels it folds, never `by` or `on` a
list that names some), and a query reads the recording rule of
monitoring/rules.yml where one exists instead of computing it again, and
reads only rules that exist. Prints one line per fault; none when all hold.
Usage: dashboard_queries.py DASHBOARDS_DIR RULES_YML"""
import json
import pathlib
import re
import sys

AGG = "sum|count|max|min|avg|stddev|stdvar|group|quantile|count_values"
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
            "unless", "offset", "bool", "inf", "nan"}


def rules_of(path):
    """record name -> expression, from the rules file's text."""
    text = open(path).read()
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*- record:\s*(\S+)", line)
        if m:
            name = m.group(1)
            out[name] = ""
        elif re.match(r"\s*- (alert|record):", line):
            name = None
        elif name:
            out[name] += line
    return out


def selectors(expr):
    """Each metric name in EXPR with the matchers written after it."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # no names inside strings
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    found = []
    for m in re.finditer(r"\{[^}]*\}|[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        tok = m.group(0)
        if tok.startswith("{") or tok.lower() in KEYWORDS:
            continue
        if e[m.end():].lstrip().startswith("("):
            continue  # a function or an aggregation
        if m.start() > 0 and re.match(r"[0-9.]", e[m.start() - 1]):
            continue  # 1e3, 5m
        found.append(tok)
    out = []
    for name in found:
        ms = re.findall(re.escape(name) + r"\s*\{([^}]*)\}", expr)
        out.append((name, ms if ms else [""]))
    return out


def main(folder, rules_file):
    rules = rules_of(rules_file)
    # What each rule computes from: rate(NAME[...]) inside its expression.
    recorded = {m: name for name, e in rules.items() for m in re.findall(r"rate\((\w+)\[", e)}
    faults = []
    for f in sorted(pathlib.Path(folder).glob("*.json")):
        d = json.load(open(f))
        var = {v["name"]: v for v in d.get("templating", {}).get("list", [])}
        if "job" not in var:
            faults.append("%s: no $job variable" % f.name)
        if "instance" not in var or "$job" not in var["instance"].get("query", ""):
            faults.append("%s: no $instance variable filtered on $job" % f.name)
        for p in d["panels"]:
            fleet_wide = p["type"] in ("stat", "heatmap")  # one figure or distribution, by design
            for t in p.get("targets", []):
                where = "%s: %s %s" % (f.name, p["title"], t["refId"])
                expr, legend = t["expr"], t.get("legendFormat", "")
                for name, matchers in selectors(expr):
                    if any('job=~"$job"' not in m or 'instance=~"$instance"' not in m for m in matchers):
                        faults.append("%s: %s is not filtered on $job and $instance" % (where, name))
                    if name.startswith("binstat:") and name not in rules:
                        faults.append("%s: reads %s, which monitoring/rules.yml does not record" % (where, name))
                for m in re.findall(r"rate\((\w+)[{\[]", expr):
                    if m in recorded:
                        faults.append("%s: computes rate(%s) again: read %s" % (where, m, recorded[m]))
                if fleet_wide:
                    continue
                pattern = r"\b(%s)\s*(?:(by|without)\s*\(([^)]*)\))?\s*\(" % AGG
                for agg, mode, labels in re.findall(pattern, expr):
                    keep = [label.strip() for label in labels.split(",")]
                    if not mode or (mode == "by" and "instance" not in keep) or \
                            (mode == "without" and "instance" in keep):
                        faults.append("%s: %s %s (%s) sums the hosts together" % (where, agg, mode, labels))
                    elif mode == "by":
                        # Drops job, host and any site or cluster label: two
                        # hosts of one name in two clusters would merge.
                        faults.append("%s: %s by (%s) keeps only the labels it names, not every "
                                      "label of the target: use without" % (where, agg, labels))
                for op, labels in re.findall(r"\b(and|or|unless)\s+on\s*\(([^)]*)\)", expr):
                    faults.append("%s: %s on (%s) matches only the labels it names, not every "
                                  "label of the target: use ignoring" % (where, op, labels))
                if "{{instance}}" not in legend.replace(" ", ""):
                    faults.append("%s: legend %r does not name the host" % (where, legend))
    for fault in faults:
        print(fault)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
