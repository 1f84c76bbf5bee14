/* The emitter and writer: exact output in both formats, and every rule that
 * refuses input (counted by reason, never written). */
#include "helpers.h"

#include <math.h>
#include <pthread.h>

static struct bs_emitter *E(struct capture *c)
{
	return &c->em.pub;
}

static void test_counter_both_formats(void **state)
{
	struct capture c;
	struct bs_label l = {"cpu", "0"};
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "x_seconds_total", BS_COUNTER, "seconds", "Time \"spent\".\n");
	bs_sample_u64(E(&c), &l, 1, UINT64_MAX);
	assert_string_equal(capture_end(&c), "# HELP x_seconds_total Time \"spent\".\\n\n"
					     "# TYPE x_seconds_total counter\n"
					     "x_seconds_total{cpu=\"0\"} 18446744073709551615\n");
	capture_free(&c);

	capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
	bs_family(E(&c), "x_seconds", BS_COUNTER, "seconds", "Time \"spent\".\n");
	bs_sample_u64(E(&c), &l, 1, 7);
	assert_string_equal(capture_end(&c), "# HELP x_seconds Time \\\"spent\\\".\\n\n"
					     "# TYPE x_seconds counter\n"
					     "# UNIT x_seconds seconds\n"
					     "x_seconds_total{cpu=\"0\"} 7\n");
	capture_free(&c);
}

static void test_histogram(void **state)
{
	static const double up[] = {0, 1, 2};
	static const uint64_t n[] = {1, 2, 3};
	struct bs_histogram h = {3, up, n, true, {.kind = BS_VAL_U64, .u = 9}};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
	bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
	assert_int_equal(E(&c)->ops->histogram(E(&c), NULL, 0, &h), 0);
	assert_string_equal(capture_end(&c), "# HELP h \n# TYPE h histogram\n"
					     "h_bucket{le=\"0.0\"} 1\n"
					     "h_bucket{le=\"1.0\"} 3\n"
					     "h_bucket{le=\"2.0\"} 6\n"
					     "h_bucket{le=\"+Inf\"} 6\n"
					     "h_count 6\nh_sum 9\n");
	capture_free(&c);

	h.has_sum = false;
	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
	E(&c)->ops->histogram(E(&c), NULL, 0, &h);
	assert_non_null(strstr(capture_end(&c), "h_bucket{le=\"+Inf\"} 6\nh_count 6\n"));
	capture_free(&c);

	/* OpenMetrics: without a sum there is no _count either. */
	capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
	bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
	E(&c)->ops->histogram(E(&c), NULL, 0, &h);
	assert_null(strstr(capture_end(&c), "h_count"));
	capture_free(&c);
}

/* Bounds are formatted once and reused: only while they are bit for bit
 * the ones formatted, even when a collector rewrites its array in place. */
static void test_histogram_bounds_reused(void **state)
{
	double up[] = {0.5, 1e300};
	static const uint64_t n[] = {1, 1};
	struct bs_histogram h = {2, up, n, false, {0}};
	struct bs_label a = {"s", "a"}, b = {"s", "b"}, d = {"s", "d"}, x = {"s", "x"};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
	assert_int_equal(E(&c)->ops->histogram(E(&c), &a, 1, &h), 0);
	assert_int_equal(E(&c)->ops->histogram(E(&c), &b, 1, &h), 0);
	up[0] = -0.0; /* equal to 0.0, but written otherwise */
	assert_int_equal(E(&c)->ops->histogram(E(&c), &d, 1, &h), 0);
	up[0] = NAN;
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), &x, 1, &h), 0);
	bs_family(E(&c), "g", BS_HISTOGRAM, NULL, "");
	up[0] = -0.0;
	h.nbuckets = 1;
	assert_int_equal(E(&c)->ops->histogram(E(&c), &a, 1, &h), 0);
	const char *out = capture_end(&c);
	assert_non_null(strstr(out, "h_bucket{s=\"a\",le=\"0.5\"} 1\n"
				    "h_bucket{s=\"a\",le=\"1e+300\"} 2\n"));
	assert_non_null(strstr(out, "h_bucket{s=\"b\",le=\"0.5\"} 1\n"
				    "h_bucket{s=\"b\",le=\"1e+300\"} 2\n"));
	assert_non_null(strstr(out, "h_bucket{s=\"d\",le=\"-0.0\"} 1\n"
				    "h_bucket{s=\"d\",le=\"1e+300\"} 2\n"));
	assert_null(strstr(out, "s=\"x\""));
	assert_non_null(strstr(out, "g_bucket{s=\"a\",le=\"-0.0\"} 1\n"
				    "g_bucket{s=\"a\",le=\"+Inf\"} 1\n"));
	assert_int_equal(capture_drops(&c, "invalid_value"), 1);
	capture_free(&c);
}

