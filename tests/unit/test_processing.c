/* The processing between scrapes, fed by hand at set times: X from value,
 * delta and rate (a counter reset included), selection, what /metrics and
 * /statistics/ show, the caps (sources, expiry), the template's sample
 * rate, write permission, configuration errors; and a sampler racing a
 * reader, which must never see a statistic half updated. */
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <stdint.h>

/* The clock a scrape brings the histories up to: the tests' own time. */
static uint64_t test_now;

static uint64_t test_clock(void)
{
	return test_now;
}

#define PROCESSING_TEST_MADE(p) (test_now = 0, (p)->clock_ns = test_clock)
#include "processing_helpers.h"

#include "monoclock.h"
#include "names.h"

static const char *delta_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: ex\n"
    "      select: 'kvm_exits_total{vm=~\"web.*\"}'\n"
    "      x: delta\n"
    "      statistics:\n"
    "        - {name: ex_n, type: value}\n"
    "        - {name: ex_r, type: range, range_min: 0, range_max: 100}\n"
    "      template:\n"
    "        stats: [sum, max]\n";

static void test_delta_and_reset(void **state)
{
	struct processing *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}}, db[] = {{"vm", "db1"}};
	int status;
	(void)state;

	assert_true(feed_value(p, "kvm_exits_total", web, 1, 10, S(0))); /* the base: no X */
	assert_false(feed_value(p, "kvm_exits_total", db, 1, 10, S(0))); /* not selected */
	feed_value(p, "kvm_exits_total", web, 1, 13, S(1));		 /* 3 */
	feed_value(p, "kvm_exits_total", web, 1, 20, S(2));		 /* 7 */
	feed_value(p, "kvm_exits_total", web, 1, 5, S(3)); /* went back: reset, X = 5 */
	char *text = iface_as(p, "GET", "ex/0/data", NULL, false, S(4), &status);
	assert_int_equal(status, 200);
	assert_string_equal(text, "ex_n 3\nex_r 3 3 5.000 7\nex_sum 15\nex_max 7\n");
	free(text);
	text = metrics(p);
	assert_non_null(
	    strstr(text, "ex_n_total{vm=\"web1\",source_metric=\"kvm_exits_total\"} 3\n"));
	assert_non_null(
	    strstr(text, "ex_r_avg{vm=\"web1\",source_metric=\"kvm_exits_total\"} 5\n"));
	/* A sum of deltas, but an s64 VOI's values may be below 0 (a
	 * histogram source's le, a gauge's reset): it may go down. */
	assert_non_null(strstr(text, "# TYPE ex_sum_of_values gauge\n"));
	assert_non_null(strstr(text, "binstat_processing_sources 1\n"));
	assert_null(strstr(text, "db1"));
	free(text);
	text = iface_as(p, "GET", "", NULL, false, S(4), &status);
	assert_string_equal(text, "ex/0 kvm_exits_total{vm=\"web1\"}\n");
	free(text);
	done(p);
}

/* Every group the file may have is fed, the 64th (bit 63 of the mask)
 * too, and nothing past it is read. */
static void test_sixty_four_groups(void **state)
{
	struct bs_label web[] = {{"vm", "web1"}};
	char yaml[16384];
	size_t n = 0;
	int status;
	(void)state;

	n += (size_t)snprintf(yaml + n, sizeof(yaml) - n, "processing:\n  groups:\n");
	for (int g = 0; g < PROCESSING_GROUPS_MAX; g++)
		n += (size_t)snprintf(
		    yaml + n, sizeof(yaml) - n,
		    "    - {name: g%d, select: %s, x: delta, "
		    "statistics: [{name: g%d_n, type: value}]}\n",
		    g, g == PROCESSING_GROUPS_MAX - 1 ? "kvm_exits_total" : "nomatch", g);
	assert_true(n < sizeof(yaml));
	struct processing *p = make(yaml);
	assert_true(feed_value(p, "kvm_exits_total", web, 1, 10, S(0)));
	feed_value(p, "kvm_exits_total", web, 1, 13, S(1));
	char *text = iface_as(p, "GET", "g63/0/data", NULL, false, S(2), &status);
	assert_int_equal(status, 200);
	assert_string_equal(text, "g63_n 1\n");
	free(text);
	done(p);
}

static void test_rate_and_value(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: r, select: c_total, x: rate, x_scale: 1000,\n"
		 "       statistics: [{name: r_r, type: range}]}\n"
		 "    - {name: v, select: g, statistics: [{name: v_r, type: range}],\n"
		 "       template: {stats: [{tdigest: {quantiles: [0.5]}}]}}\n");
	int status;
	(void)state;

	feed_value(p, "c_total", NULL, 0, 0, S(0));
	feed_value(p, "c_total", NULL, 0, 10, S(0.5));	/* 20/s, scaled: 20000 */
	feed_value(p, "c_total", NULL, 0, 10, S(0.75)); /* 0/s */
	feed_value(p, "g", NULL, 0, 2.4,
		   S(0)); /* value: rounded for the Linux statistics infrastructure */
	feed_value(p, "g", NULL, 0, -7, S(1));
	char *text = iface_as(p, "GET", "r/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "r_r 2 0 10000.000 20000\n");
	free(text);
	text = iface_as(p, "GET", "v/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "v_r 2 -7 -2.500 2\nv_tdigest 0.5 2\nv_tdigest count 2\n"
				  "v_tdigest sum -5\n");
	free(text);
	done(p);
}

static void test_caps(void **state)
{
	struct processing *p =
	    make("processing:\n  max_sources: 2\n  source_ttl: 10s\n  groups:\n"
		 "    - {name: g, select: 'm{i!=\"x\"}', statistics: [{name: s, type: value}],\n"
		 "       template: {sample_pct: 0, stats: [sum]}}\n");
	struct bs_label l[] = {{"i", "1"}};
	int status;
	(void)state;

	for (int i = 1; i <= 3; i++) {
		char v[2] = {(char)('0' + i), 0};
		l[0].value = v;
		feed_value(p, "m", l, 1, 1, S(0));
	}
	assert_int_equal(p->srcs.n, 2);
	assert_int_equal(p->count.too_many_sources, 1);
	/* sample_pct 0: no source is sampled by the template */
	char *text = iface_as(p, "GET", "g/1/definition", NULL, false, S(1), &status);
	assert_non_null(strstr(text, "# template=g state=on sampled=0 relative=0 updates=0\n"));
	free(text);
	text = metrics(p);
	assert_null(strstr(text, "g_sum"));
	free(text);
	/* a source not seen for source_ttl is forgotten */
	l[0].value = "1";
	feed_value(p, "m", l, 1, 1, S(5));
	sampler_tick(p, S(10.5));
	assert_int_equal(p->srcs.n, 1);
	assert_int_equal(p->count.expired_sources, 1);
	done(p);
}

static void test_interface_writes(void **state)
{
	struct processing *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	int status;
	(void)state;

	feed_value(p, "kvm_exits_total", web, 1, 1, S(0));
	feed_value(p, "kvm_exits_total", web, 1, 2, S(1));
	free(iface_as(p, "POST", "ex/0/definition", "on=0", false, S(2), &status));
	assert_int_equal(status, 403); /* not an allowed client */
	char *text =
	    iface_as(p, "POST", "ex/0/definition",
		     "name=ex_r range_max=50\nname=ex_r type=list\nname=zz on=1\ndata=reset", true,
		     S(2), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text,
			    "line 2: EINVAL: a new type needs all its type-specific attributes\n"
			    "line 3: ENOENT: no statistic of that name\n"
			    "nothing applied: 2 lines refused\n");
	free(text);
	/* all or nothing: lines 1 and 4 did not apply */
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 1 1.000 1\nex_sum 1\nex_max 1\n");
	free(text);
	text = iface_as(p, "POST", "ex/0/definition", "name=ex_r range_max=50\ndata=reset", true,
			S(3), &status);
	assert_int_equal(status, 200);
	free(text);
	/* range_max 50, and everything reset, the template's statistics too:
	 * the maximum of nothing has no line */
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "ex_n 0\nex_r 0 0 0.000 0\nex_sum 0\n");
	free(text);
	text = iface_as(p, "GET", "ex/0/definition", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "name=ex_r on=1 type=range range_min=0 range_max=50 "));
	free(text);
	free(iface_as(p, "POST", "ex/0/snapshot", NULL, true, S(3), &status));
	assert_int_equal(status, 200);
	free(iface_as(p, "GET", "ex/7/data", NULL, false, S(3), &status));
	assert_int_equal(status, 404);
	free(iface_as(p, "POST", "ex/0/data", "", true, S(3), &status));
	assert_int_equal(status, 405);
	done(p);
}

/* ---- what /metrics serves, against the values fed ---- */

/* An observation: X, Y times. */
struct obs {
	double x;
	uint64_t y;
};

/* The value of the line that starts with prefix; false when none does. */
static bool line_value(const char *text, const char *prefix, double *v)
{
	size_t n = strlen(prefix);

	for (const char *q = text; q; q = strchr(q, '\n'), q = q ? q + 1 : NULL)
		if (strncmp(q, prefix, n) == 0) {
			*v = strtod(q + n, NULL);
			return true;
		}
	return false;
}

static double want_at_most(const struct obs *o, size_t n, double le)
{
	double c = 0;
	for (size_t i = 0; i < n; i++)
		c += o[i].x <= le ? (double)o[i].y : 0;
	return c;
}

/* Prometheus' histogram semantics for the series fam{labels}: every le
 * counts the observations at most le, +Inf and _count all of them, _sum
 * their sum. */
static void check_hist(const char *text, const char *fam, const char *labels, const struct obs *o,
		       size_t n)
{
	char pre[512], key[512];
	double total = 0, sum = 0, v, inf = -1;
	size_t buckets = 0;

	for (size_t i = 0; i < n; i++)
		total += (double)o[i].y, sum += o[i].x * (double)o[i].y;
	snprintf(pre, sizeof(pre), "%s_bucket{%s,le=\"", fam, labels);
	for (const char *q = strstr(text, pre); q; q = strstr(q + 1, pre)) {
		char *end;
		double le = strtod(q + strlen(pre), &end);
		v = strtod(strstr(end, "} ") + 2, NULL);
		if (v != want_at_most(o, n, le))
			fail_msg("%s{%s} le=%.17g: %.17g, want %.17g", fam, labels, le, v,
				 want_at_most(o, n, le));
		inf = isinf(le) ? v : inf;
		buckets++;
	}
	if (buckets == 0)
		fail_msg("no %s{%s} in:\n%s", fam, labels, text);
	if (inf != total)
		fail_msg("%s{%s} +Inf %g, want %g", fam, labels, inf, total);
	snprintf(key, sizeof(key), "%s_count{%s} ", fam, labels);
	if (!line_value(text, key, &v) || v != total)
		fail_msg("%s: %g, want %g", key, v, total);
	snprintf(key, sizeof(key), "%s_sum{%s} ", fam, labels);
	if (!line_value(text, key, &v) || fabs(v - sum) > 1e-9 * fmax(1, fabs(sum)))
		fail_msg("%s: %.17g, want %.17g", key, v, sum);
}

static void check_line(const char *text, const char *prefix, double want)
{
	double v;
	if (!line_value(text, prefix, &v) || fabs(v - want) > 1e-9 * fmax(1, fabs(want)))
		fail_msg("'%s': %.17g, want %.17g in:\n%s", prefix, v, want, text);
}

static const char *streams_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: v\n"
    "      select: g\n"
    "      statistics:\n"
    "        - {name: v_lin, type: array, range_min: 0, range_max: 40, base_interval: 7}\n"
    "        - {name: v_log, type: array, scale: log2, range_min: 0, range_max: 64}\n"
    "        - {name: v_list, type: list, entries_max: 3, range_min: 0, range_max: 50}\n"
    "        - {name: v_n, type: value}\n"
    "        - {name: v_prod, type: value, mode: products, range_min: -10, range_max: 1000}\n"
    "        - {name: v_range, type: range, range_min: -10, range_max: 1000}\n"
    "      template:\n"
    "        name: v_voi\n"
    "        stats:\n"
    "          - sum\n"
    "          - max\n"
    "          - min\n"
    "          - {crhist: {scheme: lin, lb: 0, ub: 10, stepinc: 5, ubound_inf: true}}\n"
    "          - {drhist: {buckets: [[0, 1], [5, 10]]}}\n"
    "          - {dvhist: {values: [3, 7, 12]}}\n"
    "          - {tdigest: {quantiles: [0.5]}}\n"
    "    - name: w\n"
    "      select: g\n"
    "      template:\n"
    "        name: w_voi\n"
    "        stats:\n"
    "          - {crhist: {scheme: usr, bounds: [0, 10, 50], lbound_inf: true}}\n"
    "          - {drhist: {buckets: [[-5, 0], [3, 4]], lbound_inf: true, ubound_inf: true}}\n"
    "          - {dvhist: {values: [-3, 5]}}\n"
    "    - name: e\n"
    "      select: g\n"
    "      template:\n"
    "        name: e_voi\n"
    "        stats: [{crhist: {scheme: exp, lb: 1, ub: 100, stepbase: 2, stepexp: 0}}]\n"
    "    - name: f\n"
    "      select: g\n"
    "      x: rate\n"
    "      template:\n"
    "        name: f_voi\n"
    "        stats: [{crhist: {scheme: lin, lb: 0, ub: 1, stepinc: 0.1}}]\n"
    "    - name: k\n"
    "      select: kvm_vcpu_halt_poll_success_seconds\n"
    "      x_scale: 1e9\n"
    "      statistics:\n"
    "        - {name: k_log, type: array, scale: log2, range_min: 0, range_max: 1024}\n"
    "        - {name: k_list, type: list, entries_max: 4}\n"
    "        - {name: k_ns, type: value, mode: products, range_min: 0}\n"
    "        - {name: k_range, type: range}\n"
    "      template:\n"
    "        name: k_voi\n"
    "        stats:\n"
    "          - sum\n"
    "          - {crhist: {scheme: exp, lb: 0, ub: 256, stepbase: 4, stepexp: 0}}\n"
    "          - {dvhist: {values: [0, 1, 3, 7]}}\n"
    "          - {tdigest: {}}\n";

/* A KVM log histogram (bucket i holds up to 2^i - 1 ns, the last is
 * open), as the kvm collector writes one, with the counts of the tick. */
struct kvm_hist {
	uint64_t count[32];
};

static int kvm_hist_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct kvm_hist *k = ctx;
	struct bs_label l[] = {{"vm", "k1"}};
	double le[32], bad[2] = {2, 1};
	(void)i, (void)wait_ns;

	for (int b = 0; b < 31; b++)
		le[b] = (double)((1ull << b) - 1) * 1e-9;
	le[31] = INFINITY;
	bs_family(e, "kvm_vcpu_halt_poll_success_seconds", BS_HISTOGRAM, "seconds", "polls");
	struct bs_histogram h = {32, le, k->count, false, {0}};
	e->ops->histogram(e, l, 1, &h);
	bs_sample_u64(e, l, 1, 7); /* a histogram family's sample: a scrape refuses it */
	struct bs_label other[] = {{"vm", "k2"}};
	struct bs_histogram unordered = {2, bad, k->count, false, {0}};
	e->ops->histogram(e, other, 1, &unordered);
	return 0;
}

/* Hand-computed streams through every statistic and histogram kind: a
 * gauge's values (gaps, open ends, values out of range and out of band,
 * negative ones) and a KVM histogram's bucket increases. Every family on
 * /metrics must count exactly what it was given. */
