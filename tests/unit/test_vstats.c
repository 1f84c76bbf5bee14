/* lib/vstats against hand-computed results: SUM, MAX, MIN with absolute
 * and relative updates, every histogram kind and scheme at its bucket
 * edges with its out-of-band count, refused specs, snapshot with reset,
 * the t-digest on exact cases and a bounded rank error, and the sample
 * dice. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "vstats.h"

#define I(x) ((struct vstats_value){VSTATS_INT, {.i = (x)}})
#define F(x) ((struct vstats_value){VSTATS_FLOAT, {.f = (x)}})
#define U(x) ((struct vstats_value){VSTATS_UINT, {.u = (x)}})

static const struct vstats_stat *stat_of(const struct vstats_voi *v, enum vstats_stype t)
{
	for (uint32_t i = 0; i < v->nstats; i++)
		if (v->stat[i].stype == t)
			return &v->stat[i];
	fail_msg("no statistic %d", t);
	return NULL;
}

static void test_sum_max_min(void **state)
{
	struct vstats_spec specs[] = {
	    {.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}, {.stype = VSTATS_MIN}};
	struct vstats_voi v, snap;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, true, specs, 3, &why), 0);
	assert_int_equal(stat_of(&v, VSTATS_MAX)->v.i, INT64_MIN); /* stats(3)'s empty MAX */
	assert_int_equal(stat_of(&v, VSTATS_MIN)->v.i, INT64_MAX);
	assert_int_equal(vstats_update_abs(&v, I(5)), 0);
	assert_int_equal(vstats_update_abs(&v, I(-3)), 0);
	assert_int_equal(vstats_update_abs(&v, I(7)), 0);
	assert_int_equal(stat_of(&v, VSTATS_SUM)->v.i, 9);
	assert_int_equal(stat_of(&v, VSTATS_MAX)->v.i, 7);
	assert_int_equal(stat_of(&v, VSTATS_MIN)->v.i, -3);
	/* relative: each update adds to the previous value (7) */
	assert_int_equal(vstats_update_rel(&v, I(3)), 0);   /* 10 */
	assert_int_equal(vstats_update_rel(&v, I(-12)), 0); /* -2 */
	assert_int_equal(stat_of(&v, VSTATS_SUM)->v.i, 9 + 10 - 2);
	assert_int_equal(stat_of(&v, VSTATS_MIN)->v.i, -3);
	assert_int_equal(stat_of(&v, VSTATS_MAX)->v.i, 10);
	assert_int_equal(vstats_update_abs(&v, F(1.0)), -EINVAL); /* not the VOI's dtype */
	assert_int_equal(v.updates, 5);

	/* snapshot with reset: the copy keeps, the source starts over */
	assert_int_equal(vstats_voi_snapshot(&snap, &v, true), 0);
	assert_int_equal(stat_of(&snap, VSTATS_SUM)->v.i, 17);
	assert_int_equal(stat_of(&v, VSTATS_SUM)->v.i, 0);
	assert_int_equal(stat_of(&v, VSTATS_MAX)->v.i, INT64_MIN);
	assert_int_equal(vstats_update_rel(&v, I(1)), 0); /* the base survives a reset: -1 */
	assert_int_equal(stat_of(&v, VSTATS_SUM)->v.i, -1);
	vstats_voi_free(&snap);
	vstats_voi_free(&v);

	/* no relative updates unless the VOI asked for them */
	assert_int_equal(vstats_voi_init(&v, VSTATS_FLOAT, false, specs, 1, &why), 0);
	assert_int_equal(vstats_update_rel(&v, F(1)), -EINVAL);
	assert_int_equal(vstats_update_abs(&v, F(NAN)), -EINVAL);
	assert_int_equal(vstats_update_abs(&v, F(0.25)), 0);
	assert_true(stat_of(&v, VSTATS_SUM)->v.f == 0.25);
	vstats_voi_free(&v);
}

/* Feeds xs and compares each bucket's count and the out-of-band count. */
static void expect_hist(enum vstats_stype t, enum vstats_dtype d, const struct vstats_hist_spec *h,
			const struct vstats_value *xs, size_t n, const uint64_t *want,
			uint32_t nwant, uint64_t oob)
{
	struct vstats_spec spec = {.stype = t, .hist = *h};
	struct vstats_voi v;
	const char *why;

	assert_int_equal(vstats_voi_init(&v, d, false, &spec, 1, &why), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(vstats_update_abs(&v, xs[i]), 0);
	const struct vstats_hist *hist = &v.stat[0].hist;
	assert_int_equal(hist->n, nwant);
	for (uint32_t i = 0; i < nwant; i++)
		if (hist->count[i] != want[i])
			fail_msg("bucket %u: %llu, want %llu", i,
				 (unsigned long long)hist->count[i], (unsigned long long)want[i]);
	assert_int_equal(hist->oob, oob);
	vstats_voi_free(&v);
}

static void test_crhist_schemes(void **state)
{
	(void)state;
	/* LIN, FreeBSD's loop: buckets from lb up to and including the first
	 * that reaches past ub, lower bounds only, the last open above:
	 * [0,25) [25,50) [50,75) [75,100) [100,...) */
	struct vstats_hist_spec lin = {
	    .scheme = VSTATS_LIN, .lb = I(0), .ub = I(100), .stepinc = 25};
	struct vstats_value xs[] = {I(-1), I(0), I(24), I(25), I(99), I(100), I(INT64_MAX)};
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &lin, xs, 7, (uint64_t[]){2, 1, 0, 1, 2}, 5, 1);

	/* EXP: widths 2^0, 2^1, ...: [0,1) [1,3) [3,7) [7,15) [15,31) [31,63) [63,...) */
	struct vstats_hist_spec exp = {
	    .scheme = VSTATS_EXP, .lb = I(0), .ub = I(100), .stepbase = 2, .stepexp = 0};
	struct vstats_value ex[] = {I(0), I(1), I(2), I(3), I(6), I(7), I(62), I(63), I(999)};
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &exp, ex, 9, (uint64_t[]){1, 2, 2, 1, 0, 1, 2}, 7,
		    0);
	/* stepbase 1 is FreeBSD's width 1: [0,1) [1,2) [2,3) [3,...) */
	exp.stepbase = 1, exp.ub = I(3);
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &exp, ex, 4, (uint64_t[]){1, 1, 1, 1}, 4, 0);

	/* LINEXP: 10 linear steps per power of 10: 10 of 1, 9 of 10, 9 of 100,
	 * then [1000,...) */
	struct vstats_hist_spec linexp = {
	    .scheme = VSTATS_LINEXP, .lb = I(0), .ub = I(1000), .nlinsteps = 10, .stepbase = 10};
	struct vstats_value lx[] = {I(9), I(10), I(19), I(20), I(999), I(1000)};
	uint64_t lw[29] = {0};
	lw[9] = 1;  /* [9,10) */
	lw[10] = 2; /* [10,20) */
	lw[11] = 1; /* [20,30) */
	lw[27] = 1; /* [900,1000) */
	lw[28] = 1; /* [1000,...) */
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &linexp, lx, 6, lw, 29, 0);
	/* an integer VOI divides as FreeBSD's u64 does: 10 / 3 = 3 */
	linexp.nlinsteps = 3, linexp.ub = I(12);
	struct vstats_value l3[] = {I(2), I(3), I(11), I(12), I(13)};
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &linexp, l3, 5, (uint64_t[]){1, 1, 0, 1, 2}, 5, 0);

	/* USR: lower bounds only; the last bucket is open above */
	struct vstats_bucket usr[] = {{F(0), F(0)}, {F(0.5), F(0)}, {F(1.5), F(0)}};
	struct vstats_hist_spec u = {.scheme = VSTATS_USR, .usr = usr, .nusr = 3};
	struct vstats_value ux[] = {F(-0.1), F(0), F(0.49), F(0.5), F(1.5), F(1e300)};
	expect_hist(VSTATS_CRHIST, VSTATS_FLOAT, &u, ux, 6, (uint64_t[]){2, 1, 2}, 3, 1);
}