static void test_histogram_refused(void **state)
{
	static const double unordered[] = {1, 1};
	static const double nan_bound[] = {NAN};
	static const uint64_t n[] = {UINT64_MAX, 1};
	static const double ok[] = {1, 2};
	struct bs_label le = {"le", "x"};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
	struct bs_histogram h1 = {2, unordered, n, false, {0}};
	struct bs_histogram h2 = {1, nan_bound, n, false, {0}};
	struct bs_histogram h3 = {2, ok, n, false, {0}}; /* counts overflow */
	struct bs_histogram h4 = {0, ok, n, false, {0}};
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), NULL, 0, &h1), 0);
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), NULL, 0, &h2), 0);
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), NULL, 0, &h3), 0);
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), NULL, 0, &h4), 0);
	h3.count = (const uint64_t[]){1, 1};
	assert_int_not_equal(E(&c)->ops->histogram(E(&c), &le, 1, &h3), 0);
	assert_int_equal(capture_drops(&c, "invalid_value"), 4);
	assert_int_equal(capture_drops(&c, "invalid_label"), 1);
	assert_string_equal(capture_end(&c), ""); /* no header for an empty family */
	capture_free(&c);
}

static void test_summary_info_stateset_unknown(void **state)
{
	static const double q[] = {0.5, 1};
	static const double v[] = {1.5, 3};
	static const char *const st[] = {"a", "b\""};
	static const bool on[] = {false, true};
	struct bs_summary s = {2, q, v, 4, {.kind = BS_VAL_F64, .f = 6.5}};
	struct bs_label info = {"v", "1"};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
	bs_family(E(&c), "s", BS_SUMMARY, NULL, "S");
	E(&c)->ops->summary(E(&c), NULL, 0, &s);
	bs_family(E(&c), "i_info", BS_INFO, NULL, "I");
	bs_info(E(&c), &info, 1);
	bs_family(E(&c), "st", BS_STATESET, NULL, "T");
	E(&c)->ops->stateset(E(&c), NULL, 0, st, on, 2);
	bs_family(E(&c), "u", BS_UNKNOWN, NULL, "U");
	bs_sample_f64(E(&c), NULL, 0, -0.5);
	assert_string_equal(capture_end(&c), "# HELP s S\n# TYPE s summary\n"
					     "s{quantile=\"0.5\"} 1.5\ns{quantile=\"1.0\"} 3\n"
					     "s_sum 6.5\ns_count 4\n"
					     "# HELP i I\n# TYPE i info\ni_info{v=\"1\"} 1\n"
					     "# HELP st T\n# TYPE st stateset\n"
					     "st{st=\"a\"} 0\nst{st=\"b\\\"\"} 1\n"
					     "# HELP u U\n# TYPE u unknown\nu -0.5\n");
	capture_free(&c);

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "i", BS_INFO, NULL, "I");
	bs_info(E(&c), &info, 1);
	bs_family(E(&c), "u", BS_UNKNOWN, NULL, "U");
	bs_sample_f64(E(&c), NULL, 0, 1);
	assert_string_equal(capture_end(&c), "# HELP i_info I\n# TYPE i_info gauge\n"
					     "i_info{v=\"1\"} 1\n"
					     "# HELP u U\n# TYPE u untyped\nu 1\n");
	capture_free(&c);
}

static void test_duplicates(void **state)
{
	struct bs_label ab[] = {{"a", "1"}, {"b", "2"}};
	struct bs_label ba[] = {{"b", "2"}, {"a", "1"}};
	struct bs_label twice[] = {{"a", "1"}, {"a", "2"}};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "g", BS_GAUGE, NULL, "");
	assert_int_equal(bs_sample_u64(E(&c), ab, 2, 1), 0);
	assert_int_equal(bs_sample_u64(E(&c), ba, 2, 2), -EEXIST); /* order does not matter */
	assert_int_equal(bs_sample_u64(E(&c), twice, 2, 2), -EINVAL);
	assert_int_equal(bs_family(E(&c), "g", BS_GAUGE, NULL, ""), -EEXIST);
	/* A counter c claims c_total: a gauge of that name clashes. */
	assert_int_equal(bs_family(E(&c), "c", BS_COUNTER, NULL, ""), 0);
	assert_int_equal(bs_family(E(&c), "c_total", BS_GAUGE, NULL, ""), -EEXIST);
	assert_int_equal(bs_family(E(&c), "hh", BS_HISTOGRAM, NULL, ""), 0);
	assert_int_equal(bs_family(E(&c), "hh_bucket", BS_GAUGE, NULL, ""), -EEXIST);
	assert_int_equal(bs_sample_u64(E(&c), NULL, 0, 1), -EINVAL); /* no open family */
	assert_int_equal(capture_drops(&c, "duplicate_series"), 1);
	assert_int_equal(capture_drops(&c, "duplicate_family"), 3);
	assert_int_equal(capture_drops(&c, "no_family"), 1);
	assert_string_equal(capture_end(&c), "# HELP g \n# TYPE g gauge\ng{a=\"1\",b=\"2\"} 1\n");
	capture_free(&c);
}

