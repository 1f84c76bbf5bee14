#!/usr/bin/env bash
# Processing between scrapes against the running daemon: the sampler's
# rate, the Linux statistics infrastructure's statistics and a stats(3)
# template on /metrics (checked by promtool, the strict OpenMetrics parser and a real Prometheus), the
# /statistics/ interface and who may write to it, reload, configuration
# errors; and, where /dev/kvm works, statistics of a real VM's counters.
# Usage: tests/integration/processing.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

processing_config() { # processing_config FILE WRITE_ALLOW
	example_processing "$2" >"$1"
	cat >>"$1" <<EOF
    - name: events
      select: 'example_events_total{device="vda"}'
      x: delta
      statistics:
        - {name: ev_n, type: value, units: events/passes}
        - {name: ev_range, type: range, range_min: 0, range_max: 100}
        - {name: ev_hist, type: array, scale: log2, range_min: 0, range_max: 8}
        - {name: ev_list, type: list, entries_max: 4, range_min: 0, range_max: 100}
        - {name: ev_hist_period, type: history, mode: range, period: 1s, entries_max: 4}
        - {name: ev_raw, type: raw, entries_max: 3}
        - {name: ev_kept, type: range, range_min: 0, range_max: 100}
      template:
        name: ev_voi
        stats:
          - sum
          - max
          - min
          - {crhist: {scheme: linexp, lb: 0, ub: 100, nlinsteps: 10, stepbase: 10}}
          - {drhist: {buckets: [[0, 1], [2, 3]]}}
          - {dvhist: {values: [1, 2, 3]}}
          - {tdigest: {compression: 100, quantiles: [0.5, 0.9, 0.99]}}
EOF
}

processing_config "$WORK/p.yml" 127.0.0.1
P=$(free_port)
start_exporter "$WORK/p.yml" "$P"
EXP=$LAST_PID
URL="http://127.0.0.1:$P"
sleep 2
curl -s "$URL/metrics" >"$WORK/m1.txt"
passes=$(metric "$P" binstat_processing_passes_total)
check "sampler: about 10 passes a second at 100ms ($passes after 2 s)" $PY -c "assert 12 <= $passes <= 32"
check "value statistic counted every delta" grep -q '^ev_n_total{device="vda",source_metric="example_events_total"} [1-9]' "$WORK/m1.txt"
check "range statistic: its minimum is 1" grep -q '^ev_range_min{device="vda",source_metric="example_events_total"} 1$' "$WORK/m1.txt"
check "array: a histogram with le=\"1.0\"" grep -q '^ev_hist_bucket{device="vda",source_metric="example_events_total",le="1.0"} [1-9]' "$WORK/m1.txt"
check "list: a histogram with the values seen" grep -q '^ev_list_bucket{device="vda",source_metric="example_events_total",le="1.0"} [1-9]' "$WORK/m1.txt"
check "history: the last complete period's range" grep -q '^ev_hist_period_last_period_samples{' "$WORK/m1.txt"
check "template: t-digest summary" grep -q '^ev_voi_tdigest{device="vda",source_metric="example_events_total",quantile="0.5"} 1$' "$WORK/m1.txt"
check "template: the CR, DR and DV histograms and their out-of-band counts" \
	sh -c "grep -q '^ev_voi_crhist_bucket' '$WORK/m1.txt' && grep -q '^ev_voi_drhist_out_of_band_total' '$WORK/m1.txt' && grep -q '^ev_voi_dvhist_bucket' '$WORK/m1.txt'"
check "promtool accepts the output with every processing family" promtool_clean "$WORK/m1.txt"
curl -s -H 'Accept: application/openmetrics-text;version=1.0.0' "$URL/metrics" >"$WORK/m1.om"
check "the strict OpenMetrics parser accepts it" $PY -c "
from prometheus_client.openmetrics.parser import text_string_to_metric_families as p
fams = {f.name: f for f in p(open('$WORK/m1.om').read())}
assert fams['ev_voi_tdigest'].type == 'summary' and fams['ev_hist'].type == 'histogram', fams.keys()
assert fams['ev_n'].type == 'counter'"

check "every histogram counts every value: +Inf = _count, cumulative buckets, a _sum" $PY -c "
import re, collections
series = collections.defaultdict(dict)
for line in open('$WORK/m1.txt'):
    m = re.match(r'(ev_\w+?)_(bucket|count|sum)\{(.*?)(?:,le=\"([^\"]+)\")?\} (\S+)$', line)
    if m:
        fam, kind, labels, le, v = m.groups()
        series[(fam, labels)][le if kind == 'bucket' else kind] = float(v)
hists = [k for k in series if '+Inf' in series[k]]
assert {f for f, _ in hists} >= {'ev_hist', 'ev_list', 'ev_voi_crhist', 'ev_voi_drhist', 'ev_voi_dvhist'}, hists
for k in hists:
    s = series[k]
    les = sorted((float(le), v) for le, v in s.items() if le not in ('count', 'sum'))
    assert all(a[1] <= b[1] for a, b in zip(les, les[1:])), (k, les)
    assert s['+Inf'] == s['count'] and 'sum' in s, (k, s)
"