/* lbound_inf adds a bucket below lb rather than widening the first;
 * ubound_inf adds one more at the next step (FreeBSD's
 * stats_vss_hist_hlpr); a crhist with lbound_inf has nothing out of band. */
static void test_crhist_flags(void **state)
{
	struct vstats_hist_spec lin = {.scheme = VSTATS_LIN,
				       .lb = I(0),
				       .ub = I(10),
				       .stepinc = 5,
				       .flags = VSTATS_LBOUND_INF};
	struct vstats_value xs[] = {I(INT64_MIN), I(-1), I(0), I(9), I(10), I(12), I(100)};
	(void)state;

	/* [MIN,0) [0,5) [5,10) [10,...) */
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &lin, xs, 7, (uint64_t[]){2, 1, 1, 3}, 4, 0);
	/* the case: 12 and 100 are not in [5,10): [0,5) [5,10) [10,15) [15,...) */
	lin.flags = VSTATS_UBOUND_INF;
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &lin, xs, 7, (uint64_t[]){1, 1, 2, 1}, 4, 2);
	/* the user's bounds take lbound_inf; ubound_inf there is refused */
	struct vstats_bucket usr[] = {{I(0), I(0)}, {I(10), I(0)}};
	struct vstats_hist_spec u = {
	    .scheme = VSTATS_USR, .usr = usr, .nusr = 2, .flags = VSTATS_LBOUND_INF};
	expect_hist(VSTATS_CRHIST, VSTATS_INT, &u, xs, 7, (uint64_t[]){2, 2, 3}, 3, 0);
	assert_non_null(vstats_flags_refused(VSTATS_CRHIST, VSTATS_USR, VSTATS_UBOUND_INF));
	assert_null(vstats_flags_refused(VSTATS_CRHIST, VSTATS_LIN, VSTATS_UBOUND_INF));
}

/* Float lin bounds are lb + i * stepinc, not a running sum: 0..1 by 0.1
 * makes 11 buckets, the last at exactly 1, and no sliver below it. */
static void test_float_lin_bounds(void **state)
{
	struct vstats_hist_spec lin = {
	    .scheme = VSTATS_LIN, .lb = F(0), .ub = F(1), .stepinc = 0.1};
	struct vstats_spec spec = {.stype = VSTATS_CRHIST, .hist = lin};
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_FLOAT, false, &spec, 1, &why), 0);
	const struct vstats_hist *h = &v.stat[0].hist;
	assert_int_equal(h->n, 11);
	for (uint32_t i = 0; i < 11; i++)
		assert_true(h->bkt[i].lb.f == i * 0.1);
	assert_true(h->bkt[10].lb.f == 1.0);
	vstats_voi_free(&v);
}

static void test_discrete_histograms(void **state)
{
	(void)state;
	/* DRHIST: lb <= x < ub; gaps, below and above out of band */
	struct vstats_bucket dr[] = {{I(0), I(10)}, {I(20), I(30)}};
	struct vstats_hist_spec drs = {.scheme = VSTATS_USR, .usr = dr, .nusr = 2};
	struct vstats_value dx[] = {I(0), I(9), I(10), I(19), I(20), I(29), I(30), I(-1)};
	expect_hist(VSTATS_DRHIST, VSTATS_INT, &drs, dx, 8, (uint64_t[]){2, 2}, 2, 4);
	/* lbound_inf adds [MIN, 0); ubound_inf [30, MAX), MAX itself staying
	 * out (FreeBSD's x < ub) */
	drs.flags = VSTATS_LBOUND_INF | VSTATS_UBOUND_INF;
	struct vstats_value edge[] = {I(INT64_MIN), I(-1), I(15), I(30), I(INT64_MAX)};
	expect_hist(VSTATS_DRHIST, VSTATS_INT, &drs, edge, 5, (uint64_t[]){2, 0, 0, 1}, 4, 2);
	/* adjacent ranges are allowed, [lb, ub) meeting the next lb */
	struct vstats_bucket adj[] = {{I(0), I(1)}, {I(1), I(10)}};
	struct vstats_hist_spec adjs = {.scheme = VSTATS_USR, .usr = adj, .nusr = 2};
	struct vstats_value ax[] = {I(0), I(1), I(9), I(10)};
	expect_hist(VSTATS_DRHIST, VSTATS_INT, &adjs, ax, 4, (uint64_t[]){1, 2}, 2, 1);

	struct vstats_bucket dv[] = {{I(1), I(0)}, {I(2), I(0)}, {I(4), I(0)}, {I(8), I(0)}};
	struct vstats_hist_spec dvs = {.scheme = VSTATS_USR, .usr = dv, .nusr = 4};
	struct vstats_value vx[] = {I(1), I(4), I(4), I(3), I(8), I(9)};
	expect_hist(VSTATS_DVHIST, VSTATS_INT, &dvs, vx, 6, (uint64_t[]){1, 0, 2, 1}, 4, 2);
	assert_non_null(vstats_flags_refused(VSTATS_DVHIST, VSTATS_USR, VSTATS_LBOUND_INF));
	assert_non_null(vstats_flags_refused(VSTATS_DVHIST, VSTATS_USR, VSTATS_UBOUND_INF));
	assert_null(vstats_flags_refused(VSTATS_DRHIST, VSTATS_USR, 3));
}

/* A hostile source's bucket counts cannot take a VOI's count of values
 * past 2^64 - 1: the update that would is refused whole, so no sum of
 * the histogram's counts (a cumulative le, _count) wraps. */