/* Label names seen before are compared, not checked again: a name
 * rewritten in place, at the same address, is checked as a new one. */
static void test_names_rewritten_in_place(void **state)
{
	char n0[16] = "a", n1[16] = "b";
	struct bs_label l[] = {{n0, "1"}, {n1, "2"}};
	struct bs_label pa = {"a", "p"}, pb = {"b", "p"}, own = {"b", "3"};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "g", BS_GAUGE, NULL, "");
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 1), 0);
	snprintf(n1, sizeof(n1), "%s", "a"); /* the name before it */
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 2), -EINVAL);
	snprintf(n1, sizeof(n1), "%s", "__b");
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 3), -EINVAL);
	snprintf(n1, sizeof(n1), "%s", "b-c");
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 4), -EINVAL);
	snprintf(n1, sizeof(n1), "%s", "bc");
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 5), 0);
	snprintf(n0, sizeof(n0), "%s", "bc"); /* the name after it, known there */
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 6), -EINVAL);
	snprintf(n0, sizeof(n0), "%s", "abcdefghij");
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 7), 0);
	snprintf(n0, sizeof(n0), "%s", "abcdefghik"); /* past the first word */
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 8), 0);
	snprintf(n0, sizeof(n0), "%s", "abcdefghi"); /* shorter */
	assert_int_equal(bs_sample_u64(E(&c), l, 2, 9), 0);
	/* A prefix's names are the first known ones. */
	assert_int_equal(E(&c)->ops->prefix(E(&c), &pa, 1), 0);
	assert_int_equal(bs_sample_u64(E(&c), &own, 1, 10), 0);
	assert_int_equal(E(&c)->ops->prefix(E(&c), &pb, 1), 0);
	assert_int_equal(bs_sample_u64(E(&c), &own, 1, 11), -EINVAL);
	assert_int_equal(capture_drops(&c, "invalid_label"), 5);
	assert_string_equal(capture_end(&c), "# HELP g \n# TYPE g gauge\n"
					     "g{a=\"1\",b=\"2\"} 1\n"
					     "g{a=\"1\",bc=\"2\"} 5\n"
					     "g{abcdefghij=\"1\",bc=\"2\"} 7\n"
					     "g{abcdefghik=\"1\",bc=\"2\"} 8\n"
					     "g{abcdefghi=\"1\",bc=\"2\"} 9\n"
					     "g{a=\"p\",b=\"3\"} 10\n");
	capture_free(&c);
}

static void test_refused_families_and_values(void **state)
{
	struct bs_label reserved = {"__name__", "x"};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	assert_int_equal(bs_family(E(&c), "1x", BS_GAUGE, NULL, ""), -EINVAL);
	assert_int_equal(bs_family(E(&c), "x_bytes", BS_GAUGE, "seconds", ""), -EINVAL);
	assert_int_equal(bs_family(E(&c), "x_info", BS_INFO, "info", ""), -EINVAL);
	assert_int_equal(bs_family(E(&c), "a:b", BS_STATESET, NULL, ""), -EINVAL);
	assert_int_equal(bs_family(E(&c), "total", BS_COUNTER, NULL, ""), 0);
	assert_int_equal(bs_sample_i64(E(&c), NULL, 0, -1), -EINVAL);
	assert_int_equal(bs_sample_f64(E(&c), NULL, 0, NAN), -EINVAL);
	assert_int_equal(bs_sample_u64(E(&c), &reserved, 1, 1), -EINVAL);
	assert_int_equal(E(&c)->ops->summary(E(&c), NULL, 0, NULL), -EINVAL);
	assert_int_equal(capture_drops(&c, "invalid_family"), 4);
	assert_int_equal(capture_drops(&c, "invalid_value"), 2);
	assert_int_equal(capture_drops(&c, "invalid_label"), 1);
	assert_int_equal(capture_drops(&c, "wrong_type"), 1);
	capture_end(&c);
	capture_free(&c);
}

