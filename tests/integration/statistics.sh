#!/usr/bin/env bash
# The /statistics/ interface over HTTP against the running daemon: a POST
# all or nothing with every refused line named by its stats(3) error, an
# overlong word, writing a definition back, on=0 stopping the template,
# history periods on clock boundaries and never stamped ahead, /metrics
# moving a history on by itself, stats(3)'s verbs (the template list,
# specs, sample rates, the blob as JSON and freeform text, one
# statistic's data), the query's refusals (%00, %3F) and empty arguments,
# a u64 VOI holding 2^64-1 exactly, s32, u32 and q_s64 VOIs with their
# limits and a 32-bit histogram over HTTP, and max_memory_bytes holding
# the resident memory of a blow-up by writes.
# Usage: tests/integration/statistics.sh BUILD_DIR
set -u
B=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

example_processing 127.0.0.1 >"$WORK/s.yml"
cat >>"$WORK/s.yml" <<EOF
    - name: events
      select: 'example_events_total{device="vda"}'
      x: delta
      statistics:
        - {name: ev_n, type: value}
        - {name: ev_r, type: range, range_min: 0, range_max: 100}
        - {name: ev_h, type: history, mode: increments, period: 1s, entries_max: 8}
        - {name: ev_p, type: history, mode: range, period: 1s, entries_max: 5}
      template:
        name: ev_voi
        stats: [sum, max, min, {crhist: {scheme: usr, bounds: [0, 2, 4]}}, {tdigest: {}}]
    - name: big
      select: 'example_events_total{device="max"}'
      template: {name: big_voi, dtype: u64, stats: [sum, max, min]}
    - name: ev32
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: ev32_voi, dtype: s32, stats: [sum, max, {dvhist: {values: [1], counts: 32}}]}
    - name: narrow
      select: 'example_events_total{device="max"}'
      template: {name: narrow_voi, dtype: u32, stats: [sum]}
    - name: evq
      select: 'example_events_total{device="vda"}'
      x: delta
      template: {name: evq_voi, dtype: q_s64, precision: 4, stats: [sum, max]}
EOF
P=$(free_port)
start_exporter "$WORK/s.yml" "$P"
URL="http://127.0.0.1:$P/statistics"

get() { curl -s "$URL/$1"; }
post() { # post PATH BODY_FILE: the status code; the reply in $WORK/reply
	curl -s -o "$WORK/reply" -w '%{http_code}' --data-binary @"$2" "$URL/$1"
}
passes() { metric "$P" binstat_processing_passes_total; }
until_passes() { # until_passes N: until the sampler made N more passes (10 s at most)
	local want=$(($(passes) + $1))
	for _ in $(seq 100); do [ "$(passes)" -ge "$want" ] && return 0; sleep 0.1; done
	return 1
}
until_has() { # until_has PATH PATTERN: until GET PATH matches (10 s at most)
	for _ in $(seq 100); do get "$1" | grep -q -- "$2" && return 0; sleep 0.1; done
	return 1
}
updates() { get events/0/definition | sed -n 's/^# template=.* updates=\([0-9]*\)$/\1/p'; }
ev_n() { get events/0/data | awk '$1 == "ev_n" { print $2 }'; }

check "both interfaces appear" until_has "" '^big/0 '
check "the template's VOI took values" until_has events/0/data '^ev_voi_max '

# ---- stats(3)'s template list, specs and errors ----
get templates >"$WORK/tpl.txt"
H0=$(sed -n 's/^0 "ev_voi":\([0-9]*\)$/\1/p' "$WORK/tpl.txt")
H1=$(sed -n 's/^1 "big_voi":\([0-9]*\)$/\1/p' "$WORK/tpl.txt")
H2=$(sed -n 's/^2 "ev32_voi":\([0-9]*\)$/\1/p' "$WORK/tpl.txt")
H3=$(sed -n 's/^3 "narrow_voi":\([0-9]*\)$/\1/p' "$WORK/tpl.txt")
H4=$(sed -n 's/^4 "evq_voi":\([0-9]*\)$/\1/p' "$WORK/tpl.txt")
check "templates: each with its slot id and \"name\":hash" \
	sh -c "[ -n '$H0' ] && [ -n '$H1' ] && [ -n '$H2' ] && [ -n '$H3' ] && [ -n '$H4' ] && [ \$(wc -l <'$WORK/tpl.txt') = 5 ]"
