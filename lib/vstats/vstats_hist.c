/* stats(3)'s histogram buckets: made from a scheme (LIN, EXP, LINEXP, or
 * the user's), checked, and found for a value. */
#include "vstats.h"
#include "vstats_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

double vstats_value_f(struct vstats_value v)
{
	return v.dtype == VSTATS_INT ? (double)v.i : v.dtype == VSTATS_UINT ? (double)v.u : v.f;
}

/* Compares a and b exactly when both are integers of one type. */
static int cmp_value(struct vstats_value a, struct vstats_value b)
{
	if (a.dtype == VSTATS_INT && b.dtype == VSTATS_INT)
		return (a.i > b.i) - (a.i < b.i);
	if (a.dtype == VSTATS_UINT && b.dtype == VSTATS_UINT)
		return (a.u > b.u) - (a.u < b.u);
	double x = vstats_value_f(a), y = vstats_value_f(b);
	return (x > y) - (x < y);
}

static struct vstats_value make(enum vstats_dtype dtype, double x)
{
	struct vstats_value v = {.dtype = dtype};

	if (dtype == VSTATS_INT)
		v.i = (int64_t)x;
	else if (dtype == VSTATS_UINT) /* bounds made from doubles: below 2^64 */
		v.u = x >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)x;
	else
		v.f = x;
	return v;
}

/* The width of bucket i, which starts at lb, for the LIN, EXP and LINEXP
 * schemes (FreeBSD's stats_vss_hist_bkt_hlpr). */
static double step_of(const struct vstats_hist_spec *s, uint32_t i, double lb)
{
	switch (s->scheme) {
	case VSTATS_LIN:
		return s->stepinc;
	case VSTATS_EXP:
		return pow(s->stepbase, s->stepexp + i);
	case VSTATS_LINEXP: {
		/* linear steps within each power of stepbase: the first
		 * power above lb, cut in nlinsteps */
		double exp = 1;
		while (pow(s->stepbase, exp) <= lb && exp < 1024)
			exp++;
		double step = pow(s->stepbase, exp) / s->nlinsteps;
		return step < 1 && s->lb.dtype != VSTATS_FLOAT ? 1 : step;
	}
	case VSTATS_USR:
		break;
	}
	return 0;
}

static int generated(enum vstats_dtype dtype, const struct vstats_hist_spec *s,
		     struct vstats_bucket *b, uint32_t *n, const char **why)
{
	double lb = vstats_value_f(s->lb), ub = vstats_value_f(s->ub);

	if (!(lb < ub)) {
		*why = "lb must be below ub";
		return -EINVAL;
	}
	if ((s->scheme == VSTATS_EXP || s->scheme == VSTATS_LINEXP) && !(s->stepbase > 1)) {
		*why = "stepbase must be above 1";
		return -EINVAL;
	}
	if (s->scheme == VSTATS_LINEXP && s->nlinsteps == 0) {
		*why = "nlinsteps must be at least 1";
		return -EINVAL;
	}
	for (*n = 0; lb < ub; (*n)++) {
		double step = step_of(s, *n, lb), next = lb + step;
		if (dtype != VSTATS_FLOAT)
			next = ceil(next);
		if (!(step > 0) || !(next > lb) || !isfinite(next)) {
			*why = "the steps must make buckets that move";
			return -EINVAL;
		}
		if (*n == VSTATS_BUCKETS_MAX) {
			*why = "a histogram may have at most 4096 buckets";
			return -EINVAL;
		}
		b[*n] = (struct vstats_bucket){make(dtype, lb), make(dtype, fmin(next, ub))};
		lb = next;
	}
	return 0;
}

/* CRHIST USR buckets give their lower bounds; each ends where the next
 * starts, the last at +infinity (the dtype's largest). */
static int user(enum vstats_stype stype, enum vstats_dtype dtype, const struct vstats_hist_spec *s,
		struct vstats_bucket *b, uint32_t *n, const char **why)
{
	if (s->nusr == 0 || s->nusr > VSTATS_BUCKETS_MAX) {
		*why = "a histogram needs 1 to 4096 buckets";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < s->nusr; i++) {
		b[i] = s->usr[i];
		if (b[i].lb.dtype != dtype || b[i].ub.dtype != dtype) {
			*why = "bucket bounds must be of the VOI's type";
			return -EINVAL;
		}
		if (stype == VSTATS_DVHIST)
			b[i].ub = b[i].lb;
		else if (stype == VSTATS_CRHIST)
			b[i].ub = i + 1 < s->nusr ? s->usr[i + 1].lb : vstats_highest(dtype);
		if (cmp_value(b[i].lb, b[i].ub) > 0 ||
		    (stype == VSTATS_CRHIST && cmp_value(b[i].lb, b[i].ub) == 0)) {
			*why = "each bucket's lb must be below its ub";
			return -EINVAL;
		}
		/* DR ranges and DV values may not overlap: strictly after the last */
		if (i > 0 &&
		    cmp_value(b[i].lb, stype == VSTATS_CRHIST ? b[i - 1].lb : b[i - 1].ub) <= 0) {
			*why = "buckets must be in increasing order without overlap";
			return -EINVAL;
		}
	}
	*n = s->nusr;
	return 0;
}

int vstats_hist_buckets(enum vstats_stype stype, enum vstats_dtype dtype,
			const struct vstats_hist_spec *spec, struct vstats_bucket **out,
			uint32_t *n, const char **why)
{
	struct vstats_bucket *b = calloc(VSTATS_BUCKETS_MAX, sizeof(*b));
	int rc;

	*why = NULL;
	*out = NULL;
	*n = 0;
	if (!b)
		return -ENOMEM;
	if (spec->scheme != VSTATS_USR && stype != VSTATS_CRHIST) {
		*why = "discrete histograms take only the user's buckets";
		rc = -EINVAL;
	} else if (spec->scheme == VSTATS_USR) {
		rc = user(stype, dtype, spec, b, n, why);
	} else if (spec->lb.dtype != dtype || spec->ub.dtype != dtype) {
		*why = "lb and ub must be of the VOI's type";
		rc = -EINVAL;
	} else {
		rc = generated(dtype, spec, b, n, why);
	}
	if (rc < 0) {
		free(b);
		return rc;
	}
	/* Not a growth (no growarr): the buckets were made in room for the most
	 * a spec allows, and this only gives back what was not used. */
	struct vstats_bucket *fit = realloc(b, *n * sizeof(*b));
	*out = fit ? fit : b;
	return 0;
}

/* Binary search: buckets are in increasing order without overlap. */
int vstats_hist_find(const struct vstats_hist *h, enum vstats_stype stype, struct vstats_value x)
{
	uint32_t lo = 0, hi = h->n;

	if (h->n == 0)
		return -1;
	if (stype == VSTATS_CRHIST) {
		if (cmp_value(x, h->bkt[0].lb) < 0)
			return h->flags & VSTATS_LBOUND_INF ? 0 : -1;
		if (cmp_value(x, h->bkt[h->n - 1].ub) >= 0)
			return h->flags & VSTATS_UBOUND_INF ? (int)h->n - 1 : -1;
	}
	while (lo < hi) { /* the first bucket whose ub is not below x */
		uint32_t mid = lo + (hi - lo) / 2;
		int c = cmp_value(h->bkt[mid].ub, x);
		if (c < 0 || (c == 0 && stype == VSTATS_CRHIST))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->n || cmp_value(x, h->bkt[lo].lb) < 0)
		return -1;
	return (int)lo;
}