static void test_every_histogram_counts_every_value(void **state)
{
	static const double xs[] = {3, 12, 100, 7, 0, -3, 35, 36, 40, 41, 9, 5, 5, 10, 60, -20};
	enum { NX = sizeof(xs) / sizeof(xs[0]) };
	struct processing *p = make(streams_yaml);
	struct obs all[NX];
	size_t nin = 0;
	double sum = 0, in_sum = 0, rates[NX];
	uint64_t dropped;
	(void)state;

	for (size_t i = 0; i < NX; i++) {
		feed_value(p, "g", NULL, 0, xs[i], S(i));
		all[i] = (struct obs){xs[i], 1};
		sum += xs[i];
		if (xs[i] >= -10 && xs[i] <= 1000)
			nin++, in_sum += xs[i];
	}
	/* f's rate: each step's increase per second (a counter gone back
	 * was reset: its value), a float VOI */
	for (size_t i = 1; i < NX; i++)
		rates[i - 1] = xs[i] >= xs[i - 1] ? xs[i] - xs[i - 1] : xs[i];
	/* the KVM histogram: a base, then two ticks */
	struct kvm_hist k = {.count = {[0] = 5, [3] = 2}};
	p->in = (struct stage_input){.n = 1, .collect = kvm_hist_collect, .ctx = &k};
	sampler_tick(p, S(100));
	k.count[0] = 7, k.count[5] = 4, k.count[31] = 1;
	sampler_tick(p, S(101));
	k.count[3] = 1, k.count[5] = 10, k.count[10] = 3; /* 3 went back: reset, Y = 1 */
	sampler_tick(p, S(102));
	p->in = (struct stage_input){0};
	struct obs kv[] = {{0, 2}, {31, 4}, {1073741823, 1}, {7, 1}, {31, 6}, {1023, 3}};
	double kv_sum = 2 * 0 + 31 * 4 + 1073741823 + 7 + 31 * 6 + 1023 * 3;
	assert_int_equal(p->count.invalid_histogram, 3); /* k2's, at each of the 3 ticks */

	char *text = metrics_dropping(p, &dropped);
	const char *g = "source_metric=\"g\"";
	const char *kl = "vm=\"k1\",source_metric=\"kvm_vcpu_halt_poll_success_seconds\"";
	const char *hists[] = {"v_lin",	       "v_log",	       "v_list",       "v_voi_crhist",
			       "v_voi_drhist", "v_voi_dvhist", "w_voi_crhist", "w_voi_drhist",
			       "w_voi_dvhist", "e_voi_crhist"};
	for (size_t i = 0; i < sizeof(hists) / sizeof(hists[0]); i++)
		check_hist(text, hists[i], g, all, NX);
	struct obs rate_obs[NX];
	for (size_t i = 0; i + 1 < NX; i++)
		rate_obs[i] = (struct obs){rates[i], 1};
	check_hist(text, "f_voi_crhist", g, rate_obs, NX - 1);
	check_hist(text, "k_log", kl, kv, 6);
	check_hist(text, "k_list", kl, kv, 6);
	check_hist(text, "k_voi_crhist", kl, kv, 6);
	check_hist(text, "k_voi_dvhist", kl, kv, 6);
	/* the issue's case: 12 and 100 are above the last bound (10, open) */
	check_line(text, "v_voi_crhist_bucket{source_metric=\"g\",le=\"9.0\"} ", 8);
	/* the scalars */
	check_line(text, "v_n_total{source_metric=\"g\"} ", NX);
	assert_non_null(strstr(text, "# TYPE v_prod gauge\n")); /* X can be negative */
	check_line(text, "v_prod{source_metric=\"g\"} ", in_sum);
	check_line(text, "v_range_samples_total{source_metric=\"g\"} ", (double)nin);
	check_line(text, "v_range_min{source_metric=\"g\"} ", -3);
	check_line(text, "v_range_avg{source_metric=\"g\"} ", in_sum / (double)nin);
	check_line(text, "v_range_max{source_metric=\"g\"} ", 100);
	check_line(text, "v_voi_sum_of_values{source_metric=\"g\"} ", sum);
	check_line(text, "v_voi_max{source_metric=\"g\"} ", 100);
	check_line(text, "v_voi_min{source_metric=\"g\"} ", -20);
	check_line(text, "v_voi_tdigest_count{source_metric=\"g\"} ", NX);
	check_line(text, "v_voi_tdigest_sum{source_metric=\"g\"} ", sum);
	assert_non_null(strstr(text, "# TYPE k_ns_total counter\n"));
	check_line(text,
		   "k_ns_total{vm=\"k1\",source_metric=\"kvm_vcpu_halt_poll_success_seconds\"} ",
		   kv_sum);
	check_line(text,
		   "k_range_samples_total{vm=\"k1\",source_metric=\"kvm_vcpu_halt_poll_success_"
		   "seconds\"} ",
		   17);
	check_line(text,
		   "k_voi_sum_of_values{vm=\"k1\",source_metric=\"kvm_vcpu_halt_poll_success_"
		   "seconds\"} ",
		   kv_sum);
	check_line(text,
		   "k_voi_tdigest_count{vm=\"k1\",source_metric=\"kvm_vcpu_halt_poll_success_"
		   "seconds\"} ",
		   17);
	assert_int_equal(dropped, 0);
	free(text);
	done(p);
}

/* A collector's histogram is outside input: each one a scrape would
 * refuse, or one over the cap, is counted and keeps nothing. */
static void test_hostile_histograms(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - {name: h, select: hs, statistics: "
		 "[{name: h_r, type: range}]}\n");
	static double up[STAGE_HIST_BUCKETS_MAX + 1];
	static uint64_t count[STAGE_HIST_BUCKETS_MAX + 1];
	const struct bs_histogram bad[] = {
	    {0, up, count, false, {0}},				 /* no bucket */
	    {2, NULL, count, false, {0}},			 /* no bounds */
	    {2, up, NULL, false, {0}},				 /* no counts */
	    {2, (double[]){1, NAN}, count, false, {0}},		 /* a NaN bound */
	    {3, (double[]){1, 3, 2}, count, false, {0}},	 /* not increasing */
	    {2, (double[]){1, 1}, count, false, {0}},		 /* equal */
	    {STAGE_HIST_BUCKETS_MAX + 1, up, count, false, {0}}, /* over the cap */
	};
	(void)state;

	for (size_t i = 0; i <= STAGE_HIST_BUCKETS_MAX; i++)
		up[i] = (double)i;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(feed_histogram(p, "hs", NULL, 0, &bad[i], S(0)));
	assert_int_equal(p->count.invalid_histogram, sizeof(bad) / sizeof(bad[0]));
	assert_int_equal(p->srcs.n, 0);
	const struct bs_histogram only_inf = {1, (double[]){INFINITY}, (uint64_t[]){1}, false, {0}};
	assert_true(feed_histogram(p, "hs", NULL, 0, &only_inf, S(0)));
	/* its count grows, but +Inf alone has no value to give X */
	const struct bs_histogram more = {1, (double[]){INFINITY}, (uint64_t[]){3}, false, {0}};
	assert_true(feed_histogram(p, "hs", NULL, 0, &more, S(1)));
	assert_int_equal(p->count.not_a_number, 1);
	assert_int_equal(p->srcs.n, 1);
	done(p);
}

/* A finite value that x_scale, or a delta, takes past a double's range
 * gives no X: not kept, and counted as not a number, never dropped
 * silently. */
static void test_scaled_past_double(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: v, select: big, x_scale: 1e18, template: {stats: [sum]}}\n"
		 "    - {name: d, select: jump, x: delta, template: {stats: [sum]}}\n");
	(void)state;

	assert_true(feed_value(p, "big", NULL, 0, 1e300, S(0))); /* 1e318: +Inf */
	assert_true(feed_value(p, "jump", NULL, 0, -1.7e308, S(0)));
	assert_true(feed_value(p, "jump", NULL, 0, 1.7e308, S(1))); /* a delta of +Inf */
	assert_int_equal(p->count.not_a_number, 2);
	assert_int_equal(p->count.values, 0);
	done(p);
}

/* An empty t-digest is a summary of nothing, not a fault: _count 0, no
 * quantile, no drop. */
static void test_empty_tdigest(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - {name: d, select: c_total, x: delta,\n"
		 "       template: {stats: [{tdigest: {}}]}}\n");
	uint64_t dropped;
	(void)state;

	feed_value(p, "c_total", NULL, 0, 10, S(0)); /* the base: no value yet */
	char *text = metrics_dropping(p, &dropped);
	assert_int_equal(dropped, 0);
	check_line(text, "d_tdigest_count{source_metric=\"c_total\"} ", 0);
	assert_null(strstr(text, "quantile="));
	free(text);
	done(p);
}

/* ---- a statistic redefined through POST, on /metrics ---- */

/* Every Linux statistics infrastructure type (value and history in two modes), each line with
 * all its type-specific attributes, and the families each serves: the
 * TYPE lines of the text format, sorted. */
static const struct {
	const char *line, *types;
} redefs[] = {
    {"name=s type=value mode=increments", "s_out_of_range_total counter\ns_total counter\n"},
    {"name=s type=value mode=products", "s gauge\ns_out_of_range_total counter\n"},
    {"name=s type=range", "s_avg gauge\ns_max gauge\ns_min gauge\ns_out_of_range_total counter\n"
			  "s_samples_total counter\n"},
    {"name=s type=array base_interval=5 scale=lin", "s histogram\ns_out_of_range_total counter\n"},
    {"name=s type=list entries_max=8",
     "s histogram\ns_missed_total counter\ns_out_of_range_total counter\n"},
    {"name=s type=raw entries_max=4", "s_out_of_range_total counter\n"},
    {"name=s type=history entries_max=4 mode=range period=1000000",
     "s_last_period_avg gauge\ns_last_period_max gauge\ns_last_period_min gauge\n"
     "s_last_period_samples gauge\ns_out_of_range_total counter\n"},
    {"name=s type=history entries_max=4 mode=increments period=1000000",
     "s_last_period gauge\ns_out_of_range_total counter\n"},
};
enum { NREDEFS = sizeof(redefs) / sizeof(redefs[0]) };

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The TYPE lines of statistic s's families, sorted, as one string. */
static void s_types(const char *text, char *out, size_t cap)
{
	char *lines[32];
	size_t n = 0, len = 0;

	for (const char *q = strstr(text, "# TYPE s"); q && n < 32; q = strstr(q + 1, "# TYPE s"))
		if (q[8] == ' ' || q[8] == '_') {
			size_t k = strcspn(q + 7, "\n");
			lines[n] = strndup(q + 7, k);
			n++;
		}
	qsort(lines, n, sizeof(*lines), cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		len += (size_t)snprintf(out + len, cap - len, "%s\n", lines[i]);
		free(lines[i]);
	}
}

/* The cumulative count of the bucket le of s, or -1. */
static double s_bucket(const char *text, const char *le)
{
	char key[96];
	double v;
	snprintf(key, sizeof(key), "s_bucket{source_metric=\"g\",le=\"%s\"} ", le);
	return line_value(text, key, &v) ? v : -1;
}

/* s's range figures on /metrics (prefix: s or s_last_period) against a
 * data line's "<total> <min> <avg> <max>". */
static void check_range(const char *text, const char *prefix, bool counter, const char *figures)
{
	long long num, min, max;
	double avg;
	char key[96];

	assert_int_equal(sscanf(figures, "%lld %lld %lf %lld", &num, &min, &avg, &max), 4);
	snprintf(key, sizeof(key), "%s_samples%s{source_metric=\"g\"} ", prefix,
		 counter ? "_total" : "");
	check_line(text, key, (double)num);
	snprintf(key, sizeof(key), "%s_min{source_metric=\"g\"} ", prefix);
	check_line(text, key, (double)min);
	snprintf(key, sizeof(key), "%s_max{source_metric=\"g\"} ", prefix);
	check_line(text, key, (double)max);
	snprintf(key, sizeof(key), "%s_avg{source_metric=\"g\"} ", prefix);
	double v = -1;
	line_value(text, key, &v);
	if (fabs(v - avg) > 0.0005) /* the data file's average has three decimals */
		fail_msg("%s: %g, the data file %g", key, v, avg);
}

/* An array's lines "<=b c" and ">b c" as cumulative buckets. */
static void check_array(const char *text, const char *data)
{
	double cum = 0;
	long long b;
	unsigned long long c;

	for (const char *q = data; (q = strstr(q, "s <=")); q++) {
		assert_int_equal(sscanf(q, "s <=%lld %llu", &b, &c), 2);
		char le[32];
		snprintf(le, sizeof(le), "%lld.0", b);
		cum += (double)c;
		if (s_bucket(text, le) != cum)
			fail_msg("le=%s: %g, the data file %g", le, s_bucket(text, le), cum);
	}
	assert_non_null(strstr(data, "s >"));
	sscanf(strstr(data, "s >"), "s >%lld %llu", &b, &c);
	assert_true(s_bucket(text, "+Inf") == cum + (double)c);
}

/* The cumulative count of s's bucket just below x (0 when none is). */
static double s_bucket_below(const char *text, double x)
{
	const char *pre = "s_bucket{source_metric=\"g\",le=\"";
	double best = -INFINITY, cum = 0;

	for (const char *q = strstr(text, pre); q; q = strstr(q + 1, pre)) {
		char *end;
		double le = strtod(q + strlen(pre), &end);
		if (le < x && le > best)
			best = le, cum = strtod(strstr(end, "} ") + 2, NULL);
	}
	return cum;
}

/* A list's lines "0x<X> hits": each X a bucket holding its hits over the
 * bucket below it; +Inf all, the X out of range included. */
static void check_list(const char *text, const char *data, unsigned long long oor)
{
	double total = 0;
	unsigned long long x, hits;

	for (const char *q = data; (q = strstr(q, "s 0x")); q++) {
		assert_int_equal(sscanf(q, "s 0x%llx %llu", &x, &hits), 2);
		char le[32];
		snprintf(le, sizeof(le), "%lld.0", (long long)x);
		double under = s_bucket_below(text, (double)(long long)x);
		if (s_bucket(text, le) - under != (double)hits)
			fail_msg("le=%s: %g over %g, the data file %llu", le, s_bucket(text, le),
				 under, hits);
		total += (double)hits;
	}
	assert_true(s_bucket(text, "+Inf") == total + (double)oor);
}

/* What /metrics shows of s is what the data file shows, for its type. */
static void check_against_data(const char *text, const char *data, const char *def, size_t t)
{
	unsigned long long oor;
	char types[512];
	const char *period[8];
	size_t nperiod = 0;

	s_types(text, types, sizeof(types));
	if (strcmp(types, redefs[t].types) != 0)
		fail_msg("after '%s' the families are\n%s\nnot\n%s", redefs[t].line, types,
			 redefs[t].types);
	assert_int_equal(sscanf(strstr(def, "hits_out_of_range="), "hits_out_of_range=%llu", &oor),
			 1);
	check_line(text, "s_out_of_range_total{source_metric=\"g\"} ", (double)oor);
	for (const char *q = strstr(data, "s ["); q && nperiod < 8; q = strstr(q + 1, "\ns ["))
		period[nperiod++] = strchr(q, ']') + 1; /* each history line's figures */
	if (strstr(redefs[t].line, "type=value"))
		check_line(text,
			   t == 0 ? "s_total{source_metric=\"g\"} " : "s{source_metric=\"g\"} ",
			   strtod(data + 2, NULL));
	else if (strstr(redefs[t].line, "type=range"))
		check_range(text, "s", true, data + 2);
	else if (strstr(redefs[t].line, "type=array"))
		check_array(text, data);
	else if (strstr(redefs[t].line, "type=list"))
		check_list(text, data, oor);
	else if (strstr(redefs[t].line, "type=history")) {
		/* the last complete period: the line before the newest */
		assert_true(nperiod >= 2);
		const char *prev = period[nperiod - 2];
		if (strstr(redefs[t].line, "mode=range"))
			check_range(text, "s_last_period", false, prev);
		else
			check_line(text, "s_last_period{source_metric=\"g\"} ", strtod(prev, NULL));
	}
}

/* Each Linux statistics infrastructure type changed into each other through POST: /metrics
 * declares the families of the type the statistic has now (not the one
 * configured) and shows what the data file shows. */
static void test_type_changes_on_metrics(void **state)
{
	static const double xs[] = {-7, 0, 3, 3, 12, 25, 7};
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: g\n"
		 "      statistics: [{name: s, type: value, range_min: -5, range_max: "
		 "20}]\n");
	uint64_t t = S(0), dropped;
	int status;
	(void)state;

	feed_value(p, "g", NULL, 0, 1, t); /* the source */
	for (size_t from = 0; from < NREDEFS; from++)
		for (size_t to = 0; to < NREDEFS; to++) {
			if (to == from)
				continue;
			free(iface_as(p, "POST", "g/0/definition", redefs[from].line, true, t,
				      &status));
			assert_int_equal(status, 200);
			feed_value(p, "g", NULL, 0, 4, t + S(0.05));
			free(iface_as(p, "POST", "g/0/definition", redefs[to].line, true,
				      t + S(0.1), &status));
			assert_int_equal(status, 200);
			for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++)
				feed_value(p, "g", NULL, 0, xs[i], t + S(0.2 + 0.1 * (double)i));
			char *data =
			    iface_as(p, "GET", "g/0/data", NULL, false, t + S(1.5), &status);
			char *def =
			    iface_as(p, "GET", "g/0/definition", NULL, false, t + S(1.5), &status);
			test_now = t + S(1.5);
			char *text = metrics_dropping(p, &dropped);
			assert_int_equal(dropped, 0);
			check_against_data(text, data, def, to);
			free(text);
			free(def);
			free(data);
			t += S(10);
		}
	done(p);
}

/* Two sources of one statistic redefined apart: Prometheus takes one type
 * per name, so the configured type keeps <name> while a source has it and
 * the other source's series are counted as type_conflict; once both
 * agree, theirs is served. */
static void test_type_conflict(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: g\n"
		 "      statistics: [{name: s, type: value, range_min: 0, range_max: "
		 "20}]\n");
	struct bs_label a[] = {{"vm", "a"}}, b[] = {{"vm", "b"}};
	const char *to_array = "name=s type=array base_interval=5 scale=lin";
	struct capture c;
	int status;
	(void)state;

	feed_value(p, "g", a, 1, 3, S(0));
	feed_value(p, "g", b, 1, 4, S(0));
	free(iface_as(p, "POST", "g/1/definition", to_array, true, S(1), &status));
	assert_int_equal(status, 200);
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	assert_int_equal(processing_collector()->collect(p, &c.em.pub), 0);
	const char *text = capture_end(&c);
	assert_non_null(strstr(text, "# TYPE s_total counter\n"));
	assert_non_null(strstr(text, "s_total{vm=\"a\",source_metric=\"g\"} 1\n"));
	assert_null(strstr(text, "s_bucket"));
	assert_int_equal(capture_drops(&c, "type_conflict"), 1);
	capture_free(&c);
	free(iface_as(p, "POST", "g/0/definition", to_array, true, S(2), &status));
	feed_value(p, "g", a, 1, 3, S(3));
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	assert_int_equal(processing_collector()->collect(p, &c.em.pub), 0);
	text = capture_end(&c);
	assert_non_null(strstr(text, "s_bucket{vm=\"a\",source_metric=\"g\",le=\"5.0\"} 1\n"));
	assert_non_null(strstr(text, "s_bucket{vm=\"b\",source_metric=\"g\",le=\"+Inf\"} 0\n"));
	assert_null(strstr(text, "s_total{"));
	assert_int_equal(capture_drops(&c, "type_conflict"), 0);
	capture_free(&c);
	done(p);
}