RATES="\"ev_voi\":$H0=100,\"big_voi\":$H1=100,\"ev32_voi\":$H2=100,\"narrow_voi\":$H3=100,\"evq_voi\":$H4=100"
check "templates/<id> (stats_tpl_id2name)" test "$(get templates/1)" = "1 \"big_voi\":$H1"
check "templates/\"name\":hash (stats_tpl_fetch_allocid)" \
	test "$(get "templates/%22big_voi%22:$H1")" = "1 \"big_voi\":$H1"
check "templates/:hash" test "$(get "templates/:$H0")" = "0 \"ev_voi\":$H0"
check "an unknown template: 404 ESRCH" \
	sh -c "[ \$(curl -s -o '$WORK/r' -w '%{http_code}' '$URL/templates/nosuch') = 404 ] && grep -qx 'ESRCH: no template matches' '$WORK/r'"

# ---- an encoded NUL cuts no path: 400, counted ----
nul_code() { curl -s --path-as-is -o "$WORK/r" -w '%{http_code}' "$@"; }
nul_refused() { metric "$P" 'binstat_exporter_http_refused_total{reason="nul_in_path"}'; }
bad400() { metric "$P" 'binstat_exporter_http_responses_total{code="400"}'; }
R0=$(nul_refused) C0=$(bad400)
check "GET templates/0%00xyz: 400, not slot 0" test "$(nul_code "$URL/templates/0%00xyz")" = 400
check "GET /metrics%00.png: 400, not the metrics" \
	sh -c "[ \$(curl -s --path-as-is -o '$WORK/r' -w '%{http_code}' 'http://127.0.0.1:$P/metrics%00.png') = 400 ] && ! grep -q '^example_' '$WORK/r' && grep -q 'encoded NUL' '$WORK/r'"
check "GET events/0/data%00junk: 400" test "$(nul_code "$URL/events/0/data%00junk")" = 400
# (Only the written attribute is compared: a definition line also holds
# live counts, hits_out_of_range and the like, which the sampler moves.)
check "ev_n is on before" sh -c "curl -s '$URL/events/0/definition' | grep -q '^name=ev_n on=1 '"
check "POST events/0/definition%00junk: 400, not applied" \
	sh -c "[ \$(curl -s --path-as-is -o '$WORK/r' -w '%{http_code}' --data-binary 'name=ev_n on=0' '$URL/events/0/definition%00junk') = 400 ] && curl -s '$URL/events/0/definition' | grep -q '^name=ev_n on=1 '"
check "%2500 is a literal %00, not a NUL: 404 as any unknown template" \
	test "$(nul_code "$URL/templates/%2500")" = 404
check "the four counted: http_refused_total{reason=\"nul_in_path\"} +4, responses_total{code=\"400\"} +4" \
	test "$(($(nul_refused) - ${R0:-0}))/$(($(bad400) - ${C0:-0}))" = 4/4

# ---- sample rates at run time (stats_tpl_sample_rates) ----
check "sample_rates: \"name\":hash=pct" test "$(get sample_rates)" = "$RATES"
printf 'ev_voi=0, nosuch=5' >"$WORK/b"
code=$(post sample_rates "$WORK/b")
check "a rate naming no template: 400 ESRCH, nothing changed ($code)" \
	sh -c "[ $code = 400 ] && grep -qx 'ESRCH: pair 2: no template matches' '$WORK/reply' && [ '$(get sample_rates)' = '$RATES' ]"
