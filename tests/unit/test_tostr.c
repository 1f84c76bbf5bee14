/* stats_blob_tostr and stats_voistatdata_tostr as the /statistics/
 * interface writes them: every expected text below is built by hand from
 * the format strings of FreeBSD's sys/kern/subr_stats.c
 * (stats_v1_itercb_tostr_freeform: "struct statsblobv1@%p", ", tplhash=%u",
 * "\n\tvois[%hd]: id=%hd", ", name=\"%s\"", "\n\t\tvois[%hd]stat[%hhd]:
 * stype=", "%s, errs=%hu", "\n\t\t\tvoistatdata: "; the histogram's
 * "nbkts=%hu, ", "oob=%ju", "\n\t\t\t\t", "{lb=", ",ub=", ",cnt=%ju}"; the
 * digest's "smplcnt=%ju, compcnt=%ju, maxctds=%hu, nctds=%hu", "{mu=";
 * and their JSON twins), not from this project's output. */
#include "processing_helpers.h"

#include <math.h>

/* Three VOIs, every statistic type, each VOI's statistics listed out of
 * stats(3)'s slot order (SUM 1, MAX 2, MIN 3, HIST 4, TDGST 5), which
 * the text must follow. */
static const char *three_vois_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: vm\n"
    "      select: a_total\n"
    "      template:\n"
    "        name: tt\n"
    "        vois:\n"
    "          - {name: a, stats: [min, sum, max]}\n"
    "          - {name: b, series: b_total, stats: [{dvhist: {values: [1, 5]}},\n"
    "             {crhist: {scheme: usr, bounds: [0, 10]}},\n"
    "             {drhist: {buckets: [[0, 2], [4, 8]]}}]}\n"
    "          - {name: c, series: c_total, stats: [{tdigest: {compression: 10}}]}\n";

static char *get(struct processing *p, const char *path, int want_status)
{
	int status;
	char *text = iface_as(p, "GET", path, NULL, false, S(3), &status);
	if (status != want_status)
		fail_msg("%s: status %d, not %d: %s", path, status, want_status, text);
	return text;
}

static void expect(struct processing *p, const char *path, const char *want)
{
	char *text = get(p, path, 200);
	assert_string_equal(text, want);
	free(text);
}

/* a = 7 then -2; b = 5 then 9; c = 3 then 7 (x: value takes each). */
static struct processing *fed(void)
{
	struct processing *p = make(three_vois_yaml);
	struct bs_label l[] = {{"vm", "w"}};
	static const double a[] = {7, -2}, b[] = {5, 9}, c[] = {3, 7};

	for (int k = 0; k < 2; k++) {
		feed_value(p, "a_total", l, 1, a[k], S(1 + k));
		feed_value(p, "b_total", l, 1, b[k], S(1 + k));
		feed_value(p, "c_total", l, 1, c[k], S(1 + k));
	}
	assert_int_equal(p->srcs.n, 1);
	return p;
}

/* The freeform text of fed()'s blob, names n0, n1, n2 (SB_TOSTR_META) or
 * "" each. The first histogram listed (dvhist) is HIST, slot 4; the
 * others take 6 and 7. drhist and dvhist each hold 5 and leave 9 out of
 * band; the crhist's [0,10) holds both. The digest merged its two
 * points once when it was written (compcnt 1), 2 * 2 * 10 centroids at
 * most for compression 10. */
static void freeform_want(char *out, size_t size, uint32_t hash, const char *n0, const char *n1,
			  const char *n2)
{
	snprintf(out, size,
		 "struct statsblobv1@0x0, tplhash=%u"
		 "\n\tvois[0]: id=0, name=\"%s\""
		 "\n\t\tvois[0]stat[1]: stype=SUM, errs=0\n\t\t\tvoistatdata: 5"
		 "\n\t\tvois[0]stat[2]: stype=MAX, errs=0\n\t\t\tvoistatdata: 7"
		 "\n\t\tvois[0]stat[3]: stype=MIN, errs=0\n\t\t\tvoistatdata: -2"
		 "\n\tvois[1]: id=1, name=\"%s\""
		 "\n\t\tvois[1]stat[4]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=1"
		 "\n\t\t\t\t{lb=1,ub=1,cnt=0}\n\t\t\t\t{lb=5,ub=5,cnt=1}"
		 "\n\t\tvois[1]stat[6]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=0"
		 "\n\t\t\t\t{lb=0,ub=10,cnt=2}\n\t\t\t\t{lb=10,ub=9223372036854775807,cnt=0}"
		 "\n\t\tvois[1]stat[7]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=1"
		 "\n\t\t\t\t{lb=0,ub=2,cnt=0}\n\t\t\t\t{lb=4,ub=8,cnt=1}"
		 "\n\tvois[2]: id=2, name=\"%s\""
		 "\n\t\tvois[2]stat[5]: stype=TDGST, errs=0\n\t\t\tvoistatdata: smplcnt=2, "
		 "compcnt=1, maxctds=40, nctds=2\n\t\t\t\t{mu=3,cnt=1}\n\t\t\t\t{mu=7,cnt=1}\n",
		 hash, n0, n1, n2);
}