/* A range_min written on one source does not change
 * the type of its value total (one type per family): a gauge as
 * configured stays one, and a counter is refused a range_min that could
 * make it go down. */
static void test_range_min_keeps_type(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: g\n"
		 "      statistics: [{name: s1, type: value, mode: products},\n"
		 "                   {name: c, type: value, mode: products, range_min: 0}]\n");
	struct bs_label a[] = {{"vm", "a"}}, b[] = {{"vm", "b"}};
	struct capture c;
	int status;
	(void)state;

	feed_value(p, "g", a, 1, 3, S(0));
	feed_value(p, "g", b, 1, 4, S(0));
	free(iface_as(p, "POST", "g/0/definition",
		      "name=s1 type=array scale=lin base_interval=4 range_min=0 range_max=16", true,
		      S(1), &status));
	assert_int_equal(status, 200);
	free(iface_as(p, "POST", "g/0/definition", "name=s1 type=value mode=products", true, S(1),
		      &status));
	assert_int_equal(status, 200);
	feed_value(p, "g", a, 1, 13, S(2)); /* within the array's range_max 16, kept */
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	assert_int_equal(processing_collector()->collect(p, &c.em.pub), 0);
	const char *text = capture_end(&c);
	assert_non_null(strstr(text, "# TYPE s1 gauge\n"));
	assert_non_null(strstr(text, "s1{vm=\"a\",source_metric=\"g\"} 13\n"));
	assert_non_null(strstr(text, "s1{vm=\"b\",source_metric=\"g\"} 4\n"));
	assert_int_equal(capture_drops(&c, "type_conflict"), 0);
	capture_free(&c);
	char *before = iface_as(p, "GET", "g/1/definition", NULL, false, S(3), &status);
	char *reply =
	    iface_as(p, "POST", "g/1/definition", "name=c range_min=-5", true, S(3), &status);
	assert_int_equal(status, 400);
	assert_non_null(strstr(reply, "EINVAL: c: range_min below 0 would let its total"));
	free(reply);
	reply = iface_as(p, "GET", "g/1/definition", NULL, false, S(3), &status);
	assert_string_equal(reply, before);
	free(reply);
	free(before);
	done(p);
}

static void expect_conf_error(const char *yaml, const char *want)
{
	char err[CONF_ERR_MAX];
	struct config *c = config_load("t.yml", yaml, "/p", err, sizeof(err));
	if (c)
		fail_msg("accepted: %s", yaml);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

/* A template's dtype is one of stats(3)'s integers, and a histogram's
 * bounds and its counts' width must fit: each refused with its position. */
static void test_dtype_config_errors(void **state)
{
	static const char *const head = "processing:\n  groups:\n    - {name: g, select: m,\n"
					"       template: ";
	static const struct {
		const char *tpl, *want;
	} cases[] = {
	    {"{dtype: q_s16, stats: [sum]}}\n", "t.yml:4:26: 'dtype' cannot be 'q_s16'"},
	    {"{dtype: q_s64, stats: [sum]}}\n",
	     "t.yml:4:26: a Q dtype needs precision: its bits after the binary point"},
	    {"{dtype: q_s64, precision: 12, stats: [sum]}}\n",
	     "t.yml:4:44: precision of q_s64: 2, 4, 6, 8, 16, 32 or 48 (qmath's"},
	    {"{dtype: q_u32, precision: 32, stats: [sum]}}\n",
	     "t.yml:4:44: precision of q_u32: 2, 4, 6, 8, 16 (qmath's"},
	    {"{dtype: s64, precision: 8, stats: [sum]}}\n",
	     "t.yml:4:42: precision belongs to a Q dtype"},
	    {"{dtype: q_s32, precision: 16, stats: [{dvhist: {values: [4096]}}]}}\n",
	     "t.yml:4:75: a number from -4095.9999847412109375 to 4095.9999847412109375, at most "
	     "19 decimals, expected (dtype q_s32, precision 16)"},
	    {"{dtype: q_s64, precision: 2, stats: [{crhist: {scheme: lin, lb: 0, ub: 1, stepinc: "
	     "0.1}}]}}\n",
	     "t.yml:4:64: a Q VOI's stepinc is a multiple of 2^-precision (FreeBSD's"},
	    {"{dtype: q_s64, precision: 2, stats: [{crhist: {scheme: exp, lb: 0, ub: 8, stepbase: "
	     "2, stepexp: 0.5}}]}}\n",
	     "t.yml:4:64: a Q VOI's stepbase and stepexp are whole numbers from 0"},
	    {"{dtype: s32, stats: [{crhist: {scheme: usr, bounds: [0, 2147483648]}}]}}\n",
	     "t.yml:4:74: a whole number from -2^31 to 2^31-1 expected (dtype s32)"},
	    {"{dtype: u32, stats: [{drhist: {buckets: [[-1, 3]]}}]}}\n",
	     "t.yml:4:60: a whole number from 0 to 2^32-1 expected (dtype u32)"},
	    {"{dtype: u32, stats: [{crhist: {scheme: lin, lb: 0, ub: 4000000000, stepinc: "
	     "1000000000}}]}}\n",
	     "the buckets pass the largest value"},
	    {"{dtype: ulong, stats: [{crhist: {scheme: lin, lb: 0, ub: 18446744073709551616, "
	     "stepinc: 1}}]}}\n",
	     "a whole number from 0 to 2^64-1 expected (dtype ulong)"},
	    {"{stats: [{dvhist: {values: [1], counts: 48}}]}}\n",
	     "t.yml:4:58: counts: 32 or 64 (bits of a count)"},
	    {"{stats: [{dvhist: {values: [1], counts: 16}}]}}\n",
	     "t.yml:4:58: counts: 32 or 64 (bits of a count)"},
	    {"{stats: [{tdigest: {counts: 16}}]}}\n",
	     "counts: 32 or 64 (stats(3)'s TDGSTCLUST32 or TDGSTCLUST64)"},
	    /* 4096 buckets on a q_s32 that start above its lowest: the values
	     * below the first need a Prometheus bucket of their own */
	    {"{dtype: q_s32, precision: 2, stats: [{crhist: {scheme: lin, lb: -67108863.5, "
	     "ub: -67107839.75, stepinc: 0.25}}]}}\n",
	     "and the region below the first, the buckets make more than 4096 Prometheus"},
	    /* a step is taken as written or refused: 2^53 + 1 is not the
	     * double 2^53, 1 + 10^-17 not 1 (not a multiple of 2^-48) */
	    {"{dtype: u64, stats: [{crhist: {scheme: lin, lb: 0, ub: 18014398509481984, "
	     "stepinc: 9007199254740993}}]}}\n",
	     "t.yml:4:101: 'stepinc' of a u64 VOI: a whole number"},
	    {"{dtype: q_s64, precision: 48, stats: [{crhist: {scheme: lin, lb: 0, ub: 10, "
	     "stepinc: 1.00000000000000001}}]}}\n",
	     "t.yml:4:103: 'stepinc' of a q_s64 VOI: a multiple of 2^-48"},
	    {"{dtype: s64, stats: [{crhist: {scheme: exp, lb: 0, ub: 10, stepbase: "
	     "2.0000000000000001}}]}}\n",
	     "t.yml:4:87: 'stepbase' of a s64 VOI: a whole number"},
	    {"{dtype: s32, stats: [{crhist: {scheme: lin, lb: 0, ub: 10, stepinc: 1e0}}]}}\n",
	     "'stepinc' of a s32 VOI: a whole number"},
	};
	char yaml[512];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(yaml, sizeof(yaml), "%s%s", head, cases[i].tpl);
		expect_conf_error(yaml, cases[i].want);
	}
}

static void test_configuration_errors(void **state)
{
	(void)state;
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: '{}', "
			  "statistics: [{name: s, type: value}]}\n",
			  "t.yml:3:25: select: the selector must have a matcher");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m}\n",
			  "group 'g' has neither statistics nor a template");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m, statistics: "
			  "[{name: s, type: array, range_min: 0, range_max: 100000}]}\n",
			  "statistic 's': an array may have at most 4096 intervals");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m, template: "
			  "{stats: [{crhist: {scheme: lin, lb: 0, ub: 10, stepinc: 0}}]}}\n",
			  "'stepinc' must be between");
	expect_conf_error("processing:\n  write: true\n  groups:\n    - {name: g, select: m, "
			  "statistics: [{name: s, type: value}]}\n",
			  "write: true needs write_allow");
	expect_conf_error("processing:\n  write_allow: [10.0.0.0/33]\n  groups: []\n",
			  "an IPv4 prefix is 0 to 32");
	/* A prefix is digits alone: "/-8" is not "no prefix" (a host). */
	expect_conf_error("processing:\n  write_allow: [127.0.0.0/-8]\n  groups: []\n",
			  "an IPv4 prefix is 0 to 32");
	expect_conf_error("processing:\n  write_allow: ['::1/+64']\n  groups: []\n",
			  "an IPv6 prefix is 0 to 128");
	expect_conf_error("collectors:\n  processing: {}\n", "'processing' is the built-in");
	expect_conf_error("processing:\n  sample_interval: 10ms\n  groups: []\n",
			  "'sample_interval' must be between 0.05 and 60");
}

/* A template with one statistic, at line 7 column 13 of t.yml. */
static void expect_tpl_error(const char *stat, const char *want)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml),
		 "processing:\n  groups:\n    - name: g\n      select: m\n      template:\n"
		 "        stats:\n          - %s\n",
		 stat);
	expect_conf_error(yaml, want);
}

/* Each combination FreeBSD's stats(3) refuses, or that would read past
 * what it was given, is a configuration error at its place; what it
 * takes loads. */
static void test_stats3_edge_errors(void **state)
{
	char err[CONF_ERR_MAX];
	(void)state;

	expect_tpl_error("dvhist: {values: [1, 2], lbound_inf: true}",
			 "t.yml:7:50: a dvhist takes neither lbound_inf nor ubound_inf");
	expect_tpl_error("dvhist: {values: [1, 2], ubound_inf: true}",
			 "t.yml:7:50: a dvhist takes neither");
	expect_tpl_error("crhist: {scheme: usr, bounds: [1, 2], ubound_inf: true}",
			 "t.yml:7:63: ubound_inf with a crhist's own bounds");
	expect_tpl_error("drhist: {buckets: [[0, 0]]}",
			 "t.yml:7:21: a drhist bucket [lb, ub) holds lb <= x < ub");
	expect_tpl_error("drhist: {buckets: [[0, 5], [4, 9]]}",
			 "t.yml:7:21: buckets must be in increasing order without overlap");
	expect_tpl_error("drhist: {scheme: lin, buckets: [[0, 5]]}", "unknown key 'scheme'");
	expect_tpl_error("crhist: {scheme: lin, lb: 0, ub: 10, stepinc: 2.5}",
			 "t.yml:7:21: an integer VOI's steps are whole numbers");
	expect_tpl_error("crhist: {scheme: lin, lb: 10, ub: 0, stepinc: 1}",
			 "t.yml:7:21: lb must not be above ub");
	expect_tpl_error("crhist: {scheme: linexp, lb: 0, ub: 10, stepbase: 1, nlinsteps: 2}",
			 "t.yml:7:21: a linexp stepbase must be above 1");
	expect_tpl_error("crhist: {scheme: exp, lb: 0, ub: 1000, stepbase: 2, stepexp: -1}",
			 "t.yml:7:21: an integer VOI's steps are whole numbers");
	expect_tpl_error("crhist: {scheme: lin, lb: 9100000000000000000, ub: "
			 "9200000000000000000, stepinc: 100000000000000000}",
			 "t.yml:7:21: the buckets pass the largest value");
	expect_tpl_error("dvhist: {values: [1, 10000000000000000000]}",
			 "t.yml:7:34: a whole number from -2^63 to 2^63-1 expected");
	/* taken: adjacent ranges, both flags on a drhist, stepbase 1 for exp,
	 * values as far apart as an int64 allows */
	struct config *c = config_load(
	    "t.yml",
	    "processing:\n  groups:\n    - name: g\n      select: m\n      template:\n"
	    "        stats:\n"
	    "          - drhist: {buckets: [[0, 1], [1, 5]], lbound_inf: true, "
	    "ubound_inf: true}\n"
	    "          - crhist: {scheme: exp, lb: 0, ub: 4, stepbase: 1, lbound_inf: true}\n"
	    "          - dvhist: {values: [-9000000000000000000, 9000000000000000000]}\n",
	    "/p", err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	config_free(c);
}

/* Integers of the configuration past 2^53 are read exactly: through a double, ..993 became ..992
 * and ..995 ..996, and the documented default 2^63-1 could not be written. */
static void test_config_integers_exact(void **state)
{
	char err[CONF_ERR_MAX];
	(void)state;

	struct config *c =
	    config_load("t.yml",
			"processing:\n  groups:\n    - name: g\n      select: m\n"
			"      statistics:\n"
			"        - {name: a, type: value, range_min: 9007199254740993, "
			"range_max: 9007199254740995}\n"
			"        - {name: b, type: value, range_min: -9223372036854775808, "
			"range_max: 9223372036854775807}\n"
			"      template:\n        stats:\n"
			"          - dvhist: {values: [9007199254740993, 9007199254740995]}\n"
			"          - drhist: {buckets: [[-9223372036854775808, 9007199254740993], "
			"[9007199254740993, 9223372036854775807]]}\n",
			"/p", err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	const struct processing_group_conf *g = &c->processing->group[0];
	assert_true(g->stat[0].def.range_min == 9007199254740993LL);
	assert_true(g->stat[0].def.range_max == 9007199254740995LL);
	assert_true(g->stat[1].def.range_min == INT64_MIN);
	assert_true(g->stat[1].def.range_max == INT64_MAX);
	assert_int_equal(g->tpl.voi[0].nspec, 2);
	assert_true(g->tpl.voi[0].usr[0][0].lb.i == 9007199254740993LL);
	assert_true(g->tpl.voi[0].usr[0][1].lb.i == 9007199254740995LL);
	assert_true(g->tpl.voi[0].usr[1][0].lb.i == INT64_MIN);
	assert_true(g->tpl.voi[0].usr[1][0].ub.i == 9007199254740993LL);
	assert_true(g->tpl.voi[0].usr[1][1].ub.i == INT64_MAX);
	config_free(c);

	/* one past the s64, and numbers that are not whole, keep their place */
	expect_conf_error("processing:\n  groups:\n    - name: g\n      select: m\n"
			  "      statistics:\n"
			  "        - {name: a, type: value, range_max: 9223372036854775808}\n",
			  "t.yml:6:45: 'range_max' must be a whole number");
	expect_conf_error("processing:\n  groups:\n    - name: g\n      select: m\n"
			  "      statistics:\n"
			  "        - {name: a, type: value, range_min: 1.5}\n",
			  "t.yml:6:45: 'range_min' must be a whole number");
	expect_tpl_error("dvhist: {values: [9007199254740993, 9007199254740992]}", "t.yml:7:21: ");
	expect_tpl_error("dvhist: {values: [1, 9223372036854775808]}",
			 "t.yml:7:34: a whole number from -2^63 to 2^63-1 expected");
	expect_tpl_error("dvhist: {values: [1, 2.5]}",
			 "t.yml:7:34: a whole number from -2^63 to 2^63-1 expected");
}

static void test_write_allow(void **state)
{
	unsigned char v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
	unsigned char v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	(void)state;

	struct processing *p =
	    make("processing:\n  write: true\n  write_allow: [10.1.0.0/16, "
		 "'2001:db8::/32']\n  groups:\n    - {name: g, select: m, statistics: "
		 "[{name: s, type: value}]}\n");
	assert_true(processing_conf_may_write(cfg->processing, v4, NULL));
	v4[13] = 9;
	assert_false(processing_conf_may_write(cfg->processing, v4, NULL));
	assert_true(processing_conf_may_write(cfg->processing, v6, "anyone"));
	v6[3] = 0xb9;
	assert_false(processing_conf_may_write(cfg->processing, v6, NULL));
	done(p);

	/* Users only; then both, each required. */
	p = make("processing:\n  write: true\n  write_users: [alice]\n  groups:\n    - {name: g, "
		 "select: m, statistics: [{name: s, type: value}]}\n");
	assert_true(processing_conf_may_write(cfg->processing, v6, "alice"));
	assert_false(processing_conf_may_write(cfg->processing, v6, "bob"));
	assert_false(processing_conf_may_write(cfg->processing, v6, NULL));
	done(p);
	p = make("processing:\n  write: true\n  write_users: [alice]\n  write_allow: ['::1']\n  "
		 "groups:\n    - {name: g, select: m, statistics: [{name: s, type: value}]}\n");
	unsigned char lo[16] = {[15] = 1};
	assert_true(processing_conf_may_write(cfg->processing, lo, "alice"));
	assert_false(processing_conf_may_write(cfg->processing, v6, "alice"));
	assert_false(processing_conf_may_write(cfg->processing, lo, NULL));
	done(p);
}

/* A writer feeding X = 5 without pause, a reader printing the data: the
 * value total, the range's count and the array's buckets move together
 * under one lock, and the range's figures never disagree. */
struct race {
	struct processing *p;
	volatile bool stop;
	unsigned rounds; /* race_redefine's passes over every type (atomic) */
};

static void *race_feed(void *arg)
{
	struct race *r = arg;
	uint64_t t = 1;
	double v = 0;

	while (!r->stop) {
		v += 5;
		feed_value(r->p, "c_total", NULL, 0, v, t++);
	}
	return NULL;
}

/* A collector writing through the sampler's probe: one family the
 * emitter refuses, one it takes. */
static int probe_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family bad = {.name = "bad-name", .type = BS_GAUGE};
	struct bs_family good = {.name = "ok_gauge", .type = BS_GAUGE};
	struct bs_label l[] = {{"vm", "web1"}};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &bad);
	bs_sample_f64(e, l, 1, 1);
	e->ops->family(e, &good);
	bs_sample_f64(e, l, 1, 2);
	return 0;
}