static void test_label_repair_and_truncation(void **state)
{
	char *big = malloc(NAMES_LABEL_VALUE_MAX + 100);
	struct bs_label l = {"v", "bad\xff"};
	struct capture c;
	(void)state;

	memset(big, 'x', NAMES_LABEL_VALUE_MAX + 99);
	big[NAMES_LABEL_VALUE_MAX + 99] = '\0';
	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "g", BS_GAUGE, NULL, "");
	bs_sample_u64(E(&c), &l, 1, 1);
	l.value = big;
	bs_sample_u64(E(&c), &l, 1, 2);
	const char *out = capture_end(&c);
	assert_non_null(strstr(out, "g{v=\"bad\xef\xbf\xbd\"} 1\n"));
	assert_int_equal(capture_drops(&c, "invalid_utf8_repaired"), 1);
	assert_int_equal(capture_drops(&c, "label_value_truncated"), 1);
	assert_true(strlen(out) < 2 * NAMES_LABEL_VALUE_MAX);
	capture_free(&c);
	free(big);
}

static void test_drop_reasons_bounded(void **state)
{
	struct capture c;
	char reason[16];
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	for (int i = 0; i < 100; i++) {
		snprintf(reason, sizeof(reason), "r%d", i);
		bs_drop(E(&c), reason, 1);
	}
	bs_drop(E(&c), "Not Valid!", 1);
	assert_int_equal(c.em.ndrops, EMITTER_MAX_REASONS);
	assert_int_equal(capture_drops(&c, "other"), 100 - (EMITTER_MAX_REASONS - 1) + 1);
	capture_end(&c);
	capture_free(&c);
}

static void test_output_cap(void **state)
{
	struct capture c;
	char v[32];
	struct bs_label l = {"i", v};
	int refused = 0;
	(void)state;

	capture_begin(&c, EXPO_TEXT, 200000);
	bs_family(E(&c), "g", BS_GAUGE, NULL, "");
	for (int i = 0; i < 100000; i++) {
		snprintf(v, sizeof(v), "%d", i);
		refused += bs_sample_u64(E(&c), &l, 1, 1) == -ENOBUFS;
	}
	assert_true(refused > 0);
	assert_true(c.sink.overflow);
	assert_true(c.sink.raw_bytes + c.sink.stage_len <= 200000);
	assert_true(c.sink.raw_bytes + c.sink.stage_len > 200000 - 100);
	capture_end(&c);
	capture_free(&c);
}

/* One series of the prefix test: the labels it shares with others, and
 * its own. */
struct prefixed {
	const struct bs_label *pre, *own;
	size_t npre, nown;
};

static int emit_prefixed(struct capture *c, bool use_prefix, const struct prefixed *s,
			 const struct prefixed **held)
{
	struct bs_label all[2 * EMITTER_MAX_LABELS];
	static const double up[] = {1, 2};
	static const uint64_t n[] = {3, 4};
	struct bs_histogram h = {2, up, n, true, {.kind = BS_VAL_U64, .u = 5}};
	static const char *const states[] = {"on", "off"};
	static const bool active[] = {true, false};
	const struct bs_label *l = all;
	size_t nl = s->npre + s->nown;

	if (use_prefix) {
		if (!*held || (*held)->pre != s->pre || (*held)->npre != s->npre)
			E(c)->ops->prefix(E(c), s->pre, s->npre);
		*held = s;
		l = s->own;
		nl = s->nown;
	} else {
		for (size_t i = 0; i < s->npre; i++)
			all[i] = s->pre[i];
		for (size_t i = 0; i < s->nown; i++)
			all[s->npre + i] = s->own[i];
	}
	switch (c->em.type) {
	case BS_HISTOGRAM:
		return E(c)->ops->histogram(E(c), l, nl, &h);
	case BS_STATESET:
		return E(c)->ops->stateset(E(c), l, nl, states, active, 2);
	default:
		return bs_sample_u64(E(c), l, nl, 7);
	}
}

/* Every series written with a prefix is written, refused and counted
 * exactly as with its whole label set. */