static void test_blob_freeform_every_statistic(void **state)
{
	struct processing *p = fed();
	char want[2048];
	(void)state;

	freeform_want(want, sizeof(want), p->tpl[0].hash, "a", "b", "c");
	expect(p, "vm/0/data?format=freeform", want);
	expect(p, "vm/0/data?format=freeform&meta=1", want);
	freeform_want(want, sizeof(want), p->tpl[0].hash, "", "", "");
	expect(p, "vm/0/data?format=freeform&meta=0", want);
	expect(p, "vm/0/data?meta=0&format=freeform", want);
	done(p);
}

/* JSON: with SB_TOSTR_META the template, VOIs and statistics by name
 * (several histograms by their data type); without it "tplname":null,
 * VOIs as "[id]" and statistics as "[slot]". */
static void test_blob_json_with_and_without_meta(void **state)
{
	struct processing *p = fed();
	char want[2048];
	(void)state;

	snprintf(
	    want, sizeof(want),
	    "{\"tplname\":null,\"tplhash\":%u,\"vois\":{"
	    "\"[0]\":{\"stats\":{\"[1]\":{\"errs\":0,\"val\":5},\"[2]\":{\"errs\":0,\"val\":7},"
	    "\"[3]\":{\"errs\":0,\"val\":-2}}},"
	    "\"[1]\":{\"stats\":{"
	    "\"[4]\":{\"errs\":0,\"nbkts\":2,\"oob\":1,\"bkts\":[{\"lb\":1,\"ub\":1,\"cnt\":0},"
	    "{\"lb\":5,\"ub\":5,\"cnt\":1}]},"
	    "\"[6]\":{\"errs\":0,\"nbkts\":2,\"oob\":0,\"bkts\":[{\"lb\":0,\"ub\":10,\"cnt\":2},"
	    "{\"lb\":10,\"ub\":9223372036854775807,\"cnt\":0}]},"
	    "\"[7]\":{\"errs\":0,\"nbkts\":2,\"oob\":1,\"bkts\":[{\"lb\":0,\"ub\":2,\"cnt\":0},"
	    "{\"lb\":4,\"ub\":8,\"cnt\":1}]}}},"
	    "\"[2]\":{\"stats\":{\"[5]\":{\"errs\":0,\"smplcnt\":2,\"compcnt\":1,\"maxctds\":40,"
	    "\"nctds\":2,\"ctds\":[{\"mu\":3,\"cnt\":1},{\"mu\":7,\"cnt\":1}]}}}}}\n",
	    p->tpl[0].hash);
	expect(p, "vm/0/data?format=json&meta=0", want);
	snprintf(
	    want, sizeof(want),
	    "{\"tplname\":\"tt\",\"tplhash\":%u,\"vois\":{"
	    "\"a\":{\"stats\":{\"SUM\":{\"errs\":0,\"val\":5},\"MAX\":{\"errs\":0,\"val\":7},"
	    "\"MIN\":{\"errs\":0,\"val\":-2}}},"
	    "\"b\":{\"stats\":{"
	    "\"DVHIST64\":{\"errs\":0,\"nbkts\":2,\"oob\":1,\"bkts\":[{\"lb\":1,\"ub\":1,"
	    "\"cnt\":0},{\"lb\":5,\"ub\":5,\"cnt\":1}]},"
	    "\"CRHIST64\":{\"errs\":0,\"nbkts\":2,\"oob\":0,\"bkts\":[{\"lb\":0,\"ub\":10,"
	    "\"cnt\":2},{\"lb\":10,\"ub\":9223372036854775807,\"cnt\":0}]},"
	    "\"DRHIST64\":{\"errs\":0,\"nbkts\":2,\"oob\":1,\"bkts\":[{\"lb\":0,\"ub\":2,"
	    "\"cnt\":0},{\"lb\":4,\"ub\":8,\"cnt\":1}]}}},"
	    "\"c\":{\"stats\":{\"TDGST\":{\"errs\":0,\"smplcnt\":2,\"compcnt\":1,\"maxctds\":40,"
	    "\"nctds\":2,\"ctds\":[{\"mu\":3,\"cnt\":1},{\"mu\":7,\"cnt\":1}]}}}}}\n",
	    p->tpl[0].hash);
	expect(p, "vm/0/data?format=json", want);
	expect(p, "vm/0/data?format=json&meta=1", want);
	done(p);
}