# /metrics and the data file agree: an array's buckets are its lines
# (sampled between the two reads at times: tried until a pass falls
# outside them, at most 20 times)
array_agrees() {
	curl -s "$URL/statistics/events/0/data" >"$WORK/agree.data"
	curl -s "$URL/metrics" >"$WORK/agree.txt"
	$PY - "$WORK/agree.data" "$WORK/agree.txt" <<'EOF'
import re, sys
cum, want = 0, {}
for line in open(sys.argv[1]):
    m = re.match(r'ev_hist (<=|>)(-?\d+) (\d+)$', line)
    if m:
        cum += int(m.group(3))
        want['+Inf' if m.group(1) == '>' else m.group(2) + '.0'] = cum
got = {m.group(1): int(m.group(2)) for m in re.finditer(r'^ev_hist_bucket\{.*,le="([^"]+)"\} (\d+)$', open(sys.argv[2]).read(), re.M)}
sys.exit(0 if want and got == want else 1)
EOF
}
agreed=1
for _ in $(seq 20); do array_agrees && { agreed=0; break; }; done
check "the array's buckets on /metrics are its data file's lines" test "$agreed" = 0

# the /statistics/ interface
curl -s "$URL/statistics/" >"$WORK/list.txt"
check "GET /statistics/ lists the interface" grep -qx 'events/0 example_events_total{device="vda"}' "$WORK/list.txt"
curl -s "$URL/statistics/events/0/definition" >"$WORK/def.txt"
check "definition lines in the Linux statistics infrastructure's syntax" grep -Eqx 'name=ev_hist_period on=1 type=history range_min=-9223372036854775808 range_max=9223372036854775807 entries_max=4 mode=range period=1000000 hits_out_of_range=0 data=\[[0-9]+\.[0-9]{6}\] started=\[[0-9]+\.[0-9]{6}\] stopped=\[[0-9]+\.[0-9]{6}\] units=x/samples' "$WORK/def.txt"
curl -s "$URL/statistics/events/0/data" >"$WORK/data.txt"
check "data: array lines <=N and >N" sh -c "grep -qx 'ev_hist <=0 0' '$WORK/data.txt' && grep -qx 'ev_hist >8 0' '$WORK/data.txt'"
check "data: raw ring of 3 timestamped pairs" test "$(grep -c '^ev_raw \[' "$WORK/data.txt")" = 3
code=$(curl -s -o "$WORK/post.txt" -w '%{http_code}' --data-binary $'name=ev_range range_max=5 on=1\nname=ev_list type=raw' "$URL/statistics/events/0/definition")
check "POST from an allowed client: 400 naming the refused line ($code)" \
	sh -c "[ $code = 400 ] && grep -qx 'line 2: EINVAL: a new type needs all its type-specific attributes' '$WORK/post.txt'"
check "a POST is all or nothing: the good line did not apply" sh -c "curl -s '$URL/statistics/events/0/definition' | grep -q '^name=ev_range on=1 type=range range_min=0 range_max=100 '"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary 'name=ev_range type=value mode=increments' "$URL/statistics/events/0/definition")
curl -s "$URL/metrics" >"$WORK/m2.txt"
check "a type changed by POST is that type on /metrics ($code)" \
	sh -c "[ $code = 200 ] && grep -q '^# TYPE ev_range_total counter' '$WORK/m2.txt' && ! grep -q '^ev_range_min' '$WORK/m2.txt'"
check "promtool accepts it" promtool_clean "$WORK/m2.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/statistics/events/0/snapshot")
check "POST snapshot resets the template ($code)" sh -c "[ $code = 200 ] && curl -s '$URL/statistics/events/0/definition' | grep -q 'updates=[0-9]\$'"
head -c 70000 /dev/zero | tr '\0' 'a' >"$WORK/big.txt"
code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$WORK/big.txt" "$URL/statistics/events/0/definition")
check "a body over 64 KiB is 413 ($code)" test "$code" = 413
check "GET of an unknown interface is 404" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/statistics/nope/0/data")" = 404

