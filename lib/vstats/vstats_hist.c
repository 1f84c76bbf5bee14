/* stats(3)'s histogram buckets, with the rules of FreeBSD's
 * sys/kern/subr_stats.c (stats_vss_hist_hlpr, stats_v1_voi_update_hist):
 * made from a scheme (LIN, EXP, LINEXP, or the user's), checked, found for
 * a value; and served as Prometheus regions, whose counts stay cumulative. */
#include "vstats.h"
#include "vstats_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* ---- making the buckets ---- */

/* Where the buckets are being made: the spec, what is made so far, and
 * the first refusal. */
struct maker {
	const struct vstats_hist_spec *s;
	enum vstats_dtype d;
	struct vstats_bucket *b;
	uint32_t n;
	const char *why;
};

static bool refuse(struct maker *m, const char *why)
{
	if (!m->why)
		m->why = why;
	return false;
}

static bool push(struct maker *m, struct vstats_value lb, struct vstats_value ub)
{
	if (m->n == VSTATS_BUCKETS_MAX)
		return refuse(m, "a histogram may have at most 4096 buckets");
	m->b[m->n++] = (struct vstats_bucket){lb, ub};
	return true;
}

static bool whole(double x)
{
	return x == floor(x) && fabs(x) < 9.2e18;
}

/* base^exp in 64 bits, saturated at UINT64_MAX (FreeBSD's stats_pow_u64
 * wraps; a saturated step is refused as passing the largest value). */
static uint64_t pow_u64(uint64_t base, uint64_t exp)
{
	uint64_t r = 1;

	while (exp--)
		if (__builtin_mul_overflow(r, base, &r))
			return UINT64_MAX;
	return r;
}

/* x * 2^prec, saturated at UINT64_MAX (refused later as passing the
 * largest value). */
static uint64_t shl_sat(uint64_t x, unsigned prec)
{
	return prec && x > (UINT64_MAX >> prec) ? UINT64_MAX : x << prec;
}

/* FreeBSD's step for bucket i, which starts at lb (an s64's or a u64's),
 * of an integer VOI, in its units (a Q VOI's 2^-prec): LIN stepinc; EXP
 * stepbase^(stepexp + i); LINEXP the first power of stepbase above lb
 * divided by nlinsteps, at least one unit, worked in 128 bits (a u64's lb
 * past 2^63 has its power past 2^64), saturated at UINT64_MAX (refused
 * later as passing the largest value). 0 is EINVAL. */
static uint64_t int_step(const struct vstats_hist_spec *s, uint32_t i, __int128 lb, unsigned prec)
{
	uint64_t base = (uint64_t)s->stepbase;
	unsigned __int128 p;

	switch (s->scheme) {
	case VSTATS_LIN:
		return (uint64_t)ldexp(s->stepinc, (int)prec);
	case VSTATS_EXP:
		return shl_sat(pow_u64(base, (uint64_t)s->stepexp + i), prec);
	case VSTATS_LINEXP:
		/* stepbase is 2 to 2^63, lb below 2^64: p stays below 2^127 */
		p = (unsigned __int128)base << prec;
		while (lb >= 0 && p <= (unsigned __int128)lb)
			p *= base;
		p /= s->nlinsteps;
		return p == 0 ? 1 : p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
	case VSTATS_USR:
		break;
	}
	return 0;
}

/* The same for a float VOI, whose steps may be fractions. */
static double float_step(const struct vstats_hist_spec *s, uint32_t i, double lb)
{
	double e = 1;

	switch (s->scheme) {
	case VSTATS_LIN:
		return s->stepinc;
	case VSTATS_EXP:
		return pow(s->stepbase, s->stepexp + i);
	case VSTATS_LINEXP:
		while (pow(s->stepbase, e) <= lb && e < 2048)
			e++;
		return pow(s->stepbase, e) / s->nlinsteps;
	case VSTATS_USR:
		break;
	}
	return 0;
}

/* The upper bound of bucket i, which starts at lb; false when refused. A
 * float LIN bound is lb + (i + 1) * stepinc, not a running sum, so no
 * rounding accumulates. */