/* stats_voistatdata_tostr of each statistic alone: a scalar is its
 * dtype's "%jd" in both formats; HIST is the VOI's first histogram. */
static void test_one_statistic_alone(void **state)
{
	struct processing *p = fed();
	(void)state;

	expect(p, "vm/0/data/0/SUM", "5\n");
	expect(p, "vm/0/data/0/MAX?format=freeform", "7\n");
	expect(p, "vm/0/data/0/MIN?format=json", "-2\n");
	expect(p, "vm/0/data/1/HIST?format=freeform",
	       "nbkts=2, oob=1\n\t\t\t\t{lb=1,ub=1,cnt=0}\n\t\t\t\t{lb=5,ub=5,cnt=1}\n");
	expect(p, "vm/0/data/1/HIST?format=json",
	       "\"nbkts\":2,\"oob\":1,\"bkts\":[{\"lb\":1,\"ub\":1,\"cnt\":0},"
	       "{\"lb\":5,\"ub\":5,\"cnt\":1}]\n");
	expect(p, "vm/0/data/2/TDGST?format=freeform",
	       "smplcnt=2, compcnt=1, maxctds=40, nctds=2\n\t\t\t\t{mu=3,cnt=1}\n\t\t\t\t{mu=7,"
	       "cnt=1}\n");
	expect(p, "vm/0/data/2/TDGST?format=json",
	       "\"smplcnt\":2,\"compcnt\":1,\"maxctds\":40,\"nctds\":2,\"ctds\":[{\"mu\":3,"
	       "\"cnt\":1},{\"mu\":7,\"cnt\":1}]\n");
	/* a snapshot resets: the data as held, as FreeBSD prints it */
	free(iface_as(p, "POST", "vm/0/snapshot", NULL, true, S(3), &(int){0}));
	expect(p, "vm/0/data/0/MAX", "-9223372036854775808\n");
	expect(p, "vm/0/data/0/MIN", "9223372036854775807\n");
	expect(p, "vm/0/data/0/SUM", "0\n");
	done(p);
}

/* A blob not yet updated (the template's schema): freeform prints each
 * statistic's data as held (MAX the lowest s64, MIN the highest, the
 * buckets empty, no centroid), JSON null. */
static void test_not_yet_set(void **state)
{
	struct processing *p = make(three_vois_yaml);
	char want[2048];
	(void)state;

	snprintf(want, sizeof(want),
		 "struct statsblobv1@0x0, tplhash=%u"
		 "\n\tvois[0]: id=0, name=\"a\""
		 "\n\t\tvois[0]stat[1]: stype=SUM, errs=0\n\t\t\tvoistatdata: 0"
		 "\n\t\tvois[0]stat[2]: stype=MAX, errs=0\n\t\t\tvoistatdata: -9223372036854775808"
		 "\n\t\tvois[0]stat[3]: stype=MIN, errs=0\n\t\t\tvoistatdata: 9223372036854775807"
		 "\n\tvois[1]: id=1, name=\"b\""
		 "\n\t\tvois[1]stat[4]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=0"
		 "\n\t\t\t\t{lb=1,ub=1,cnt=0}\n\t\t\t\t{lb=5,ub=5,cnt=0}"
		 "\n\t\tvois[1]stat[6]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=0"
		 "\n\t\t\t\t{lb=0,ub=10,cnt=0}\n\t\t\t\t{lb=10,ub=9223372036854775807,cnt=0}"
		 "\n\t\tvois[1]stat[7]: stype=HIST, errs=0\n\t\t\tvoistatdata: nbkts=2, oob=0"
		 "\n\t\t\t\t{lb=0,ub=2,cnt=0}\n\t\t\t\t{lb=4,ub=8,cnt=0}"
		 "\n\tvois[2]: id=2, name=\"c\""
		 "\n\t\tvois[2]stat[5]: stype=TDGST, errs=0\n\t\t\tvoistatdata: smplcnt=0, "
		 "compcnt=0, maxctds=40, nctds=0\n",
		 p->tpl[0].hash);
	expect(p, "templates/0?format=freeform", want);
	snprintf(want, sizeof(want),
		 "{\"tplname\":null,\"tplhash\":%u,\"vois\":{"
		 "\"[0]\":{\"stats\":{\"[1]\":null,\"[2]\":null,\"[3]\":null}},"
		 "\"[1]\":{\"stats\":{\"[4]\":null,\"[6]\":null,\"[7]\":null}},"
		 "\"[2]\":{\"stats\":{\"[5]\":null}}}}\n",
		 p->tpl[0].hash);
	expect(p, "templates/tt?format=json&meta=0", want);
	done(p);
}