# stats(3)'s blob as V1 bytes (format=blob), read by a decoder written
# from FreeBSD's sys/sys/stats.h, against format=json of the same
# stopped source: every figure of every statistic type, a template of
# three VOIs; stats_blob_clone's destination sizes and snapshot's reset.
blob_case() {
	local u="$RURL/statistics" dec="$HERE/../fixtures/statsblob/sbv1_decode.py" g
	for g in sbv1 sbdr sbdv sbtd; do
		curl -s "$u/$g/0/data?format=json" >"$WORK/$g.json"
		curl -s -o "$WORK/$g.sb" -w '%{content_type}' "$u/$g/0/data?format=blob" >"$WORK/$g.type"
		$PY "$dec" "$WORK/$g.sb" >"$WORK/$g.dec" 2>&1
	done
	check "format=blob: the V1 bytes of a template of three VOIs, of each histogram type and of a t-digest hold every figure of format=json" \
		$PY - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
def same(dec, js):  # a t-digest's means are Q_S64: equal to 2^-nfbits
    if dec is None or 'mu_nfbits' not in dec:
        return dec == js
    nf, dc, jc = dec.pop('mu_nfbits'), dec.pop('ctds'), js.pop('ctds')
    return dec == js and len(dc) == len(jc) and all(
        a['cnt'] == b['cnt'] and abs(a['mu'] - b['mu']) <= 2.0 ** -nf for a, b in zip(dc, jc))
for g, want in (('sbv1', ['SUM', 'MAX', 'MIN', 'HIST']), ('sbdr', ['HIST', 'MIN']),
                ('sbdv', ['HIST', 'MAX']), ('sbtd', ['SUM', 'TDGST'])):
    assert open('%s/%s.type' % (w, g)).read() == 'application/octet-stream', g
    js = json.load(open('%s/%s.json' % (w, g)))
    dec = json.load(open('%s/%s.dec' % (w, g)))
    h = dec['header']
    size = len(open('%s/%s.sb' % (w, g), 'rb').read())
    assert h['abi'] == 1 and h['endian'] == 1 and h['maxsz'] == h['cursz'] == size, h
    assert 0 < h['created'] <= h['lastrst'], h
    assert dec['tplhash'] == js['tplhash'], (dec['tplhash'], js['tplhash'])
    names = list(js['vois'])
    assert len(names) == len(dec['vois']) == len(h['vois']), (names, dec['vois'])
    for i, name in enumerate(names):
        ds, jss = dec['vois'][str(i)]['stats'], js['vois'][name]['stats']
        assert sorted(ds) == sorted(jss) and all(same(ds[k], jss[k]) for k in ds), (g, name, dec, js)
    for st in want:  # figures taken, not only nulls compared
        assert js['vois'][names[0]]['stats'][st] is not None, (g, st, js)
dec = json.load(open(w + '/sbv1.dec'))
td = json.load(open(w + '/sbtd.json'))['vois']['sbtd']['stats']['TDGST']
assert td['nctds'] >= 5 and td['smplcnt'] >= 5, td
hist = dec['vois']['0']['stats']['HIST']
assert sum(b['cnt'] for b in hist['bkts']) >= 5 and hist['bkts'][-1]['ub'] == 2**64 - 1, hist
# a relative VOI keeps its previous value in its VOISTATE: the running total, its MAX
v0 = dec['header']['vois'][0]
top = json.load(open(w + '/sbv1.json'))['vois']['events']['stats']['MAX']['val']
assert v0['flags'] == 1 and v0['prev'] == top and len(dec['header']['vois']) == 3, v0
EOF
	local fetch=()
	for g in $DTYPE_GROUPS; do # one curl for all: the case stays fast
		fetch+=(-o "$WORK/$g.json" "$u/$g/0/data?format=json" -o "$WORK/$g.sb" "$u/$g/0/data?format=blob")
	done
	curl -s "${fetch[@]}"
	check "format=blob and format=json agree, value for value, for every dtype (s32 to q_u64) with SUM, MAX, MIN, each histogram type, 32-bit counts and a t-digest of each width (TDGSTCLUST64, TDGSTCLUST32)" \
		$PY - "$WORK" "$dec" $DTYPE_GROUPS <<'EOF'
import json, os, sys
w, groups = sys.argv[1], sys.argv[3:]
sys.path.insert(0, os.path.dirname(sys.argv[2]))
import sbv1_decode
# each group's VOI dtype and histogram dtype, and the statistic its
# relative VOI's previous value equals (the last value: the running total)
want = {'dt_s32': ('INT_S32', 'CRHIST32', 'MIN'), 'dt_u32': ('INT_U32', 'DRHIST32', 'MAX'),
        'dt_s64': ('INT_S64', 'DVHIST32', None), 'dt_u64': ('INT_U64', 'CRHIST32', 'MAX'),
        'dt_long': ('INT_SLONG', None, None), 'dt_ulong': ('INT_ULONG', 'DVHIST64', None),
        'dt_qs32': ('Q_S32', 'CRHIST32', 'MIN'), 'dt_qu32': ('Q_U32', 'DRHIST32', None),
        'dt_qs64': ('Q_S64', 'DVHIST32', None), 'dt_qu64': ('Q_U64', 'CRHIST64', 'MAX')}
def same(d, j):  # a t-digest's means are Q_S64 or Q_S32: equal to 2^-nfbits; the rest exact
    if d is None or 'mu_nfbits' not in d:
        return d == j
    nf, dc, jc = d.pop('mu_nfbits'), d.pop('ctds'), j.pop('ctds')
    return d == j and len(dc) == len(jc) and all(
        a['cnt'] == b['cnt'] and abs(float(a['mu']) - float(b['mu'])) <= 2.0 ** -nf
        for a, b in zip(dc, jc))
assert sorted(groups) == sorted(want), groups
for g in groups:
    js = json.load(open('%s/%s.json' % (w, g)), parse_float=str)  # Q values as their text
    dec = json.loads(json.dumps(sbv1_decode.decode(open('%s/%s.sb' % (w, g), 'rb').read())))
    voi, (vd, hd, prev) = dec['header']['vois'][0], want[g]
    assert voi['dtype'] == vd and voi['stat_dtypes'].get('HIST') == hd, (g, voi)
    assert voi['stat_dtypes'].get('TDGST') == {'dt_long': 'TDGSTCLUST64',
                                               'dt_qs64': 'TDGSTCLUST32'}.get(g), (g, voi)
    ds, jss = dec['vois']['0']['stats'], list(js['vois'].values())[0]['stats']
    assert sorted(ds) == sorted(jss) and all(v is not None for v in jss.values()), (g, ds, jss)
    if prev:
        assert voi['flags'] == 1 and voi['prev'] == jss[prev]['val'], (g, voi, jss)
    for k in ds:
        assert same(ds[k], jss[k]), (g, k, ds[k], jss[k])
EOF
	local size code
	size=$(stat -c %s "$WORK/sbv1.sb")
	check "format=blob refuses, with the reason, a double VOI (409)" \
		sh -c "[ \$(curl -s -o '$WORK/rt.err' -w '%{http_code}' '$u/sbrate/0/data?format=blob') = 409 ] && grep -q '^EOPNOTSUPP: a double VOI' '$WORK/rt.err'"
	code=$(curl -s -o "$WORK/short.sb" -w '%{http_code}' "$u/sbv1/0/data?dstmaxsz=8&format=blob")
	check "dstmaxsz below the blob: the 8-byte header alone, maxsz 8 and the blob's cursz, EOVERFLOW as 416 ($code)" \
		$PY -c "
import struct
b = open('$WORK/short.sb', 'rb').read()
assert $code == 416 and len(b) == 8 and struct.unpack('<BBHHH', b) == (1, 1, 0, 8, $size), b"
	code=$(curl -s -o "$WORK/big.sb" -w '%{http_code}' "$u/sbv1/0/data?format=blob&dstmaxsz=100000")
	check "dstmaxsz past the blob: the whole blob, maxsz the destination's (at most 65535)" \
		$PY -c "
import struct
b, a = open('$WORK/big.sb', 'rb').read(), open('$WORK/sbv1.sb', 'rb').read()
assert $code == 200 and struct.unpack_from('<H', b, 4)[0] == 65535 and b[:4] + b[6:] == a[:4] + a[6:]"
	check "clone options refused: rstsrc on a GET, a destination under 8 bytes, allocdst with a size, an unknown flag, options on format=json" \
		sh -c "for q in 'format=blob&clone=rstsrc' 'format=blob&dstmaxsz=7' 'format=blob&clone=allocdst&dstmaxsz=99' 'format=blob&clone=usrdst' 'format=blob&clone=allocdst,' 'format=json&dstmaxsz=9'; do
			[ \$(curl -s -o /dev/null -w '%{http_code}' \"$u/sbv1/0/data?\$q\") = 400 ] || exit 1; done"
	check "format=blob: a GET of snapshot is 405, another verb 400" \
		sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$u/sbv1/0/snapshot?format=blob') = 405 ] &&
		       [ \$(curl -s -o /dev/null -w '%{http_code}' '$u/sbv1/0/definition?format=blob') = 400 ]"
	curl -s -o /dev/null -XPOST "$u/sbv1/0/snapshot?format=blob&dstmaxsz=8"
	curl -s -o /dev/null -XPOST "$u/sbv1/0/snapshot?format=blob&clone=allocdst"
	check "a snapshot that overflows, or is cloned without rstsrc, leaves the source as it was" \
		sh -c "curl -s '$u/sbv1/0/data?format=json' | cmp -s - '$WORK/sbv1.json'"
	curl -s -o "$WORK/snap.sb" -XPOST "$u/sbv1/0/snapshot?format=blob"
	$PY "$dec" "$WORK/snap.sb" >"$WORK/snap.dec"
	curl -s -o "$WORK/after.sb" "$u/sbv1/0/data?format=blob"
	$PY "$dec" "$WORK/after.sb" >"$WORK/after.dec"
	check "POST snapshot?format=blob: the blob's figures, then the source reset (SB_CLONE_RSTSRC) with a later lastrst" \
		$PY - "$WORK" <<'EOF'
import json, sys
w = sys.argv[1]
snap, before = json.load(open(w + '/snap.dec')), json.load(open(w + '/sbv1.dec'))
after = json.load(open(w + '/after.dec'))
assert snap['vois'] == before['vois'], (snap, before)
assert all(v is None for voi in after['vois'].values() for v in voi['stats'].values()), after
assert after['header']['lastrst'] > snap['header']['lastrst'] == snap['header']['created'], after
EOF
}

# stats(3)'s relative updates and a list's missed count, exactly: the
# example counter rises by one each pass. Each interface is stopped
# (on=0) before it is read, so its figures hold still between the reads.
{
	example_processing 127.0.0.1
	cat <<EOF
    - name: relev
      select: 'example_events_total{device="vda"}'
      x: delta
      statistics: [{name: relev_raw, type: raw, entries_max: 1000}]
      template: {name: relev_voi, relative: true, stats: [sum, max, min]}
    - name: distinct
      select: 'example_events_total{device="vda"}'
      statistics: [{name: di_list, type: list, entries_max: 2}, {name: di_range, type: range}]
    - name: blobev
      select: 'example_events_total{device="vda"}'
      x: delta
      statistics: [{name: blobev_n, type: value, mode: products}]
      template:
        name: dev_blob
        vois:
          - {name: events, dtype: u64, stats: [sum, max]}
          - {name: latency, series: example_latency_seconds, stats: [{dvhist: {values: [0]}}]}
    - name: sbv1
      select: 'example_events_total{device="vda"}'
      x: delta
      template:
        name: sbv1_tpl
        vois:
          - {name: events, dtype: u64, relative: true,
             stats: [sum, max, min, {crhist: {scheme: lin, lb: 0, ub: 40, stepinc: 4}}]}
          - {name: latency, series: example_latency_seconds, stats: [min, {dvhist: {values: [0, 1]}}]}
          - {name: idle, series: example_temperature_celsius, relative: true,
             stats: [sum, {drhist: {buckets: [[0, 1]]}}]}
    - name: sbdr
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: sbdr_tpl, stats: [{drhist: {buckets: [[0, 1], [1, 2]]}}, min]}
    - name: sbdv
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: sbdv_tpl, dtype: u64, stats: [{dvhist: {values: [0, 2]}}, max]}
    - name: sbtd
      select: 'example_events_total{device="vda"}'
      template: {name: sbtd_tpl, stats: [sum, {tdigest: {compression: 100, quantiles: [0.5]}}]}
    - name: sbrate
      select: 'example_events_total{device="vda"}'
      x: rate
      template: {name: sbrate_tpl, stats: [sum]}
    - name: dt_s32
      select: example_mystery
      x: value
      template: {name: dt_s32, dtype: s32, relative: true, stats: [sum, max, min, {crhist: {scheme: lin, lb: -3000, ub: 0, stepinc: 300, counts: 32}}]}
    - name: dt_u32
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: dt_u32, dtype: u32, relative: true, stats: [sum, max, {drhist: {buckets: [[0, 5], [5, 1000]], counts: 32}}]}
    - name: dt_s64
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: dt_s64, dtype: s64, stats: [min, {dvhist: {values: [0, 1, 2], counts: 32}}]}
    - name: dt_u64
      select: 'example_events_total{device="vda"}'
      x: value
      template: {name: dt_u64, dtype: u64, relative: true, stats: [sum, max, min, {crhist: {scheme: exp, lb: 0, ub: 100000, stepbase: 2, stepexp: 0, counts: 32}}]}
    - name: dt_long
      select: example_mystery
      x: value
      template: {name: dt_long, dtype: long, stats: [sum, max, min, {tdigest: {compression: 20, quantiles: [0.5]}}]}
    - name: dt_ulong
      select: 'example_events_total{device="vda"}'
      x: value
      template: {name: dt_ulong, dtype: ulong, stats: [sum, {dvhist: {values: [1, 2, 3]}}]}
    - name: dt_qs32
      select: example_mystery
      x: value
      x_scale: 0.25
      template: {name: dt_qs32, dtype: q_s32, precision: 8, relative: true, stats: [sum, max, min, {crhist: {scheme: lin, lb: -200, ub: 0, stepinc: 12.5, counts: 32}}]}
    - name: dt_qu32
      select: 'example_events_total{device="vda"}'
      x: value
      x_scale: 0.5
      template: {name: dt_qu32, dtype: q_u32, precision: 4, stats: [max, {drhist: {buckets: [[0, 2.5], [2.5, 1000]], counts: 32}}]}
    - name: dt_qs64
      select: example_mystery
      x: value
      x_scale: 0.125
      template: {name: dt_qs64, dtype: q_s64, precision: 48, stats: [sum, min, {dvhist: {values: [-5.25, -0.125], counts: 32}}, {tdigest: {compression: 20, counts: 32, quantiles: [0.5]}}]}
    - name: dt_qu64
      select: 'example_events_total{device="vda"}'
      x: value
      x_scale: 0.75
      template: {name: dt_qu64, dtype: q_u64, precision: 16, relative: true, stats: [sum, max, {crhist: {scheme: usr, bounds: [0, 1.5, 100]}}]}