printf '"ev_voi":%s=0\n' "$H0" >"$WORK/b"
code=$(post sample_rates "$WORK/b")
check "rate 0: the source loses its VOI ($code)" \
	sh -c "[ $code = 200 ] && [ \$(curl -s -o /dev/null -w '%{http_code}' '$URL/events/0/data?format=json') = 404 ]"
printf 'ev_voi=100' >"$WORK/b"
code=$(post sample_rates "$WORK/b")
check "rate 100: a fresh VOI ($code)" until_has events/0/data '^ev_voi_max '

# ---- the blob as stats_blob_tostr's JSON ----
get 'events/0/data?format=json' >"$WORK/blob.json"
check "data?format=json: stats(3)'s shape, every statistic there" $PY -c "
import json
b = json.load(open('$WORK/blob.json'))
assert b['tplname'] == 'ev_voi' and b['tplhash'] == $H0, b
s = b['vois']['events']['stats']
assert list(s) == ['SUM', 'MAX', 'MIN', 'HIST', 'TDGST'], list(s)
assert s['SUM']['errs'] == 0 and isinstance(s['SUM']['val'], int)
h = s['HIST']
assert h['nbkts'] == 3 and [k['lb'] for k in h['bkts']] == [0, 2, 4], h
assert sum(k['cnt'] for k in h['bkts']) + h['oob'] == s['TDGST']['smplcnt'], b
assert s['TDGST']['nctds'] == len(s['TDGST']['ctds']) > 0"
get 'events/0/data?format=freeform' >"$WORK/blob.txt"
check "data?format=freeform: stats_blob_tostr's SB_STRFMT_FREEFORM lines, slots in order" $PY -c "
t = open('$WORK/blob.txt').read()
l = t.split('\n')
assert l[0] == 'struct statsblobv1@0x0, tplhash=$H0' and l[1] == '\tvois[0]: id=0, name=\"events\"', l[:2]
st = [x for x in l if x.startswith('\t\tvois[0]stat[')]
assert [x.split(':')[0] for x in st] == ['\t\tvois[0]stat[%d]' % i for i in range(1, 6)], st
assert [x.split('stype=')[1].split(',')[0] for x in st] == ['SUM', 'MAX', 'MIN', 'HIST', 'TDGST'], st
assert l[l.index(st[3]) + 1].startswith('\t\t\tvoistatdata: nbkts=3, oob=') and t.endswith('\n'), t"
ctype() { curl -s -o /dev/null -w '%{content_type}' "$URL/$1"; }
check "a blob's JSON is served as application/json, one statistic's fragment as text" \
	test "$(ctype 'events/0/data?format=json')|$(ctype 'events/0/data/0/HIST?format=json')" = \
	"application/json|text/plain; charset=utf-8"
get 'events/0/data/0/HIST?format=json' >"$WORK/hist.json"
check "data/0/HIST?format=json: stats_voistatdata_tostr's members of the histogram" $PY -c "
import json
h = json.loads('{' + open('$WORK/hist.json').read() + '}')
assert h['nbkts'] == 3 and [k['lb'] for k in h['bkts']] == [0, 2, 4], h"
code_of() { curl -s -o /dev/null -w '%{http_code}' "$URL/$1"; }
curl -s -o "$WORK/od.bin" "$URL/events/0/data?format=blob"
get 'events/0/data?format=json&objdump=1' >"$WORK/od.json"
check "objdump=1: the layout format=blob serves (header, voi, each voistat read from its bytes)" $PY -c "
import json, struct
b = open('$WORK/od.bin', 'rb').read()
j = json.load(open('$WORK/od.json'))
abi, endian, flags, maxsz, cursz, tplhash, so, sdo = struct.unpack_from('<BBHHHIHH', b, 0)
assert (j['abi'], j['endian'], j['cursz'], j['tplhash'], j['stats_off'], j['statsdata_off']) == \\
    (abi, endian, cursz, tplhash, so, sdo) == (1, 1, len(b), $H0, so, sdo), (j, len(b))
