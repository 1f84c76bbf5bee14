/* The processing's numbers taken exactly through the sampler's probe
 *: the increase of two integer samples in
 * integers, values an s64 cannot hold counted and never clamped, sums
 * that saturate instead of wrapping, and a collector's duplicate series
 * and families taken exactly as a scrape takes them. Each case feeds a
 * fake collector's exact values pass by pass, expected values computed by
 * hand. */
#include "processing_helpers.h"

#include <math.h>

static char *data(struct processing *p, const char *path)
{
	struct stage_reply r;
	processing_iface(p, "GET", path, NULL, false, S(100), &r);
	assert_int_equal(r.status, 200);
	char *text = strdup(r.text.p ? r.text.p : "");
	textbuf_free(&r.text);
	return text;
}

/* What the fake collector writes in one pass: up to 8 items, each a
 * family (when name is set) and one sample of device=dev. */
struct item {
	const char *name; /* NULL: no family call, the sample goes in the open one */
	enum bs_metric_type type;
	const char *dev;
	struct bs_value v;
};

static struct item pass_items[8];

static int items_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	(void)ctx, (void)i, (void)wait_ns;
	for (size_t k = 0; k < 8 && pass_items[k].dev; k++) {
		struct item *it = &pass_items[k];
		struct bs_label l = {"device", it->dev};
		if (it->name)
			bs_family(e, it->name, it->type, NULL, "test");
		e->ops->sample(e, &l, 1, it->v);
	}
	return 0;
}

static struct bs_value u64v(uint64_t u)
{
	return (struct bs_value){.kind = BS_VAL_U64, .u = u};
}

static struct bs_value i64v(int64_t i)
{
	return (struct bs_value){.kind = BS_VAL_I64, .i = i};
}

/* One pass at second t writing the one item it. */
static void tick1(struct processing *p, double t, struct item it)
{
	memset(pass_items, 0, sizeof(pass_items));
	pass_items[0] = it;
	p->in = (struct stage_input){.n = 1, .collect = items_collect};
	sampler_tick(p, S(t));
	p->in = (struct stage_input){0};
}

/* A u64 counter at 2^60 rising by 1 a sample. A double holds
 * 2^60 + 1 as 2^60, so each delta was 0; in integers each is 1. */
static void test_large_u64_delta_exact(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - name: g\n      select: cv_total\n      x: delta\n"
		 "      statistics:\n"
		 "        - {name: b_prod, type: value, mode: products}\n"
		 "        - {name: b_r, type: range}\n"
		 "        - {name: b_a, type: array, range_min: 0, range_max: 4, "
		 "base_interval: 1}\n"
		 "      template: {name: bt, stats: [sum, max, min]}\n");
	(void)state;

	for (int k = 0; k <= 39; k++) /* 39 deltas of 1 */
		tick1(p, 1 + k, (struct item){"cv", BS_COUNTER, "a", u64v((1ull << 60) + k)});
	char *text = data(p, "g/0/data");
	has(text, "b_prod 39\n");
	has(text, "b_r 39 1 1.000 1\n");
	has(text, "b_a <=0 0\nb_a <=1 39\n");
	has(text, "bt_sum 39\nbt_max 1\nbt_min 1\n");
	free(text);
	done(p);
}

/* An i64 gauge near the s64 limits, x: delta (INT64_MAX - 9
 * to INT64_MAX by 3s and 6s: deltas 3, 6), and x: value past 2^53
 * (2^61 + 1, which a double rounds to 2^61); a whole x_scale multiplies
 * in integers (delta 1 of 2^53 + k, times 1000). */
static void test_i64_and_scaled_exact(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: d, select: 'iv{device=\"a\"}', x: delta,\n"
		 "       statistics: [{name: d_r, type: range}]}\n"
		 "    - {name: v, select: 'iv{device=\"b\"}', x: value,\n"
		 "       statistics: [{name: v_r, type: range}]}\n"
		 "    - {name: s, select: 'iv{device=\"c\"}', x: delta, x_scale: 1000,\n"
		 "       statistics: [{name: s_r, type: range}]}\n");
	static const int64_t d[] = {INT64_MAX - 9, INT64_MAX - 6, INT64_MAX};
	(void)state;

	for (int k = 0; k < 3; k++) {
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] = (struct item){"iv", BS_GAUGE, "a", i64v(d[k])};
		pass_items[1] = (struct item){NULL, BS_GAUGE, "b", i64v((1ll << 61) + 1)};
		pass_items[2] = (struct item){NULL, BS_GAUGE, "c", u64v((1ull << 53) + k)};
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(1 + k));
		p->in = (struct stage_input){0};
	}
	char *text = data(p, "d/0/data");
	assert_string_equal(text, "d_r 2 3 4.500 6\n");
	free(text);
	text = data(p, "v/0/data");
	assert_string_equal(text, "v_r 3 2305843009213693953 2305843009213693953.000 "
				  "2305843009213693953\n");
	free(text);
	text = data(p, "s/0/data");
	assert_string_equal(text, "s_r 2 1000 1000.000 1000\n");
	free(text);
	done(p);
}