EOF
} >"$WORK/rel.yml"
PR=$(free_port)
start_exporter "$WORK/rel.yml" "$PR"
RPID=$LAST_PID RURL="http://127.0.0.1:$PR"
until_samples "$RURL/statistics/distinct/0/data" di_range 6
DTYPE_GROUPS="dt_s32 dt_u32 dt_s64 dt_u64 dt_long dt_ulong dt_qs32 dt_qu32 dt_qs64 dt_qu64"
for i in relev/0 distinct/0 blobev/0 sbv1/0 sbdr/0 sbdv/0 sbtd/0 $(printf '%s/0 ' $DTYPE_GROUPS); do curl -s --data-binary 'on=0' "$RURL/statistics/$i/definition" >/dev/null; done
blob_case # stats(3)'s V1 bytes of the same figures, with the clone options
curl -s "$RURL/statistics/blobev/0/data" >"$WORK/blob.data"
curl -s "$RURL/statistics/blobev/0/data?format=json" >"$WORK/blob.json"
curl -s "$RURL/statistics/blobev/0/fetch/0/SUM/u64" >"$WORK/fetch.ok"
fetch_code=$(curl -s -o "$WORK/fetch.bad" -w '%{http_code}' "$RURL/statistics/blobev/0/fetch/0/SUM/s64")
curl -s "$RURL/statistics/relev/0/data" >"$WORK/rel.data"
curl -s "$RURL/statistics/relev/0/data?format=json" >"$WORK/rel.json"
curl -s "$RURL/statistics/distinct/0/data" >"$WORK/di.data"
curl -s "$RURL/metrics" >"$WORK/rel.txt"
kill "$RPID"
check "relative: true: each X added to the previous value (sum, max, min of the running totals of the raw ring's X)" \
	$PY - "$WORK/rel.data" "$WORK/rel.json" <<'EOF'