static void test_prefix_same_as_whole_labels(void **state)
{
	static const struct bs_label vm1[] = {{"vm", "one"}, {"host", "h\xff"}};
	static const struct bs_label vm2[] = {{"vm", "two"}, {"host", "h"}};
	static const struct bs_label bad[] = {{"vm", "x"}, {"0bad", "y"}};
	static const struct bs_label has_le[] = {{"le", "1"}};
	static const struct bs_label a1[] = {{"a", "1"}}, b2[] = {{"b", "2"}};
	static const struct bs_label cpu0[] = {{"cpu", "0"}}, cpu1[] = {{"cpu", "1"}};
	static const struct bs_label vm_again[] = {{"vm", "dup"}};
	struct bs_label many[EMITTER_MAX_LABELS + 1];
	char names[EMITTER_MAX_LABELS + 1][16];
	char *big = malloc(NAMES_LABEL_VALUE_MAX + 10);
	(void)state;

	memset(big, 'x', NAMES_LABEL_VALUE_MAX + 9);
	big[NAMES_LABEL_VALUE_MAX + 9] = '\0';
	struct bs_label long_value[] = {{"vm", big}};
	for (int i = 0; i <= EMITTER_MAX_LABELS; i++) {
		snprintf(names[i], sizeof(names[i]), "l%d", i);
		many[i] = (struct bs_label){names[i], "v"};
	}
	const struct prefixed gauge[] = {
	    {vm1, cpu0, 2, 1},	      {vm1, cpu1, 2, 1},   {vm1, cpu1, 2, 1}, /* duplicate */
	    {vm2, cpu0, 2, 1},	      {vm2, NULL, 2, 0},   {bad, cpu0, 2, 1},
	    {bad, cpu1, 2, 1},	      {a1, b2, 1, 1},	   {b2, a1, 1, 1}, /* same set */
	    {vm2, vm_again, 2, 1},					   /* a name twice */
	    {long_value, cpu0, 1, 1}, {many, cpu0, 64, 1}, {many, NULL, 64, 0},
	    {many, NULL, 65, 0},      {NULL, cpu0, 0, 1},
	};
	const struct prefixed hist[] = {{vm1, cpu0, 2, 1}, {has_le, cpu0, 1, 1}, {vm2, cpu0, 2, 1}};
	const struct prefixed states_of[] = {{vm1, NULL, 2, 0}, {vm2, NULL, 2, 0}};
	char *out[2];
	struct emitter_drop drops[2][EMITTER_MAX_REASONS];
	size_t ndrops[2];

	for (int use = 0; use < 2; use++) {
		const struct prefixed *held = NULL;
		struct capture c;
		capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
		bs_family(E(&c), "g", BS_GAUGE, NULL, "");
		for (size_t i = 0; i < sizeof(gauge) / sizeof(gauge[0]); i++)
			emit_prefixed(&c, use, &gauge[i], &held);
		/* The prefix stays across families. */
		bs_family(E(&c), "h", BS_HISTOGRAM, NULL, "");
		for (size_t i = 0; i < sizeof(hist) / sizeof(hist[0]); i++)
			emit_prefixed(&c, use, &hist[i], &held);
		bs_family(E(&c), "power", BS_STATESET, NULL, "");
		for (size_t i = 0; i < sizeof(states_of) / sizeof(states_of[0]); i++)
			emit_prefixed(&c, use, &states_of[i], &held);
		if (use) {
			/* Ended: a series has its own labels alone. */
			assert_int_equal(E(&c)->ops->prefix(E(&c), NULL, 0), 0);
			bs_family(E(&c), "after", BS_GAUGE, NULL, "");
			assert_int_equal(bs_sample_u64(E(&c), cpu0, 1, 1), 0);
		}
		out[use] = strdup(capture_end(&c));
		memcpy(drops[use], c.em.drops, sizeof(c.em.drops));
		ndrops[use] = c.em.ndrops;
		capture_free(&c);
	}
	const char *tail = "# TYPE after gauge\nafter{cpu=\"0\"} 1\n";
	assert_non_null(strstr(out[1], tail));
	*strstr(out[1], "# HELP after") = '\0';
	assert_string_equal(out[1], out[0]);
	assert_non_null(strstr(out[0], "g{vm=\"one\",host=\"h\xef\xbf\xbd\",cpu=\"1\"} 7\n"));
	assert_non_null(strstr(out[0], "power{vm=\"two\",host=\"h\",power=\"off\"} 0\n"));
	assert_int_equal(ndrops[1], ndrops[0]);
	for (size_t i = 0; i < ndrops[0]; i++) {
		assert_string_equal(drops[1][i].reason, drops[0][i].reason);
		assert_int_equal(drops[1][i].n, drops[0][i].n);
	}
	free(out[0]);
	free(out[1]);
	free(big);
}

static uint64_t dropped_for(const struct capture *c, const char *reason)
{
	for (size_t i = 0; i < c->em.ndrops; i++)
		if (strcmp(c->em.drops[i].reason, reason) == 0)
			return c->em.drops[i].n;
	return 0;
}