/* Values near and past the s64 limits, x: value. 9.21e18 and
 * -9.21e18 fit an s64 and are taken as they are (they were clamped to the
 * s64 limits); 2^64 - 1 and -2^63 - 1 (a double: -9223372036854777856)
 * fit no s64: the range and the s64 VOI do not take them and each is
 * counted as out_of_range once, while the u64 VOI takes 2^64 - 1 and
 * counts the two below 0. */
static void test_out_of_s64_counted_not_clamped(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: big\n"
				    "      statistics: [{name: r, type: range}]\n"
				    "      template: {name: t, stats: [sum, max, min]}\n"
				    "    - name: u\n      select: big\n"
				    "      template: {name: ut, dtype: u64, stats: [max]}\n");
	(void)state;

	tick1(p, 1, (struct item){"big", BS_GAUGE, "a", u64v(9210000000000000000ull)});
	tick1(p, 2, (struct item){"big", BS_GAUGE, "a", i64v(-9210000000000000000ll)});
	tick1(p, 3, (struct item){"big", BS_GAUGE, "a", u64v(UINT64_MAX)});
	tick1(p, 4, (struct item){"big", BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = -0x1p63 - 4096}});
	char *text = data(p, "g/0/data");
	assert_string_equal(text,
			    "r 2 -9210000000000000000 0.000 9210000000000000000\n"
			    "t_sum 0\nt_max 9210000000000000000\nt_min -9210000000000000000\n");
	free(text);
	text = data(p, "u/0/data");
	assert_string_equal(text, "ut_max 18446744073709551615\n");
	free(text);
	text = metrics(p);
	/* 2 values for g; for u the two below 0 */
	has(text, "binstat_processing_dropped_total{reason=\"out_of_range\"} 4\n");
	free(text);
	done(p);
}

/* One template's sums agree: two values of 9e18 pass the s64
 * range together; the SUM stays at INT64_MAX (it wrapped to a negative)
 * and counts the update it could not take whole in errs. */
static void test_sum_saturates(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: big\n"
				    "      template: {name: t, stats: [sum, "
				    "{crhist: {scheme: usr, bounds: [0]}}]}\n");
	(void)state;

	tick1(p, 1, (struct item){"big", BS_GAUGE, "a", i64v(9000000000000000000ll)});
	tick1(p, 2, (struct item){"big", BS_GAUGE, "a", i64v(9000000000000000000ll)});
	char *text = data(p, "g/0/data");
	has(text, "t_sum 9223372036854775807\n");
	free(text);
	text = data(p, "g/0/data?format=json");
	has(text, "\"SUM\":{\"errs\":1,\"val\":9223372036854775807}");
	free(text);
	text = metrics(p);
	has(text, "t_sum_of_values{device=\"a\",source_metric=\"big\"} 9223372036854775807\n");
	has(text, "t_crhist_sum{device=\"a\",source_metric=\"big\"} 1.8e+19\n");
	free(text);
	done(p);
}

/* A collector writes dv_total{device="a"} twice a pass, the
 * second time 1000 more (as the review's feeder did). A scrape serves the
 * first and refuses the second (duplicate_series); the processing took
 * both, and each next value looked like a reset (d_p 2090, d_r 19 20
 * 110.000 200). Now it takes the first only: 19 increases of 10. */
static void test_duplicate_series_first_only(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: dv_total\n      x: delta\n"
				    "      statistics:\n"
				    "        - {name: d_n, type: value}\n"
				    "        - {name: d_p, type: value, mode: products}\n"
				    "        - {name: d_r, type: range}\n");
	(void)state;

	for (int i = 1; i <= 20; i++) {
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] = (struct item){"dv", BS_COUNTER, "a", u64v(i * 10)};
		pass_items[1] = (struct item){NULL, BS_COUNTER, "a", u64v(i * 10 + 1000)};
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(i));
		p->in = (struct stage_input){0};
	}
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "d_n 19\nd_p 190\nd_r 19 10 10.000 10\n");
	free(text);
	text = metrics(p);
	has(text, "binstat_processing_dropped_total{reason=\"duplicate_series\"} 20\n");
	free(text);
	/* The scrape's emitter, over the same collect: the first, 200. */
	struct capture c;
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	items_collect(NULL, 0, &c.em.pub, 0);
	has(capture_end(&c), "dv_total{device=\"a\"} 200\n");
	assert_int_equal(c.em.ndrops, 1);
	assert_string_equal(c.em.drops[0].reason, "duplicate_series");
	capture_free(&c);
	done(p);
}