static void test_update_n_count_bounded(void **state)
{
	struct vstats_bucket dv[] = {{I(1), I(0)}, {I(2), I(0)}};
	struct vstats_spec spec = {.stype = VSTATS_DVHIST,
				   .hist = {.scheme = VSTATS_USR, .usr = dv, .nusr = 2}};
	struct vstats_region got[8];
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, &spec, 1, &why), 0);
	assert_int_equal(vstats_update_n(&v, I(1), 1ull << 63), 0);
	assert_int_equal(vstats_update_n(&v, I(2), 1ull << 63), -EOVERFLOW);
	assert_int_equal(vstats_update_n(&v, I(2), (1ull << 63) - 1), 0);
	assert_int_equal(vstats_update_n(&v, I(2), 1), -EOVERFLOW);
	assert_int_equal(v.updates, UINT64_MAX);
	assert_int_equal(v.stat[0].hist.count[0], 1ull << 63);
	assert_int_equal(v.stat[0].hist.count[1], (1ull << 63) - 1);
	size_t n = vstats_hist_regions(&v.stat[0].hist, VSTATS_DVHIST, got);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(got[i].count <= UINT64_MAX - total); /* no cumulative sum wraps */
		total += got[i].count;
	}
	assert_int_equal(total, v.updates);
	vstats_voi_free(&v);
}

/* Feeds xs (each n times) and compares the Prometheus regions: le and
 * count each, the sum, and that every value is counted once. */
static void expect_regions(enum vstats_stype t, enum vstats_dtype d,
			   const struct vstats_hist_spec *h, const struct vstats_value *xs,
			   size_t nx, uint64_t n, const struct vstats_region *want, size_t nwant)
{
	struct vstats_spec spec = {.stype = t, .hist = *h};
	static struct vstats_region got[VSTATS_REGIONS_MAX];
	struct vstats_voi v;
	const char *why;

	assert_int_equal(vstats_voi_init(&v, d, false, &spec, 1, &why), 0);
	for (size_t i = 0; i < nx; i++)
		assert_int_equal(vstats_update_n(&v, xs[i], n), 0);
	size_t k = vstats_hist_regions(&v.stat[0].hist, t, got);
	for (size_t i = 0; i < k && i < nwant; i++)
		if (got[i].le != want[i].le || got[i].count != want[i].count)
			fail_msg("region %zu: le %.17g count %llu, want le %.17g count %llu", i,
				 got[i].le, (unsigned long long)got[i].count, want[i].le,
				 (unsigned long long)want[i].count);
	assert_int_equal(k, nwant);
	assert_int_equal(v.updates, nx * n);
	vstats_voi_free(&v);
}

static void test_hist_regions(void **state)
{
	(void)state;
	/* DRHIST with a gap: below, [0,1), the gap [1,5), [5,10), above */
	struct vstats_bucket dr[] = {{I(0), I(1)}, {I(5), I(10)}};
	struct vstats_hist_spec drs = {.scheme = VSTATS_USR, .usr = dr, .nusr = 2};
	struct vstats_value dx[] = {I(-4), I(0), I(3), I(9), I(12), I(100)};
	expect_regions(VSTATS_DRHIST, VSTATS_INT, &drs, dx, 6, 2,
		       (struct vstats_region[]){{-1, 2}, {0, 2}, {4, 2}, {9, 2}, {INFINITY, 4}}, 5);
	/* CRHIST: the open last bucket is +Inf, nothing above it */
	struct vstats_hist_spec lin = {.scheme = VSTATS_LIN,
				       .lb = I(0),
				       .ub = I(10),
				       .stepinc = 5,
				       .flags = VSTATS_UBOUND_INF};
	struct vstats_value cx[] = {I(3), I(12), I(12), I(100), I(-7)};
	expect_regions(VSTATS_CRHIST, VSTATS_INT, &lin, cx, 5, 1,
		       (struct vstats_region[]){{-1, 1}, {4, 1}, {9, 0}, {14, 2}, {INFINITY, 1}},
		       5);
	/* DVHIST: a gap between values that are not neighbours */
	struct vstats_bucket dv[] = {{I(1), I(1)}, {I(2), I(2)}, {I(5), I(5)}};
	struct vstats_hist_spec dvs = {.scheme = VSTATS_USR, .usr = dv, .nusr = 3};
	struct vstats_value vx[] = {I(0), I(2), I(3), I(5), I(6)};
	expect_regions(
	    VSTATS_DVHIST, VSTATS_INT, &dvs, vx, 5, 1,
	    (struct vstats_region[]){{0, 1}, {1, 0}, {2, 1}, {4, 1}, {5, 1}, {INFINITY, 1}}, 6);
	/* a float continuous range [lb, ub) ends at the double just below ub */
	struct vstats_bucket fu[] = {{F(0.5), F(0)}, {F(1), F(0)}};
	struct vstats_hist_spec fus = {.scheme = VSTATS_USR, .usr = fu, .nusr = 2};
	struct vstats_value fx[] = {F(0.25), F(0.5), F(1)};
	expect_regions(
	    VSTATS_CRHIST, VSTATS_FLOAT, &fus, fx, 3, 1,
	    (struct vstats_region[]){{nextafter(0.5, 0), 1}, {nextafter(1, 0), 1}, {INFINITY, 1}},
	    3);
}

/* Prometheus' rule, checked against the values themselves: each le
 * above the last, the last +Inf, and each counting exactly the values
 * at most le (compared in long double, which holds every s64, u64 and
 * double exactly). */
static void expect_cumulative(const struct vstats_region *r, size_t k,
			      const struct vstats_value *xs, size_t nx)
{
	uint64_t cum = 0;

	assert_true(k > 0 && r[k - 1].le == INFINITY);
	for (size_t i = 0; i < k; i++) {
		uint64_t want = 0;
		cum += r[i].count;
		for (size_t j = 0; j < nx; j++) {
			long double x = xs[j].dtype == VSTATS_INT    ? (long double)xs[j].i
					: xs[j].dtype == VSTATS_UINT ? (long double)xs[j].u
								     : (long double)xs[j].f;
			want += x <= (long double)r[i].le;
		}
		if (i > 0 && !(r[i].le > r[i - 1].le))
			fail_msg("region %zu: le %.17g not above %.17g", i, r[i].le, r[i - 1].le);
		if (cum != want)
			fail_msg("le %.17g counts %llu, the values up to it are %llu", r[i].le,
				 (unsigned long long)cum, (unsigned long long)want);
	}
}

/* Feeds xs once each; the regions must be want, by Prometheus' rule. */
static void expect_exact(enum vstats_stype t, enum vstats_dtype d, const struct vstats_hist_spec *h,
			 const struct vstats_value *xs, size_t nx, const struct vstats_region *want,
			 size_t nwant)
{
	struct vstats_spec spec = {.stype = t, .hist = *h};
	static struct vstats_region got[VSTATS_REGIONS_MAX];
	struct vstats_voi v;
	const char *why;

	assert_int_equal(vstats_voi_init(&v, d, false, &spec, 1, &why), 0);
	for (size_t i = 0; i < nx; i++)
		assert_int_equal(vstats_update_n(&v, xs[i], 1), 0);
	size_t k = vstats_hist_regions(&v.stat[0].hist, t, got);
	expect_cumulative(got, k, xs, nx);
	/* want: the last nwant regions (a long exp histogram's first ones
	 * are its small powers) */
	assert_true(k >= nwant);
	for (size_t i = 0; i < nwant; i++) {
		const struct vstats_region *g = &got[k - nwant + i];
		if (g->le != want[i].le || g->count != want[i].count)
			fail_msg("region %zu: le %.17g count %llu, want le %.17g count %llu",
				 k - nwant + i, g->le, (unsigned long long)g->count, want[i].le,
				 (unsigned long long)want[i].count);
	}
	vstats_voi_free(&v);
}