static bool next_bound(struct maker *m, uint32_t i, struct vstats_value lb, struct vstats_value *ub)
{
	*ub = lb;
	if (m->d != VSTATS_FLOAT && !vstats_dtype_signed(m->d)) { /* exact past 2^63 */
		uint64_t step = int_step(m->s, i, lb.u, VSTATS_DTYPE_PREC(m->d));
		if (step == 0)
			return refuse(m, "a step of 0 (FreeBSD: EINVAL)");
		if (__builtin_add_overflow(lb.u, step, &ub->u) || !vstats_value_fits(*ub))
			return refuse(m, "the buckets pass the largest value");
		return true;
	}
	if (m->d != VSTATS_FLOAT) {
		uint64_t step = int_step(m->s, i, lb.i, VSTATS_DTYPE_PREC(m->d));
		if (step == 0)
			return refuse(m, "a step of 0 (FreeBSD: EINVAL)");
		if (step > INT64_MAX || __builtin_add_overflow(lb.i, (int64_t)step, &ub->i) ||
		    !vstats_value_fits(*ub))
			return refuse(m, "the buckets pass the largest value");
		return true;
	}
	double step = float_step(m->s, i, lb.f);
	ub->f = m->s->scheme == VSTATS_LIN ? m->s->lb.f + (i + 1) * m->s->stepinc : lb.f + step;
	if (!(step > 0) || !(ub->f > lb.f) || !isfinite(ub->f))
		return refuse(m, "the steps must make buckets that move");
	return true;
}

static bool scheme_ok(struct maker *m)
{
	const struct vstats_hist_spec *s = m->s;

	if (s->lb.dtype != m->d || s->ub.dtype != m->d)
		return refuse(m, "lb and ub must be of the VOI's type");
	if (!vstats_value_fits(s->lb) || !vstats_value_fits(s->ub))
		return refuse(m, "lb and ub must be within the dtype's limits");
	if (vstats_value_cmp(s->lb, s->ub) > 0)
		return refuse(m, "lb must not be above ub");
	if (s->scheme == VSTATS_LINEXP && !(s->stepbase > 1))
		return refuse(m, "a linexp stepbase must be above 1 (FreeBSD never ends)");
	if (s->scheme == VSTATS_LINEXP && s->nlinsteps == 0)
		return refuse(m, "nlinsteps must be at least 1");
	if (s->scheme == VSTATS_EXP && !(s->stepbase > 0))
		return refuse(m, "an exp stepbase must be above 0");
	if (m->d == VSTATS_FLOAT)
		return true;
	/* a Q VOI's user reads "integer" as not meant for it: name its rule */
	if (s->scheme == VSTATS_LIN && VSTATS_DTYPE_PREC(m->d) > 0 &&
	    !(whole(ldexp(s->stepinc, (int)VSTATS_DTYPE_PREC(m->d))) && s->stepinc >= 0))
		return refuse(m, "a Q VOI's stepinc is a multiple of 2^-precision (FreeBSD's steps "
				 "are whole numbers of its units)");
	if ((s->scheme == VSTATS_LIN && VSTATS_DTYPE_PREC(m->d) == 0 &&
	     !(whole(s->stepinc) && s->stepinc >= 0)) ||
	    (s->scheme != VSTATS_LIN &&
	     !(whole(s->stepbase) && whole(s->stepexp) && s->stepexp >= 0)))
		return refuse(
		    m, VSTATS_DTYPE_PREC(m->d) > 0
			   ? "a Q VOI's stepbase and stepexp are whole numbers from 0 "
			     "(FreeBSD's u64)"
			   : "an integer VOI's steps are whole numbers from 0 (FreeBSD's u64)");
	return true;
}

/* FreeBSD's loop: buckets from lb, each step wide, up to and including
 * the first that reaches past ub; UBOUND_INF one more. A CRHIST keeps
 * only the lower bounds: each bucket ends where the next begins. */
static bool generated(struct maker *m)
{
	struct vstats_value lb = m->s->lb, ub;
	uint32_t i = 0;

	if (!scheme_ok(m))
		return false;
	do {
		if (!next_bound(m, i++, lb, &ub) || !push(m, lb, ub))
			return false;
		lb = ub;
	} while (vstats_value_cmp(ub, m->s->ub) <= 0);
	if ((m->s->flags & VSTATS_UBOUND_INF) && (!next_bound(m, i, lb, &ub) || !push(m, lb, ub)))
		return false;
	return true;
}