/* Sources are named by the emitter's rules: what a scrape refuses (a bad
 * family or label name, a label twice) is not kept, and a label value is
 * repaired as /metrics repairs it (invalid UTF-8, bidi controls). */
static void test_keys_by_the_emitters_rules(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - {name: g, select: '{__name__=~\".+\"}',\n"
				    "       statistics: [{name: n, type: value}]}\n");
	struct bs_label reserved[] = {{"__x", "1"}}, dash[] = {{"a-b", "1"}},
			twice[] = {{"vm", "a"}, {"vm", "b"}},
			hostile[] = {{"vm", "\xff\xfe\u202eevil"}};
	int status;
	(void)state;

	assert_false(feed_value(p, "m", reserved, 1, 1, S(0)));
	assert_false(feed_value(p, "m", dash, 1, 1, S(0)));
	assert_false(feed_value(p, "m", twice, 2, 1, S(0)));
	assert_true(feed_value(p, "m", hostile, 1, 1, S(0)));
	p->in = (struct stage_input){.n = 1, .collect = probe_collect};
	sampler_tick(p, S(1));
	char *text = iface_as(p, "GET", "", NULL, false, S(1), &status);
	assert_string_equal(text, "g/0 m{vm=\"\uFFFD\uFFFD\uFFFDevil\"}\n"
				  "g/1 ok_gauge{vm=\"web1\"}\n");
	free(text);
	p->in = (struct stage_input){0};
	done(p);
}

/* A label value at the emitter's cap is kept, whatever it escapes to;
 * labels longer than a key holds are counted, not silently skipped. */
static void test_long_keys(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: m, statistics: [{name: n, type: value}]}\n");
	static char hostile[NAMES_LABEL_VALUE_MAX + 1];
	struct bs_label one[] = {{"vm", hostile}}, six[6];
	(void)state;

	memset(hostile, 0xff, NAMES_LABEL_VALUE_MAX); /* each byte escapes to 3 */
	assert_true(feed_value(p, "m", one, 1, 1, S(0)));
	for (size_t i = 0; i < 6; i++)
		six[i] =
		    (struct bs_label){(const char *[]){"a", "b", "c", "d", "e", "f"}[i], hostile};
	assert_false(feed_value(p, "m", six, 6, 1, S(0)));
	assert_int_equal(p->count.key_too_long, 1);
	char *text = metrics(p);
	assert_non_null(
	    strstr(text, "binstat_processing_dropped_total{reason=\"key_too_long\"} 1\n"));
	free(text);
	done(p);
}

static void test_sampler_races_reader(void **state)
{
	struct race r = {
	    .p = make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
		      "      x: delta\n      statistics:\n"
		      "        - {name: n, type: value}\n"
		      "        - {name: r, type: range}\n"
		      "        - {name: a, type: array, range_min: 0, range_max: 8}\n")};
	pthread_t th;
	int status, reads = 0;
	(void)state;

	assert_int_equal(pthread_create(&th, NULL, race_feed, &r), 0);
	for (int i = 0; i < 10000; i++) { /* until the writer's second value is in */
		pthread_mutex_lock(&r.p->lock);
		bool fed = r.p->count.values > 0;
		pthread_mutex_unlock(&r.p->lock);
		if (fed)
			break;
		usleep(1000);
	}
	for (int i = 0; i < 3000; i++) {
		char *text = iface_as(r.p, "GET", "g/0/data", NULL, false, UINT64_MAX, &status);
		unsigned long long n = 0, num = 0, sum = 0, hits;
		char *line = strstr(text, "n ");
		if (line && sscanf(line, "n %llu", &n) == 1 && (line = strstr(text, "\nr "))) {
			if (n == 0) {
				free(text);
				continue;
			}
			char want[96];
			if (sscanf(line, "\nr %llu", &num) != 1)
				fail_msg("%s", text);
			snprintf(want, sizeof(want), "\nr %llu 5 5.000 5\n", num);
			if (!strstr(text, want) || num != n)
				fail_msg("half-updated: %s", text);
			for (char *a = text; (a = strstr(a, "\na ")); a++)
				if (sscanf(strchr(a + 3, ' '), " %llu", &hits) == 1)
					sum += hits;
			if (sum != n)
				fail_msg("array holds %llu of %llu: %s", sum, n, text);
			reads++;
		}
		free(text);
	}
	r.stop = true;
	pthread_join(th, NULL);
	assert_int_equal(reads, 3000);
	done(r.p);
}

/* Type changes under load: a writer feeds, another client redefines the
 * statistic through every type, a reader prints it. Nothing may crash or
 * leak (the suite also runs under ASan), every read is a whole
 * definition line and a whole set of families, and the last definition
 * holds at the end. */
static void *race_redefine(void *arg)
{
	static const char *const lines[] = {
	    "name=s type=array range_min=0 range_max=64 base_interval=4 scale=log2",
	    "name=s type=list entries_max=16",
	    "name=s type=raw entries_max=8",
	    "name=s type=history entries_max=4 period=1000 mode=range",
	    "name=s type=value mode=products",
	    "name=s type=range data=reset"};
	struct race *r = arg;
	int status;

	for (unsigned i = 0; !r->stop; i++) {
		free(iface_as(r->p, "POST", "g/0/definition", lines[i % 6], true, i, &status));
		if (i % 6 == 5)
			__atomic_add_fetch(&r->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_type_changes_under_load(void **state)
{
	struct race r = {.p = make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
				   "      x: delta\n      statistics: [{name: s, type: range}]\n")};
	pthread_t feeder, redefiner;
	int status;
	(void)state;

	feed_value(r.p, "c_total", NULL, 0, 0, 0); /* the source exists from here */
	assert_int_equal(pthread_create(&feeder, NULL, race_feed, &r), 0);
	assert_int_equal(pthread_create(&redefiner, NULL, race_redefine, &r), 0);
	/* 2000 reads, and on until the redefiner went through every type
	 * once (a loaded host may start it late), within a bound */
	for (int i = 0; i < 2000 || (!__atomic_load_n(&r.rounds, __ATOMIC_RELAXED) && i < 200000);
	     i++) {
		char *def = iface_as(r.p, "GET", "g/0/definition", NULL, false, 0, &status);
		assert_int_equal(status, 200);
		assert_non_null(strstr(def, "name=s on=1 type="));
		free(def);
		free(iface_as(r.p, "GET", "g/0/data", NULL, false, UINT64_MAX, &status));
		char *m = metrics(r.p);
		assert_non_null(strstr(m, "s_out_of_range_total"));
		free(m);
	}
	r.stop = true;
	pthread_join(feeder, NULL);
	pthread_join(redefiner, NULL);
	free(iface_as(r.p, "POST", "g/0/definition", "name=s type=list entries_max=2 range_min=0",
		      true, 1, &status));
	char *def = iface_as(r.p, "GET", "g/0/definition", NULL, false, 1, &status);
	assert_non_null(strstr(def, "type=list range_min=0 range_max=64 "
				    "entries_max=2 hits_missed="));
	free(def);
	done(r.p);
}

/* ---- the /statistics/ interface ---- */

/* A gauge "g" of 1, no labels. */
static int gauge_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family f = {.name = "g", .type = BS_GAUGE};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &f);
	bs_sample_f64(e, NULL, 0, 1);
	return 0;
}

/* A collector whose series come in the order and with the values a test
 * sets for each pass. */
struct ordered {
	const char *vm[4];
	double v[4];
	size_t n;
};

static int ordered_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	const struct ordered *o = ctx;
	struct bs_family f = {.name = "m", .type = BS_GAUGE};
	char vm[16];
	struct bs_label l[] = {{"vm", vm}};
	(void)i, (void)wait_ns;

	e->ops->family(e, &f);
	for (size_t k = 0; k < o->n; k++) {
		snprintf(vm, sizeof(vm), "%s", o->vm[k]); /* one buffer, as collectors do */
		bs_sample_f64(e, l, 1, o->v[k]);
	}
	return 0;
}

/* The sampler looks for each series after the one its collector wrote
 * before it in the last pass: whatever the order, a series feeds its own
 * source in each group, one that repairs to another's key feeds that
 * one, and sources expired between passes are never looked at again. */
static void test_series_in_any_order(void **state)
{
	struct processing *p = make(
	    "processing:\n  source_ttl: 10s\n  groups:\n"
	    "    - {name: g, select: m, statistics: [{name: t, type: value, mode: products}]}\n"
	    "    - {name: h, select: 'm{vm!=\"b\"}',\n"
	    "       statistics: [{name: u, type: value, mode: products}]}\n");
	struct ordered o = {{"a", "b", "c"}, {1, 2, 3}, 3};
	int status;
	(void)state;

	p->in = (struct stage_input){.n = 1, .collect = ordered_collect, .ctx = &o};
	sampler_tick(p, S(1));
	o = (struct ordered){{"a", "b", "c"}, {10, 20, 30}, 3};
	sampler_tick(p, S(2));
	o = (struct ordered){{"c", "a", "b"}, {100, 200, 300}, 3};
	sampler_tick(p, S(3));
	o = (struct ordered){{"b", "\xff", "c", "a"}, {1000, 5, 3000, 2000}, 4};
	sampler_tick(p, S(4));
	o = (struct ordered){{"b", "\xfe", "c", "a"}, {10000, 7, 30000, 20000}, 4};
	sampler_tick(p, S(5));
	char *text = iface_as(p, "GET", "", NULL, false, S(5), &status);
	assert_string_equal(text, "g/0 m{vm=\"a\"}\ng/1 m{vm=\"b\"}\ng/2 m{vm=\"c\"}\n"
				  "g/3 m{vm=\"\uFFFD\"}\n"
				  "h/0 m{vm=\"a\"}\nh/1 m{vm=\"c\"}\nh/2 m{vm=\"\uFFFD\"}\n");
	free(text);
	const char *want[][2] = {{"g/0/data", "t 22211\n"}, {"g/1/data", "t 11322\n"},
				 {"g/2/data", "t 33133\n"}, {"g/3/data", "t 12\n"},
				 {"h/0/data", "u 22211\n"}, {"h/1/data", "u 33133\n"},
				 {"h/2/data", "u 12\n"}};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		text = iface_as(p, "GET", want[k][0], NULL, false, S(5), &status);
		assert_string_equal(text, want[k][1]);
		free(text);
	}
	/* all but b expire after b was fed: b's successor is forgotten */
	o = (struct ordered){{"b"}, {1}, 1};
	sampler_tick(p, S(16));
	assert_int_equal(p->count.expired_sources, 6);
	o = (struct ordered){{"b", "c", "a"}, {2, 4, 8}, 3};
	sampler_tick(p, S(17));
	sampler_tick(p, S(18));
	text = iface_as(p, "GET", "", NULL, false, S(18), &status);
	assert_string_equal(text, "g/1 m{vm=\"b\"}\ng/4 m{vm=\"c\"}\ng/5 m{vm=\"a\"}\n"
				  "h/3 m{vm=\"c\"}\nh/4 m{vm=\"a\"}\n");
	free(text);
	text = iface_as(p, "GET", "g/1/data", NULL, false, S(18), &status);
	assert_string_equal(text, "t 11327\n");
	free(text);
	text = iface_as(p, "GET", "h/4/data", NULL, false, S(18), &status);
	assert_string_equal(text, "u 16\n");
	free(text);
	p->in = (struct stage_input){0};
	done(p);
}

/* The Linux statistics infrastructure takes each value at the time its pass was due, so
 * with passes at 4 Hz run up to 199 ms late, every 1 s period holds 4
 * (with the time each ran, a late boundary pass lands in the next). */
static void test_history_by_due_time(void **state)
{
	struct processing *p = make("processing:\n  groups:\n    - name: g\n      select: g\n"
				    "      statistics:\n        - {name: h, type: history, mode: "
				    "increments, period: 1s, entries_max: 16}\n");
	uint64_t t0 = S(100.1234);
	int status;
	(void)state;

	p->in = (struct stage_input){.n = 1, .collect = gauge_collect};
	for (uint64_t k = 0; k < 40; k++) {
		uint64_t due = t0 + k * S(0.25), late = k * 7919 % 200 * 1000000;
		sampler_tick_at(p, due, due + late);
	}
	char *text = iface_as(p, "GET", "g/0/data", NULL, false, S(110), &status);
	assert_string_equal(text, "h [100.000000] 4\nh [101.000000] 4\nh [102.000000] 4\n"
				  "h [103.000000] 4\nh [104.000000] 4\nh [105.000000] 4\n"
				  "h [106.000000] 4\nh [107.000000] 4\nh [108.000000] 4\n"
				  "h [109.000000] 4\nh [110.000000] 0\n");
	free(text);
	p->in = (struct stage_input){0};
	done(p);
}

/* A POST is all or nothing, and its reply names every refused
 * line with its error (the infrastructure's errno names); through the
 * interface: an overlong word refuses its line. */
static void test_post_all_or_nothing(void **state)
{
	struct processing *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	char body[1024], word[300];
	int status;
	(void)state;

	feed_value(p, "kvm_exits_total", web, 1, 1, S(0));
	feed_value(p, "kvm_exits_total", web, 1, 4, S(1)); /* X = 3 */
	char *before = iface_as(p, "GET", "ex/0/definition", NULL, false, S(2), &status);
	memset(word, 'a', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	snprintf(body, sizeof(body),
		 "on=0\nname=%s data=reset\nname=ex_r type=list entries_max=4\n"
		 "name=ex entries_max=4\nname=ex_n range_max=x\ndata=reset",
		 word);
	char *text = iface_as(p, "POST", "ex/0/definition", body, true, S(2), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "line 2: EFBIG: a word is longer than 255 bytes\n"
				  "line 4: EOPNOTSUPP: a template's statistics are fixed: only "
				  "on= and data=reset\n"
				  "line 5: EINVAL: range_max must be a number\n"
				  "nothing applied: 3 lines refused\n");
	free(text);
	text = iface_as(p, "GET", "ex/0/definition", NULL, false, S(2), &status);
	assert_string_equal(text, before); /* on=0 and the type change did not apply */
	free(text);
	free(before);
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(2), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 3 3.000 3\nex_sum 3\nex_max 3\n");
	free(text);
	/* each line is checked against what the lines before it leave */
	text = iface_as(p, "POST", "ex/0/definition",
			"name=ex_r type=list entries_max=4\nname=ex_r entries_max=8 range_max=9\n",
			true, S(3), &status);
	assert_int_equal(status, 200);
	assert_string_equal(text, "ok\n");
	free(text);
	text = iface_as(p, "GET", "ex/0/definition", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "name=ex_r on=1 type=list range_min=0 range_max=9 "
				     "entries_max=8 hits_missed=0"));
	free(text);
	/* A key twice is refused, not read as its first one */
	before = iface_as(p, "GET", "ex/0/definition", NULL, false, S(4), &status);
	static const char *const twice[] = {"name=ex_r name=ex_n range_max=77",
					    "name=ex_r range_max=7 range_max=8", "on=0 on=1",
					    "name=ex_r type=range type=range"};
	for (size_t i = 0; i < sizeof(twice) / sizeof(twice[0]); i++) {
		text = iface_as(p, "POST", "ex/0/definition", twice[i], true, S(4), &status);
		assert_int_equal(status, 400);
		assert_string_equal(text, "line 1: EINVAL: an attribute named twice in one line\n"
					  "nothing applied: 1 line refused\n");
		free(text);
	}
	text = iface_as(p, "GET", "ex/0/definition", NULL, false, S(4), &status);
	assert_string_equal(text, before);
	free(text);
	free(before);
	free(iface_as(p, "GET", "ex/00/definition", NULL, false, S(4), &status)); /* strict ids */
	assert_int_equal(status, 404);
	done(p);
}

/* Off is off for everything of the interface, the template too;
 * the template alone answers to its name. */
static void test_off_stops_template(void **state)
{
	struct processing *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	int status;
	(void)state;

	feed_value(p, "kvm_exits_total", web, 1, 0, S(0));
	feed_value(p, "kvm_exits_total", web, 1, 2, S(1));
	free(iface_as(p, "POST", "ex/0/definition", "on=0", true, S(2), &status));
	assert_int_equal(status, 200);
	feed_value(p, "kvm_exits_total", web, 1, 5, S(3));
	char *text = iface_as(p, "GET", "ex/0/definition", NULL, false, S(4), &status);
	assert_non_null(strstr(text, "# template=ex state=off sampled=1 relative=0 updates=1\n"));
	free(text);
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(4), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 2 2.000 2\nex_sum 2\nex_max 2\n");
	free(text);
	/* on=1 starts it all again; name=<template> reaches it alone */
	free(iface_as(p, "POST", "ex/0/definition", "on=1\nname=ex on=0 data=reset", true, S(5),
		      &status));
	assert_int_equal(status, 200);
	feed_value(p, "kvm_exits_total", web, 1, 9, S(6));
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(7), &status);
	assert_string_equal(text, "ex_n 2\nex_r 2 2 3.000 4\nex_sum 0\n");
	free(text);
	text = iface_as(p, "POST", "ex/0/definition", "name=ex type=value mode=increments", true,
			S(8), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "line 1: EOPNOTSUPP: a template's statistics are fixed: only "
				  "on= and data=reset\nnothing applied: 1 line refused\n");
	free(text);
	done(p);
}