#define P53 (1ll << 53)

/* A region's largest value past 2^53 is served as le
 * only where a double holds it (INT64_MAX as 2^63, UINT64_MAX as 2^64),
 * else it joins the next region: every le counts exactly the values up
 * to it. Hand-computed streams; each failed before (a region whose le
 * rounded onto the last joined the last, counting values above it). */
static void test_regions_beyond_doubles(void **state)
{
	(void)state;
	/* (a) u64 exp 0..2^62 by 2: buckets [2^k - 1, 2^(k+1) - 1). Bounds
	 * 2^(k+1) - 2 are doubles up to 2^54 - 2; 2^55 - 2 .. 2^62 - 2 are
	 * not (2^61 - 2 was served as le 2^61, counting 1 of the 3 values up
	 * to 2^61), so they join the open last bucket, served at 2^64. */
	struct vstats_hist_spec exp = {
	    .scheme = VSTATS_EXP, .lb = U(0), .ub = U(1ull << 62), .stepbase = 2};
	struct vstats_value ax[] = {U((1ull << 61) - 1), U(1ull << 61), U((1ull << 61) + 1), U(5)};
	expect_exact(VSTATS_CRHIST, VSTATS_UINT, &exp, ax, 4,
		     (struct vstats_region[]){{0x1p54 - 2, 0}, {0x1p64, 3}, {INFINITY, 0}}, 3);

	/* (b) s64 drhist [0, 2^53 + 2) [2^53 + 2, 2^53 + 5): the first's last
	 * value 2^53 + 1 joins the second's, 2^53 + 4 (was le 2^53 counting
	 * both 2^53 + 1) */
	struct vstats_bucket dr[] = {{I(0), I(P53 + 2)}, {I(P53 + 2), I(P53 + 5)}};
	struct vstats_hist_spec drs = {.scheme = VSTATS_USR, .usr = dr, .nusr = 2};
	struct vstats_value bx[] = {I(5),	I(P53),	    I(P53 + 1), I(P53 + 1),
				    I(P53 + 2), I(P53 + 4), I(P53 + 5)};
	expect_exact(VSTATS_DRHIST, VSTATS_INT, &drs, bx, 7,
		     (struct vstats_region[]){{0x1p53 + 4, 6}, {INFINITY, 1}}, 2);

	/* (c) ubound_inf [10, INT64_MAX) ends at INT64_MAX - 1, no double:
	 * it joins the values above it, INT64_MAX alone, served at 2^63 (was
	 * le 2^63 without INT64_MAX); lbound_inf [INT64_MIN, 0) is -1 */
	struct vstats_bucket ten[] = {{I(0), I(10)}};
	struct vstats_hist_spec ub = {.scheme = VSTATS_USR,
				      .usr = ten,
				      .nusr = 1,
				      .flags = VSTATS_UBOUND_INF | VSTATS_LBOUND_INF};
	struct vstats_value cx[] = {I(INT64_MIN), I(3), I(10), I(INT64_MAX - 1), I(INT64_MAX)};
	expect_exact(VSTATS_DRHIST, VSTATS_INT, &ub, cx, 5,
		     (struct vstats_region[]){{-1, 1}, {9, 1}, {0x1p63, 3}, {INFINITY, 0}}, 4);
	/* the same in u64: UINT64_MAX at 2^64 */
	struct vstats_bucket uten[] = {{U(0), U(10)}};
	struct vstats_hist_spec uub = {
	    .scheme = VSTATS_USR, .usr = uten, .nusr = 1, .flags = VSTATS_UBOUND_INF};
	struct vstats_value ux[] = {U(3), U(10), U(UINT64_MAX - 1), U(UINT64_MAX)};
	expect_exact(VSTATS_DRHIST, VSTATS_UINT, &uub, ux, 4,
		     (struct vstats_region[]){{9, 1}, {0x1p64, 3}, {INFINITY, 0}}, 3);

	/* (d) dvhist 2^53, 2^53 + 2: the gap {2^53 + 1} joins 2^53 + 2 (was
	 * merged into le 2^53) */
	struct vstats_bucket dv[] = {{I(P53), I(P53)}, {I(P53 + 2), I(P53 + 2)}};
	struct vstats_hist_spec dvs = {.scheme = VSTATS_USR, .usr = dv, .nusr = 2};
	struct vstats_value dx[] = {I(P53), I(P53 + 1), I(P53 + 1), I(P53 + 2), I(P53 + 3)};
	expect_exact(VSTATS_DVHIST, VSTATS_INT, &dvs, dx, 5,
		     (struct vstats_region[]){{0x1p53, 1}, {0x1p53 + 2, 3}, {INFINITY, 1}}, 3);
	/* u64 dvhist 2^63, UINT64_MAX: below the first, 2^63 - 1 joins 2^63;
	 * the gap joins UINT64_MAX, at 2^64 */
	struct vstats_bucket udv[] = {{U(1ull << 63), U(0)}, {U(UINT64_MAX), U(0)}};
	struct vstats_hist_spec udvs = {.scheme = VSTATS_USR, .usr = udv, .nusr = 2};
	struct vstats_value udx[] = {U(7), U(1ull << 63), U((1ull << 63) + 1), U(UINT64_MAX - 1),
				     U(UINT64_MAX)};
	expect_exact(VSTATS_DVHIST, VSTATS_UINT, &udvs, udx, 5,
		     (struct vstats_region[]){{0x1p63, 2}, {0x1p64, 3}, {INFINITY, 0}}, 3);

	/* s64 crhist, the user's bounds 0, 2^53 + 1, 2^53 + 2, 2^54: 2^53 is
	 * served; 2^53 + 1 (was merged into 2^53) and 2^54 - 1 are not, so
	 * they join the open last bucket, served at 2^63 */
	struct vstats_bucket cu[] = {
	    {I(0), I(0)}, {I(P53 + 1), I(0)}, {I(P53 + 2), I(0)}, {I(2 * P53), I(0)}};
	struct vstats_hist_spec cus = {.scheme = VSTATS_USR, .usr = cu, .nusr = 4};
	struct vstats_value ex[] = {I(-1),	    I(P53),	I(P53 + 1),  I(P53 + 2),
				    I(2 * P53 - 1), I(2 * P53), I(INT64_MAX)};
	expect_exact(VSTATS_CRHIST, VSTATS_INT, &cus, ex, 7,
		     (struct vstats_region[]){{-1, 1}, {0x1p53, 1}, {0x1p63, 5}, {INFINITY, 0}}, 4);

	/* s64 lin from 2^60 by 5: every bound 2^60 + 5k - 1 is past what a
	 * double holds, so all join the last, at 2^63; below the first,
	 * 2^60 - 1 joins them too */
	struct vstats_hist_spec lin = {
	    .scheme = VSTATS_LIN, .lb = I(1ll << 60), .ub = I((1ll << 60) + 10), .stepinc = 5};
	struct vstats_value lx[] = {I(1), I((1ll << 60) + 4), I((1ll << 60) + 12)};
	expect_exact(VSTATS_CRHIST, VSTATS_INT, &lin, lx, 3,
		     (struct vstats_region[]){{0x1p63, 3}, {INFINITY, 0}}, 2);

	/* linexp 0..2^54 (base 2, 2 steps): [2^k, 2^(k+1)) from 2; 2^53 - 1
	 * is served, 2^54 - 1 joins the open [2^54, ..), at 2^63 */
	struct vstats_hist_spec lx2 = {
	    .scheme = VSTATS_LINEXP, .lb = I(0), .ub = I(2 * P53), .stepbase = 2, .nlinsteps = 2};
	struct vstats_value lex[] = {I(P53 - 1), I(P53), I(P53 + 1), I(3 * (P53 / 2))};
	expect_exact(VSTATS_CRHIST, VSTATS_INT, &lx2, lex, 4,
		     (struct vstats_region[]){{0x1p53 - 1, 1}, {0x1p63, 3}, {INFINITY, 0}}, 3);
}