/* A saturating SUM counts each update past its limit in errs, which
 * stats(3) keeps in 8 bits that stop at 255: 2^62 given 300 times
 * passes INT64_MAX from the second on, 299 errors, written as 255. */
static void test_errs_stop_at_255(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: v, template: {name: t, stats: [sum]}}\n");
	char want[256];
	(void)state;

	for (int k = 0; k < 300; k++)
		feed_value(p, "v", NULL, 0, 4611686018427387904.0, S(1 + k));
	assert_int_equal(p->src[0]->voi.stat[0].errs, 299);
	snprintf(want, sizeof(want),
		 "struct statsblobv1@0x0, tplhash=%u\n\tvois[0]: id=0, name=\"g\"\n\t\tvois[0]"
		 "stat[1]: stype=SUM, errs=255\n\t\t\tvoistatdata: 9223372036854775807\n",
		 p->tpl[0].hash);
	expect(p, "g/0/data?format=freeform", want);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"t\",\"tplhash\":%u,\"vois\":{\"g\":{\"stats\":{\"SUM\":{"
		 "\"errs\":255,\"val\":9223372036854775807}}}}}\n",
		 p->tpl[0].hash);
	expect(p, "g/0/data?format=json", want);
	done(p);
}

/* A double VOI (this project's; stats(3) has none): freeform text
 * prints its NaN and infinities as C does, the JSON as strings (no
 * JSON number holds them). */
static void test_double_voi_not_finite(void **state)
{
	struct processing *p = make(
	    "processing:\n  groups:\n"
	    "    - {name: nn, select: g, x: rate,\n"
	    "       template: {stats: [sum, max, min, {crhist: {scheme: usr, bounds: [0]}}]}}\n");
	(void)state;

	feed_value(p, "g", NULL, 0, 0, S(0));
	feed_value(p, "g", NULL, 0, 1, S(1)); /* X 1 */
	struct source *s = p->src[0];
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = INFINITY}}), 0);
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = -INFINITY}}), 0);
	expect(p, "nn/0/data/0/SUM", "nan\n");
	expect(p, "nn/0/data/0/SUM?format=json", "\"NaN\"\n");
	expect(p, "nn/0/data/0/MAX", "inf\n");
	expect(p, "nn/0/data/0/MIN", "-inf\n");
	expect(p, "nn/0/data/0/HIST", "nbkts=1, oob=1\n\t\t\t\t{lb=0,ub=inf,cnt=2}\n");
	expect(p, "nn/0/data/0/HIST?format=json",
	       "\"nbkts\":1,\"oob\":1,\"bkts\":[{\"lb\":0,\"ub\":\"+Inf\",\"cnt\":2}]\n");
	done(p);
}

/* A double VOI's digest given infinities (a rate may pass the largest
 * double): a t-digest holds finite values alone, so it does not take
 * them, and counts each in its errs, as stats(3) counts an update a
 * statistic could not take; its smplcnt stays the values it holds. */
static void test_double_digest_not_finite(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: nd, select: g, x: rate,\n"
		 "       template: {stats: [sum, {tdigest: {compression: 10}}]}}\n");
	(void)state;

	feed_value(p, "g", NULL, 0, 0, S(0));
	feed_value(p, "g", NULL, 0, 1, S(1)); /* X 1 */
	struct source *s = p->src[0];
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = INFINITY}}), 0);
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = -INFINITY}}), 0);
	char want[512];
	snprintf(want, sizeof(want),
		 "struct statsblobv1@0x0, tplhash=%u\n\tvois[0]: id=0, name=\"nd\""
		 "\n\t\tvois[0]stat[1]: stype=SUM, errs=0\n\t\t\tvoistatdata: nan"
		 "\n\t\tvois[0]stat[5]: stype=TDGST, errs=2\n\t\t\tvoistatdata: smplcnt=1, "
		 "compcnt=1, maxctds=40, nctds=1\n\t\t\t\t{mu=1,cnt=1}\n",
		 p->tpl[0].hash);
	expect(p, "nd/0/data?format=freeform", want);
	done(p);
}

/* Two VOIs, the first relative (its VOISTATE slot 0 holds the previous
 * value) with SUM, MAX and MIN, the second a CRHIST and a t-digest,
 * stats(3)'s slots 4 and 5, slots 0 to 3 empty (stype -1). */