vid, vdt, vmax, vso, vfl = struct.unpack_from('<hBbHH', b, 32)
v = j['vois']['[0]']
assert (v['id'], v['voistatmaxid'], v['stats_off'], v['flags'], v['name']) == (vid, vmax, vso, vfl, 'events'), v
names = ['VOISTATE', 'SUM', 'MAX', 'MIN', 'HIST', 'TDGST']
for k in range(vmax + 1):
    st, dt, off, dsz = struct.unpack_from('<bBHH', b, vso + 8 * k)
    got = v['stats']['[%d]' % k]
    assert got['stype'] == (names[st] if st >= 0 else -1), (k, got)
    assert st < 0 or got['data_off'] == off, (k, got, off)
"
check "objdump=1 as freeform: the header's fields, @0x0" \
	sh -c "curl -s '$URL/events/0/data?format=freeform&objdump=1' | head -1 | grep -q '^struct statsblobv1@0x0, abi=1, endian=1, maxsz=[0-9]*, cursz=[0-9]*, created=[0-9]*, lastrst=[0-9]*, flags=0x0000, stats_off=40, statsdata_off=[0-9]*, tplhash=$H0\$'"
check "meta=0 reaches the interface: JSON without names" \
	sh -c "curl -s '$URL/events/0/data?format=json&meta=0' | grep -q '^{\"tplname\":null,\"tplhash\":$H0,\"vois\":{\"\[0\]\":{\"stats\":{\"\[1\]\":'"
check "an argument the interface does not take, or one holding &: 400" \
	test "$(code_of 'events/0/data?format=json&x=1')/$(code_of 'events/0/data?format=json%26meta%3D0')" = 400/400
S0=$(get events/0/data/0/SUM)
NUL_SNAPSHOT=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/events/0/snapshot?format=json%00x")
check "a NUL (%00) in a query key or value cuts nothing: 400" \
	test "$(code_of 'events/0/data?format=json%00junk')/$(code_of 'events/0/data?format%00x=json')/$NUL_SNAPSHOT" = 400/400/400
check "a snapshot refused for its query resets nothing" test "$(get events/0/data/0/SUM)" -ge "$S0"
check "an empty argument (&&) is skipped wherever it stands; a value without a key is 400" \
	test "$(code_of 'events/0/data?format=json&&meta=0')/$(code_of 'events/0/data?&format=json&')/$(code_of 'events/0/data?=json')" = 200/200/400
check "a ? decoded in the path (%3F) starts no query: 400" \
	test "$(code_of 'events/0/data%3Fformat=json')/$(code_of 'events/0/data%3Fformat=json&meta=0')" = 400/400

# ---- a u64 VOI: 2^64-1, exactly ----
check "u64 VOI: the series at 2^64-1 is its max and min, exactly" \
	sh -c "until_has() { for _ in \$(seq 100); do curl -s '$URL/big/0/data' | grep -qx \"\$1\" && return 0; sleep 0.1; done; return 1; }; until_has 'big_voi_max 18446744073709551615' && until_has 'big_voi_min 18446744073709551615'"
check "... and on /metrics" \
	test "$(metric "$P" 'big_voi_max{device="max",source_metric="example_events_total"}')" = 18446744073709551615

# ---- 32-bit data types and counts ----
check "s32 VOI: fetched as s32" until_has ev32/0/fetch/0/MAX/s32 '^[0-9][0-9]*$'
check "... and EFTYPE as s64" sh -c "[ \"\$(curl -s -o '$WORK/f' -w '%{http_code}' '$URL/ev32/0/fetch/0/MAX/s64')\" = 400 ] && grep -qx \"EFTYPE: the statistic's data type is s32, not s64\" '$WORK/f'"
check "a 32-bit histogram's data type is dvhist32" sh -c "curl -s '$URL/ev32/0/fetch/0/HIST/s32' | grep -qx \"EFTYPE: the statistic's data type is dvhist32, not s32\""
check "... and /metrics says it is exact" \
	test "$(metric "$P" 'ev32_voi_dvhist_saturated_total{device="vda",source_metric="example_events_total"}')" = 0