/* An empty digest has no quantile lines, its count and sum 0. */
static void test_empty_digest_lines(void **state)
{
	struct processing *p = make("processing:\n  groups:\n    - {name: g, select: m, "
				    "template: {stats: [min, {tdigest: {quantiles: [0.5]}}]}}\n");
	int status;
	(void)state;

	feed_value(p, "m", NULL, 0, 3, S(0));
	char *text = iface_as(p, "GET", "g/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "g_min 3\ng_tdigest 0.5 3\ng_tdigest count 1\ng_tdigest sum 3\n");
	free(text);
	free(iface_as(p, "POST", "g/0/definition", "data=reset", true, S(1), &status));
	text = iface_as(p, "GET", "g/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "g_tdigest count 0\ng_tdigest sum 0\n");
	free(text);
	done(p);
}

static const char *two_tpl_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: ex\n"
    "      select: ex_total\n"
    "      template: {name: ex_voi, sample_pct: 0, stats: [sum]}\n"
    "    - name: io\n"
    "      select: io_total\n"
    "      x: delta\n"
    "      template: {stats: [sum, max, {crhist: {scheme: usr, bounds: [0, 10]}}]}\n";

/* The template list with slot ids and hashes, found by id
 * (stats_tpl_id2name) or spec (stats_tpl_fetch_allocid), with stats(3)'s
 * error names. */
static void test_template_list(void **state)
{
	struct processing *p = make(two_tpl_yaml);
	char want[256], path[128];
	int status;
	(void)state;

	uint32_t h0 = p->tpl[0].hash, h1 = p->tpl[1].hash;
	assert_int_not_equal(h0, h1);
	char *text = iface_as(p, "GET", "templates", NULL, false, 0, &status);
	snprintf(want, sizeof(want), "0 \"ex_voi\":%u\n1 \"io\":%u\n", h0, h1);
	assert_string_equal(text, want);
	free(text);
	snprintf(want, sizeof(want), "1 \"io\":%u\n", h1);
	snprintf(path, sizeof(path), "templates/\"io\":%u", h1);
	static const char *const ways[] = {"templates/1", "templates/io", "templates/\"io\"", NULL};
	for (size_t i = 0; i < 4; i++) {
		text = iface_as(p, "GET", ways[i] ? ways[i] : path, NULL, false, 0, &status);
		assert_int_equal(status, 200);
		assert_string_equal(text, want);
		free(text);
	}
	snprintf(path, sizeof(path), "templates/:%u", h1);
	text = iface_as(p, "GET", path, NULL, false, 0, &status);
	assert_string_equal(text, want);
	free(text);
	snprintf(path, sizeof(path), "templates/io:%u", h0); /* name and hash disagree */
	text = iface_as(p, "GET", path, NULL, false, 0, &status);
	assert_int_equal(status, 404);
	assert_string_equal(text, "ESRCH: no template matches\n");
	free(text);
	text = iface_as(p, "GET", "templates/2", NULL, false, 0, &status);
	assert_int_equal(status, 404);
	assert_string_equal(text, "ENOENT: no template has that id\n");
	free(text);
	text = iface_as(p, "GET", "templates/io:x", NULL, false, 0, &status);
	assert_int_equal(status, 400);
	assert_true(strncmp(text, "EINVAL: ", 8) == 0);
	free(text);
	/* Ids are strict decimals; an empty one (".../%00",
	 * decoded by the server to a NUL) is no id, never slot 0. */
	static const char *const not_ids[] = {"templates/00", "templates/01", "templates/",
					      "templates/0x0"};
	for (size_t i = 0; i < sizeof(not_ids) / sizeof(not_ids[0]); i++) {
		text = iface_as(p, "GET", not_ids[i], NULL, false, 0, &status);
		assert_int_equal(status, 400);
		if (strncmp(text, "EINVAL: ", 8) != 0)
			fail_msg("%s: %s", not_ids[i], text);
		free(text);
	}
	text = iface_as(p, "GET", "templates/0", NULL, false, 0, &status);
	assert_int_equal(status, 200);
	free(text);
	/* kern.stats.templates' form: "name":hash, comma separated. */
	text = iface_as(p, "GET", "templates?format=sysctl", NULL, false, 0, &status);
	assert_int_equal(status, 200);
	snprintf(want, sizeof(want), "\"ex_voi\":%u,\"io\":%u\n", h0, h1);
	assert_string_equal(text, want);
	free(text);
	/* stats_tpl_fetch: a template's schema, a blob made from it and not
	 * yet updated (each statistic null, as stats(3) writes one not yet
	 * set), by slot id or by spec alike. */
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"io\",\"tplhash\":%u,\"vois\":{\"io\":{\"stats\":{"
		 "\"SUM\":null,\"MAX\":null,\"HIST\":null}}}}\n",
		 h1);
	static const char *const schema[] = {"templates/1?format=json", "templates/io?format=json"};
	for (size_t i = 0; i < 2; i++) {
		text = iface_as(p, "GET", schema[i], NULL, false, 0, &status);
		assert_int_equal(status, 200);
		assert_string_equal(text, want);
		free(text);
	}
	static const char *const refused[] = {"templates?format=json", "templates/1?format=sysctl",
					      "ex/0/data?format=sysctl"};
	for (size_t i = 0; i < 3; i++) {
		text = iface_as(p, "GET", refused[i], NULL, false, 0, &status);
		assert_int_equal(status, 400);
		free(text);
	}
	done(p);
}

/* A template name used twice is stats_tpl_alloc's EEXIST. */
static void test_template_name_twice(void **state)
{
	(void)state;
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: a, select: m, template: {name: t, stats: [sum]}}\n"
			  "    - {name: b, select: n, template: {name: t, stats: [max]}}\n",
			  "t.yml:4:38: EEXIST: template 't' is group 'a''s already");
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: a, select: m, template: {stats: [sum]}}\n"
			  "    - {name: b, select: n, template: {name: a, stats: [max]}}\n",
			  "EEXIST: template 'a' is group 'a''s already");
	expect_conf_error("processing:\n  groups:\n    - {name: a, select: m, x: rate,\n"
			  "       template: {dtype: u64, stats: [sum]}}\n",
			  "x: rate makes the VOI a double");
}

/* A family name is one statistic's or template's
 * across the processing; a clash is refused at the later definition. */
static void test_family_names_clash(void **state)
{
	(void)state;
	/* two groups, one statistic name: refused, not merged */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: ga, select: fv, statistics: [{name: lat, type: value}]}\n"
			  "    - {name: gb, select: fw, statistics: [{name: lat, type: value}]}\n",
			  "t.yml:4:43: EEXIST: statistic 'lat' of group 'gb' serves 'lat', as "
			  "statistic 'lat' of group 'ga' does");
	/* a template's t_min and a statistic t_min (t_min_total) */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: t_min, type: value}],\n"
			  "       template: {name: t, stats: [sum, max, min]}}\n",
			  "t.yml:4:18: EEXIST: template 't' of group 'g' serves 't_min', as "
			  "statistic 't_min' of group 'g' does");
	/* a range's a_max and a value a_max */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: a, type: range},\n"
			  "       {name: a_max, type: value}]}\n",
			  "t.yml:4:8: EEXIST: statistic 'a_max' of group 'g' serves 'a_max'");
	/* an array's a_count and a value a_count (a_count_total) */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: a, type: array,\n"
			  "       range_min: 0, range_max: 9}, {name: a_count, type: value}]}\n",
			  "serves 'a_count'");
	/* what does not clash loads: a value a beside a value a_max */
	char err[CONF_ERR_MAX];
	struct config *c =
	    config_load("t.yml",
			"processing:\n  groups:\n"
			"    - {name: g, select: fv, statistics: [{name: a, type: value},"
			" {name: a_max, type: value}]}\n",
			"/p", err, sizeof(err));
	if (!c)
		fail_msg("%s", err);
	config_free(c);
	/* and a write that would make a clash is EEXIST, all or nothing */
	struct processing *p =
	    make("processing:\n  groups:\n"
		 "    - {name: g, select: fv, statistics: [{name: a, type: value},\n"
		 "       {name: a_max, type: value}]}\n"
		 "    - {name: h, select: fw, template: {name: t, stats: [sum]}}\n");
	int status;
	feed_value(p, "fv", NULL, 0, 3, S(0));
	char *before = iface_as(p, "GET", "g/0/definition", NULL, false, S(1), &status);
	char *text = iface_as(p, "POST", "g/0/definition",
			      "name=a_max range_max=5\nname=a type=range", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "EEXIST: a would serve 'a_max', which statistic 'a_max' of "
				  "group 'g' serves: a family name is one family's across the "
				  "processing\nnothing applied: 1 line refused\n");
	free(text);
	text = iface_as(p, "GET", "g/0/definition", NULL, false, S(1), &status);
	assert_string_equal(text, before);
	free(text);
	free(before);
	text = iface_as(p, "POST", "g/0/definition",
			"name=a_max type=history mode=range period=1000000 "
			"entries_max=4",
			true, S(1), &status); /* its own names change: no clash */
	assert_int_equal(status, 200);
	free(text);
	text = iface_as(p, "POST", "g/0/definition", "name=a_max type=value mode=increments", true,
			S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	text = iface_as(p, "POST", "g/0/definition",
			"name=a_max type=array scale=lin base_interval=1 "
			"range_min=0 range_max=4",
			true, S(1), &status);
	assert_int_equal(status, 200); /* a_max's own names change: no clash */
	free(text);
	done(p);
}

/* Sample rates read and changed at run time as
 * stats_tpl_sample_rates reads and writes them; a raised rate gives the
 * sources VOIs, a lowered one takes them; a refused write changes none. */
static void test_sample_rates(void **state)
{
	struct processing *p = make(two_tpl_yaml);
	char want[256], body[128];
	int status;
	(void)state;

	for (int i = 0; i < 8; i++) {
		struct bs_label l[] = {
		    {"vm", (const char *[]){"a", "b", "c", "d", "e", "f", "g", "h"}[i]}};
		feed_value(p, "ex_total", l, 1, 7, S(0));
	}
	uint32_t h0 = p->tpl[0].hash, h1 = p->tpl[1].hash;
	char *text = iface_as(p, "GET", "sample_rates", NULL, false, 0, &status);
	snprintf(want, sizeof(want), "\"ex_voi\":%u=0,\"io\":%u=100\n", h0, h1);
	assert_string_equal(text, want);
	free(text);
	free(iface_as(p, "POST", "sample_rates", "ex_voi=100", false, S(1), &status));
	assert_int_equal(status, 403);
	/* refused as a whole: the first pair is good, the second names nothing */
	text = iface_as(p, "POST", "sample_rates", "ex_voi=100, nosuch=5", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "ESRCH: pair 2: no template matches\n");
	free(text);
	text = iface_as(p, "POST", "sample_rates", "ex_voi=101", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "EINVAL: a sample rate is a whole percentage, 0 to 100\n");
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	/* one template named twice, in any spec form, is EINVAL as a
	 * definition's attribute named twice is */
	text = iface_as(p, "POST", "sample_rates", "ex_voi=0,ex_voi=100", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "EINVAL: pair 2: template \"ex_voi\" named twice (pair 1)\n");
	free(text);
	snprintf(body, sizeof(body), "\"ex_voi\":%u=10, :%u=100,\n", h0, h0);
	text = iface_as(p, "POST", "sample_rates", body, true, S(1), &status);
	assert_int_equal(status, 400);
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	/* every spec form */
	snprintf(body, sizeof(body), "\"ex_voi\":%u=100, :%u=50,\n", h0, h1);
	text = iface_as(p, "POST", "sample_rates", body, true, S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_true(p->src[i]->sampled);
	feed_value(p, "ex_total", (struct bs_label[]){{"vm", "a"}}, 1, 9, S(2));
	text = iface_as(p, "GET", "ex/0/data", NULL, false, S(2), &status);
	assert_string_equal(text, "ex_voi_sum 9\n"); /* a VOI from the change on */
	free(text);
	free(iface_as(p, "POST", "sample_rates", "ex_voi=0", true, S(3), &status));
	assert_int_equal(status, 200);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	done(p);
}

/* A source's blob in stats_blob_tostr's JSON shape
 * (SB_STRFMT_JSON with SB_TOSTR_META), every statistic visited, one not
 * yet updated null. */
static void test_blob_json(void **state)
{
	struct processing *p = make(two_tpl_yaml);
	char want[512];
	int status;
	(void)state;

	feed_value(p, "io_total", NULL, 0, 10, S(0));
	char *text = iface_as(p, "GET", "io/0/data?format=json", NULL, false, S(1), &status);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"io\",\"tplhash\":%u,\"vois\":{\"io\":{\"stats\":{\"SUM\":null,"
		 "\"MAX\":null,\"HIST\":null}}}}\n",
		 p->tpl[1].hash);
	assert_string_equal(text, want);
	free(text);
	feed_value(p, "io_total", NULL, 0, 13, S(1));
	feed_value(p, "io_total", NULL, 0, 25, S(2));
	text = iface_as(p, "GET", "io/0/data?format=json", NULL, false, S(3), &status);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"io\",\"tplhash\":%u,\"vois\":{\"io\":{\"stats\":{"
		 "\"SUM\":{\"errs\":0,\"val\":15},\"MAX\":{\"errs\":0,\"val\":12},"
		 "\"HIST\":{\"errs\":0,\"nbkts\":2,\"oob\":0,\"bkts\":["
		 "{\"lb\":0,\"ub\":10,\"cnt\":1},{\"lb\":10,\"ub\":9223372036854775807,"
		 "\"cnt\":1}]}}}}}\n",
		 p->tpl[1].hash);
	assert_string_equal(text, want);
	free(text);
	/* snapshot?format=json: the same, then reset */
	text = iface_as(p, "POST", "io/0/snapshot?format=json", NULL, true, S(3), &status);
	assert_string_equal(text, want);
	free(text);
	text = iface_as(p, "GET", "io/0/data?format=json", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "\"SUM\":null"));
	free(text);
	free(iface_as(p, "GET", "io/0/data?format=xml", NULL, false, S(3), &status));
	assert_int_equal(status, 400);
	text = iface_as(p, "GET", "ex/0/data?format=json", NULL, false, S(3), &status);
	assert_int_equal(status, 404); /* no source of ex yet */
	free(text);
	done(p);
}

/* A list of entries_max 2 fed five distinct X (and one repeat): the
 * first two are kept, the other three are missed, and /metrics serves
 * that count, not only the family's type. */
static void test_list_missed_on_metrics(void **state)
{
	struct processing *p = make(
	    "processing:\n  groups:\n"
	    "    - {name: g, select: lv, statistics: [{name: l, type: list, entries_max: 2}]}\n");
	static const double x[] = {4, 9, 4, 1, 7, 12};
	int status;
	(void)state;

	for (int k = 0; k < 6; k++)
		feed_value(p, "lv", NULL, 0, x[k], S(1 + k));
	char *text = iface_as(p, "GET", "g/0/data", NULL, false, S(7), &status);
	assert_string_equal(text, "l 0x4 2\nl 0x9 1\n");
	free(text);
	text = metrics(p);
	has(text, "# TYPE l_missed_total counter\nl_missed_total{source_metric=\"lv\"} 3\n");
	has(text, "l_count{source_metric=\"lv\"} 6\n");
	free(text);
	done(p);
}

/* stats(3)'s relative updates (`relative: true`): each X is added to the
 * VOI's previous value. Deltas 3, 7 and 5 (the counter went back: its new
 * value) make the values 3, 10, 15; without relative they are 3, 7, 5. */
static void test_relative_template(void **state)
{
	struct processing *p = make("processing:\n  groups:\n"
				    "    - {name: rel, select: c_total, x: delta,\n"
				    "       template: {relative: true, stats: [sum, max, min]}}\n"
				    "    - {name: abs, select: c_total, x: delta,\n"
				    "       template: {stats: [sum, max, min]}}\n");
	static const double c[] = {10, 13, 20, 5};
	int status;
	(void)state;

	for (int k = 0; k < 4; k++)
		feed_value(p, "c_total", NULL, 0, c[k], S(k));
	char *text = iface_as(p, "GET", "rel/0/data", NULL, false, S(4), &status);
	assert_string_equal(text, "rel_sum 28\nrel_max 15\nrel_min 3\n");
	free(text);
	text = iface_as(p, "GET", "abs/0/data", NULL, false, S(4), &status);
	assert_string_equal(text, "abs_sum 15\nabs_max 7\nabs_min 3\n");
	free(text);
	text = iface_as(p, "GET", "rel/0/definition", NULL, false, S(4), &status);
	has(text, "# template=rel state=on sampled=1 relative=1 updates=3\n");
	free(text);
	text = metrics(p);
	has(text, "rel_sum_of_values{source_metric=\"c_total\"} 28\n");
	has(text, "rel_max{source_metric=\"c_total\"} 15\n");
	free(text);
	/* A reset keeps the base: the next delta, 2, adds to 15. */
	free(iface_as(p, "POST", "rel/0/definition", "data=reset", true, S(4), &status));
	feed_value(p, "c_total", NULL, 0, 7, S(5));
	text = iface_as(p, "GET", "rel/0/data", NULL, false, S(5), &status);
	assert_string_equal(text, "rel_sum 17\nrel_max 17\nrel_min 17\n");
	free(text);
	done(p);
}