/* Series kept by prefix are still found when the same label set comes
 * again under the same prefix, under its names in another order, split
 * otherwise, or with no prefix (the family then goes on flat); one prefix
 * with thousands of series grows its own table and is found too. */
static void test_by_prefix_finds_duplicates(void **state)
{
	char dom[16], set[16], stat[16];
	struct bs_label pre[2] = {{"domain", dom}, {"set", set}};
	struct bs_label own[1] = {{"stat", stat}};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "xen_stat", BS_GAUGE, NULL, "");
	for (int d = 0; d < 2000; d++) {
		snprintf(dom, sizeof(dom), "d%d", d);
		snprintf(set, sizeof(set), "s%d", d % 7);
		assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 2), 0);
		for (int k = 0; k < 20; k++) {
			snprintf(stat, sizeof(stat), "x%d", k);
			assert_int_equal(bs_sample_u64(E(&c), own, 1, 1), 0);
		}
	}
	/* Again: d5, s5, x3 under the same prefix, reversed, split, whole. */
	snprintf(dom, sizeof(dom), "d5");
	snprintf(set, sizeof(set), "s5");
	snprintf(stat, sizeof(stat), "x3");
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 2), 0);
	assert_int_equal(bs_sample_u64(E(&c), own, 1, 2), -EEXIST);
	struct bs_label reversed[2] = {pre[1], pre[0]};
	assert_int_equal(E(&c)->ops->prefix(E(&c), reversed, 2), 0);
	assert_int_equal(bs_sample_u64(E(&c), own, 1, 2), -EEXIST);
	struct bs_label rest[2] = {pre[1], own[0]};
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 1), 0);
	assert_int_equal(bs_sample_u64(E(&c), rest, 2, 2), -EEXIST);
	assert_int_equal(E(&c)->ops->prefix(E(&c), NULL, 0), 0);
	struct bs_label whole[3] = {pre[0], pre[1], own[0]};
	assert_int_equal(bs_sample_u64(E(&c), whole, 3, 2), -EEXIST);
	assert_int_equal(dropped_for(&c, "duplicate_series"), 4);

	/* One prefix, 5,000 series: one place, crowded; each found again. */
	bs_family(E(&c), "crowd", BS_GAUGE, NULL, "");
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 2), 0);
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < 5000; k++) {
			snprintf(stat, sizeof(stat), "x%d", k);
			assert_int_equal(bs_sample_u64(E(&c), own, 1, 1), pass ? -EEXIST : 0);
		}
	assert_int_equal(dropped_for(&c, "duplicate_series"), 5004);
	const char *out = capture_end(&c);
	assert_non_null(strstr(out, "xen_stat{domain=\"d1999\",set=\"s4\",stat=\"x19\"} 1\n"));
	assert_null(strstr(out, "} 2\n"));
	capture_free(&c);
}

/* A family whose prefix changes shape goes on in the flat set, so the
 * same labels are still found: under a prefix of as many labels with
 * another name among them, and under a prefix of fewer. */
static void test_by_prefix_shape_changes(void **state)
{
	struct bs_label pre[2] = {{"domain", "d1"}, {"set", "s1"}};
	struct bs_label own[1] = {{"stat", "x1"}};
	struct bs_label renamed[2] = {{"domain", "d1"}, {"stat", "x1"}};
	struct bs_label moved[1] = {{"set", "s1"}};
	struct bs_label rest[2] = {{"set", "s1"}, {"stat", "x1"}};
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "renamed", BS_GAUGE, NULL, "");
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 2), 0);
	assert_int_equal(bs_sample_u64(E(&c), own, 1, 1), 0);
	assert_int_equal(E(&c)->ops->prefix(E(&c), renamed, 2), 0);
	assert_int_equal(bs_sample_u64(E(&c), moved, 1, 2), -EEXIST);

	bs_family(E(&c), "shorter", BS_GAUGE, NULL, "");
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 2), 0);
	assert_int_equal(bs_sample_u64(E(&c), own, 1, 1), 0);
	assert_int_equal(E(&c)->ops->prefix(E(&c), pre, 1), 0);
	assert_int_equal(bs_sample_u64(E(&c), rest, 2, 2), -EEXIST);
	assert_int_equal(E(&c)->ops->prefix(E(&c), NULL, 0), 0);
	assert_int_equal(dropped_for(&c, "duplicate_series"), 2);
	assert_null(strstr(capture_end(&c), "} 2\n"));
	capture_free(&c);
}