check "u32 VOI: 2^64-1 not taken, its sum stays 0" \
	test "$(get narrow/0/fetch/0/SUM/u32)" = 0
check "... each one counted as out_of_range" \
	test "$(metric "$P" 'binstat_processing_dropped_total{reason="out_of_range"}')" -gt 0
check "q_s64 VOI of precision 4: fetched as Q_TOSTR prints it" until_has evq/0/fetch/0/MAX/q_s64 '^[0-9][0-9]*\.0000$'
check "... and /metrics serves its number" sh -c "[ \"\$(curl -s '$URL/evq/0/fetch/0/SUM/q_s64')\" != '' ] && curl -s 'http://127.0.0.1:$P/metrics' | grep -q '^evq_voi_sum_of_values{device=\"vda\",source_metric=\"example_events_total\"} [0-9]'"

# ---- writing definitions: all or nothing, errors named ----
printf 'name=%s on=0\n' "$(head -c 300 /dev/zero | tr '\0' n)" >"$WORK/b"
code=$(post events/0/definition "$WORK/b")
get events/0/definition >"$WORK/def_after.txt"
check "a word of 300 bytes: 400 EFBIG naming its line, nothing applied ($code)" \
	sh -c "[ $code = 400 ] && grep -qx 'line 1: EFBIG: a word is longer than 255 bytes' '$WORK/reply' && grep -q '^name=ev_n on=1 ' '$WORK/def_after.txt'"
printf 'on=0\nname=ev_r range_max=50\nname=ev_r type=list\nname=nosuch on=1\n' >"$WORK/b"
code=$(post events/0/definition "$WORK/b")
printf '%s\n' 'line 3: EINVAL: a new type needs all its type-specific attributes' \
	'line 4: ENOENT: no statistic of that name' 'nothing applied: 2 lines refused' >"$WORK/want"
check "a POST with refused lines: 400 listing each, nothing applied ($code)" \
	sh -c "[ $code = 400 ] && cmp '$WORK/want' '$WORK/reply'"
check "... the good lines did not apply" \
	sh -c "curl -s '$URL/events/0/definition' | grep -q '^name=ev_r on=1 type=range range_min=0 range_max=100 '"
printf 'on=0\n\0name=ev_r range_max=50\n' >"$WORK/b"
check "a body with a NUL byte: 400" test "$(post events/0/definition "$WORK/b")" = 400

# written back as read: nothing discarded (data= stays, the data goes on)
get events/0/definition | grep -v '^#' >"$WORK/def.txt"
data_at() { get events/0/definition | sed -n 's/^name=ev_r .* data=\(\[[0-9.]*\]\).*/\1/p'; }
before=$(data_at)
code=$(post events/0/definition "$WORK/def.txt")
check "the definition file written back: ok, data= unchanged ($code, $before)" \
	sh -c "[ $code = 200 ] && [ '$(data_at)' = '$before' ]"

# ---- on=0 stops everything, the template too ----
printf 'on=0\n' >"$WORK/b"
code=$(post events/0/definition "$WORK/b")
u1=$(updates) n1=$(ev_n)
until_passes 5
check "on=0: the statistics and the template's VOI stop ($code; updates $u1 -> $(updates))" \
	sh -c "[ $code = 200 ] && [ '$(updates)' = '$u1' ] && [ '$(ev_n)' = '$n1' ] && curl -s '$URL/events/0/definition' | grep -q '^# template=ev_voi state=off '"