/* A double VOI (x: rate) whose figures are not finite. The sampler
 * never gives one a non-finite X, but sums of finite ones pass the
 * largest double: rates of 1e308 make SUM +Inf (and -1e308 -Inf); and a
 * VOI given +inf, then -inf, sums to NaN. The JSON stays JSON (Prometheus'
 * HTTP API's strings "+Inf", "-Inf", "NaN"); /metrics shows them as
 * Prometheus does, and a histogram whose sum is NaN is served without
 * its _sum rather than dropped. */
static void test_non_finite_double_voi(void **state)
{
	struct processing *p = make(
	    "processing:\n  groups:\n"
	    "    - {name: up, select: c_total, x: rate, x_scale: 1e18,\n"
	    "       template: {stats: [sum, max]}}\n"
	    "    - {name: dn, select: d, x: rate, x_scale: 1e18,\n"
	    "       template: {stats: [sum, min]}}\n"
	    "    - {name: nn, select: g, x: rate,\n"
	    "       template: {stats: [sum, max, min, {crhist: {scheme: usr, bounds: [0]}}]}}\n");
	char want[512];
	int status;
	(void)state;

	for (int k = 0; k < 3; k++) /* rates 1e290 a second twice: X 1e308 */
		feed_value(p, "c_total", NULL, 0, k * 1e290, S(k));
	/* a gauge that goes back: X is its new value, -1e290, then -1.5e290 */
	static const double d[] = {0, -1e290, -1.5e290};
	for (int k = 0; k < 3; k++)
		feed_value(p, "d", NULL, 0, d[k], S(k));
	char *text = iface_as(p, "GET", "up/0/data?format=json", NULL, false, S(3), &status);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"up\",\"tplhash\":%u,\"vois\":{\"up\":{\"stats\":{"
		 "\"SUM\":{\"errs\":0,\"val\":\"+Inf\"},\"MAX\":{\"errs\":0,\"val\":1",
		 p->tpl[0].hash);
	assert_memory_equal(text, want, strlen(want));
	has(text, "e+308}}}}}\n");
	free(text);
	text = iface_as(p, "GET", "dn/0/data?format=json", NULL, false, S(3), &status);
	has(text, "\"SUM\":{\"errs\":0,\"val\":\"-Inf\"},\"MIN\":{\"errs\":0,\"val\":-1.5e+308}");
	free(text);
	text = metrics(p);
	has(text, "up_sum_of_values{source_metric=\"c_total\"} +Inf\n");
	has(text, "dn_sum_of_values{source_metric=\"d\"} -Inf\n");
	free(text);

	feed_value(p, "g", NULL, 0, 0, S(0));
	feed_value(p, "g", NULL, 0, 1, S(1)); /* the source, with X 1 */
	assert_int_equal(p->srcs.n, 3);
	struct source *s = p->src[2];
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = INFINITY}}), 0);
	assert_int_equal(
	    vstats_update_abs(&s->voi, (struct vstats_value){VSTATS_FLOAT, {.f = -INFINITY}}), 0);
	text = iface_as(p, "GET", "nn/0/data?format=json", NULL, false, S(2), &status);
	has(text,
	    "\"SUM\":{\"errs\":0,\"val\":\"NaN\"},\"MAX\":{\"errs\":0,\"val\":\"+Inf\"},"
	    "\"MIN\":{\"errs\":0,\"val\":\"-Inf\"},\"HIST\":{\"errs\":0,\"nbkts\":1,\"oob\":1,"
	    "\"bkts\":[{\"lb\":0,\"ub\":\"+Inf\",\"cnt\":2}]}");
	free(text);
	text = metrics(p);
	has(text, "nn_sum_of_values{source_metric=\"g\"} NaN\n");
	has(text, "nn_max{source_metric=\"g\"} +Inf\n");
	has(text, "nn_min{source_metric=\"g\"} -Inf\n");
	has(text, "nn_crhist_bucket{source_metric=\"g\",le=\"+Inf\"} 3\n");
	has(text, "nn_crhist_count{source_metric=\"g\"} 3\n");
	assert_null(strstr(text, "nn_crhist_sum"));
	free(text);
	done(p);
}

/* A template of three VOIs, one blob per VM: exits (the group's own
 * series, u64), halt (the VM's histogram of halt times) and faults (its
 * fault counter, relative updates), each fed by its own series with the
 * VM's labels, each with its own statistics; the ids' names in the data
 * file, the JSON and on /metrics. */
static const char *vois_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: vm\n"
    "      select: 'exits_total{vm=~\"web.*\"}'\n"
    "      x: delta\n"
    "      statistics: [{name: vm_n, type: value}]\n"
    "      template:\n"
    "        name: blob\n"
    "        vois:\n"
    "          - {name: exits, dtype: u64, stats: [sum, max]}\n"
    "          - {name: halt, series: halt_seconds,\n"
    "             stats: [{crhist: {scheme: usr, bounds: [0, 10, 100]}}]}\n"
    "          - {name: faults, series: faults_total, relative: true, stats: [sum, min]}\n";

static void feed_vm(struct processing *p, const char *vm, double exits, double faults,
		    const uint64_t *halt, uint64_t t)
{
	static const double upper[] = {5, 50, INFINITY};
	struct bs_label l[] = {{"vm", vm}};
	struct bs_histogram h = {3, upper, halt, false, {.kind = BS_VAL_F64}};

	feed_value(p, "exits_total", l, 1, exits, t);
	feed_histogram(p, "halt_seconds", l, 1, &h, t);
	feed_value(p, "faults_total", l, 1, faults, t);
}

static void test_template_of_several_vois(void **state)
{
	struct processing *p = make(vois_yaml);
	static const uint64_t h0[] = {1, 1, 0}, h1[] = {3, 1, 2}, h2[] = {3, 4, 2};
	struct bs_label db[] = {{"vm", "db1"}};
	char want[1024];
	int status;
	(void)state;

	feed_value(p, "faults_total", db, 1, 5, S(0)); /* no blob of db1: not taken */
	feed_vm(p, "web1", 10, 100, h0, S(0));	       /* the bases */
	feed_vm(p, "web1", 13, 103, h1, S(1));	       /* exits 3, faults 3, halt 2 x 5, 2 x 50 */
	feed_vm(p, "web1", 20, 104, h2, S(2));	       /* exits 7, faults +1 = 4, halt 3 x 50 */
	assert_int_equal(p->srcs.n, 1);
	/* the budget counts every VOI at its most, and each past the first's state */
	const struct processing_template_conf *t = &cfg->processing->group[0].tpl;
	assert_int_equal(t->voi_bytes, t->voi[0].voi_bytes + t->voi[1].voi_bytes +
					   t->voi[2].voi_bytes + 2 * PROCESSING_VOI_STATE_BYTES);
	assert_true(p->src[0]->bytes > t->voi_bytes);
	assert_int_equal(p->mem_bytes, p->src[0]->bytes);
	char *text = iface_as(p, "GET", "vm/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "vm_n 2\n"
				  "blob_exits_sum 10\nblob_exits_max 7\n"
				  "blob_halt_crhist [0,10) 2\nblob_halt_crhist [10,100) 5\n"
				  "blob_halt_crhist [100,9223372036854775807) 0\n"
				  "blob_halt_crhist oob 0\n"
				  "blob_faults_sum 7\nblob_faults_min 3\n");
	free(text);
	text = iface_as(p, "GET", "vm/0/data?format=json", NULL, false, S(3), &status);
	snprintf(
	    want, sizeof(want),
	    "{\"tplname\":\"blob\",\"tplhash\":%u,\"vois\":{"
	    "\"exits\":{\"stats\":{\"SUM\":{\"errs\":0,\"val\":10},\"MAX\":{\"errs\":0,\"val\":7}}}"
	    ","
	    "\"halt\":{\"stats\":{\"HIST\":{\"errs\":0,\"nbkts\":3,\"oob\":0,\"bkts\":["
	    "{\"lb\":0,\"ub\":10,\"cnt\":2},{\"lb\":10,\"ub\":100,\"cnt\":5},"
	    "{\"lb\":100,\"ub\":9223372036854775807,\"cnt\":0}]}}},"
	    "\"faults\":{\"stats\":{\"SUM\":{\"errs\":0,\"val\":7},\"MIN\":{\"errs\":0,\"val\":3}}}"
	    "}}\n",
	    p->tpl[0].hash);
	assert_string_equal(text, want);
	free(text);
	text = metrics(p);
	has(text, "# TYPE blob_exits_sum_of_values_total counter\n");
	has(text, "blob_exits_sum_of_values_total{vm=\"web1\",source_metric=\"exits_total\"} 10\n");
	has(text, "blob_exits_max{vm=\"web1\",source_metric=\"exits_total\"} 7\n");
	has(text,
	    "blob_halt_crhist_bucket{vm=\"web1\",source_metric=\"exits_total\",le=\"9.0\"} 2\n");
	has(text,
	    "blob_halt_crhist_bucket{vm=\"web1\",source_metric=\"exits_total\",le=\"99.0\"} 7\n");
	has(text, "blob_faults_min{vm=\"web1\",source_metric=\"exits_total\"} 3\n");
	assert_null(strstr(text, "db1"));
	free(text);
	/* a snapshot resets every VOI of the blob */
	free(iface_as(p, "POST", "vm/0/snapshot", NULL, true, S(3), &status));
	text = iface_as(p, "GET", "vm/0/data", NULL, false, S(3), &status);
	has(text, "blob_exits_sum 0\n");
	has(text, "blob_faults_sum 0\n");
	has(text, "blob_halt_crhist [10,100) 0\n");
	free(text);
	/* a sample rate takes the blob whole, and gives it back whole: the
	 * other VOIs' series start from a base again (faults 110: no X) */
	free(iface_as(p, "POST", "sample_rates", "blob=0", true, S(3), &status));
	assert_int_equal(status, 200);
	assert_false(p->src[0]->sampled);
	free(iface_as(p, "POST", "sample_rates", "blob=100", true, S(3), &status));
	feed_vm(p, "web1", 21, 110, h2, S(4));
	text = iface_as(p, "GET", "vm/0/data", NULL, false, S(5), &status);
	assert_string_equal(text, "vm_n 3\nblob_exits_sum 1\nblob_exits_max 1\n"
				  "blob_halt_crhist [0,10) 0\nblob_halt_crhist [10,100) 0\n"
				  "blob_halt_crhist [100,9223372036854775807) 0\n"
				  "blob_halt_crhist oob 0\nblob_faults_sum 0\n");
	free(text);
	/* the hash takes every VOI: a template of the first alone differs */
	assert_int_not_equal(p->tpl[0].hash,
			     vstats_tpl_hash("blob", "exits", VSTATS_UINT, false,
					     cfg->processing->group[0].tpl.voi[0].spec, 2));
	done(p);
}

/* stats_voistat_fetch_<dtype> as GET <group>/<id>/fetch/<voi>/<stat>/<dtype>:
 * the value in the statistic's own data type, EFTYPE in another, EINVAL
 * for a VOI or statistic the blob does not have or a word that names no
 * statistic. */
static void test_typed_fetch(void **state)
{
	static const uint64_t h0[] = {1, 1, 0}, h1[] = {3, 1, 2};
	static const struct {
		const char *path;
		int status;
		const char *want;
	} cases[] = {
	    {"vm/0/fetch/0/SUM/u64", 200, "3\n"},
	    {"vm/0/fetch/0/MAX/u64", 200, "3\n"},
	    {"vm/0/fetch/2/SUM/s64", 200, "3\n"},
	    {"vm/0/fetch/0/SUM/s64", 400, "EFTYPE: the statistic's data type is u64, not s64\n"},
	    {"vm/0/fetch/0/SUM/u32", 400, "EFTYPE: the statistic's data type is u64, not u32\n"},
	    {"vm/0/fetch/2/MIN/slong", 400,
	     "EFTYPE: the statistic's data type is s64, not slong\n"},
	    {"vm/0/fetch/1/HIST/s64", 400,
	     "EFTYPE: the statistic's data type is crhist64, not s64\n"},
	    {"vm/0/fetch/3/SUM/s64", 400, "EINVAL: no VOI of that id in the blob\n"},
	    {"vm/0/fetch/0/MIN/u64", 400, "EINVAL: the VOI has no statistic of that type\n"},
	    {"vm/0/fetch/0/sum/u64", 400,
	     "EINVAL: a statistic is SUM, MAX, MIN, HIST or TDGST, in capitals\n"},
	    {"vm/0/data/0/Max", 400,
	     "EINVAL: a statistic is SUM, MAX, MIN, HIST or TDGST, in capitals\n"},
	    {"vm/0/fetch/00/SUM/u64", 400, "EINVAL: fetch/<voi id>/"},
	    {"vm/0/fetch/0/SUM/u64/x", 400, "EINVAL: fetch/<voi id>/"},
	    {"vm/0/fetch/0/SUM/q_s64", 400,
	     "EFTYPE: the statistic's data type is u64, not q_s64\n"},
	    {"vm/0/fetch/0/SUM/q_s16", 400, "EINVAL: a dtype is"},
	};
	struct processing *p = make(vois_yaml);
	int status;
	(void)state;

	feed_vm(p, "web1", 10, 100, h0, S(0));
	feed_vm(p, "web1", 13, 103, h1, S(1));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = iface_as(p, "GET", cases[i].path, NULL, false, S(2), &status);
		if (status != cases[i].status ||
		    strncmp(text, cases[i].want, strlen(cases[i].want)))
			fail_msg("%s: %d %s", cases[i].path, status, text);
		free(text);
	}
	done(p);
}

/* format=blob asked of a path without a blob (the template list, one
 * template, the sample rates) is a query that path does not take: 400
 * naming where it goes, not 404 as if the path did not exist. */
static void test_blob_format_on_template_paths(void **state)
{
	static const char *const paths[] = {"templates?format=blob", "templates/0?format=blob",
					    "sample_rates?format=blob"};
	struct processing *p = make(vois_yaml);
	int status;
	(void)state;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *text = iface_as(p, "GET", paths[i], NULL, false, S(0), &status);
		if (status != 400 ||
		    strcmp(text, "EINVAL: format=blob is GET data's and POST snapshot's\n") != 0)
			fail_msg("%s: %d %s", paths[i], status, text);
		free(text);
	}
	done(p);
}

/* A template's VOIs, and the names they serve, checked at load with
 * their positions. */
static void test_several_vois_errors(void **state)
{
	static const char *const head = "processing:\n  groups:\n    - name: g\n";
	char yaml[1024];
	(void)state;

#define VOIS_ERR(sel, tpl, want)                                                                   \
	do {                                                                                       \
		snprintf(yaml, sizeof(yaml), "%s      select: '%s'\n      template: %s\n", head,   \
			 sel, tpl);                                                                \
		expect_conf_error(yaml, want);                                                     \
	} while (0)
	VOIS_ERR("{__name__=~\"e.*\"}",
		 "{vois: [{name: a, stats: [sum]}, {name: b, series: f, "
		 "stats: [sum]}]}",
		 "t.yml:5:24: a template of several VOIs needs a select that names one metric");
	VOIS_ERR("e", "{vois: [{name: a, series: f, stats: [sum]}]}",
		 "t.yml:5:43: the first VOI takes the source's own series");
	VOIS_ERR("e", "{vois: [{name: a, stats: [sum]}, {name: b, stats: [sum]}]}",
		 "t.yml:5:50: a VOI past the first needs series");
	VOIS_ERR("e", "{vois: [{name: a, stats: [sum]}, {name: a, series: f, stats: [sum]}]}",
		 "t.yml:5:57: VOI 'a' twice");
	VOIS_ERR("e", "{vois: [{name: a, stats: [sum]}, {name: b, series: e, stats: [sum]}]}",
		 "t.yml:5:68: series: a metric name other than the source's own");
	VOIS_ERR("e", "{stats: [sum], vois: [{name: a, stats: [sum]}]}",
		 "t.yml:5:25: stats belongs to each VOI of vois");
	VOIS_ERR("e", "{vois: [{name: a, stats: [sum]}, {name: b, series: f, stats: [bogus]}]}",
		 "t.yml:5:79: a statistic is sum, max, min");
	/* a VOI's families are <template>_<voi>_...: one clashes with a statistic */
	expect_conf_error("processing:\n  groups:\n    - name: g\n      select: e\n"
			  "      statistics: [{name: t_b_max, type: value}]\n"
			  "      template: {name: t, vois: [{name: a, stats: [sum]},\n"
			  "                 {name: b, series: f, stats: [max]}]}\n",
			  "EEXIST: template 't' of group 'g' serves 't_b_max'");
#undef VOIS_ERR
}

/* A KVM-like u64 counter past 2^63. */
static uint64_t u64_value;

static int u64_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family f = {.name = "big_total", .type = BS_COUNTER};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &f);
	bs_sample_u64(e, NULL, 0, u64_value);
	return 0;
}

/* A u64 VOI takes a counter past 2^63 exactly: it neither wraps
 * (negative as an s64) nor is clamped or refused. */