/* A collect that writes family fv twice (device a, then b).
 * A scrape refuses the second family (duplicate_family) and so its
 * series (no_family); the processing kept fv{device="b"} as g/1. Now it
 * keeps fv{device="a"} alone, and counts the family refused. A family
 * the groups do not select is claimed too: a later selected family of
 * its name is refused as a scrape refuses it. */
static void test_refused_family_not_processed(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: fv, statistics: [{name: f_r, type: range}]}\n"
		 "    - {name: h, select: hv, statistics: [{name: h_r, type: range}]}\n");
	struct stage_reply r;
	(void)state;

	for (int i = 1; i <= 3; i++) {
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] = (struct item){"fv", BS_GAUGE, "a", u64v(i)};
		pass_items[1] = (struct item){"fv", BS_GAUGE, "b", u64v(100 + i)};
		pass_items[2] = (struct item){"hv", BS_COUNTER, "c", u64v(i)}; /* hv, hv_total */
		pass_items[3] = (struct item){"hv", BS_GAUGE, "d", u64v(i)};   /* hv: taken */
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(i));
		p->in = (struct stage_input){0};
	}
	processing_iface(p, "GET", "", NULL, false, S(10), &r);
	assert_string_equal(r.text.p, "g/0 fv{device=\"a\"}\n");
	textbuf_free(&r.text);
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "f_r 3 1 2.000 3\n");
	free(text);
	text = metrics(p);
	has(text, "binstat_processing_dropped_total{reason=\"duplicate_family\"} 6\n");
	free(text);
	/* The scrape's emitter serves the same: fv{device="a"} alone. */
	struct capture c;
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	items_collect(NULL, 0, &c.em.pub, 0);
	const char *out = capture_end(&c);
	has(out, "fv{device=\"a\"} 3\n");
	assert_null(strstr(out, "device=\"b\""));
	assert_null(strstr(out, "device=\"d\""));
	capture_free(&c);
	done(p);
}

/* A list's X past 2^53, by
 * hand. entries_max 2, range_min 0; X: -1 (below the range), 5 (missed
 * below A), A = 2^60 + 1 twice, 2^60 + 100 (missed between), B = 2^60 +
 * 512 (a double), 2^61 (missed above). A and the gaps' bounds 2^60 + 1
 * - 1 = 2^60 and B - 1 are served only where a double holds them: le
 * 2^60 counts -1 and 5 (A was served there as (double)A = 2^60, counting
 * 4), A and B - 1 join B, le B counts 6, +Inf and _count 7. */
static void test_list_bounds_beyond_doubles(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: lv\n"
				    "      statistics: [{name: l, type: list, entries_max: 2, "
				    "range_min: 0}]\n");
	static const int64_t x[] = {
	    (1ll << 60) + 1, (1ll << 60) + 1, (1ll << 60) + 512, (1ll << 60) + 100, 5, -1,
	    1ll << 61};
	static const char *const want =
	    "l_bucket{device=\"a\",source_metric=\"lv\",le=\"1.152921504606847e+18\"} 2\n"
	    "l_bucket{device=\"a\",source_metric=\"lv\",le=\"1.1529215046068475e+18\"} 6\n"
	    "l_bucket{device=\"a\",source_metric=\"lv\",le=\"+Inf\"} 7\n";
	(void)state;

	for (int k = 0; k < 7; k++)
		tick1(p, 1 + k, (struct item){"lv", BS_GAUGE, "a", i64v(x[k])});
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "l 0x1000000000000001 2\nl 0x1000000000000200 1\n");
	free(text);
	text = metrics(p);
	has(text, want);
	has(text, "l_count{device=\"a\",source_metric=\"lv\"} 7\n");
	const char *sum = strstr(text, "l_sum{device=\"a\",source_metric=\"lv\"} ");
	assert_non_null(sum);
	double v = strtod(strchr(sum, '}') + 2, NULL); /* 6 * 2^60 + 619, as a double */
	assert_true(fabs(v - 6.917529027641083e+18) <= 1024);
	free(text);
	done(p);
}

/* Item C: a series written twice a pass, the first a NaN. A scrape
 * serves the NaN and refuses the second; the processing skipped the NaN
 * and took the second (9 here, so r 3 5 8.333 11). Now a NaN first is
 * that pass's sample, not_a_number, and the second a duplicate; a NaN
 * second is a duplicate only. */