static const char *objdump_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: ob\n"
    "      select: a_total\n"
    "      template:\n"
    "        name: od\n"
    "        vois:\n"
    "          - {name: a, relative: true, stats: [sum, max, min]}\n"
    "          - {name: b, series: b_total, stats: [{crhist: {scheme: usr, bounds: [0, 10]}},\n"
    "             {tdigest: {compression: 10}}]}\n";

/* a takes 3 then 4 (relative: 3, then 7); b 5 then 20, at 1 s and 2 s:
 * the blob was created at 1 s (sbintime 1 << 32). */
static struct processing *objdump_fed(void)
{
	struct processing *p = make(objdump_yaml);
	struct bs_label l[] = {{"ob", "w"}};
	static const double a[] = {3, 4}, b[] = {5, 20};

	for (int k = 0; k < 2; k++) {
		feed_value(p, "a_total", l, 1, a[k], S(1 + k));
		feed_value(p, "b_total", l, 1, b[k], S(1 + k));
	}
	assert_int_equal(p->srcs.n, 1);
	return p;
}

/* The layout, counted by hand from struct statsblobv1 (32 bytes), struct
 * voi and struct voistat (8 each): vois[] at 32, two of them, so the
 * voistats at 48: b's 6 slots first (stats_v1_blob_expand puts a VOI
 * added later before the others), a's 4 at 96; the data at 48 + 80 =
 * 128: b's CRHIST64 (8 + 2 buckets of 16 = 40 bytes) at 128, its
 * TDGSTCLUST64 (32 + 40 centroids of 24 = 992) at 168, then a's
 * VOISTATE, SUM, MAX and MIN, 8 bytes each, at 1160 to 1184; cursz 1192.
 * The digest's nodes in the array's order: the two centroids, then the
 * 38 free ones (mu 0, cnt 0). */
#define OBJDUMP_CREATED "4294967296"

static void objdump_ctds(char *out, size_t size, bool json)
{
	size_t n = 0;

	for (int i = 2; i < 40; i++)
		n += (size_t)snprintf(out + n, size - n,
				      json ? ",{\"ctd\":%d,\"mu\":0,\"cnt\":0}"
					   : "\n\t\t\t\tctd[%d].{mu=0,cnt=0}",
				      i);
}

static void test_objdump_freeform(void **state)
{
	struct processing *p = objdump_fed();
	char want[4096], free_ctds[2048];
	(void)state;

	objdump_ctds(free_ctds, sizeof(free_ctds), false);
	snprintf(
	    want, sizeof(want),
	    "struct statsblobv1@0x0, abi=1, endian=1, maxsz=1192, cursz=1192, "
	    "created=" OBJDUMP_CREATED ", lastrst=" OBJDUMP_CREATED ", flags=0x0000, "
	    "stats_off=48, statsdata_off=128, tplhash=%u"
	    "\n\tvois[0]: id=0, name=\"a\", flags=0x0001, dtype=INT_S64, voistatmaxid=3, "
	    "stats_off=96"
	    "\n\t\tvois[0]stat[0]: stype=VOISTATE, errs=0, flags=0x0000, dtype=VOISTATE, dsz=8, "
	    "data_off=1160\n\t\t\tvoistatdata: prev=7"
	    "\n\t\tvois[0]stat[1]: stype=SUM, errs=0, flags=0x0001, dtype=INT_S64, dsz=8, "
	    "data_off=1168\n\t\t\tvoistatdata: 10"
	    "\n\t\tvois[0]stat[2]: stype=MAX, errs=0, flags=0x0001, dtype=INT_S64, dsz=8, "
	    "data_off=1176\n\t\t\tvoistatdata: 7"
	    "\n\t\tvois[0]stat[3]: stype=MIN, errs=0, flags=0x0001, dtype=INT_S64, dsz=8, "
	    "data_off=1184\n\t\t\tvoistatdata: 3"
	    "\n\tvois[1]: id=1, name=\"b\", flags=0x0000, dtype=INT_S64, voistatmaxid=5, "
	    "stats_off=48"
	    "\n\t\tvois[1]stat[0]: stype=-1\n\t\tvois[1]stat[1]: stype=-1"
	    "\n\t\tvois[1]stat[2]: stype=-1\n\t\tvois[1]stat[3]: stype=-1"
	    "\n\t\tvois[1]stat[4]: stype=HIST, errs=0, flags=0x0001, dtype=CRHIST64, dsz=40, "
	    "data_off=128\n\t\t\tvoistatdata: nbkts=2, oob=0"
	    "\n\t\t\t\tbkt[0].{lb=0,ub=10,cnt=1}"
	    "\n\t\t\t\tbkt[1].{lb=10,ub=9223372036854775807,cnt=1}"
	    "\n\t\tvois[1]stat[5]: stype=TDGST, errs=0, flags=0x0001, dtype=TDGSTCLUST64, "
	    "dsz=992, data_off=168\n\t\t\tvoistatdata: smplcnt=2, compcnt=1, maxctds=40, nctds=2"
	    "\n\t\t\t\tctd[0].{mu=5,cnt=1}\n\t\t\t\tctd[1].{mu=20,cnt=1}%s\n",
	    p->tpl[0].hash, free_ctds);
	expect(p, "ob/0/data?format=freeform&objdump=1", want);
	done(p);
}