static void test_u64_voi_end_to_end(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: big\n      select: big_total\n"
		 "      template: {dtype: u64, stats: [sum, max, min]}\n"
		 "    - name: bigd\n      select: big_total\n      x: delta\n"
		 "      template: {dtype: u64, stats: [sum]}\n");
	int status;
	(void)state;

	p->in = (struct stage_input){.n = 1, .collect = u64_collect};
	u64_value = (1ull << 63) + 5;
	sampler_tick(p, S(1));
	u64_value = UINT64_MAX - 2;
	sampler_tick(p, S(2));
	char *text = iface_as(p, "GET", "big/0/data", NULL, false, S(3), &status);
	/* 2^63 + 5 + 2^64 - 3 passes 2^64: the sum stays at 2^64 - 1 (saturated,
	 * counted in errs, not wrapped). */
	assert_string_equal(text, "big_sum 18446744073709551615\nbig_max 18446744073709551613\n"
				  "big_min 9223372036854775813\n");
	free(text);
	text = iface_as(p, "GET", "big/0/data?format=json", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "\"SUM\":{\"errs\":1,\"val\":18446744073709551615}"));
	free(text);
	text = iface_as(p, "GET", "bigd/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "bigd_sum 9223372036854775800\n"); /* the exact increase */
	free(text);
	text = metrics(p); /* /metrics too: a u64, not its bits read as a double */
	assert_non_null(
	    strstr(text, "\nbig_max{source_metric=\"big_total\"} 18446744073709551613\n"));
	free(text);
	p->in = (struct stage_input){0};
	done(p);
}

/* A collector writing a gauge fv{device="a"} 3. */
static int fv_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_label l = {"device", "a"};
	(void)ctx, (void)i, (void)wait_ns;
	bs_family(e, "fv", BS_GAUGE, NULL, "a collector's");
	bs_sample_u64(e, &l, 1, 3);
	return 0;
}

/* The processing's families in a scrape beside a collector's family fv:
 * text, and the duplicate_family drops. */
static char *scrape_beside(struct processing *p, bool collector_first, uint64_t *dups)
{
	struct capture c;
	struct bs_label l = {"device", "a"};

	capture_begin(&c, EXPO_TEXT, 1 << 20);
	if (collector_first) {
		bs_family(&c.em.pub, "fv", BS_GAUGE, NULL, "a collector's");
		bs_sample_u64(&c.em.pub, &l, 1, 3);
	}
	assert_int_equal(processing_collector()->collect(p, &c.em.pub), 0);
	char *text = strdup(capture_end(&c));
	*dups = capture_drops(&c, "duplicate_family");
	capture_free(&c);
	return text;
}

/* A collector's family that takes a name of the
 * processing's (not knowable at load) wins, every scrape from the first
 * clash on, seen by a scrape or by the sampler: the processing's is
 * counted, never served by turns. */
static void test_collector_family_wins(void **state)
{
	const char *yaml =
	    "processing:\n  groups:\n    - name: g\n      select: fv\n"
	    "      statistics: [{name: fv, type: value}, {name: other, type: value}]\n";
	struct processing *p = make(yaml);
	uint64_t dups;
	(void)state;

	feed_value(p, "fv", (struct bs_label[]){{"device", "a"}}, 1, 3, S(0));
	char *text = scrape_beside(p, true, &dups); /* a scrape: the collector's first */
	assert_int_equal(dups, 1);
	assert_null(strstr(text, "fv_total"));
	assert_non_null(strstr(text, "# TYPE other_total counter\n"));
	free(text);
	text = scrape_beside(p, false, &dups); /* the collector wrote none this time */
	assert_int_equal(dups, 1);
	assert_null(strstr(text, "fv_total"));
	assert_non_null(strstr(text, "fv_out_of_range_total{")); /* a name of its own */
	free(text);
	done(p);

	p = make(yaml); /* the sampler sees the collector's fv first */
	p->in = (struct stage_input){.n = 1, .collect = fv_collect};
	sampler_tick(p, S(1));
	text = scrape_beside(p, false, &dups);
	assert_int_equal(dups, 1);
	assert_null(strstr(text, "fv_total"));
	free(text);
	p->in = (struct stage_input){0};
	done(p);
}

/* A counter a_total claims what the emitter claims
 * for it (a, a_total, a_created), so a clash with it is refused at load
 * and at a write, which it once was not. */
static void test_total_stripped_names_clash(void **state)
{
	int status;
	(void)state;

	/* t2: a value a_total (the counter a) beside an array a */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: a_total, type: value},\n"
			  "       {name: a, type: array, range_min: 0, range_max: 10}]}\n",
			  "t.yml:4:8: EEXIST: statistic 'a' of group 'g' serves 'a', as statistic "
			  "'a_total' of group 'g' does");
	/* t2: b_total's b_created beside a value b_created */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: b_total, type: value},\n"
			  "       {name: b_created, type: value}]}\n",
			  "EEXIST: statistic 'b_created' of group 'g' serves 'b_created', as "
			  "statistic 'b_total' of group 'g' does");
	/* a template's counter t_sum_of_values beside a value t_sum_of_values_total */
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: g, select: fv, statistics: [{name: t_sum_of_values_total,\n"
			  "       type: value}], template: {name: t, stats: [sum]}}\n",
			  "serves 't_sum_of_values'");
	/* t3: the write that makes c_total a counter is fine, the one that
	 * then makes c a histogram is EEXIST; undone, c's is served */
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: fv\n"
		 "      statistics: [{name: c_total, type: raw}, {name: c, type: raw}]\n");
	feed_value(p, "fv", NULL, 0, 3, S(0));
	char *text = iface_as(p, "POST", "g/0/definition",
			      "name=c_total type=value mode=increments", true, S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	text = iface_as(p, "POST", "g/0/definition",
			"name=c type=array scale=lin base_interval=1 range_min=0 range_max=4", true,
			S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text,
			    "EEXIST: c would serve 'c', which statistic 'c_total' of group "
			    "'g' serves: a family name is one family's across the processing\n"
			    "nothing applied: 1 line refused\n");
	free(text);
	text = iface_as(p, "POST", "g/0/definition", "name=c_total type=raw entries_max=4", true,
			S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	text = iface_as(p, "POST", "g/0/definition",
			"name=c type=array scale=lin base_interval=1 range_min=0 range_max=4", true,
			S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	feed_value(p, "fv", NULL, 0, 2, S(2));
	uint64_t dups;
	text = scrape_beside(p, false, &dups);
	assert_int_equal(dups, 0);
	has(text, "# TYPE c histogram\n");
	free(text);
	done(p);
}

/* The sticky lost set (names a collector took) is
 * never filled by a clash among the processing's own families: one that
 * a load or a write should have refused (made here by renaming a loaded
 * statistic) costs its scrape only, and the family is served again once
 * the clash is gone, with no reload. */
static void test_own_clash_not_lost(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: fv\n"
		 "      statistics: [{name: x, type: value},\n"
		 "        {name: c, type: array, range_min: 0, range_max: 4}]\n");
	struct processing_stat_conf *st = &cfg->processing->group[0].stat[0];
	const char *was = st->name;
	uint64_t dups;
	(void)state;

	feed_value(p, "fv", NULL, 0, 3, S(0));
	st->name = "c_total"; /* the counter c: its c clashes with the histogram c */
	char *text = scrape_beside(p, false, &dups);
	assert_int_equal(dups, 1);
	assert_null(strstr(text, "# TYPE c histogram\n"));
	free(text);
	assert_int_equal(p->lost.used, 0);
	st->name = was;
	text = scrape_beside(p, false, &dups);
	assert_int_equal(dups, 0);
	has(text, "# TYPE c histogram\n");
	free(text);
	done(p);
}

/* A statistic or template may not serve the
 * exporter's own names (process_*, binstat_*) nor those Prometheus adds
 * to a scrape (up, scrape_*): refused at load and
 * at a write. */
static void test_reserved_names(void **state)
{
	static const struct {
		const char *stat, *want;
	} bad[] = {
	    {"{name: binstat_processing_passes, type: value}", "'binstat_processing_passes'"},
	    {"{name: process_cpu_seconds, type: value}", "'process_cpu_seconds'"},
	    {"{name: up, type: value}", "statistic 'up' of group 'g' would serve 'up'"},
	    {"{name: up_total, type: value}", "would serve 'up'"}, /* the counter up */
	    {"{name: scrape_duration_seconds, type: raw}",
	     "'scrape_duration_seconds_out_of_range'"},
	    {"{name: process, type: range}", "'process_samples'"},
	};
	char yaml[512];
	int status;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(yaml, sizeof(yaml),
			 "processing:\n  groups:\n    - {name: g, select: fv, statistics: [%s]}\n",
			 bad[i].stat);
		expect_conf_error(yaml, bad[i].want);
		expect_conf_error(yaml, "t.yml:3:42: EINVAL: ");
		expect_conf_error(yaml, "a name the exporter serves itself");
	}
	expect_conf_error(
	    "processing:\n  groups:\n"
	    "    - {name: g, select: fv, template: {name: binstat_t, stats: [sum]}}\n",
	    "EINVAL: template 'binstat_t' of group 'g' would serve "
	    "'binstat_t_sum_of_values'");
	/* near misses load; a raw up_total claims only up_total_out_of_range */
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: fv\n"
		 "      statistics: [{name: upx, type: value}, {name: up_total, type: "
		 "raw},\n        {name: processes, type: value}]\n");
	feed_value(p, "fv", NULL, 0, 3, S(0));
	char *text = iface_as(p, "POST", "g/0/definition",
			      "name=up_total type=value mode=increments", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text,
			    "EINVAL: up_total would serve 'up', a name the exporter serves "
			    "itself (process_*, binstat_*) or Prometheus adds to a scrape (up, "
			    "scrape_*)\nnothing applied: 1 line refused\n");
	free(text);
	done(p);
}

/* One collector the sampler reaches through processing_input: busy the first
 * time it is asked (a scrape has it), then writing c_total 7. */
static int busy_once_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	int *calls = ctx;
	(void)i, (void)wait_ns;

	if (++*calls == 1)
		return STAGE_INPUT_BUSY;
	bs_family(e, "c", BS_COUNTER, NULL, "c");
	bs_sample_u64(e, NULL, 0, 7);
	return 0;
}

/* A collector busy at its discovery pass is looked at again at the next
 * pass, not 30 s later: its series are sampled from then on. */
static void test_busy_at_discovery_looked_at_again(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
		 "      x: value\n      statistics:\n        - {name: n, type: value}\n");
	int calls = 0;
	(void)state;

	p->in = (struct stage_input){.n = 1, .collect = busy_once_collect, .ctx = &calls};
	sampler_tick(p, S(1));
	assert_int_equal(p->count.busy, 1);
	assert_int_equal(p->count.values, 0);
	sampler_tick(p, S(1.25));
	assert_int_equal(calls, 2);
	assert_int_equal(p->count.values, 1);
	sampler_tick(p, S(1.5)); /* relevant now: sampled at every pass */
	assert_int_equal(calls, 3);
	assert_int_equal(p->count.values, 2);
	done(p);
}

/* Counts its calls; gives the selected series from call `from` on. */
struct late_series {
	int calls, from;
};

static int late_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct late_series *ls = ctx;
	(void)i, (void)wait_ns;

	if (++ls->calls < ls->from)
		return 0;
	bs_family(e, "c", BS_COUNTER, NULL, "c");
	bs_sample_u64(e, NULL, 0, 7);
	return 0;
}

/* A collector without selected series is run again after 1 s, 2, 4, ...
 * at most every 30 s: a series that appears soon after a start is found
 * within seconds, and one that never appears costs a pass every 30 s. */
static void test_discovery_backs_off_to_30_s(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
		 "      x: value\n      statistics:\n        - {name: n, type: value}\n");
	static const double at[] = {0, 0.5, 1, 2.9, 3, 6.9, 7, 15, 31, 60.9, 61, 90.9, 91};
	static const int calls[] = {1, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7, 8};
	struct late_series ls = {.from = 1000};
	(void)state;

	p->in = (struct stage_input){.n = 1, .collect = late_collect, .ctx = &ls};
	for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
		sampler_tick(p, S(at[k]));
		assert_int_equal(ls.calls, calls[k]);
	}
	ls.from = 0; /* the series appears: found at the next look, then every pass */
	sampler_tick(p, S(120.9));
	assert_int_equal(ls.calls, 8);
	sampler_tick(p, S(121));
	sampler_tick(p, S(121.25));
	assert_int_equal(ls.calls, 10);
	assert_int_equal(p->count.values, 2);
	done(p);
}

/* ---- values past what a double holds, and the clock ---- */

/* The le of every bucket of fam{labels}, in order; their number. */
static size_t bucket_les(const char *text, const char *fam, const char *labels, double *le,
			 size_t cap)
{
	char pre[256];
	size_t n = 0;

	snprintf(pre, sizeof(pre), "%s_bucket{%s,le=\"", fam, labels);
	for (const char *q = strstr(text, pre); q && n < cap; q = strstr(q + 1, pre))
		le[n++] = strtod(q + strlen(pre), NULL);
	return n;
}

/* Arrays whose bounds a double cannot tell apart are served,
 * exactly. The default range (all of s64) in log2 steps: bound 0 is
 * -2^63, bound i -2^63 + 2^(i-1), the last finite range_max = 2^63 - 1.
 * Near -2^63 doubles are 1024 apart, so -2^63 + 2^k is a double only
 * from k = 10 on: the 10 intervals below join the one ending at -2^63 +
 * 1024; 2^63 - 1 is served as 2^63 (no X is above it). A lin array at
 * 2^60 (doubles 256 apart) keeps only its bound 2^60: 2^60 + 5 and
 * range_max 2^60 + 10 join +Inf. The data file still has every line. */
static void test_array_bounds_beyond_doubles(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: g\n"
		 "      statistics:\n        - {name: a1, type: array, scale: log2}\n"
		 "        - {name: s3, type: array, base_interval: 5, range_min: 0, "
		 "range_max: 20}\n");
	static const struct obs o1[] = {{-0x1p62, 1}, {-9.1e18, 1}, {-9e18, 1}, {0, 1}, {5e18, 1}};
	static const struct obs o3[] = {
	    {0x1p60 - 0x1p20, 1}, {0x1p60, 1}, {0x1p60 + 256, 1}, {0x1p60 + 512, 1}};
	double le[128], want[128];
	size_t n = 0;
	int status;
	(void)state;

	feed_value(p, "g", NULL, 0, 1, S(0)); /* the source */
	free(iface_as(p, "POST", "g/0/definition",
		      "name=s3 range_min=1152921504606846976 range_max=1152921504606846986", true,
		      S(0), &status));
	assert_int_equal(status, 200);
	free(iface_as(p, "POST", "g/0/definition", "data=reset", true, S(0), &status));
	for (size_t i = 0; i < 5; i++)
		feed_value(p, "g", NULL, 0, o1[i].x, S(1 + (double)i));
	for (size_t i = 0; i < 4; i++)
		feed_value(p, "g", NULL, 0, o3[i].x, S(10 + (double)i));
	char *data = iface_as(p, "GET", "g/0/data", NULL, false, S(20), &status);
	size_t lines = 0;
	for (const char *q = strstr(data, "a1 "); q; q = strstr(q + 1, "\na1 "))
		lines++;
	assert_int_equal(lines, 66); /* the infrastructure's view is unchanged */
	free(data);
	uint64_t dropped;
	char *text = metrics_dropping(p, &dropped);
	assert_int_equal(dropped, 0);

	/* Both arrays hold every X fed after the reset, o1 and o3. */
	struct obs all[9];
	memcpy(all, o1, sizeof(o1));
	memcpy(all + 5, o3, sizeof(o3));
	check_hist(text, "a1", "source_metric=\"g\"", all, 9);
	want[n++] = -0x1p63;
	for (int k = 10; k <= 62; k++)
		want[n++] = -0x1p63 + ldexp(1, k);
	want[n++] = 0x1p63;
	want[n++] = INFINITY;
	assert_int_equal(bucket_les(text, "a1", "source_metric=\"g\"", le, 128), n);
	for (size_t i = 0; i < n; i++)
		if (le[i] != want[i])
			fail_msg("a1 bucket %zu: le %.17g, want %.17g", i, le[i], want[i]);

	check_hist(text, "s3", "source_metric=\"g\"", all, 9);
	assert_int_equal(bucket_les(text, "s3", "source_metric=\"g\"", le, 128), 2);
	assert_true(le[0] == 0x1p60 && isinf(le[1]));
	/* 4 of o1 (not 5e18) and 2 of o3 are at most 2^60 */
	check_line(text, "s3_bucket{source_metric=\"g\",le=\"1.152921504606847e+18\"} ", 6);
	free(text);
	done(p);
}

/* A scrape moves a history on by the clock, as a read of the
 * data file does: its last complete period is the one before now, with
 * every new X out of range and with no sample at all, and /metrics and
 * the data file agree at any moment. */