/* n updates at once are n updates: the counts, the sum, MAX and MIN, the
 * digest's weight. */
static void test_weighted_updates(void **state)
{
	struct vstats_spec specs[] = {{.stype = VSTATS_SUM},
				      {.stype = VSTATS_MAX},
				      {.stype = VSTATS_DVHIST,
				       .hist = {.scheme = VSTATS_USR,
						.usr = (struct vstats_bucket[]){{I(3), I(3)}},
						.nusr = 1}},
				      {.stype = VSTATS_TDGST, .compression = 100}};
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, specs, 4, &why), 0);
	assert_int_equal(vstats_update_n(&v, I(3), 1000), 0);
	assert_int_equal(vstats_update_n(&v, I(-2), 5), 0);
	assert_int_equal(vstats_update_n(&v, I(9), 0), 0); /* nothing */
	assert_int_equal(stat_of(&v, VSTATS_SUM)->v.i, 3000 - 10);
	assert_int_equal(stat_of(&v, VSTATS_MAX)->v.i, 3);
	const struct vstats_hist *h = &stat_of(&v, VSTATS_DVHIST)->hist;
	assert_int_equal(h->count[0], 1000);
	assert_int_equal(h->between[0], 5);
	assert_true(h->sum == 2990);
	assert_true(tdigest_count(stat_of(&v, VSTATS_TDGST)->td) == 1005);
	assert_int_equal(v.updates, 1005);
	vstats_voi_free(&v);
}

static void expect_refused(enum vstats_stype t, enum vstats_dtype d,
			   const struct vstats_hist_spec *h)
{
	struct vstats_spec spec = {.stype = t, .hist = *h};
	struct vstats_voi v;
	const char *why = NULL;
	assert_int_equal(vstats_voi_init(&v, d, false, &spec, 1, &why), -EINVAL);
	assert_non_null(why);
}

static void expect_lin_refused(int64_t lb, int64_t ub, double stepinc)
{
	expect_refused(VSTATS_CRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){
			   .scheme = VSTATS_LIN, .lb = I(lb), .ub = I(ub), .stepinc = stepinc});
}

static void test_refused_specs(void **state)
{
	(void)state;
	struct vstats_bucket overlap[] = {{I(0), I(10)}, {I(9), I(20)}};
	expect_refused(VSTATS_DRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){.scheme = VSTATS_USR, .usr = overlap, .nusr = 2});
	struct vstats_bucket empty[] = {{I(5), I(5)}}; /* [5, 5) holds nothing */
	expect_refused(VSTATS_DRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){.scheme = VSTATS_USR, .usr = empty, .nusr = 1});
	struct vstats_bucket down[] = {{I(5), I(0)}, {I(1), I(0)}};
	expect_refused(VSTATS_DVHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){.scheme = VSTATS_USR, .usr = down, .nusr = 2});
	struct vstats_bucket one[] = {{I(5), I(5)}};
	expect_refused(
	    VSTATS_DVHIST, VSTATS_INT,
	    &(struct vstats_hist_spec){
		.scheme = VSTATS_USR, .usr = one, .nusr = 1, .flags = VSTATS_LBOUND_INF});
	expect_refused(
	    VSTATS_CRHIST, VSTATS_INT,
	    &(struct vstats_hist_spec){
		.scheme = VSTATS_USR, .usr = one, .nusr = 1, .flags = VSTATS_UBOUND_INF});
	expect_lin_refused(0, 10000, 1);
	expect_lin_refused(0, 10, 0);
	expect_lin_refused(0, 10, 2.5);
	expect_lin_refused(10, 0, 1);
	expect_refused(
	    VSTATS_CRHIST, VSTATS_INT,
	    &(struct vstats_hist_spec){
		.scheme = VSTATS_LINEXP, .lb = I(0), .ub = I(10), .stepbase = 1, .nlinsteps = 1});
	expect_lin_refused(INT64_MAX - 10, INT64_MAX, 4);
	expect_refused(VSTATS_CRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){
			   .scheme = VSTATS_LIN, .lb = F(0), .ub = F(10), .stepinc = 1});
	expect_refused(VSTATS_DRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){
			   .scheme = VSTATS_LIN, .lb = I(0), .ub = I(10), .stepinc = 1});
	/* 2048 ranges with gaps make 4097 Prometheus buckets; 2047 fit */
	static struct vstats_bucket gaps[2048];
	for (int i = 0; i < 2048; i++)
		gaps[i] = (struct vstats_bucket){I(10 * i), I(10 * i + 5)};
	expect_refused(VSTATS_DRHIST, VSTATS_INT,
		       &(struct vstats_hist_spec){.scheme = VSTATS_USR, .usr = gaps, .nusr = 2048});
	struct vstats_spec fit = {.stype = VSTATS_DRHIST,
				  .hist = {.scheme = VSTATS_USR, .usr = gaps, .nusr = 2047}};
	struct vstats_voi v;
	const char *why;
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, &fit, 1, &why), 0);
	vstats_voi_free(&v);
	struct vstats_spec two_sums[] = {{.stype = VSTATS_SUM}, {.stype = VSTATS_SUM}};
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, two_sums, 2, &why), -EINVAL);
	struct vstats_spec td = {.stype = VSTATS_TDGST, .compression = 5};
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, &td, 1, &why), -EINVAL);
}