/* Forks (ABI 5): each fork's output follows all of its parent's, forks in
 * the order they were made, whenever each was written; families are
 * claimed across them; drops and lines are counted as the parent's; a
 * fork cannot fork, and an emitter makes at most BS_EMITTER_FORKS_MAX. */
static void test_fork_order_and_claims(void **state)
{
	struct capture c;
	struct bs_emitter *f[BS_EMITTER_FORKS_MAX];
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	bs_family(E(&c), "a", BS_GAUGE, NULL, "");
	bs_sample_u64(E(&c), NULL, 0, 1);
	for (int i = 0; i < BS_EMITTER_FORKS_MAX; i++)
		assert_non_null(f[i] = E(&c)->ops->fork(E(&c)));
	assert_null(E(&c)->ops->fork(E(&c)));
	assert_null(f[0]->ops->fork(f[0]));
	assert_int_equal(bs_family(f[1], "d", BS_GAUGE, NULL, ""), 0);
	bs_sample_u64(f[1], NULL, 0, 4);
	assert_int_equal(bs_family(f[0], "b", BS_GAUGE, NULL, ""), 0);
	bs_sample_u64(f[0], NULL, 0, 2);
	assert_int_equal(bs_family(E(&c), "c", BS_GAUGE, NULL, ""), 0);
	bs_sample_u64(E(&c), NULL, 0, 3);
	/* claimed by the parent, by another fork, by itself */
	assert_int_equal(bs_family(f[0], "a", BS_GAUGE, NULL, ""), -EEXIST);
	assert_int_equal(bs_family(f[0], "d_total", BS_COUNTER, NULL, ""), -EEXIST);
	assert_int_equal(bs_family(E(&c), "b", BS_GAUGE, NULL, ""), -EEXIST);
	bs_drop(f[2], "fork_reason", 5);
	assert_int_equal(capture_drops(&c, "duplicate_family"), 1);
	assert_string_equal(capture_end(&c), "# HELP a \n# TYPE a gauge\na 1\n"
					     "# HELP c \n# TYPE c gauge\nc 3\n"
					     "# HELP b \n# TYPE b gauge\nb 2\n"
					     "# HELP d \n# TYPE d gauge\nd 4\n");
	assert_int_equal(c.join_rc, 0);
	assert_int_equal(capture_drops(&c, "duplicate_family"), 3);
	assert_int_equal(capture_drops(&c, "fork_reason"), 5);
	assert_int_equal(c.em.lines, 4);
	assert_int_equal(c.em.nforks, 0);
	capture_free(&c);

	/* Forks never joined (a collect that overran) are freed with it. */
	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	assert_non_null(f[0] = E(&c)->ops->fork(E(&c)));
	bs_family(f[0], "x", BS_GAUGE, NULL, "");
	bs_sample_u64(f[0], NULL, 0, 1);
	capture_free(&c);
}

struct fork_writer {
	struct bs_emitter *em;
	int id;
	int shared_rc;
};

/* Its own family of many series, and one every writer tries to claim. */
static void *fork_write(void *arg)
{
	struct fork_writer *w = arg;
	char name[16], v[16];
	struct bs_label l = {"i", v};

	snprintf(name, sizeof(name), "own%d", w->id);
	bs_family(w->em, name, BS_GAUGE, NULL, "");
	for (int i = 0; i < 20000; i++) {
		snprintf(v, sizeof(v), "%d", i);
		bs_sample_u64(w->em, &l, 1, (uint64_t)i);
	}
	w->shared_rc = bs_family(w->em, "shared", BS_GAUGE, NULL, "");
	if (w->shared_rc == 0)
		bs_sample_u64(w->em, NULL, 0, (uint64_t)w->id);
	return NULL;
}

/* The parent and two forks written at once by three threads: every
 * series of each is there once, in order, and a family all of them claim
 * is written by exactly one. */
static void test_fork_threads(void **state)
{
	struct capture c;
	struct fork_writer w[3] = {{.id = 0}, {.id = 1}, {.id = 2}};
	pthread_t t[2];
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	w[0].em = E(&c);
	w[1].em = E(&c)->ops->fork(E(&c));
	w[2].em = E(&c)->ops->fork(E(&c));
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fork_write, &w[i + 1]), 0);
	fork_write(&w[0]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	const char *out = capture_end(&c);
	assert_int_equal((w[0].shared_rc == 0) + (w[1].shared_rc == 0) + (w[2].shared_rc == 0), 1);
	assert_int_equal(capture_drops(&c, "duplicate_family"), 2);
	const char *own[3];
	for (int k = 0; k < 3; k++) {
		char want[64];
		snprintf(want, sizeof(want), "# TYPE own%d gauge\n", k);
		assert_non_null(own[k] = strstr(out, want));
		snprintf(want, sizeof(want), "own%d{i=\"19999\"} 19999\n", k);
		assert_non_null(strstr(own[k], want));
	}
	assert_true(own[0] < own[1] && own[1] < own[2]);
	assert_int_equal(c.em.lines, 3 * 20000 + 1);
	capture_free(&c);
}