import json, sys
xs, got = [], {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == 'relev_raw':
        xs.append(int(w[3]))
    else:
        got[w[0]] = int(w[1])
vals = [sum(xs[:i + 1]) for i in range(len(xs))]
assert len(xs) >= 5, xs
assert got == {'relev_voi_sum': sum(vals), 'relev_voi_max': max(vals), 'relev_voi_min': min(vals)}, (got, xs)
def no_constant(c):
    raise ValueError('not JSON: ' + c)
stats = json.loads(open(sys.argv[2]).read(), parse_constant=no_constant)['vois']['relev']['stats']
assert stats['SUM']['val'] == sum(vals) and stats['MAX']['val'] == max(vals), stats
EOF
check "a template of two VOIs: one blob per device, each VOI fed by its own series, named in the data file, the JSON and on /metrics" \
	$PY - "$WORK/blob.data" "$WORK/blob.json" "$WORK/rel.txt" <<'EOF'
import json, re, sys
d = {l.split()[0]: l.split()[-1] for l in open(sys.argv[1]) if len(l.split()) == 2}
n = int(d['blobev_n'])  # the increases of the counter: as many as the VOI's sum
assert n >= 5 and int(d['dev_blob_events_sum']) == n, d
def no_constant(c):
    raise ValueError('not JSON: ' + c)
b = json.loads(open(sys.argv[2]).read(), parse_constant=no_constant)
assert list(b['vois']) == ['events', 'latency'], b
assert b['vois']['events']['stats']['SUM']['val'] == n, b
# the example's latency histogram never changes: its VOI took nothing yet
assert b['vois']['latency']['stats'] == {'HIST': None}, b
m = open(sys.argv[3]).read()
lab = '{device="vda",source_metric="example_events_total"}'
assert 'dev_blob_events_sum_of_values_total%s %d\n' % (lab, n) in m, m
assert 'dev_blob_latency_dvhist_count%s 0\n' % lab in m, m
EOF
check "promtool accepts the blob's families" promtool_clean "$WORK/rel.txt"
check "typed fetch: the u64 sum as u64, EFTYPE as s64 ($fetch_code)" \
	sh -c "[ -s '$WORK/fetch.ok' ] && [ \"\$(cat '$WORK/fetch.ok')\" = \"\$(awk '\$1 == \"dev_blob_events_sum\" { print \$2 }' '$WORK/blob.data')\" ] && [ $fetch_code = 400 ] && grep -qx 'EFTYPE: the statistic.s data type is u64, not s64' '$WORK/fetch.bad'"
n=$(awk '$1 == "di_range" { print $2 }' "$WORK/di.data")
check "list: every X distinct, entries_max 2: two kept, the other $n - 2 missed, that count on /metrics" \
	sh -c "[ \$(grep -c '^di_list ' '$WORK/di.data') = 2 ] && grep -qx 'di_list_missed_total{device=\"vda\",source_metric=\"example_events_total\"} $((n - 2))' '$WORK/rel.txt'"

# A double VOI (x: rate) whose sums pass the largest double: its JSON
# stays JSON a strict parser takes ("+Inf", "-Inf" as Prometheus' HTTP
# API writes them), and /metrics shows +Inf and -Inf.
with_test_plugins
cat >"$WORK/huge.yml" <<EOF
global:
  plugin_dir: $PLUGINS
collectors:
  synthetic: {huge: true}
processing:
  sample_interval: 100ms
  groups:
    - name: huge
      select: synthetic_huge
      x: rate
      x_scale: 1e18
      template: {name: huge_voi, stats: [sum, max]}
EOF
PH=$(free_port)
start_exporter "$WORK/huge.yml" "$PH"
HPID=$LAST_PID
for _ in $(seq 100); do
	curl -s "http://127.0.0.1:$PH/statistics/huge/0/data?format=json" >"$WORK/huge0.json"
	curl -s "http://127.0.0.1:$PH/statistics/huge/1/data?format=json" >"$WORK/huge1.json"
	grep -q 'Inf"' "$WORK/huge0.json" && grep -q 'Inf"' "$WORK/huge1.json" && break
	sleep 0.1
done
curl -s "http://127.0.0.1:$PH/metrics" >"$WORK/huge.txt"
kill "$HPID"
check "a double VOI's infinite sums: strict JSON with \"+Inf\" and \"-Inf\", and +Inf, -Inf on /metrics" \
	$PY - "$WORK/huge0.json" "$WORK/huge1.json" "$WORK/huge.txt" <<'EOF'
import json, math, sys
def no_constant(c):
    raise ValueError('not JSON: ' + c)
sums, maxes = set(), []
for f in sys.argv[1:3]:
    stats = json.loads(open(f).read(), parse_constant=no_constant)['vois']['huge']['stats']
    sums.add(stats['SUM']['val'])
    maxes.append(stats['MAX']['val'])
assert sums == {'+Inf', '-Inf'}, sums
assert all(isinstance(m, float) and math.isfinite(m) for m in maxes), maxes
m = open(sys.argv[3]).read()
for sign, v in (('up', '+Inf'), ('down', '-Inf')):
    line = 'huge_voi_sum_of_values{sign="%s",source_metric="synthetic_huge"} %s\n' % (sign, v)
    assert line in m, line
EOF

# a client the configuration does not list may read, not write
processing_config "$WORK/deny.yml" 10.9.9.9
PD=$(free_port)
start_exporter "$WORK/deny.yml" "$PD"
sleep 0.5
check "POST from a client not in write_allow is 403" \
	test "$(curl -s -o /dev/null -w '%{http_code}' --data-binary 'on=0' "http://127.0.0.1:$PD/statistics/events/0/definition")" = 403
check "... and reading still works" test "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PD/statistics/events/0/data")" = 200