/* The user's buckets, which FreeBSD takes unchecked (searched from the
 * last, the first that holds a value wins); here they must be in
 * increasing order without overlap, each DRHIST bucket holding a value. */
static bool user(struct maker *m, enum vstats_stype t)
{
	const struct vstats_hist_spec *s = m->s;

	if (s->nusr == 0 || s->nusr > VSTATS_BUCKETS_MAX)
		return refuse(m, "a histogram needs 1 to 4096 buckets");
	for (uint32_t i = 0; i < s->nusr; i++) {
		struct vstats_bucket b = s->usr[i];
		if (b.lb.dtype != m->d || (t == VSTATS_DRHIST && b.ub.dtype != m->d))
			return refuse(m, "bucket bounds must be of the VOI's type");
		if (t != VSTATS_DRHIST)
			b.ub = b.lb;
		if (!vstats_value_fits(b.lb) || !vstats_value_fits(b.ub))
			return refuse(m, "bucket bounds must be within the dtype's limits");
		if (t == VSTATS_DRHIST && vstats_value_cmp(b.lb, b.ub) >= 0)
			return refuse(m, "a drhist bucket [lb, ub) holds lb <= x < ub: ub must be "
					 "above lb");
		if (m->n > 0 && vstats_value_cmp(b.lb, t == VSTATS_DRHIST ? m->b[m->n - 1].ub
									  : m->b[m->n - 1].lb) <
				    (t == VSTATS_DRHIST ? 0 : 1))
			return refuse(m, "buckets must be in increasing order without overlap");
		if (!push(m, b.lb, b.ub))
			return false;
	}
	if (t != VSTATS_DRHIST || !(s->flags & VSTATS_UBOUND_INF))
		return true;
	struct vstats_value end = m->b[m->n - 1].ub, top = vstats_highest(m->d);
	if (vstats_value_cmp(end, top) >= 0)
		return refuse(m, "ubound_inf after a bucket that ends at the largest value");
	return push(m, end, top);
}

const char *vstats_flags_refused(enum vstats_stype stype, enum vstats_scheme scheme, uint32_t flags)
{
	if (stype == VSTATS_DVHIST && flags)
		return "a dvhist takes neither lbound_inf nor ubound_inf (FreeBSD: EINVAL)";
	if (stype == VSTATS_CRHIST && scheme == VSTATS_USR && (flags & VSTATS_UBOUND_INF))
		return "ubound_inf with a crhist's own bounds: its last bucket is open already, "
		       "and "
		       "FreeBSD reads a bound past the ones given";
	return NULL;
}

/* LBOUND_INF: a bucket from the lowest value to the first's lb, first. */
static bool below_first(struct maker *m)
{
	struct vstats_value low = vstats_lowest(m->d);

	if (!(m->s->flags & VSTATS_LBOUND_INF))
		return true;
	if (vstats_value_cmp(m->b[0].lb, low) <= 0)
		return refuse(m, "lbound_inf below a bucket that starts at the lowest value");
	if (m->n == VSTATS_BUCKETS_MAX)
		return refuse(m, "a histogram may have at most 4096 buckets");
	for (uint32_t i = m->n; i > 0; i--)
		m->b[i] = m->b[i - 1];
	m->b[0] = (struct vstats_bucket){low, m->b[1].lb};
	m->n++;
	return true;
}

/* A CRHIST bucket ends where the next begins; the last is open. */
static void continuous_ends(struct maker *m)
{
	for (uint32_t i = 0; i + 1 < m->n; i++)
		m->b[i].ub = m->b[i + 1].lb;
	m->b[m->n - 1].ub = vstats_highest(m->d);
}

