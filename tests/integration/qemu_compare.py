"""Compares the exporter's KVM statistics for one paused QEMU guest with what
QEMU itself reports through QMP query-stats, stat by stat and bucket by bucket.

usage: qemu_compare.py QMP_SOCKET EXPORTER_URL VM_LABEL
Exit 0 when every statistic QEMU reports matches; prints each mismatch."""
import json
import re
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from qmp import QMP

REVERSED = True  # see compare(): how QEMU 7.2 orders histogram buckets in QMP


def base_units(raw, schema):
    """A raw value in base units, as the exporter converts it."""
    if schema.get("unit") == "boolean":
        return 1 if raw else 0
    exp, base = schema.get("exponent", 0), schema.get("base", 10)
    if exp >= 0:
        return raw * base**exp
    return raw / base**-exp  # int / int: correctly rounded, like C's (double)raw / 1e9


def bucket_uppers(schema, n):
    """The kernel's bucket rule: bucket i holds up to (i+1)*size-1 or 2^i-1."""
    if schema["type"] == "linear-histogram":
        raw = [(i + 1) * schema["bucket-size"] - 1 for i in range(n - 1)]
    else:
        raw = [0] + [2**i - 1 for i in range(1, n - 1)]
    return [base_units(r, dict(schema, unit=None)) for r in raw] + [float("inf")]


def exporter_stats(url):
    """{(stat name, vcpu or None): samples} via the HELP text naming each stat."""
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    stat_of = {}
    for m in re.finditer(r"^# HELP (\S+) KVM (?:VM|vCPU) statistic (\w+)(?: \(sum: (\w+)\))?", text, re.M):
        stat_of[m.group(1)] = (m.group(2), m.group(3))
    out = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name + ("_total" if fam.type == "counter" and not fam.name.endswith("_total") else "")
        key = stat_of.get(name) or stat_of.get(fam.name)
        if not key:
            continue
        for s in fam.samples:
            out.setdefault((key, s.labels.get("vm"), s.labels.get("vcpu")), []).append(s)
    return out


def compare(qmp, url, vm):
    schemas = {(s["target"], st["name"]): st for s in qmp.call("query-stats-schemas") for st in s["stats"]}
    cpu_of = {c["qom-path"]: str(c["cpu-index"]) for c in qmp.call("query-cpus-fast")}
    want = []
    for r in qmp.call("query-stats", target="vm"):
        want += [("vm", None, st) for st in r["stats"]]
    for r in qmp.call("query-stats", target="vcpu"):
        want += [("vcpu", cpu_of[r["qom-path"]], st) for st in r["stats"]]
    got = exporter_stats(url)
    sums = {}  # paired totals: (target, vcpu, total name) -> histogram's _sum
    for (key, v, cpu), samples in got.items():
        if key[1]:
            sums[(cpu, key[1])] = [s.value for s in samples if s.name.endswith("_sum")]
    bad, checked = [], 0
    for target, cpu, st in want:
        schema = schemas[(target, st["name"])]
        samples = None
        for (key, v, c), s in got.items():
            if key[0] == st["name"] and v == vm and c == cpu:
                samples = s
        if samples is None and (cpu, st["name"]) in sums:
            checked += 1
            if sums[(cpu, st["name"])] != [base_units(st["value"], schema)]:
                bad.append(f"{target} {cpu} {st['name']}: qmp {st['value']} vs _sum {sums[(cpu, st['name'])]}")
            continue
        if samples is None:
            bad.append(f"{target} {cpu} {st['name']}: not exported")
            continue
        checked += 1
        if isinstance(st["value"], list):
            buckets = [s for s in samples if s.name.endswith("_bucket")]
            cum, want_b = 0, []
            # QEMU 7.2 builds the list with QAPI_LIST_PREPEND (accel/kvm/kvm-all.c,
            # add_kvmstat_entry), so QMP gives the kernel's buckets last-first.
            for count in reversed(st["value"]) if REVERSED else st["value"]:
                cum += count
                want_b.append(cum)
            uppers = bucket_uppers(schema, len(st["value"]))
            got_b = [s.value for s in buckets]
            got_le = [float(s.labels["le"]) for s in buckets]
            if got_b != want_b or got_le != uppers:
                bad.append(f"{target} {cpu} {st['name']}: buckets {got_b} le {got_le} vs qmp {want_b} le {uppers}")
        elif [s.value for s in samples] != [base_units(st["value"], schema)]:
            bad.append(f"{target} {cpu} {st['name']}: exporter {[s.value for s in samples]} vs qmp {base_units(st['value'], schema)}")
    return checked, bad


def main():
    qmp = QMP(sys.argv[1])
    qmp.call("stop")
    time.sleep(0.2)
    for attempt in range(5):  # a paused VM's few VM-wide counters may still tick
        checked, bad = compare(qmp, sys.argv[2], sys.argv[3])
        if not bad:
            break
        time.sleep(0.3)
    qmp.call("cont")
    for b in bad:
        print(b)
    print(f"{checked} statistics compared, {len(bad)} differ")
    sys.exit(1 if bad or checked < 40 else 0)


main()