# reload: every statistic, template and source whose definition the file
# still has unchanged keeps its data; a changed one starts afresh, logged
K='{device="vda",source_metric="example_events_total"}'
started() { # started STAT: its start stamp in the definition file
	curl -s "$URL/statistics/events/0/definition" | sed -n "s/^name=$1 .* started=\(\[[^]]*\]\).*/\1/p"
}
reload_and_wait() { # reload_and_wait: SIGHUP, then until the reload is logged
	local n
	n=$(grep -c 'configuration reloaded' "$WORK/exporter.log")
	kill -HUP "$EXP"
	wait_for_log 'configuration reloaded' $((n + 1))
}
for _ in $(seq 100); do # enough samples that a reset cannot reach them again at once
	[ "$(metric "$P" "ev_voi_tdigest_count$K")" -ge 20 ] 2>/dev/null && break
	sleep 0.1
done
n0=$(metric "$P" "ev_n_total$K") r0=$(metric "$P" "ev_kept_samples_total$K")
t0=$(metric "$P" "ev_voi_tdigest_count$K") h0=$(started ev_hist_period) k0=$(started ev_kept)
reload_and_wait
n1=$(metric "$P" "ev_n_total$K") r1=$(metric "$P" "ev_kept_samples_total$K")
t1=$(metric "$P" "ev_voi_tdigest_count$K")
check "reload, file unchanged: a value keeps its count ($n0, then $n1)" $PY -c "assert $n1 >= $n0 >= 20"
check "... a range its samples ($r0, then $r1)" $PY -c "assert $r1 >= $r0 >= 20"
check "... a template's t-digest its values ($t0, then $t1)" $PY -c "assert $t1 >= $t0 >= 20"
check "... a history and a range their start ($h0 $k0)" \
	sh -c "[ -n '$h0' ] && [ '$(started ev_hist_period)' = '$h0' ] && [ '$(started ev_kept)' = '$k0' ]"