static void test_nan_first_of_duplicate(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: nv, statistics: [{name: r, type: range}]}\n");
	static const double first[] = {5, NAN, 11}, second[] = {7, 9, NAN};
	(void)state;

	for (int i = 0; i < 3; i++) {
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] =
		    (struct item){"nv", BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = first[i]}};
		pass_items[1] =
		    (struct item){NULL, BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = second[i]}};
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(1 + i));
		p->in = (struct stage_input){0};
	}
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "r 2 5 8.000 11\n");
	free(text);
	text = metrics(p);
	has(text, "binstat_processing_dropped_total{reason=\"duplicate_series\"} 3\n");
	has(text, "binstat_processing_dropped_total{reason=\"not_a_number\"} 1\n");
	free(text);
	/* The scrape's emitter, over the second pass's collect: the NaN. */
	struct capture c;
	memset(pass_items, 0, sizeof(pass_items));
	pass_items[0] = (struct item){"nv", BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = NAN}};
	pass_items[1] = (struct item){NULL, BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = 9}};
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	items_collect(NULL, 0, &c.em.pub, 0);
	has(capture_end(&c), "nv{device=\"a\"} NaN\n");
	assert_int_equal(capture_drops(&c, "duplicate_series"), 1);
	capture_free(&c);
	done(p);
}

/* Item B: a collector that writes ov{a="1",b="2"} and then
 * ov{b="2",a="1"} in one pass, the orders swapped each pass. A scrape
 * takes them as one series (the second a duplicate_series); the
 * processing kept two sources, g/0 and g/1, one per order. Now one
 * source, whichever order a pass writes first, the second a duplicate:
 * the increases of the first writes, 10 each. */
static int order_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	static const struct bs_label ab[] = {{"a", "1"}, {"b", "2"}},
				     ba[] = {{"b", "2"}, {"a", "1"}};
	int k = *(int *)ctx;
	(void)i, (void)wait_ns;

	bs_family(e, "ov", BS_GAUGE, NULL, "test");
	bs_sample_u64(e, k % 2 ? ab : ba, 2, 10 * (uint64_t)k);
	bs_sample_u64(e, k % 2 ? ba : ab, 2, 1000 + 10 * (uint64_t)k);
	return 0;
}

static void test_label_order_one_source(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: ov, x: delta, statistics: [{name: r, type: "
		 "range}]}\n");
	struct stage_reply r;
	int k;
	(void)state;

	for (k = 1; k <= 4; k++) {
		p->in = (struct stage_input){.ctx = &k, .n = 1, .collect = order_collect};
		sampler_tick(p, S(k));
		p->in = (struct stage_input){0};
	}
	processing_iface(p, "GET", "", NULL, false, S(10), &r);
	assert_string_equal(r.text.p, "g/0 ov{a=\"1\",b=\"2\"}\n");
	textbuf_free(&r.text);
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "r 3 10 10.000 10\n");
	free(text);
	text = metrics(p);
	has(text, "binstat_processing_dropped_total{reason=\"duplicate_series\"} 4\n");
	free(text);
	/* The scrape's emitter, over one collect: one series, one duplicate. */
	struct capture c;
	k = 2;
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	order_collect(&k, 0, &c.em.pub, 0);
	has(capture_end(&c), "ov{b=\"2\",a=\"1\"} 20\n");
	assert_int_equal(capture_drops(&c, "duplicate_series"), 1);
	capture_free(&c);
	done(p);
}

/* Item D: three X of 9e18. Their total passes the s64 range: the
 * kernel's range wrapped it (average -2.8e18, the sign wrong); it is now
 * kept in 128 bits, the average exact in the data file and on /metrics.
 * A products total stays at INT64_MAX (it wrapped negative), each pair
 * it could not take counted: hits_saturated=2 in the definition line,
 * saturated 2 on /metrics. */
static void test_totals_past_s64(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: big\n"
				    "      statistics:\n"
				    "        - {name: r, type: range}\n"
				    "        - {name: v, type: value, mode: products}\n");
	(void)state;

	for (int k = 0; k < 3; k++)
		tick1(p, 1 + k, (struct item){"big", BS_GAUGE, "a", i64v(9000000000000000000ll)});
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "r 3 9000000000000000000 9000000000000000000.000 "
				  "9000000000000000000\n"
				  "v 9223372036854775807\n");
	free(text);
	text = data(p, "g/0/definition");
	has(text, "name=v on=1 type=value range_min=-9223372036854775808 "
		  "range_max=9223372036854775807 mode=products hits_out_of_range=0 "
		  "hits_saturated=2 data=");
	assert_null(strstr(text,
			   "name=r on=1 type=range range_min=-9223372036854775808 "
			   "range_max=9223372036854775807 hits_out_of_range=0 hits_saturated"));
	free(text);
	text = metrics(p);
	has(text, "r_avg{device=\"a\",source_metric=\"big\"} 9e+18\n");
	has(text, "v{device=\"a\",source_metric=\"big\"} 9223372036854775807\n");
	has(text, "binstat_processing_dropped_total{reason=\"saturated\"} 2\n");
	free(text);
	done(p);
}