static bool make(enum vstats_stype stype, const struct vstats_hist_spec *spec, struct maker *m)
{
	const char *flags_why = vstats_flags_refused(stype, spec->scheme, spec->flags);

	if (stype < VSTATS_CRHIST || stype > VSTATS_DVHIST)
		return refuse(m, "not a histogram");
	if (flags_why)
		return refuse(m, flags_why);
	if (spec->scheme != VSTATS_USR && stype != VSTATS_CRHIST)
		return refuse(m, "discrete histograms take only the user's buckets");
	if (!(spec->scheme == VSTATS_USR ? user(m, stype) : generated(m)) || !below_first(m))
		return false;
	if (stype == VSTATS_CRHIST)
		continuous_ends(m);
	struct vstats_hist probe = {.bkt = m->b, .n = m->n};
	if (vstats_hist_regions(&probe, stype, NULL) > VSTATS_REGIONS_MAX)
		return refuse(m, "with the gaps between them and the region below the first, the "
				 "buckets make more than 4096 Prometheus buckets");
	return true;
}

int vstats_hist_buckets(enum vstats_stype stype, enum vstats_dtype dtype,
			const struct vstats_hist_spec *spec, struct vstats_bucket **out,
			uint32_t *n, const char **why)
{
	struct maker m = {spec, dtype, calloc(VSTATS_BUCKETS_MAX, sizeof(*m.b)), 0, NULL};

	*out = NULL;
	*n = 0;
	if (!m.b)
		return -ENOMEM;
	if (!make(stype, spec, &m)) {
		*why = m.why;
		free(m.b);
		return -EINVAL;
	}
	*why = NULL;
	/* Not a growth (no growarr): the buckets were made in room for the most
	 * a spec allows, and this only gives back what was not used. */
	struct vstats_bucket *fit = realloc(m.b, m.n * sizeof(*m.b));
	*out = fit ? fit : m.b;
	*n = m.n;
	return 0;
}

/* ---- finding a value's bucket ---- */