static void test_tdigest_exact_cases(void **state)
{
	(void)state;
	assert_null(tdigest_new(1));
	struct tdigest *td = tdigest_new(100);
	assert_true(isnan(tdigest_quantile(td, 0.5)));
	for (int i = 1; i <= 5; i++)
		tdigest_add(td, i, 1);
	tdigest_add(td, NAN, 1); /* ignored */
	tdigest_add(td, 1, -1);
	assert_true(tdigest_quantile(td, 0) == 1);
	assert_true(tdigest_quantile(td, 1) == 5);
	assert_true(tdigest_quantile(td, 0.5) == 3); /* singletons are exact */
	assert_true(tdigest_count(td) == 5);
	assert_true(tdigest_sum(td) == 15);
	struct tdigest *copy = tdigest_copy(td);
	tdigest_reset(td);
	assert_true(tdigest_count(td) == 0);
	assert_true(tdigest_quantile(copy, 0.5) == 3);
	tdigest_free(copy);
	tdigest_free(td);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The fraction of samples at or below x. */
static double rank_of(const double *sorted, size_t n, double x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (double)lo / (double)n;
}

/* Uniform and exponential streams of 200,000: the rank error at the
 * usual quantiles is small and the centroids stay bounded. */
static void test_tdigest_rank_error(void **state)
{
	static const double qs[] = {0.5, 0.9, 0.99, 0.999};
	size_t n = 200000;
	double *x = malloc(n * sizeof(double));
	unsigned seed = 1;
	(void)state;

	for (int dist = 0; dist < 2; dist++) {
		struct tdigest *td = tdigest_new(100);
		for (size_t i = 0; i < n; i++) {
			double u = (rand_r(&seed) + 0.5) / ((double)RAND_MAX + 1);
			x[i] = dist == 0 ? u : -log(u);
			tdigest_add(td, x[i], 1);
		}
		qsort(x, n, sizeof(double), cmp_double);
		for (size_t k = 0; k < 4; k++) {
			double err = fabs(rank_of(x, n, tdigest_quantile(td, qs[k])) - qs[k]);
			if (err > (qs[k] == 0.5 ? 0.005 : 0.0015))
				fail_msg("dist %d q %g: rank error %g", dist, qs[k], err);
		}
		assert_true(tdigest_centroids(td) <= 400); /* 2 * compression, doubled */
		tdigest_free(td);
	}
	free(x);
}

/* What docs/processing.md says of a digest's memory: under 1 KiB made,
 * growing with the centroids it keeps to at most 64 bytes per unit of
 * compression and 1.2 KiB; about 5.3 KiB at compression 100 and 42.6 KiB
 * at 1,000 once full. */
static void test_tdigest_memory(void **state)
{
	static const double comp[] = {100, 1000};
	static const size_t full[] = {5440, 43584};
	unsigned seed = 7;
	(void)state;

	for (int c = 0; c < 2; c++) {
		struct tdigest *td = tdigest_new(comp[c]);
		assert_true(tdigest_bytes(td) < 1024);
		size_t most = 0;
		for (int i = 0; i < 300000; i++) {
			tdigest_add(td, (rand_r(&seed) + 0.5) / ((double)RAND_MAX + 1), 1);
			most = tdigest_bytes(td) > most ? tdigest_bytes(td) : most;
		}
		assert_true(most <= 64 * comp[c] + 1200);
		assert_true(most <= tdigest_bytes_max(comp[c])); /* what a total counts */
		assert_true(most > full[c] * 9 / 10 && most < full[c] * 11 / 10);
		tdigest_free(td);
	}
}

#define V(d, field, x) ((struct vstats_value){(d), {.field = (x)}})

/* Each integer dtype of stats(3) with its limits: a value it cannot hold
 * is -ERANGE and changes nothing, a SUM stops at the limit it would pass
 * (counted in errs), MAX and MIN start at the lowest and highest, and the
 * text is stats_voistatdata_tostr's. */
static void test_integer_dtypes(void **state)
{
	static const struct {
		enum vstats_dtype d;
		const char *name;
		int64_t lo;
		uint64_t hi;
	} cases[] = {
	    {VSTATS_S32, "s32", INT32_MIN, INT32_MAX},	{VSTATS_U32, "u32", 0, UINT32_MAX},
	    {VSTATS_S64, "s64", INT64_MIN, INT64_MAX},	{VSTATS_U64, "u64", 0, UINT64_MAX},
	    {VSTATS_LONG, "slong", LONG_MIN, LONG_MAX}, {VSTATS_ULONG, "ulong", 0, ULONG_MAX},
	};
	struct vstats_spec specs[] = {
	    {.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}, {.stype = VSTATS_MIN}};
	char buf[32];
	const char *why;
	(void)state;

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		enum vstats_dtype d = cases[k].d;
		bool sig = vstats_dtype_signed(d);
		struct vstats_value hi = sig ? V(d, i, (int64_t)cases[k].hi) : V(d, u, cases[k].hi);
		struct vstats_value one = sig ? V(d, i, 1) : V(d, u, 1);
		struct vstats_voi v;

		assert_string_equal(vstats_dtype_name(d), cases[k].name);
		assert_int_equal(vstats_voi_init(&v, d, true, specs, 3, &why), 0);
		if (sig)
			assert_true(stat_of(&v, VSTATS_MAX)->v.i == cases[k].lo);
		else
			assert_true(stat_of(&v, VSTATS_MAX)->v.u == 0);
		assert_true(stat_of(&v, VSTATS_MIN)->v.u == hi.u);
		assert_int_equal(vstats_update_abs(&v, hi), 0);
		assert_int_equal(vstats_update_abs(&v, one), 0);
		/* the SUM stops at the highest, counted once */
		assert_true(stat_of(&v, VSTATS_SUM)->v.u == hi.u);
		assert_int_equal(stat_of(&v, VSTATS_SUM)->errs, 1);
		/* a relative update past the highest is not taken */
		assert_int_equal(vstats_update_rel(&v, hi), -ERANGE);
		assert_int_equal(v.updates, 2);
		vstats_value_tostr(hi, buf, sizeof(buf));
		char want[32];
		snprintf(want, sizeof(want), sig ? "%" PRId64 : "%" PRIu64, cases[k].hi);
		assert_string_equal(buf, want);
		vstats_voi_free(&v);
	}
	/* past the 32-bit limits: not taken */
	struct vstats_voi v;
	assert_int_equal(vstats_voi_init(&v, VSTATS_S32, false, specs, 3, &why), 0);
	assert_int_equal(vstats_update_abs(&v, V(VSTATS_S32, i, (int64_t)INT32_MAX + 1)), -ERANGE);
	assert_int_equal(vstats_update_abs(&v, V(VSTATS_S32, i, (int64_t)INT32_MIN - 1)), -ERANGE);
	assert_int_equal(vstats_update_abs(&v, V(VSTATS_S64, i, 1)), -EINVAL); /* another dtype */
	assert_int_equal(v.updates, 0);
	/* a negative SUM stops at the lowest; n updates at once as n single ones */
	assert_int_equal(vstats_update_n(&v, V(VSTATS_S32, i, -2), 1ull << 31), 0);
	assert_true(stat_of(&v, VSTATS_SUM)->v.i == INT32_MIN);
	assert_int_equal(stat_of(&v, VSTATS_SUM)->errs, 1);
	assert_true(stat_of(&v, VSTATS_MIN)->v.i == -2);
	vstats_voi_free(&v);
	assert_int_equal(vstats_voi_init(&v, VSTATS_U32, false, specs, 3, &why), 0);
	assert_int_equal(vstats_update_abs(&v, V(VSTATS_U32, u, 1ull << 32)), -ERANGE);
	assert_int_equal(vstats_update_n(&v, V(VSTATS_U32, u, 2), 1ull << 31), 0);
	assert_true(stat_of(&v, VSTATS_SUM)->v.u == UINT32_MAX);
	vstats_voi_free(&v);
}