/* The JSON twin, without SB_TOSTR_META: names null, VOIs and slots by
 * number; every slot, set or not, with its data. */
static void test_objdump_json(void **state)
{
	struct processing *p = objdump_fed();
	char want[8192], free_ctds[4096];
	(void)state;

	objdump_ctds(free_ctds, sizeof(free_ctds), true);
	snprintf(
	    want, sizeof(want),
	    "{\"abi\":1,\"endian\":1,\"maxsz\":1192,\"cursz\":1192,\"created\":" OBJDUMP_CREATED
	    ",\"lastrst\":" OBJDUMP_CREATED ",\"flags\":0,\"stats_off\":48,\"statsdata_off\":128,"
	    "\"tplname\":null,\"tplhash\":%u,\"vois\":{"
	    "\"[0]\":{\"id\":0,\"name\":null,\"flags\":1,\"dtype\":\"INT_S64\",\"voistatmaxid\":3,"
	    "\"stats_off\":96,\"stats\":{"
	    "\"[0]\":{\"stype\":\"VOISTATE\",\"errs\":0,\"flags\":0,\"dtype\":\"VOISTATE\","
	    "\"data_off\":1160,\"voistatdata\":{\"prev\":7}},"
	    "\"[1]\":{\"stype\":\"SUM\",\"errs\":0,\"flags\":1,\"dtype\":\"INT_S64\","
	    "\"data_off\":1168,\"voistatdata\":{\"val\":10}},"
	    "\"[2]\":{\"stype\":\"MAX\",\"errs\":0,\"flags\":1,\"dtype\":\"INT_S64\","
	    "\"data_off\":1176,\"voistatdata\":{\"val\":7}},"
	    "\"[3]\":{\"stype\":\"MIN\",\"errs\":0,\"flags\":1,\"dtype\":\"INT_S64\","
	    "\"data_off\":1184,\"voistatdata\":{\"val\":3}}}},"
	    "\"[1]\":{\"id\":1,\"name\":null,\"flags\":0,\"dtype\":\"INT_S64\",\"voistatmaxid\":5,"
	    "\"stats_off\":48,\"stats\":{"
	    "\"[0]\":{\"stype\":-1},\"[1]\":{\"stype\":-1},\"[2]\":{\"stype\":-1},"
	    "\"[3]\":{\"stype\":-1},"
	    "\"[4]\":{\"stype\":\"HIST\",\"errs\":0,\"flags\":1,\"dtype\":\"CRHIST64\","
	    "\"data_off\":128,\"voistatdata\":{\"nbkts\":2,\"oob\":0,\"bkts\":["
	    "{\"bkt\":0,\"lb\":0,\"ub\":10,\"cnt\":1},"
	    "{\"bkt\":1,\"lb\":10,\"ub\":9223372036854775807,\"cnt\":1}]}},"
	    "\"[5]\":{\"stype\":\"TDGST\",\"errs\":0,\"flags\":1,\"dtype\":\"TDGSTCLUST64\","
	    "\"data_off\":168,\"voistatdata\":{\"smplcnt\":2,\"compcnt\":1,\"maxctds\":40,"
	    "\"nctds\":2,\"ctds\":[{\"ctd\":0,\"mu\":5,\"cnt\":1},{\"ctd\":1,\"mu\":20,\"cnt\":1}"
	    "%s]}}}}}}\n",
	    p->tpl[0].hash, free_ctds);
	expect(p, "ob/0/data?format=json&objdump=1&meta=0", want);
	/* with SB_TOSTR_META the template's and the VOIs' names */
	char *text = get(p, "ob/0/data?format=json&objdump=1", 200);
	has(text, "\"tplname\":\"od\",");
	has(text, "\"[1]\":{\"id\":1,\"name\":\"b\",\"flags\":0,");
	free(text);
	/* a template's blob (stats_tpl_fetch's) was never created nor reset */
	text = get(p, "templates/0?format=freeform&objdump=1", 200);
	has(text, "cursz=1192, created=0, lastrst=0, flags=0x0000, stats_off=48,");
	has(text, "\n\t\t\tvoistatdata: prev=0\n");
	free(text);
	done(p);
}