printf 'on=1\n' >"$WORK/b"
post events/0/definition "$WORK/b" >/dev/null
check "on=1: the template's VOI goes on" \
	sh -c "for _ in \$(seq 100); do [ \"\$(curl -s '$URL/events/0/definition' | sed -n 's/.* updates=\([0-9]*\)$/\1/p')\" -gt '$u1' ] && exit 0; sleep 0.1; done; exit 1"

# ---- history: periods on whole seconds, none stamped ahead ----
until_passes 25
get events/0/data >"$WORK/hist.txt"
now=$($PY -c 'import time; print(time.monotonic())')
check "history: whole-second periods, one after another, none ahead of now, none over 10 samples" $PY -c "
lines = [l.split() for l in open('$WORK/hist.txt') if l.startswith('ev_h ')]
stamps = [float(l[1].strip('[]')) for l in lines]
assert len(stamps) >= 2, lines
assert all(s == int(s) for s in stamps), stamps
assert all(b - a == 1 for a, b in zip(stamps, stamps[1:])), stamps
assert stamps[-1] <= $now, (stamps[-1], $now)
assert all(int(l[2]) <= 10 for l in lines), lines"

# ---- a scrape moves a history on by the clock ----
# Every new X out of range: within about two periods /metrics shows an
# empty last period, with no read of the data file in between.
LP='ev_p_last_period_samples{device="vda",source_metric="example_events_total"}'
lp() { curl -s -g "http://127.0.0.1:$P/metrics?collect[]=processing" | awk -v m="$LP" '$1 == m { print $2 }'; }
lp_above() { # lp_above N: until /metrics shows more than N (5 s at most)
	for _ in $(seq 50); do [ "$(lp)" -gt "$1" ] 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
check "history: /metrics shows a last period with samples" lp_above 0
printf 'name=ev_p range_min=1000 range_max=2000\n' >"$WORK/b"
code=$(post events/0/definition "$WORK/b")
t0=$(date +%s.%N)
v=
for _ in $(seq 40); do v=$(lp); [ "$v" = 0 ] && break; sleep 0.1; done
t1=$(date +%s.%N)
check "history: every X out of range: /metrics alone shows 0 samples within 40 polls ($code, $v after $($PY -c "print(round($t1 - $t0, 1))") s)" \
	sh -c "[ $code = 200 ] && [ '$v' = 0 ]"
get events/0/data >"$WORK/p.txt"
check "... and the data file agrees: its last complete period is empty" $PY -c "
lines = [l.split() for l in open('$WORK/p.txt') if l.startswith('ev_p ')]
assert len(lines) >= 2 and lines[-2][2] == '0', lines"
# ---- max_memory_bytes: a total bound on every source's statistics ----
# Nine sources of 16 histories each; entries_max=65536
# with period=1 (µs) on every statistic of every source is 3 MiB a
# statistic (a range entry is 48 bytes: its sum is 128 bits), 432 MiB in all, and each sampling pass writes every entry (a
# period per µs), so what is allocated is resident. With a bound of 16 MiB
# at most 5 such writes are taken; the rest are 400 EFBIG, nothing applied.
example_processing 127.0.0.1 >"$WORK/m.yml"
sed -i 's/^processing:$/processing:\n  max_memory_bytes: 16MiB/' "$WORK/m.yml"
{
	printf '    - name: blow\n'
	printf '      select: %s\n' "'{__name__=~\"example_(events_total|temperature_celsius|latency_seconds|mystery)\"}'"
	printf '      statistics:\n'
	for k in $(seq 0 15); do
		printf '        - {name: m%d, type: history, mode: range, period: 1s, entries_max: 8}\n' "$k"
	done
} >>"$WORK/m.yml"
MP=$(free_port)
start_exporter "$WORK/m.yml" "$MP"
MPID=$LAST_PID
MURL="http://127.0.0.1:$MP/statistics"
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$MPID/status"; }
mpasses() { metric "$MP" binstat_processing_passes_total; }
until_mpasses() { # until_mpasses N: until N more passes (20 s at most)
	local want=$(($(mpasses) + $1))
	for _ in $(seq 200); do [ "$(mpasses)" -ge "$want" ] && return 0; sleep 0.1; done
	return 1
}
# Every series of the four families is a source, those whose values are
# NaN or infinite included (a source marks the series written in a pass).
check "nine sources of 16 statistics appear" \
	sh -c "for _ in \$(seq 100); do [ \$(curl -s '$MURL/' | grep -c '^blow/') = 9 ] && exit 0; sleep 0.1; done; exit 1"
until_mpasses 10
rss0=$(rss_kib) mem0=$(metric "$MP" binstat_processing_memory_bytes)

# all 16 at once on one source: 48 MiB, refused as a whole
for k in $(seq 0 15); do printf 'name=m%d entries_max=65536 period=1\n' "$k"; done >"$WORK/b" # 48 MiB
curl -s "$MURL/blow/0/definition" >"$WORK/mdef0"
code=$(curl -s -o "$WORK/reply" -w '%{http_code}' --data-binary @"$WORK/b" "$MURL/blow/0/definition")
check "16 x entries_max=65536 on one source: 400 EFBIG, nothing applied ($code)" \
	sh -c "[ $code = 400 ] && grep -q '^EFBIG: .*past max_memory_bytes (16777216)' '$WORK/reply' && grep -qx 'nothing applied: 1 line refused' '$WORK/reply' && curl -s '$MURL/blow/0/definition' | cmp -s - '$WORK/mdef0'"

# then statistic by statistic on every source: the blow-up
ok=0 big=0 other=0
for id in $(curl -s "$MURL/" | sed -n 's/^blow\/\([0-9]*\) .*/\1/p'); do
	for k in $(seq 0 15); do
		printf 'name=m%d entries_max=65536 period=1\n' "$k" >"$WORK/b"
		code=$(curl -s -o "$WORK/reply" -w '%{http_code}' --data-binary @"$WORK/b" "$MURL/blow/$id/definition")
		if [ "$code" = 200 ]; then ok=$((ok + 1))
		elif [ "$code" = 400 ] && grep -q '^EFBIG: ' "$WORK/reply"; then big=$((big + 1))
		else other=$((other + 1)); fi
	done
done
check "144 writes of 3 MiB: at most 5 taken, the rest EFBIG ($ok ok, $big EFBIG, $other other)" \
	sh -c "[ $ok -ge 1 ] && [ $ok -le 5 ] && [ $big = $((144 - ok)) ] && [ $other = 0 ]"
until_mpasses 20 # every taken ring written through, so resident
rss1=$(rss_kib) mem1=$(metric "$MP" binstat_processing_memory_bytes)
check "binstat_processing_memory_bytes: grown by exactly the rings taken, under the limit ($mem0 -> $mem1)" \
	sh -c "[ $mem1 = $((mem0 + ok * (65536 - 8) * 48)) ] && [ $mem1 -le 16777216 ] && [ '$(metric "$MP" binstat_processing_memory_limit_bytes)' = 16777216 ]"
# The margin over the 16 MiB counted: the allocator's mmap chunks (a page
# each), the sampler's and the HTTP threads' arenas, replies and RSS noise
# of the running daemon; 8 MiB, against the hundreds of MiB more that the
# refused writes would have made resident.
rss_check "RSS grew by the bound and a margin at most ($rss0 -> $rss1 KiB: $(((rss1 - rss0) / 1024)) MiB, bound 16 + 8)" \
	test $((rss1 - rss0)) -le $(((16 + 8) * 1024))
check "a new source past the limit is a drop reason, memory_limit" \
	test -n "$(metric "$MP" 'binstat_processing_dropped_total{reason="memory_limit"}')"

summary