/* Item D: the data file's average of a 128-bit total: acc * 1000 would
 * not fit 128 bits, so it is rounded from the whole part and the
 * remainder (half away from zero). */
static void test_range_average_rounding(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: big\n"
				    "      statistics: [{name: r, type: range}]\n");
	static const int64_t x[] = {INT64_MIN, INT64_MIN, INT64_MIN + 1};
	(void)state;

	for (int k = 0; k < 3; k++)
		tick1(p, 1 + k, (struct item){"big", BS_GAUGE, "a", i64v(x[k])});
	char *text = data(p, "g/0/data");
	/* (3 * -2^63 + 1) / 3 = -2^63 + 0.333 */
	assert_string_equal(text, "r 3 -9223372036854775808 -9223372036854775807.667 "
				  "-9223372036854775807\n");
	free(text);
	done(p);
}

/* Every bucket of family fam's device=dev series, read back from the
 * scrape: each le counts exactly the values in xs at most le (compared in
 * long double, which holds every s64, u64 and double exactly), +Inf and
 * _count all n, _sum their sum (a double's rounding apart). */
static void hist_exact(const char *text, const char *fam, const char *dev, const long double *xs,
		       size_t n)
{
	char head[128], tail[128];
	long double sum = 0;
	const char *at = text;
	bool inf = false;

	snprintf(head, sizeof(head), "%s_bucket{device=\"%s\",", fam, dev);
	while ((at = strstr(at, head))) {
		const char *le = strstr(at, "le=\"");
		assert_non_null(le);
		char *end;
		double b = strncmp(le + 4, "+Inf", 4) == 0 ? INFINITY : strtod(le + 4, &end);
		unsigned long long got = strtoull(strstr(le, "} ") + 2, NULL, 10), want = 0;
		for (size_t i = 0; i < n; i++)
			want += xs[i] <= (long double)b;
		if (got != want)
			fail_msg("%s device=%s le %.17g counts %llu, the values up to it are %llu",
				 fam, dev, b, got, want);
		inf |= b == INFINITY;
		at = le;
	}
	assert_true(inf);
	snprintf(tail, sizeof(tail), "%s_count{device=\"%s\",source_metric=\"xv\"} %zu\n", fam, dev,
		 n);
	has(text, tail);
	for (size_t i = 0; i < n; i++)
		sum += xs[i];
	snprintf(tail, sizeof(tail), "%s_sum{device=\"%s\",source_metric=\"xv\"} ", fam, dev);
	at = strstr(text, tail);
	assert_non_null(at);
	long double v = strtod(at + strlen(tail), NULL);
	assert_true(fabsl(v - sum) <= fabsl(sum) * 1e-15L);
}

/* Through the sampler, a stats(3) histogram's le
 * past 2^53 is served only where a double holds it, else its region
 * joins the next. u (u64): crhist exp 0..2^62 by 2, whose bound 2^61 - 2
 * was le 2^61 counting 1 of the 3 values up to it (now 2^55 - 2 ..
 * 2^62 - 2 join the open last bucket, at 2^64); drhist [0, 10) with
 * ubound_inf, UINT64_MAX served at 2^64; dvhist 2^53, 2^53 + 2, the gap
 * {2^53 + 1} joining 2^53 + 2 (it was merged into le 2^53). s (s64):
 * drhist [0, 10) with lbound_inf and ubound_inf: INT64_MAX was left out of
 * le 2^63. b: drhist [0, 2^53 + 2) [2^53 + 2, 2^53 + 8), served as
 * le 2^53 with its 2^53 + 1. Each failed before. */