w0=$(started ev_raw)
sed -i 's/{name: ev_raw, type: raw, entries_max: 3}/{name: ev_raw, type: raw, entries_max: 2}/' "$WORK/p.yml"
reload_and_wait
check "reload, one statistic changed: it starts afresh ($w0, then $(started ev_raw))" \
	sh -c "[ -n '$w0' ] && [ '$(started ev_raw)' != '$w0' ] && curl -s '$URL/statistics/events/0/definition' | grep -q '^name=ev_raw on=1 type=raw .* entries_max=2 '"
check "... the log names it" grep -q 'a definition changed, its data start afresh.*statistic=events/ev_raw' "$WORK/exporter.log"
check "... and the others keep theirs" test "$(started ev_hist_period)" = "$h0"

# reload: a new group appears, a bad section keeps the running one
sed -i 's/- name: events/- name: events2/' "$WORK/p.yml"
reload_and_wait
check "reload: the new group's interface is listed" sh -c "curl -s '$URL/statistics/' | grep -q '^events2/0 '"
echo 'processing: {groups: [{name: x, select: "{}"}]}' >>"$WORK/p.yml"
"$EXPORTER" --check-config --config.file="$WORK/p.yml" >"$WORK/check.out" 2>&1
check "--check-config: a bad processing section fails with its position" grep -q 'p.yml:[0-9]*:[0-9]*: ' "$WORK/check.out"

# a real Prometheus stores the processed series
start_prometheus "$P"
got=$(prom_wait "$PROM_PORT" 'ev_voi_tdigest{quantile="0.5"}')
check "Prometheus stores the t-digest's quantile (got '$got')" test -n "$got"
bucket=$(prom_query "$PROM_PORT" 'ev_voi_crhist_bucket{le="+Inf"}')
check "Prometheus stores the CR histogram (+Inf: '$bucket')" test -n "$bucket"