/* Each sink keeps to the limit alone; together they must too, or the
 * collect's output is refused whole. */
static void test_fork_limit(void **state)
{
	struct capture c;
	struct bs_emitter *f;
	char v[16];
	struct bs_label l = {"i", v};
	(void)state;

	for (int over = 0; over < 2; over++) {
		capture_begin(&c, EXPO_TEXT, 20000);
		f = E(&c)->ops->fork(E(&c));
		bs_family(E(&c), "p", BS_GAUGE, NULL, "");
		bs_family(f, "f", BS_GAUGE, NULL, "");
		for (int i = 0; i < (over ? 800 : 300); i++) {
			snprintf(v, sizeof(v), "%d", i);
			assert_int_equal(bs_sample_u64(E(&c), &l, 1, 1), 0);
			assert_int_equal(bs_sample_u64(f, &l, 1, 1), 0);
		}
		assert_false(c.sink.overflow);
		capture_end(&c);
		assert_int_equal(c.join_rc, over ? -ENOBUFS : 0);
		assert_true(c.sink.raw_bytes > (over ? 20000 : 7000));
		capture_free(&c);
	}
}

/* With gzip, a fork deflates on its own; the parent's blocks and its
 * read back as one gzip member, crc and length checked. */
static void test_fork_gzip(void **state)
{
	static unsigned char plain[1 << 20];
	struct capture c = {0};
	struct capture text;
	struct bs_emitter *f;
	char v[16];
	struct bs_label l = {"i", v};
	(void)state;

	assert_int_equal(sink_init(&c.sink, true, SIZE_MAX), 0);
	assert_int_equal(famreg_init(&c.reg), 0);
	emitter_init(&c.em, EXPO_TEXT, &c.sink, &c.reg, 0);
	capture_begin(&text, EXPO_TEXT, SIZE_MAX);
	f = E(&c)->ops->fork(E(&c));
	bs_family(f, "f", BS_GAUGE, NULL, "");
	bs_family(E(&c), "p", BS_GAUGE, NULL, "");
	bs_family(E(&text), "p", BS_GAUGE, NULL, "");
	for (int i = 0; i < 20000; i++) {
		snprintf(v, sizeof(v), "%d", i);
		bs_sample_u64(E(&c), &l, 1, 1);
		bs_sample_u64(f, &l, 1, 2);
		bs_sample_u64(E(&text), &l, 1, 1);
	}
	bs_family(E(&text), "f", BS_GAUGE, NULL, "");
	for (int i = 0; i < 20000; i++) {
		snprintf(v, sizeof(v), "%d", i);
		bs_sample_u64(E(&text), &l, 1, 2);
	}
	const char *want = capture_end(&text);
	assert_int_equal(emitter_join_forks(&c.em), 0);
	for (struct sink_chunk *k = c.sink.head; k; k = k->next)
		assert_true(k->deflated);
	assert_int_equal(sink_gunzip(&c.sink, plain, sizeof(plain)), strlen(want));
	assert_memory_equal(plain, want, strlen(want));
	capture_free(&c);
	capture_free(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counter_both_formats),
	    cmocka_unit_test(test_histogram),
	    cmocka_unit_test(test_histogram_bounds_reused),
	    cmocka_unit_test(test_histogram_refused),
	    cmocka_unit_test(test_summary_info_stateset_unknown),
	    cmocka_unit_test(test_duplicates),
	    cmocka_unit_test(test_names_rewritten_in_place),
	    cmocka_unit_test(test_refused_families_and_values),
	    cmocka_unit_test(test_label_repair_and_truncation),
	    cmocka_unit_test(test_drop_reasons_bounded),
	    cmocka_unit_test(test_output_cap),
	    cmocka_unit_test(test_prefix_same_as_whole_labels),
	    cmocka_unit_test(test_by_prefix_finds_duplicates),
	    cmocka_unit_test(test_by_prefix_shape_changes),
	    cmocka_unit_test(test_fork_order_and_claims),
	    cmocka_unit_test(test_fork_threads),
	    cmocka_unit_test(test_fork_limit),
	    cmocka_unit_test(test_fork_gzip),
	};
	return cmocka_run_group_tests_name("emitter", tests, NULL, NULL);
}