static void test_template_bounds_beyond_doubles(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: u, select: 'xv{device=\"u\"}', x: value,\n"
		 "       template: {name: ut, dtype: u64, stats: [\n"
		 "         {crhist: {scheme: exp, lb: 0, ub: 4611686018427387904, stepbase: 2}},\n"
		 "         {drhist: {buckets: [[0, 10]], ubound_inf: true}},\n"
		 "         {dvhist: {values: [9007199254740992, 9007199254740994]}}]}}\n"
		 "    - {name: s, select: 'xv{device=\"s\"}', x: value,\n"
		 "       template: {name: st, stats: [\n"
		 "         {drhist: {buckets: [[0, 10]], lbound_inf: true, ubound_inf: true}}]}}\n"
		 "    - {name: b, select: 'xv{device=\"b\"}', x: value,\n"
		 "       template: {name: bt, stats: [{drhist: {buckets: [[0, 9007199254740994],\n"
		 "         [9007199254740994, 9007199254741000]]}}]}}\n");
	static const uint64_t u[] = {(1ull << 61) - 1, 1ull << 61,	 (1ull << 61) + 1, 5,
				     (1ull << 53) + 1, (1ull << 53) + 2, UINT64_MAX};
	static const int64_t sv[] = {
	    INT64_MIN, 3, 10, (1ll << 53) + 1, INT64_MAX - 1, INT64_MAX, (1ll << 53) + 2};
	static const int64_t b[] = {5,
				    1ll << 53,
				    (1ll << 53) + 1,
				    (1ll << 53) + 1,
				    (1ll << 53) + 2,
				    (1ll << 53) + 7,
				    (1ll << 53) + 8};
	long double ux[7], sx[7], bx[7];
	(void)state;

	for (int k = 0; k < 7; k++) {
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] = (struct item){"xv", BS_GAUGE, "u", u64v(u[k])};
		pass_items[1] = (struct item){NULL, BS_GAUGE, "s", i64v(sv[k])};
		pass_items[2] = (struct item){NULL, BS_GAUGE, "b", i64v(b[k])};
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(1 + k));
		p->in = (struct stage_input){0};
		ux[k] = u[k], sx[k] = sv[k], bx[k] = b[k];
	}
	char *text = metrics(p);
	hist_exact(text, "ut_crhist", "u", ux, 7);
	hist_exact(text, "ut_drhist", "u", ux, 7);
	hist_exact(text, "ut_dvhist", "u", ux, 7);
	hist_exact(text, "st_drhist", "s", sx, 7);
	hist_exact(text, "bt_drhist", "b", bx, 7);
	/* the buckets served past 2^53, by hand */
	has(text,
	    "ut_crhist_bucket{device=\"u\",source_metric=\"xv\",le=\"18014398509481982.0\"} 3\n"
	    "ut_crhist_bucket{device=\"u\",source_metric=\"xv\",le=\"1.8446744073709552e+19\"} "
	    "7\n");
	has(text, "ut_drhist_bucket{device=\"u\",source_metric=\"xv\",le=\"9.0\"} 1\n"
		  "ut_drhist_bucket{device=\"u\",source_metric=\"xv\",le=\"1.8446744073709552e+"
		  "19\"} 7\n");
	has(text,
	    "ut_dvhist_bucket{device=\"u\",source_metric=\"xv\",le=\"9007199254740992.0\"} 1\n"
	    "ut_dvhist_bucket{device=\"u\",source_metric=\"xv\",le=\"9007199254740994.0\"} 3\n");
	has(text,
	    "st_drhist_bucket{device=\"s\",source_metric=\"xv\",le=\"9.0\"} 2\n"
	    "st_drhist_bucket{device=\"s\",source_metric=\"xv\",le=\"9.223372036854776e+18\"} 7\n");
	has(text,
	    "bt_drhist_bucket{device=\"b\",source_metric=\"xv\",le=\"9.223372036854776e+18\"} 7\n");
	free(text);
	/* the data file keeps every bucket */
	text = data(p, "b/0/data");
	has(text, "bt_drhist [0,9007199254740994) 4\n");
	free(text);
	done(p);
}

/* A template's second VOI through the sampler: the faults counter of
 * device a feeds the blob of ev{device="a"}, in passes where it comes
 * after the blob's own series and one where it comes before (the blob
 * exists from the first pass on); a second write of it in one pass is a
 * duplicate, as a scrape refuses it; device b has no blob. Deltas 4 and
 * 6 of faults (the one written twice: its first), 1 and 1 of ev. */
static void test_second_voi_by_the_sampler(void **state)
{
	struct processing *p = make(
	    "processing:\n  groups:\n"
	    "    - name: g\n      select: ev_total\n      x: delta\n"
	    "      template: {name: t, vois: [{name: ev, stats: [sum]},\n"
	    "                 {name: flt, series: flt_total, dtype: u64, stats: [sum, max]}]}\n");
	static const uint64_t ev[] = {10, 11, 12}, flt[] = {100, 104, 110};
	(void)state;

	for (int i = 0; i < 3; i++) {
		struct item e = {"ev_total", BS_COUNTER, "a", u64v(ev[i])};
		memset(pass_items, 0, sizeof(pass_items));
		pass_items[0] = (struct item){"flt_total", BS_COUNTER, "a", u64v(flt[i])};
		pass_items[1] = (struct item){NULL, BS_COUNTER, "a", u64v(999)}; /* a duplicate */
		pass_items[2] = (struct item){NULL, BS_COUNTER, "b", u64v(7)};	 /* no blob */
		if (i < 2) { /* the blob's own series first */
			memmove(&pass_items[1], &pass_items[0], 3 * sizeof(pass_items[0]));
			pass_items[0] = e;
		} else {
			pass_items[3] = e;
		}
		p->in = (struct stage_input){.n = 1, .collect = items_collect};
		sampler_tick(p, S(1 + i));
		p->in = (struct stage_input){0};
	}
	char *text = data(p, "g/0/data");
	assert_string_equal(text, "t_ev_sum 2\nt_flt_sum 10\nt_flt_max 6\n");
	free(text);
	assert_int_equal(p->count.duplicate_series, 3);
	assert_int_equal(p->srcs.n, 1);
	done(p);
}