int vstats_hist_find(const struct vstats_hist *h, enum vstats_stype stype, struct vstats_value x,
		     uint32_t *gap)
{
	uint32_t lo = 0, hi = h->n;

	while (lo < hi) { /* lo: how many buckets start at or below x */
		uint32_t mid = lo + (hi - lo) / 2;
		if (vstats_value_cmp(h->bkt[mid].lb, x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*gap = lo;
	if (lo == 0)
		return -1;
	const struct vstats_bucket *b = &h->bkt[lo - 1];
	if (stype == VSTATS_CRHIST || (stype == VSTATS_DRHIST && vstats_value_cmp(x, b->ub) < 0) ||
	    (stype == VSTATS_DVHIST && vstats_value_cmp(x, b->lb) == 0))
		return (int)(lo - 1);
	return -1;
}

/* ---- the Prometheus regions ---- */

/* The largest value below v: v is above the dtype's lowest (a region's
 * end is above where it starts). */
static struct vstats_value below(struct vstats_value v)
{
	if (v.dtype == VSTATS_FLOAT)
		v.f = nextafter(v.f, -INFINITY);
	else if (vstats_dtype_signed(v.dtype))
		v.i--;
	else
		v.u--;
	return v;
}

/* Whether some value lies in [from, to) (from_incl) or (from, to). */
static bool holds_any(struct vstats_value from, bool from_incl, struct vstats_value to)
{
	if (from.dtype == VSTATS_FLOAT)
		return from_incl ? from.f < to.f : nextafter(from.f, INFINITY) < to.f;
	if (vstats_dtype_signed(from.dtype)) /* the difference in 64 bits unsigned: no overflow */
		return from.i < to.i && (from_incl || (uint64_t)to.i - (uint64_t)from.i >= 2);
	return from.u < to.u && (from_incl || to.u - from.u >= 2);
}

bool vstats_exact_le(struct vstats_value b, double *le)
{
	if (b.dtype == VSTATS_FLOAT) {
		*le = b.f;
		return true;
	}
	int prec = (int)VSTATS_DTYPE_PREC(b.dtype); /* a Q bound is b / 2^prec */
	bool exact;
	if (vstats_dtype_signed(b.dtype)) {
		*le = (double)b.i;
		exact = b.i == INT64_MAX || (*le < 0x1p63 && (int64_t)*le == b.i);
	} else {
		*le = (double)b.u;
		exact = b.u == UINT64_MAX || (*le < 0x1p64 && (uint64_t)*le == b.u);
	}
	*le = ldexp(*le, -prec);
	return exact;
}

/* The regions written so far (out NULL: only counted), with the count
 * of the regions whose bound could not be served, waiting for the next
 * (carry), and whether the last bound was one of them (held). */
struct regions {
	struct vstats_region *out;
	size_t n;
	double last_le;
	uint64_t carry;
	bool held;
};

/* Appends a region; one at the last's le (the same bound) joins it. */
static void add_region(struct regions *r, double le, uint64_t count)
{
	if (r->n > 0 && !(le > r->last_le)) {
		if (r->out)
			r->out[r->n - 1].count += count;
		return;
	}
	if (r->out)
		r->out[r->n] = (struct vstats_region){le, count};
	r->n++;
	r->last_le = le;
}

/* A region of count whose largest value is b: served at b when a double
 * holds b (vstats_exact_le), else carried into the next one served.
 * Rounding b would not do: past 2^53 a double in [b, b + 1) is b or
 * nothing, so rounded up le would count less than every X up to it, and
 * rounded down it would count X above it. */
static void add_bound(struct regions *r, struct vstats_value b, uint64_t count)
{
	double le;

	r->carry += count;
	if (!vstats_exact_le(b, &le)) {
		r->held = true;
		return;
	}
	add_region(r, le, r->carry);
	r->carry = 0;
	r->held = false;
}

void vstats_region_add(struct vstats_region *out, size_t *n, double le, uint64_t count)
{
	struct regions r = {out, *n, *n ? out[*n - 1].le : -INFINITY, 0, false};

	add_region(&r, le, count);
	*n = r.n;
}

void vstats_region_bound(struct vstats_region *out, size_t *n, uint64_t *carry,
			 struct vstats_value b, uint64_t count)
{
	struct regions r = {out, *n, *n ? out[*n - 1].le : -INFINITY, *carry, false};

	add_bound(&r, b, count);
	*n = r.n;
	*carry = r.carry;
}

/* The last region, +Inf, with what is carried. Its values go up to the
 * dtype's largest; when a bound before it was held, that largest (2^63,
 * 2^64: no value is above it) is served first, so the values carried keep
 * a bound below +Inf (a drhist's ubound_inf region ends at INT64_MAX - 1,
 * which no double holds: served at 2^63 with INT64_MAX itself). Never a
 * region more than the buckets make. */
static void add_last(struct regions *r, enum vstats_dtype d, uint64_t count)
{
	if (r->held && d != VSTATS_FLOAT) { /* only integers are held */
		add_bound(r, vstats_highest(d), count);
		count = 0;
	}
	add_region(r, INFINITY, r->carry + count);
	r->carry = 0;
}

static uint64_t between_at(const struct vstats_hist *h, uint32_t i)
{
	return h->between ? h->between[i] : 0;
}

size_t vstats_hist_regions(const struct vstats_hist *h, enum vstats_stype stype,
			   struct vstats_region *out)
{
	struct regions r = {out, 0, -INFINITY, 0, false};

	if (h->n == 0)
		return 0;
	/* Below the first bucket only when a value fell there: OpenMetrics
	 * drops a histogram's _sum once a bound is negative (-1 below 0). */
	struct vstats_value first = h->bkt[0].lb;
	if (vstats_value_cmp(first, vstats_lowest(first.dtype)) > 0 &&
	    (!out || between_at(h, 0) > 0))
		add_bound(&r, below(first), between_at(h, 0));
	for (uint32_t i = 0; i < h->n; i++) {
		const struct vstats_bucket *b = &h->bkt[i];
		uint64_t count = h->count ? h->count[i] : 0;
		if (i > 0 && stype != VSTATS_CRHIST &&
		    holds_any(h->bkt[i - 1].ub, stype == VSTATS_DRHIST, b->lb))
			add_bound(&r, below(b->lb), between_at(h, i));
		if (stype == VSTATS_CRHIST && i + 1 == h->n)
			add_last(&r, first.dtype, count); /* open: nothing above it */
		else
			add_bound(&r, stype == VSTATS_DVHIST ? b->lb : below(b->ub), count);
	}
	if (stype != VSTATS_CRHIST)
		add_last(&r, first.dtype, between_at(h, h->n));
	return r.n;
}