/* A histogram's bounds must be within its VOI's dtype; generated ones
 * must not pass it. */
static void test_bounds_within_dtype(void **state)
{
	struct vstats_bucket usr[] = {{V(VSTATS_S32, i, 0), V(VSTATS_S32, i, 0)},
				      {V(VSTATS_S32, i, 1ll << 31), V(VSTATS_S32, i, 1ll << 31)}};
	struct vstats_spec spec = {.stype = VSTATS_CRHIST,
				   .hist = {.scheme = VSTATS_USR, .usr = usr, .nusr = 2}};
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_S32, false, &spec, 1, &why), -EINVAL);
	assert_string_equal(why, "bucket bounds must be within the dtype's limits");
	usr[1].lb.i = INT32_MAX;
	assert_int_equal(vstats_voi_init(&v, VSTATS_S32, false, &spec, 1, &why), 0);
	/* the last bucket is open to the dtype's highest */
	assert_true(v.stat[0].hist.bkt[1].ub.i == INT32_MAX);
	vstats_voi_free(&v);
	spec.hist = (struct vstats_hist_spec){.scheme = VSTATS_LIN,
					      .lb = V(VSTATS_U32, u, 0),
					      .ub = V(VSTATS_U32, u, 4000000000u),
					      .stepinc = 1e9};
	assert_int_equal(vstats_voi_init(&v, VSTATS_U32, false, &spec, 1, &why), -EINVAL);
	assert_string_equal(why, "the buckets pass the largest value");
	spec.hist.ub.u = 3000000000u; /* buckets up to 4e9, within 2^32 - 1 */
	assert_int_equal(vstats_voi_init(&v, VSTATS_U32, false, &spec, 1, &why), 0);
	vstats_voi_free(&v);
	/* a u64 LINEXP past 2^63: the first power of 2 above lb is 2^64, so
	 * a step of 2^64 / 8 (not 2^63 / 8, as if lb were below 2^63) */
	spec.hist = (struct vstats_hist_spec){.scheme = VSTATS_LINEXP,
					      .lb = U((1ull << 63) + 5),
					      .ub = U((1ull << 63) + (1ull << 61) + 5),
					      .stepbase = 2,
					      .nlinsteps = 8};
	if (vstats_voi_init(&v, VSTATS_UINT, false, &spec, 1, &why) != 0)
		fail_msg("refused: %s", why);
	assert_int_equal(v.stat[0].hist.n, 2); /* to ub, then the one that passes it */
	assert_true(v.stat[0].hist.bkt[1].lb.u == (1ull << 63) + (1ull << 61) + 5);
	vstats_voi_free(&v);
}

/* CRHIST32 ... DVHIST32: a count stops at UINT32_MAX (FreeBSD's wraps),
 * each update that could not count whole counted in errs, the sum kept
 * of what was counted; the regions stay one whose counts add up. A
 * 64-bit one counts past it. */
static void test_counts32_saturate(void **state)
{
	struct vstats_bucket usr[] = {{I(0), I(0)}, {I(10), I(10)}};
	struct vstats_spec spec = {
	    .stype = VSTATS_DVHIST,
	    .hist = {.scheme = VSTATS_USR, .usr = usr, .nusr = 2, .counts32 = true}};
	struct vstats_region reg[VSTATS_REGIONS_MAX];
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, &spec, 1, &why), 0);
	const struct vstats_hist *h = &v.stat[0].hist;
	assert_int_equal(vstats_update_n(&v, I(10), UINT32_MAX - 1), 0);
	assert_int_equal(v.stat[0].errs, 0);
	assert_int_equal(vstats_update_n(&v, I(10), 3), 0); /* one fits, two do not */
	assert_true(h->count[1] == UINT32_MAX);
	assert_int_equal(v.stat[0].errs, 1);
	assert_true(h->sum == 10.0 * UINT32_MAX);
	assert_int_equal(vstats_update_n(&v, I(10), 1), 0); /* stays */
	assert_true(h->count[1] == UINT32_MAX);
	assert_int_equal(v.stat[0].errs, 2);
	/* out of band: the gap's count and the oob both stop */
	assert_int_equal(vstats_update_n(&v, I(5), (1ull << 32) + 7), 0);
	assert_true(h->between[1] == UINT32_MAX && h->oob == UINT32_MAX);
	assert_int_equal(v.stat[0].errs, 3);
	assert_int_equal(vstats_update_abs(&v, I(0)), 0);
	assert_true(h->count[0] == 1);
	/* regions: 0, the gap (0, 10), 10, above: each counted once */
	size_t n = vstats_hist_regions(h, VSTATS_DVHIST, reg);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += reg[i].count;
	assert_true(total == 1 + 2ull * UINT32_MAX);
	assert_true(reg[n - 1].le == INFINITY);
	vstats_voi_free(&v);

	spec.hist.counts32 = false;
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, &spec, 1, &why), 0);
	assert_int_equal(vstats_update_n(&v, I(10), (1ull << 32) + 1), 0);
	assert_true(v.stat[0].hist.count[1] == (1ull << 32) + 1);
	assert_int_equal(v.stat[0].errs, 0);
	vstats_voi_free(&v);
}

/* The Q types (sys/sys/qmath.h): values held as the number times
 * 2^precision, rounded to it halves away from zero, within qmath's
 * Q_IFMINVAL and Q_IFMAXVAL, printed as Q_TOSTR prints them. */