/* Each integer dtype of a template with its limits: s32, u32, long
 * (64 bits here) and ulong VOIs take 2^31 - 1 twice, -5, 2^32 and 3; a
 * value a dtype cannot hold is counted as out_of_range, a SUM stops at
 * the dtype's limit (errs), and a fetch reads each in its own dtype
 * only. */
static void test_every_integer_dtype(void **state)
{
	static const char *const dts[] = {"s32", "u32", "long", "ulong"};
	char yaml[1024];
	size_t off = (size_t)snprintf(yaml, sizeof(yaml), "processing:\n  groups:\n");
	(void)state;

	for (size_t i = 0; i < 4; i++)
		off += (size_t)snprintf(yaml + off, sizeof(yaml) - off,
					"    - name: g%zu\n      select: big\n      template: "
					"{name: t_%s, dtype: %s, stats: [sum, max, min]}\n",
					i, dts[i], dts[i]);
	struct processing *p = make(yaml);
	tick1(p, 1, (struct item){"big", BS_GAUGE, "a", i64v(2147483647)});
	tick1(p, 2, (struct item){"big", BS_GAUGE, "a", i64v(2147483647)});
	tick1(p, 3, (struct item){"big", BS_GAUGE, "a", i64v(-5)});
	tick1(p, 4, (struct item){"big", BS_GAUGE, "a", u64v(4294967296)});
	tick1(p, 5, (struct item){"big", BS_GAUGE, "a", i64v(3)});
	static const struct {
		const char *path, *want;
	} cases[] = {
	    {"g0/0/data", "t_s32_sum 2147483645\nt_s32_max 2147483647\nt_s32_min -5\n"},
	    {"g1/0/data", "t_u32_sum 4294967295\nt_u32_max 2147483647\nt_u32_min 3\n"},
	    {"g2/0/data", "t_long_sum 8589934588\nt_long_max 4294967296\nt_long_min -5\n"},
	    {"g3/0/data", "t_ulong_sum 8589934593\nt_ulong_max 4294967296\nt_ulong_min 3\n"},
	    {"g0/0/fetch/0/SUM/s32", "2147483645\n"},
	    {"g1/0/fetch/0/MAX/u32", "2147483647\n"},
	    {"g2/0/fetch/0/MIN/slong", "-5\n"},
	    {"g3/0/fetch/0/SUM/ulong", "8589934593\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = data(p, cases[i].path);
		assert_string_equal(text, cases[i].want);
		free(text);
	}
	static const char *const refused[][2] = {
	    {"g0/0/fetch/0/SUM/s64", "EFTYPE: the statistic's data type is s32, not s64\n"},
	    {"g1/0/fetch/0/SUM/u64", "EFTYPE: the statistic's data type is u32, not u64\n"},
	    {"g2/0/fetch/0/SUM/s64", "EFTYPE: the statistic's data type is slong, not s64\n"},
	    {"g3/0/fetch/0/SUM/u32", "EFTYPE: the statistic's data type is ulong, not u32\n"},
	};
	for (size_t i = 0; i < 4; i++) {
		int status;
		char *text = iface_as(p, "GET", refused[i][0], NULL, false, S(100), &status);
		assert_int_equal(status, 400);
		assert_string_equal(text, refused[i][1]);
		free(text);
	}
	char *text = data(p, "g0/0/data?format=json");
	has(text, "\"SUM\":{\"errs\":1,\"val\":2147483645}");
	free(text);
	text = data(p, "g1/0/data?format=json");
	has(text, "\"SUM\":{\"errs\":1,\"val\":4294967295}");
	free(text);
	text = metrics(p);
	/* s32: 2^32; u32: -5 and 2^32; ulong: -5 */
	has(text, "binstat_processing_dropped_total{reason=\"out_of_range\"} 4\n");
	has(text, "t_u32_sum_of_values{device=\"a\",source_metric=\"big\"} 4294967295\n");
	free(text);
	done(p);
}

/* A histogram of 32-bit counts: its key names it (CRHIST32), a fetch
 * names its dtype crhist32, and once a count reaches its end /metrics
 * says by how many updates it is short while the histogram stays one
 * whose buckets add up to its _count. */
static void test_counts32_on_metrics(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - name: g\n      select: big\n"
				    "      template: {name: t, stats: [sum, {crhist: {scheme: usr, "
				    "bounds: [0, 10], counts: 32}}, {dvhist: {values: [1]}}]}\n");
	int status;
	(void)state;

	tick1(p, 1, (struct item){"big", BS_GAUGE, "a", i64v(12)});
	char *text = metrics(p);
	has(text, "t_crhist_saturated_total{device=\"a\",source_metric=\"big\"} 0\n");
	assert_null(strstr(text, "t_dvhist_saturated")); /* 64-bit counts */
	free(text);
	struct vstats_voi *voi = &p->src[0]->voi;
	assert_int_equal(
	    vstats_update_n(voi, (struct vstats_value){VSTATS_INT, {.i = 12}}, UINT32_MAX), 0);
	text = metrics(p);
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"9.0\"} 0\n");
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"+Inf\"} "
		  "4294967295\n");
	has(text, "t_crhist_count{device=\"a\",source_metric=\"big\"} 4294967295\n");
	has(text, "t_crhist_saturated_total{device=\"a\",source_metric=\"big\"} 1\n");
	has(text, "t_dvhist_out_of_band_total{device=\"a\",source_metric=\"big\"} 4294967296\n");
	free(text);
	text = data(p, "g/0/data?format=json");
	has(text, "\"CRHIST32\":{\"errs\":1,");
	has(text, "\"cnt\":4294967295}");
	free(text);
	text = iface_as(p, "GET", "g/0/fetch/0/HIST/s64", NULL, false, S(100), &status);
	assert_string_equal(text, "EFTYPE: the statistic's data type is crhist32, not s64\n");
	free(text);
	done(p);
}