# a real VM: each of the fixture's vCPUs halts once (kvm.sh), so every
# sampled value of halt_exits is 1
if [ -w /dev/kvm ] && [ "$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c 'anon_inode:kvm-vm$')" = 0 ]; then
	IO=7
	"$B/tests/kvm_fixture" 1 2 $IO "$WORK/fx.ready" -name guest=pvm >>"$WORK/fixture.log" 2>&1 &
	PIDS+=($!)
	# and a VM whose name holds invalid UTF-8 and a bidi control (U+202E)
	"$B/tests/kvm_fixture" 1 1 $IO "$WORK/fx2.ready" -name "guest=$(printf 'ev\377\376\342\200\256il')" \
		>>"$WORK/fixture.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 200); do [ -s "$WORK/fx.ready" ] && [ -s "$WORK/fx2.ready" ] && break; sleep 0.05; done
	cat >"$WORK/kvm.yml" <<EOF
global:
  plugin_dir: $B/plugins
collectors:
  kvm: {mode: per_vcpu}
processing:
  sample_interval: 100ms
  groups:
    - name: io
      select: 'kvm_vcpu_halt_exits_total{vm="pvm"}'
      statistics: [{name: io_range, type: range}]
      template: {stats: [max, {tdigest: {}}]}
    - name: hist
      select: 'kvm_vcpu_halt_wait_seconds{vm="pvm"}'
      x_scale: 1e9
      statistics: [{name: hw_range, type: range}, {name: hw_log, type: array, scale: log2, range_min: 0, range_max: 1048576}]
      template: {name: hw_voi, stats: [{crhist: {scheme: exp, lb: 0, ub: 1048576, stepbase: 2, stepexp: 0}}]}
    - name: any
      select: 'kvm_vcpu_halt_exits_total'
      statistics: [{name: any_n, type: value}]
    - name: vcpu
      select: 'kvm_vcpu_halt_exits_total{vm="pvm"}'
      template:
        name: vcpu_blob
        vois:
          - {name: halt_exits, stats: [max, min]}
          - {name: halt_wait, series: kvm_vcpu_halt_wait_seconds, stats: [{dvhist: {values: [0]}}]}
EOF
	PK=$(free_port)
	start_exporter "$WORK/kvm.yml" "$PK"
	sleep 1.5
	curl -s "http://127.0.0.1:$PK/metrics" >"$WORK/kvm.txt"
	check "KVM: both vCPUs of the VM are sources" test "$(grep -c '^io_range_max{' "$WORK/kvm.txt")" = 2
	check "KVM: every sampled value is the vCPU's one halt exit" \
		sh -c "grep -E '^io_range_(min|avg|max)' '$WORK/kvm.txt' | awk '{ if (\$2 != 1) exit 1 }'"
	check "KVM: the t-digest's median too" grep -q '^io_tdigest{.*quantile="0.5"} 1$' "$WORK/kvm.txt"
	check "KVM: about 10 samples a second each" \
		sh -c "grep '^io_range_samples_total' '$WORK/kvm.txt' | awk '{ if (\$2 < 8) exit 1 }'"
	check "KVM: a vCPU's own halt-wait histogram is a source" \
		sh -c "curl -s 'http://127.0.0.1:$PK/statistics/' | grep -qx 'hist/[01] kvm_vcpu_halt_wait_seconds{vm=\"pvm\",vcpu=\"0\"}'"
	check "KVM: its statistics on /metrics (the fixture's vCPUs halt once: no increase)" \
		sh -c "grep -q '^hw_range_samples_total{vm=\"pvm\",vcpu=\"0\",source_metric=\"kvm_vcpu_halt_wait_seconds\"} 0$' '$WORK/kvm.txt' && grep -q '^hw_log_count{vm=\"pvm\",vcpu=\"0\",' '$WORK/kvm.txt' && grep -q '^hw_voi_crhist_count{vm=\"pvm\",vcpu=\"1\",' '$WORK/kvm.txt'"
	check "KVM: a blob per vCPU, its first VOI of halt exits (each sampled value 1), its second of the vCPU's own halt-wait histogram" \
		sh -c "[ \$(grep -c '^vcpu_blob_halt_exits_max{vm=\"pvm\",vcpu=\"[01]\",source_metric=\"kvm_vcpu_halt_exits_total\"} 1\$' '$WORK/kvm.txt') = 2 ] && [ \$(grep -c '^vcpu_blob_halt_wait_dvhist_count{vm=\"pvm\",vcpu=\"[01]\",source_metric=\"kvm_vcpu_halt_exits_total\"} 0\$' '$WORK/kvm.txt') = 2 ]"
	curl -s "http://127.0.0.1:$PK/statistics/" >"$WORK/list.txt"
	check "KVM: a hostile VM name is listed repaired: no raw U+202E, no invalid UTF-8, U+FFFD instead" \
		sh -c "grep -q '^any/.*ev' '$WORK/list.txt' && ! LC_ALL=C grep -q \$(printf '\342\200\256') '$WORK/list.txt' && ! LC_ALL=C grep -q \$(printf '\377') '$WORK/list.txt' && LC_ALL=C grep -q \$(printf '\357\277\275') '$WORK/list.txt' && iconv -f UTF-8 -t UTF-8 '$WORK/list.txt' >/dev/null"
else
	skip "processing of KVM statistics" "/dev/kvm is missing, or other VMMs run"
fi
summary