/* A blob the encoder refuses (a double VOI has no stats(3) data type) is
 * refused for objdump as for format=blob, with the encoder's reason. */
static void test_objdump_refused_as_the_blob(void **state)
{
	struct processing *p =
	    make("processing:\n"
		 "  groups:\n"
		 "    - {name: nd, select: g, x: rate, template: {stats: [sum]}}\n");
	(void)state;

	feed_value(p, "g", NULL, 0, 0, S(0));
	feed_value(p, "g", NULL, 0, 1, S(1));
	free(get(p, "nd/0/data?format=blob", 409));
	char *text = get(p, "nd/0/data?format=freeform&objdump=1", 409);
	has(text, "EOPNOTSUPP: a double VOI");
	free(text);
	free(get(p, "nd/0/data?format=json&objdump=1", 409));
	free(get(p, "nd/0/data?format=json", 200)); /* the text without the layout */
	done(p);
}

/* counts: 32 on a t-digest: stats(3)'s TDGSTCLUST32, 20 + 40 nodes of
 * 16 = 660 bytes, whose Q_S32 means and s32 counts the dump decodes; a
 * typed fetch names its dtype; a mean no Q_S32 holds (2^26) refuses the
 * blob and its dump alike, 409 with the reason. 1000000.0009765625 (a
 * q_s64 of precision 32 holds it) is kept at precision 8, the finest
 * whose 20 integer bits hold 10^6: the blob says 1000000. */
static void test_objdump_tdgst32(void **state)
{
	struct processing *p =
	    make("processing:\n"
		 "  groups:\n"
		 "    - name: td\n"
		 "      select: g\n"
		 "      template: {dtype: q_s64, precision: 32,\n"
		 "                 stats: [{tdigest: {compression: 10, counts: 32}}]}\n"
		 "    - {name: big, select: h, template: {stats: [{tdigest: {counts: 32}}]}}\n");
	(void)state;

	feed_value(p, "g", NULL, 0, -2.5, S(1));
	feed_value(p, "g", NULL, 0, 1000000.0009765625, S(2));
	char *dump = get(p, "td/0/data?format=freeform&objdump=1", 200);
	has(dump, "stype=TDGST, errs=0, flags=0x0001, dtype=TDGSTCLUST32, dsz=660, data_off=");
	has(dump, "\n\t\t\tvoistatdata: smplcnt=2, compcnt=");
	has(dump, ", maxctds=40, nctds=2\n\t\t\t\tctd[0].{mu=-2.5,cnt=1}"
		  "\n\t\t\t\tctd[1].{mu=1000000,cnt=1}\n\t\t\t\tctd[2].{mu=0,cnt=0}");
	free(dump);
	dump = get(p, "td/0/data?format=json&objdump=1", 200);
	has(dump, "\"stype\":\"TDGST\",\"errs\":0,\"flags\":1,\"dtype\":\"TDGSTCLUST32\",");
	free(dump);
	char *text = get(p, "td/0/fetch/0/TDGST/q_s64", 400);
	assert_string_equal(text, "EFTYPE: the statistic's data type is tdgstclust32, not q_s64\n");
	free(text);
	/* /metrics marks a 32-bit digest's samples it could not take */
	text = metrics(p);
	has(text, "td_tdigest_saturated_total{source_metric=\"g\"} 0\n");
	free(text);
	struct vstats_voi *voi = &p->src[0]->voi;
	assert_int_equal(vstats_update_n(voi, voi->prev, 1ull << 31), 0);
	text = metrics(p);
	has(text, "td_tdigest_count{source_metric=\"g\"} 2147483647\n");
	has(text, "td_tdigest_saturated_total{source_metric=\"g\"} 1\n");
	free(text);
	feed_value(p, "h", NULL, 0, 67108863, S(1));
	free(get(p, "big/0/data?format=blob", 200));
	feed_value(p, "h", NULL, 0, 67108864, S(2));
	text = get(p, "big/0/data?format=blob", 409);
	has(text, "no Q_S32 holds it");
	free(text);
	text = get(p, "big/0/data?format=freeform&objdump=1", 409);
	has(text, "no Q_S32 holds it");
	free(text);
	done(p);
}

/* A Q VOI and 32-bit counts: the dump decodes the bytes' Q numbers (sign
 * and magnitude above 3 control bits) and 32-bit counts to the values
 * the text without objdump prints from the VOI itself. q = -1.5 then
 * 3.25: SUM 1.75, MIN -1.5; [0, 2.5) empty, [2.5, max) one, -1.5 out of
 * band. The bucket's bytes hold 32-bit counts: CRHIST32, 8 + 2 * 16. */