/* A q_s64 VOI of precision 2: an integer X exactly, a double X rounded
 * to a quarter halves away from zero (1.125 to 1.25, -0.375 to -0.5);
 * the JSON, the data file and a fetch print it as Q_TOSTR does, /metrics
 * as a double; a histogram's bounds are its numbers. */
static void test_q_dtype_through_the_stage(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - name: g\n      select: big\n"
		 "      template: {name: t, dtype: q_s64, precision: 2, stats: [sum, "
		 "max, {crhist: {scheme: usr, bounds: [0, 0.5, 1.25]}}]}\n");
	int status;
	(void)state;

	tick1(p, 1, (struct item){"big", BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = 1.125}});
	tick1(p, 2, (struct item){"big", BS_GAUGE, "a", {.kind = BS_VAL_F64, .f = -0.375}});
	tick1(p, 3, (struct item){"big", BS_GAUGE, "a", i64v(2)});
	char *text = data(p, "g/0/data");
	has(text, "t_sum 2.75\nt_max 2.00\n");
	has(text, "t_crhist [0.50,1.25) 0\nt_crhist [1.25,");
	free(text);
	text = data(p, "g/0/data?format=json");
	has(text, "\"SUM\":{\"errs\":0,\"val\":2.75}");
	has(text, "{\"lb\":0.50,\"ub\":1.25,\"cnt\":0}");
	free(text);
	text = data(p, "g/0/fetch/0/SUM/q_s64");
	assert_string_equal(text, "2.75\n");
	free(text);
	text = iface_as(p, "GET", "g/0/fetch/0/SUM/s64", NULL, false, S(100), &status);
	assert_string_equal(text, "EFTYPE: the statistic's data type is q_s64, not s64\n");
	free(text);
	text = metrics(p);
	has(text, "t_sum_of_values{device=\"a\",source_metric=\"big\"} 2.75\n");
	/* cumulative: -0.5 below the first bound, 1.25 and 2 in the last */
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"-0.25\"} 1\n");
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"0.25\"} 1\n");
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"1.0\"} 1\n");
	has(text, "t_crhist_bucket{device=\"a\",source_metric=\"big\",le=\"+Inf\"} 3\n");
	has(text, "t_crhist_count{device=\"a\",source_metric=\"big\"} 3\n");
	has(text, "t_crhist_out_of_band_total{device=\"a\",source_metric=\"big\"} 1\n");
	free(text);
	done(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_large_u64_delta_exact),
	    cmocka_unit_test(test_i64_and_scaled_exact),
	    cmocka_unit_test(test_out_of_s64_counted_not_clamped),
	    cmocka_unit_test(test_sum_saturates),
	    cmocka_unit_test(test_duplicate_series_first_only),
	    cmocka_unit_test(test_refused_family_not_processed),
	    cmocka_unit_test(test_list_bounds_beyond_doubles),
	    cmocka_unit_test(test_nan_first_of_duplicate),
	    cmocka_unit_test(test_label_order_one_source),
	    cmocka_unit_test(test_totals_past_s64),
	    cmocka_unit_test(test_range_average_rounding),
	    cmocka_unit_test(test_template_bounds_beyond_doubles),
	    cmocka_unit_test(test_second_voi_by_the_sampler),
	    cmocka_unit_test(test_every_integer_dtype),
	    cmocka_unit_test(test_counts32_on_metrics),
	    cmocka_unit_test(test_q_dtype_through_the_stage),
	};
	return cmocka_run_group_tests_name("processing_ints", tests, NULL, NULL);
}