static void test_q_types(void **state)
{
	enum vstats_dtype q2 = VSTATS_Q(VSTATS_Q_S64, 2), q8 = VSTATS_Q(VSTATS_Q_S32, 8);
	struct vstats_spec specs[] = {
	    {.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}, {.stype = VSTATS_MIN}};
	struct vstats_value x;
	struct vstats_voi v;
	char buf[64];
	const char *why;
	(void)state;

	assert_true(vstats_q_prec_ok(VSTATS_Q_S32, 16) && !vstats_q_prec_ok(VSTATS_Q_S32, 32));
	assert_true(vstats_q_prec_ok(VSTATS_Q_U64, 48) && !vstats_q_prec_ok(VSTATS_Q_U64, 64));
	assert_false(vstats_q_prec_ok(VSTATS_Q_S64, 12) || vstats_q_prec_ok(VSTATS_INT, 2));
	assert_string_equal(vstats_dtype_name(q2), "q_s64");
	/* rounding: 1.125 is 4.5 quarters, away from zero 5: 1.25 */
	assert_int_equal(vstats_value_of_double(q2, 1.125, &x), 0);
	assert_true(x.i == 5 && vstats_value_f(x) == 1.25);
	vstats_value_tostr(x, buf, sizeof(buf));
	assert_string_equal(buf, "1.25");
	assert_int_equal(vstats_value_of_double(q2, -0.375, &x), 0);
	vstats_value_tostr(x, buf, sizeof(buf));
	assert_string_equal(buf, "-0.50");
	assert_int_equal(vstats_value_of_int(q2, 3, &x), 0);
	vstats_value_tostr(x, buf, sizeof(buf));
	assert_string_equal(buf, "3.00");
	/* a decimal exactly, without a double: 0.125 rounds to 0.25 */
	assert_int_equal(vstats_value_parse(q2, "0.125", &x), 0);
	assert_true(x.i == 1);
	assert_int_equal(vstats_value_parse(q2, "-1.1", &x), 0);
	assert_true(x.i == -4);
	assert_int_equal(vstats_value_parse(q2, "1.", &x), -EINVAL);
	assert_int_equal(vstats_value_parse(q2, "0.12345678901234567890", &x), -EINVAL);
	/* a step's decimal: a whole number of 2^-prec exactly, or refused */
	unsigned __int128 units;
	assert_int_equal(vstats_decimal_units("12.25", 2, &units), 0);
	assert_true(units == 49);
	assert_int_equal(vstats_decimal_units("12.3", 2, &units), -EINVAL);
	assert_int_equal(vstats_decimal_units("9007199254740993", 0, &units), 0);
	assert_true(units == (((unsigned __int128)1 << 53) + 1));
	assert_int_equal(vstats_decimal_units("1.00000000000000001", 48, &units), -EINVAL);
	assert_int_equal(vstats_decimal_units("1e3", 0, &units), -EINVAL);
	assert_int_equal(vstats_decimal_units("-1", 0, &units), -EINVAL);
	assert_int_equal(vstats_decimal_units("18446744073709551617", 0, &units), -EINVAL);
	/* the limits: 2^28 - 1 of 2^-8 for q_s32, sign and magnitude */
	vstats_value_tostr(vstats_highest(q8), buf, sizeof(buf));
	assert_string_equal(buf, "1048575.99609375");
	vstats_value_tostr(vstats_lowest(q8), buf, sizeof(buf));
	assert_string_equal(buf, "-1048575.99609375");
	assert_int_equal(vstats_value_of_int(q8, 1048576, &x), -ERANGE);
	assert_int_equal(vstats_value_of_double(q8, 1048575.999, &x), -ERANGE); /* rounds up */
	assert_int_equal(vstats_value_of_int(VSTATS_Q(VSTATS_Q_U64, 16), -1, &x), -ERANGE);
	/* the longest text: 48 decimals, the binary fraction exactly */
	char longest[VSTATS_VALUE_STR_MAX];
	assert_int_equal(vstats_value_tostr(vstats_highest(VSTATS_Q(VSTATS_Q_U64, 48)), longest,
					    sizeof(longest)),
			 53);
	assert_string_equal(longest, "8191.999999999999996447286321199499070644378662109375");
	/* SUM, MAX, MIN on them; the SUM stops at the highest */
	assert_int_equal(vstats_voi_init(&v, q8, false, specs, 3, &why), 0);
	assert_true(stat_of(&v, VSTATS_MAX)->v.i == -((1ll << 28) - 1));
	assert_int_equal(vstats_value_of_double(q8, 1048575.5, &x), 0);
	assert_int_equal(vstats_update_abs(&v, x), 0);
	assert_int_equal(vstats_value_of_double(q8, 0.75, &x), 0);
	assert_int_equal(vstats_update_abs(&v, x), 0);
	assert_true(stat_of(&v, VSTATS_SUM)->v.i == (1ll << 28) - 1);
	assert_int_equal(stat_of(&v, VSTATS_SUM)->errs, 1);
	vstats_value_tostr(stat_of(&v, VSTATS_MIN)->v, buf, sizeof(buf));
	assert_string_equal(buf, "0.75000000");
	vstats_voi_free(&v);
}

/* A Q VOI's histogram: steps in its numbers, a multiple of 2^-precision;
 * its regions' le are the numbers, the largest a bucket holds. */
static void test_q_histogram(void **state)
{
	enum vstats_dtype q2 = VSTATS_Q(VSTATS_Q_S64, 2);
	struct vstats_spec spec = {
	    .stype = VSTATS_CRHIST,
	    .hist = {
		.scheme = VSTATS_LIN, .lb = {q2, {.i = 0}}, .ub = {q2, {.i = 4}}, .stepinc = 0.25}};
	struct vstats_region reg[VSTATS_REGIONS_MAX];
	struct vstats_value x;
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, q2, false, &spec, 1, &why), 0);
	assert_int_equal(v.stat[0].hist.n, 5);			  /* 0, 0.25, 0.5, 0.75, 1 */
	assert_int_equal(vstats_value_of_double(q2, 0.3, &x), 0); /* 0.25 */
	assert_int_equal(vstats_update_abs(&v, x), 0);
	assert_true(v.stat[0].hist.count[1] == 1);
	size_t n = vstats_hist_regions(&v.stat[0].hist, VSTATS_CRHIST, reg);
	assert_int_equal(n, 5);
	assert_true(reg[0].le == 0 && reg[1].le == 0.25 && reg[1].count == 1);
	assert_true(reg[4].le == INFINITY);
	vstats_voi_free(&v);
	spec.hist.stepinc = 0.1;
	assert_int_equal(vstats_voi_init(&v, q2, false, &spec, 1, &why), -EINVAL);
}

static void test_rollthedice(void **state)
{
	uint32_t pct[] = {30, 20};
	size_t got[3] = {0};
	char seed[32];
	(void)state;

	for (int i = 0; i < 20000; i++) {
		snprintf(seed, sizeof(seed), "vm-%d", i);
		int k = vstats_rollthedice(pct, 2, seed, strlen(seed));
		assert_int_equal(k, vstats_rollthedice(pct, 2, seed, strlen(seed)));
		got[k < 0 ? 2 : k]++;
	}
	assert_true(got[0] > 5600 && got[0] < 6400); /* 30% of 20,000 */
	assert_true(got[1] > 3600 && got[1] < 4400); /* 20% */
	assert_true(got[2] > 9600 && got[2] < 10400);
	assert_int_equal(vstats_rollthedice((uint32_t[]){100}, 1, "x", 1), 0);
	assert_int_equal(vstats_rollthedice((uint32_t[]){0}, 1, "x", 1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sum_max_min),
	    cmocka_unit_test(test_crhist_schemes),
	    cmocka_unit_test(test_crhist_flags),
	    cmocka_unit_test(test_float_lin_bounds),
	    cmocka_unit_test(test_discrete_histograms),
	    cmocka_unit_test(test_update_n_count_bounded),
	    cmocka_unit_test(test_hist_regions),
	    cmocka_unit_test(test_regions_beyond_doubles),
	    cmocka_unit_test(test_weighted_updates),
	    cmocka_unit_test(test_refused_specs),
	    cmocka_unit_test(test_tdigest_exact_cases),
	    cmocka_unit_test(test_tdigest_rank_error),
	    cmocka_unit_test(test_tdigest_memory),
	    cmocka_unit_test(test_rollthedice),
	    cmocka_unit_test(test_integer_dtypes),
	    cmocka_unit_test(test_bounds_within_dtype),
	    cmocka_unit_test(test_counts32_saturate),
	    cmocka_unit_test(test_q_types),
	    cmocka_unit_test(test_q_histogram),
	};
	return cmocka_run_group_tests_name("vstats", tests, NULL, NULL);
}