static void test_objdump_q_and_32bit_counts(void **state)
{
	struct processing *p =
	    make("processing:\n"
		 "  groups:\n"
		 "    - name: qq\n"
		 "      select: g\n"
		 "      template: {dtype: q_s32, precision: 8, stats: [sum, min,\n"
		 "                 {crhist: {scheme: usr, bounds: [0, 2.5], counts: 32}}]}\n");
	static const double x[] = {-1.5, 3.25};
	(void)state;

	for (int k = 0; k < 2; k++)
		feed_value(p, "g", NULL, 0, x[k], S(1 + k));
	char *plain = get(p, "qq/0/data?format=freeform", 200);
	char *dump = get(p, "qq/0/data?format=freeform&objdump=1", 200);
	has(plain, "stype=SUM, errs=0\n\t\t\tvoistatdata: 1.75000000\n");
	has(dump, "stype=SUM, errs=0, flags=0x0001, dtype=Q_S32, dsz=4, data_off=");
	has(dump, "\n\t\t\tvoistatdata: 1.75000000\n");
	has(dump, "\n\t\t\tvoistatdata: -1.50000000\n");
	has(dump, "dtype=CRHIST32, dsz=40, data_off=");
	has(dump, "voistatdata: nbkts=2, oob=1\n\t\t\t\tbkt[0].{lb=0.00000000,ub=2.50000000,cnt=0}"
		  "\n\t\t\t\tbkt[1].{lb=2.50000000,ub=");
	has(dump, ",cnt=1}\n");
	free(plain);
	free(dump);
	done(p);
}

/* What the query and the path refuse, each 400 with its reason. */
static void test_refused_queries(void **state)
{
	struct processing *p = fed();
	static const char *const bad[] = {
	    "vm/0/data?meta=0", /* meta= goes with json or freeform */
	    "vm/0/data?format=text&objdump=1",
	    "vm/0/data/0/SUM?format=json&objdump=1", /* one statistic has no layout */
	    "vm/0/data?format=json&meta=2",
	    "vm/0/data?format=json&format=json",
	    "vm/0/data?format=json&",
	    "vm/0/data?",
	    "vm/0/data/3/SUM",	   /* no VOI 3 */
	    "vm/0/data/0/HIST",	   /* VOI 0 has no histogram */
	    "vm/0/data/01/SUM",	   /* no leading 0 */
	    "vm/0/data/0/SUM/s64", /* one statistic, no dtype */
	    "vm/0/data/0/",
	    "vm/0/data/999999/SUM",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		free(get(p, bad[i], 400));
	char *json = get(p, "vm/0/data?format=json", 200);
	expect(p, "vm/0/data?format=json&objdump=0&meta=1", json);
	free(json);
	done(p);
}

/* The paths that write no blob take no format but text: another is 400,
 * not silently the text (nor 404, as if the path were not there). */
static void test_text_alone_paths(void **state)
{
	struct processing *p = fed();
	static const char *const text_alone[] = {
	    "",
	    "sample_rates",
	    "vm/0/definition",
	    "vm/0/fetch/0/SUM/s64",
	};
	static const char *const formats[] = {"json", "freeform", "sysctl"};
	char path[128];
	int status;
	(void)state;

	for (size_t i = 0; i < sizeof(text_alone) / sizeof(text_alone[0]); i++) {
		snprintf(path, sizeof(path), "%s?format=text", text_alone[i]);
		free(get(p, path, 200));
		for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
			snprintf(path, sizeof(path), "%s?format=%s", text_alone[i], formats[f]);
			char *text = get(p, path, 400);
			has(text, "EINVAL");
			free(text);
		}
	}
	free(iface_as(p, "POST", "vm/0/definition?format=json", "on=1", true, S(3), &status));
	assert_int_equal(status, 400);
	free(iface_as(p, "POST", "sample_rates?format=json", "tt=100", true, S(3), &status));
	assert_int_equal(status, 400);
	done(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blob_freeform_every_statistic),
	    cmocka_unit_test(test_blob_json_with_and_without_meta),
	    cmocka_unit_test(test_one_statistic_alone),
	    cmocka_unit_test(test_not_yet_set),
	    cmocka_unit_test(test_errs_stop_at_255),
	    cmocka_unit_test(test_double_voi_not_finite),
	    cmocka_unit_test(test_double_digest_not_finite),
	    cmocka_unit_test(test_objdump_freeform),
	    cmocka_unit_test(test_objdump_json),
	    cmocka_unit_test(test_objdump_tdgst32),
	    cmocka_unit_test(test_objdump_refused_as_the_blob),
	    cmocka_unit_test(test_objdump_q_and_32bit_counts),
	    cmocka_unit_test(test_refused_queries),
	    cmocka_unit_test(test_text_alone_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