static void test_history_moves_on_by_scrape(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: g\n"
		 "      statistics:\n        - {name: s5, type: history, mode: range, "
		 "period: 1s, entries_max: 5}\n");
	static const char *const key = "s5_last_period_samples{source_metric=\"g\"} ";
	int status;
	(void)state;

	for (int i = 0; i < 10; i++) /* 5 in period 100, 5 in period 101 */
		feed_value(p, "g", NULL, 0, 5 + 2 * i, S(100.05 + 0.2 * i));
	test_now = S(102.1);
	char *text = metrics(p);
	check_line(text, key, 5);
	check_line(text, "s5_last_period_min{source_metric=\"g\"} ", 15);
	free(text);
	free(iface_as(p, "POST", "g/0/definition", "name=s5 range_min=1000 range_max=2000", true,
		      S(102.2), &status));
	assert_int_equal(status, 200);
	feed_value(p, "g", NULL, 0, 7, S(102.5)); /* out of range */
	feed_value(p, "g", NULL, 0, 8, S(103.5));
	test_now = S(103.6); /* period 102 is complete: nothing in range */
	text = metrics(p);
	check_line(text, key, 0);
	assert_null(strstr(text, "s5_last_period_min{")); /* no minimum of nothing */
	free(text);
	/* a source that stopped (not expired: no pass ran) */
	for (double t = 103.7; t < 112; t += 0.45) {
		test_now = S(t);
		text = metrics(p);
		char *data = iface_as(p, "GET", "g/0/data", NULL, false, S(t), &status);
		const char *last = strrchr(data, '\n'); /* the data file's end */
		const char *prev = last;
		for (int k = 0; k < 2; k++)
			prev = (char *)memrchr(data, '\n', (size_t)(prev - data));
		unsigned long long num;
		assert_int_equal(sscanf(strchr(prev ? prev : data, ']') + 1, "%llu", &num), 1);
		check_line(text, key, (double)num); /* the line before the newest */
		free(data);
		free(text);
	}
	test_now = S(120);
	text = metrics(p);
	check_line(text, key, 0);
	free(text);
	done(p);
}

/* A products total, and a template's sum of values, of a
 * histogram source with a negative le go down: gauges, whatever x is. A
 * products total whose range_min is 0 takes no negative X and stays a
 * counter. Buckets -2, 0.5, 3, 7.9 and +Inf are X -2, 1, 3, 8 and 8 (an
 * le rounded, +Inf the last finite one): 81, 81, 87, 90 (a count that
 * went back is a reset: bucket 3 gives 1), then each step 5 more at -2. */
static void test_sums_that_go_down_are_gauges(void **state)
{
	struct processing *p =
	    make("processing:\n  groups:\n    - name: g\n      select: hv\n"
		 "      x: delta\n      statistics:\n"
		 "        - {name: hp, type: value, mode: products}\n"
		 "        - {name: hq, type: value, mode: products, range_min: 0}\n"
		 "      template: {name: ht, stats: [sum]}\n");
	static const double up[] = {-2, 0.5, 3, 7.9, INFINITY};
	static const uint64_t steps[][5] = {
	    {0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, {2, 2, 3, 4, 6}, {0, 0, 1, 0, 0}};
	struct bs_label dev[] = {{"device", "a"}};
	uint64_t c[5] = {0, 0, 1, 0, 0};
	(void)state;

	for (size_t i = 0; i < 5; i++) {
		struct bs_histogram h = {5, up, steps[i], false, {0}};
		assert_true(feed_histogram(p, "hv", dev, 1, &h, S((double)i)));
	}
	char *text = metrics(p);
	assert_non_null(strstr(text, "# TYPE hp gauge\n"));
	assert_non_null(strstr(text, "# TYPE ht_sum_of_values gauge\n"));
	assert_non_null(strstr(text, "# TYPE hq_total counter\n"));
	check_line(text, "hp{device=\"a\",source_metric=\"hv\"} ", 90);
	check_line(text, "ht_sum_of_values{device=\"a\",source_metric=\"hv\"} ", 90);
	check_line(text, "hq_total{device=\"a\",source_metric=\"hv\"} ", 94);
	free(text);
	for (uint64_t k = 1; k <= 6; k++) {
		c[0] = 5 * k;
		struct bs_histogram h = {5, up, c, false, {0}};
		assert_true(feed_histogram(p, "hv", dev, 1, &h, S(5 + (double)k)));
	}
	text = metrics(p);
	assert_null(strstr(text, "counter\n# HELP hp ")); /* still no counter */
	assert_null(strstr(text, "hp_total"));
	check_line(text, "hp{device=\"a\",source_metric=\"hv\"} ", 30);
	check_line(text, "ht_sum_of_values{device=\"a\",source_metric=\"hv\"} ", 30);
	check_line(text, "hq_total{device=\"a\",source_metric=\"hv\"} ", 94);
	free(text);
	done(p);
}

/* ---- a reload's hand-over ---- */

static const char *const takeover_yaml[2] = {
    "processing:\n  groups:\n"
    "    - {name: g, select: c_total, x: delta,\n"
    "       statistics: [{name: v, type: value}, {name: w, type: raw, entries_max: 2},\n"
    "                    {name: h, type: history, mode: range, period: 1s, entries_max: 4}],\n"
    "       template: {name: t, stats: [{tdigest: {quantiles: [0.5]}}]}}\n"
    "    - {name: k, select: d_total, x: delta, statistics: [{name: kv, type: value}]}\n"
    "    - {name: u, select: e_total, statistics: [{name: uv, type: value}],\n"
    "       template: {name: ut, stats: [sum]}}\n",
    /* w's entries_max, k's x and u's template changed; v, h, t as they were */
    "processing:\n  groups:\n"
    "    - {name: u, select: e_total, statistics: [{name: uv, type: value}],\n"
    "       template: {name: ut, stats: [max]}}\n"
    "    - {name: g, select: c_total, x: delta,\n"
    "       statistics: [{name: h, type: history, mode: range, period: 1s, entries_max: 4},\n"
    "                    {name: v, type: value}, {name: w, type: raw, entries_max: 3}],\n"
    "       template: {name: t, stats: [{tdigest: {quantiles: [0.5]}}]}}\n"
    "    - {name: k, select: d_total, x: value, statistics: [{name: kv, type: value}]}\n"};

static struct processing *made_from(const char *yaml, struct config **c)
{
	char err[CONF_ERR_MAX];
	struct processing *p;

	if (!(*c = config_load("t.yml", yaml, "/plugins", err, sizeof(err))))
		fail_msg("config: %s", err);
	assert_int_equal(processing_new((*c)->processing, &p), 0);
	p->clock_ns = test_clock;
	return p;
}

static void assert_budget(const struct processing *p)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->srcs.n; i++) {
		assert_int_equal(p->src[i]->bytes, srctab_bytes(p, p->src[i]));
		sum += p->src[i]->bytes;
	}
	assert_int_equal(p->mem_bytes, sum);
}

/* The new stage takes a source of each unchanged group with its id and
 * every unchanged statistic's and template's data, in whatever order the
 * file now lists them; a changed statistic, template or group starts
 * afresh; both budgets stay the sum of their sources. */
static void test_take_over_keeps_unchanged(void **state)
{
	struct config *c0, *c1;
	struct processing *old = made_from(takeover_yaml[0], &c0), *p;
	int status;
	(void)state;

	test_now = 0;
	for (int i = 0; i <= 10; i++) {
		feed_value(old, "c_total", NULL, 0, 3 * i, S(0.25 * i));
		feed_value(old, "d_total", NULL, 0, i, S(0.25 * i));
		feed_value(old, "e_total", NULL, 0, i, S(0.25 * i));
	}
	test_now = S(3);
	p = made_from(takeover_yaml[1], &c1);
	feed_value(p, "c_total", NULL, 0, 99, S(3)); /* its sampler's own, since started */
	processing_take_over(p, old);
	assert_budget(p);
	assert_budget(old);
	assert_int_equal(old->srcs.n, 1); /* k's, whose selection changed */
	assert_int_equal(p->srcs.n, 2);
	char *text = iface_as(p, "GET", "g/0/data", NULL, false, S(3), &status);
	assert_int_equal(status, 200);
	assert_non_null(strstr(text, "h [0.000000] 3 3 3.000 3\nh [1.000000] 4 3 3.000 3\n"
				     "h [2.000000] 3 3 3.000 3\n"));
	assert_non_null(strstr(text, "v 10\n"));
	assert_null(strstr(text, "w [")); /* w changed: no data yet */
	assert_non_null(strstr(text, "t_tdigest count 10\n"));
	free(text);
	text = iface_as(p, "GET", "g/0/definition", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "name=w on=1 type=raw range_min=-9223372036854775808 "
				     "range_max=9223372036854775807 entries_max=3 "));
	free(text);
	text = iface_as(p, "GET", "u/0/data", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "uv 11\n")); /* unchanged: kept */
	assert_null(strstr(text, "ut_sum"));	  /* the old template's statistic is gone */
	free(text);
	text = iface_as(p, "GET", "u/0/definition", NULL, false, S(3), &status);
	/* the new template's VOI is fresh */
	assert_non_null(strstr(text, "# template=ut state=on sampled=1 relative=0 updates=0\n"));
	free(text);
	feed_value(p, "c_total", NULL, 0, 33, S(3.25)); /* the delta goes on from 30 */
	assert_int_equal(p->srcs.n, 2);			/* found by its series */
	text = iface_as(p, "GET", "g/0/data", NULL, false, S(3.25), &status);
	assert_non_null(strstr(text, "v 11\n"));
	assert_non_null(strstr(text, "w [3.250000] 0 3 1\n"));
	free(text);
	/* k changed: its series starts afresh under a new id, never one the
	 * old k gave out, so a client holding k/0 reaches nothing rather
	 * than another series. */
	feed_value(p, "d_total", NULL, 0, 5, S(3.5));
	text = iface_as(p, "GET", "", NULL, false, S(3.5), &status);
	assert_non_null(strstr(text, "k/1 d_total{}\n"));
	assert_null(strstr(text, "k/0 "));
	free(text);
	processing_free(p);
	processing_free(old);
	config_free(c1);
	config_free(c0);
}

/* A t-digest that now asks for counts: 32 is another statistic: the
 * reload starts it afresh (its blob is a TDGSTCLUST32, its samples stop
 * at 2^31 - 1), while the same digest unchanged keeps its data. */
static void test_take_over_tdigest_counts(void **state)
{
	static const char *const yaml[3] = {
	    "processing:\n  groups:\n"
	    "    - {name: g, select: c_total, template: {name: t, stats: [{tdigest: {}}]}}\n",
	    "processing:\n  groups:\n"
	    "    - {name: g, select: c_total, template: {name: t, stats: [{tdigest: {}}]}}\n",
	    "processing:\n  groups:\n"
	    "    - {name: g, select: c_total,\n"
	    "       template: {name: t, stats: [{tdigest: {counts: 32}}]}}\n"};
	struct config *c[3];
	struct processing *p[3];
	int status;
	(void)state;

	test_now = 0;
	p[0] = made_from(yaml[0], &c[0]);
	for (int i = 0; i < 4; i++)
		feed_value(p[0], "c_total", NULL, 0, i, S(0.25 * i));
	for (int k = 1; k < 3; k++) {
		p[k] = made_from(yaml[k], &c[k]);
		processing_take_over(p[k], p[k - 1]);
		char *text = iface_as(p[k], "GET", "g/0/data", NULL, false, S(1), &status);
		assert_int_equal(status, 200);
		if (k == 1) /* unchanged: kept */
			assert_non_null(strstr(text, "t_tdigest count 4\n"));
		else
			assert_null(strstr(text, "t_tdigest count 4\n"));
		free(text);
	}
	for (int k = 0; k < 3; k++) {
		processing_free(p[k]);
		config_free(c[k]);
	}
}

/* A reload with more changed definitions than the log names one a line:
 * four lines, then one with the count of the others and their names. */
static void test_take_over_logs_bounded(void **state)
{
	char yaml[2][4096], line[512];
	struct config *c0, *c1;
	int saved = dup(2), lines = 0, summary = 0;
	FILE *log = tmpfile();
	(void)state;

	for (int v = 0; v < 2; v++) {
		size_t n = (size_t)snprintf(yaml[v], sizeof(yaml[v]), "processing:\n  groups:\n");
		for (int g = 0; g < 10; g++)
			n += (size_t)snprintf(yaml[v] + n, sizeof(yaml[v]) - n,
					      "    - {name: g%d, select: c%d_total, statistics: "
					      "[{name: s%d, type: raw, entries_max: %d}]}\n",
					      g, g, g, 2 + v);
	}
	struct processing *old = made_from(yaml[0], &c0), *p = made_from(yaml[1], &c1);
	assert_non_null(log);
	/* the log writes at most LOG_BURST lines of a kind a second, and the
	 * test before logged some: from the next second on (within one) */
	for (uint64_t sec = monoclock_ns() / 1000000000u; monoclock_ns() / 1000000000u == sec;)
		poll(NULL, 0, 10);
	assert_int_equal(dup2(fileno(log), 2), 2);
	processing_take_over(p, old);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	rewind(log);
	while (fgets(line, sizeof(line), log)) {
		lines += strstr(line, "a definition changed, its data start afresh") != NULL;
		summary += strstr(line, "more definitions changed") && strstr(line, "count=6") &&
			   strstr(line, "g4/s4 g5/s5 g6/s6 g7/s7 g8/s8 g9/s9");
	}
	fclose(log);
	assert_int_equal(lines, 4);
	assert_int_equal(summary, 1);
	processing_free(p);
	processing_free(old);
	config_free(c1);
	config_free(c0);
}

/* A reload keeps a blob of several VOIs whose template is unchanged, with
 * its other VOIs' series' previous values (the faults delta goes on from
 * 104), and starts it afresh when one VOI changed. */
static void test_take_over_keeps_a_blob(void **state)
{
	static const uint64_t h0[] = {1, 1, 0};
	struct config *c0, *c1, *c2;
	struct processing *old = made_from(vois_yaml, &c0), *p, *q;
	int status;
	(void)state;

	feed_vm(old, "web1", 10, 100, h0, S(0));
	feed_vm(old, "web1", 13, 104, h0, S(1));
	p = made_from(vois_yaml, &c1);
	processing_take_over(p, old);
	assert_budget(p);
	feed_vm(p, "web1", 14, 110, h0, S(2));
	char *text = iface_as(p, "GET", "vm/0/data", NULL, false, S(2), &status);
	has(text, "blob_exits_sum 4\n");
	has(text, "blob_faults_sum 14\nblob_faults_min 4\n"); /* 4, then 4 + 6 */
	free(text);
	char changed[1024];
	snprintf(changed, sizeof(changed), "%s", vois_yaml);
	char *at = strstr(changed, "stats: [sum, min]");
	assert_non_null(at);
	memcpy(at, "stats: [sum, max]", 17);
	q = made_from(changed, &c2);
	processing_take_over(q, p);
	assert_budget(q);
	text = iface_as(q, "GET", "vm/0/data", NULL, false, S(2), &status);
	has(text, "blob_exits_sum 0\n");
	has(text, "blob_faults_sum 0\n");
	free(text);
	processing_free(q);
	processing_free(p);
	processing_free(old);
	config_free(c2);
	config_free(c1);
	config_free(c0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_delta_and_reset),
	    cmocka_unit_test(test_sixty_four_groups),
	    cmocka_unit_test(test_every_histogram_counts_every_value),
	    cmocka_unit_test(test_hostile_histograms),
	    cmocka_unit_test(test_scaled_past_double),
	    cmocka_unit_test(test_empty_tdigest),
	    cmocka_unit_test(test_type_changes_on_metrics),
	    cmocka_unit_test(test_type_conflict),
	    cmocka_unit_test(test_range_min_keeps_type),
	    cmocka_unit_test(test_family_names_clash),
	    cmocka_unit_test(test_collector_family_wins),
	    cmocka_unit_test(test_total_stripped_names_clash),
	    cmocka_unit_test(test_own_clash_not_lost),
	    cmocka_unit_test(test_reserved_names),
	    cmocka_unit_test(test_rate_and_value),
	    cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_interface_writes),
	    cmocka_unit_test(test_configuration_errors),
	    cmocka_unit_test(test_dtype_config_errors),
	    cmocka_unit_test(test_stats3_edge_errors),
	    cmocka_unit_test(test_config_integers_exact),
	    cmocka_unit_test(test_write_allow),
	    cmocka_unit_test(test_keys_by_the_emitters_rules),
	    cmocka_unit_test(test_long_keys),
	    cmocka_unit_test(test_sampler_races_reader),
	    cmocka_unit_test(test_type_changes_under_load),
	    cmocka_unit_test(test_history_by_due_time),
	    cmocka_unit_test(test_series_in_any_order),
	    cmocka_unit_test(test_post_all_or_nothing),
	    cmocka_unit_test(test_off_stops_template),
	    cmocka_unit_test(test_empty_digest_lines),
	    cmocka_unit_test(test_template_list),
	    cmocka_unit_test(test_template_name_twice),
	    cmocka_unit_test(test_sample_rates),
	    cmocka_unit_test(test_blob_json),
	    cmocka_unit_test(test_list_missed_on_metrics),
	    cmocka_unit_test(test_relative_template),
	    cmocka_unit_test(test_non_finite_double_voi),
	    cmocka_unit_test(test_template_of_several_vois),
	    cmocka_unit_test(test_several_vois_errors),
	    cmocka_unit_test(test_typed_fetch),
	    cmocka_unit_test(test_blob_format_on_template_paths),
	    cmocka_unit_test(test_u64_voi_end_to_end),
	    cmocka_unit_test(test_busy_at_discovery_looked_at_again),
	    cmocka_unit_test(test_discovery_backs_off_to_30_s),
	    cmocka_unit_test(test_array_bounds_beyond_doubles),
	    cmocka_unit_test(test_history_moves_on_by_scrape),
	    cmocka_unit_test(test_sums_that_go_down_are_gauges),
	    cmocka_unit_test(test_take_over_keeps_unchanged),
	    cmocka_unit_test(test_take_over_tdigest_counts),
	    cmocka_unit_test(test_take_over_logs_bounded),
	    cmocka_unit_test(test_take_over_keeps_a_blob),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
