/* A variable of interest's statistics (stats(3)'s voi and voistats):
 * made from specs, updated with absolute or relative values, reset and
 * snapshotted; and the template sample-rate dice. */
#include "vstats.h"
#include "vstats_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void stat_reset(struct vstats_stat *s, enum vstats_dtype d)
{
	s->errs = 0;
	switch (s->stype) {
	case VSTATS_SUM:
		s->v = (struct vstats_value){.dtype = d};
		break;
	case VSTATS_MAX: /* stats(3): MAX starts at the lowest, MIN at the highest */
		s->v = vstats_lowest(d);
		break;
	case VSTATS_MIN:
		s->v = vstats_highest(d);
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		memset(s->hist.count, 0, s->hist.n * sizeof(uint64_t));
		memset(s->hist.between, 0, (s->hist.n + 1) * sizeof(uint64_t));
		s->hist.oob = 0;
		s->hist.sum = 0;
		break;
	case VSTATS_TDGST:
		tdigest_reset(s->td);
		break;
	}
}

static void stat_free(struct vstats_stat *s)
{
	if (s->stype == VSTATS_TDGST)
		tdigest_free(s->td);
	else if (s->stype >= VSTATS_CRHIST) {
		free(s->hist.bkt);
		free(s->hist.count);
		free(s->hist.between);
	}
}

static int stat_init(struct vstats_stat *s, enum vstats_dtype d, const struct vstats_spec *spec,
		     const char **why)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->stype = spec->stype;
	switch (spec->stype) {
	case VSTATS_SUM:
	case VSTATS_MAX:
	case VSTATS_MIN:
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		rc =
		    vstats_hist_buckets(spec->stype, d, &spec->hist, &s->hist.bkt, &s->hist.n, why);
		if (rc < 0)
			return rc;
		s->hist.counts32 = spec->hist.counts32;
		s->hist.count = calloc(s->hist.n, sizeof(uint64_t));
		s->hist.between = calloc(s->hist.n + 1, sizeof(uint64_t));
		if (!s->hist.count || !s->hist.between) {
			stat_free(s);
			return -ENOMEM;
		}
		break;
	case VSTATS_TDGST:
		if (!(spec->compression >= TDIGEST_COMPRESSION_MIN &&
		      spec->compression <= TDIGEST_COMPRESSION_MAX)) {
			*why = "a t-digest's compression must be 10 to 10000";
			return -EINVAL;
		}
		if (!(s->td = tdigest_new(spec->compression)))
			return -ENOMEM;
		s->tdgst_counts32 = spec->tdgst_counts32;
		break;
	default:
		*why = "unknown statistic";
		return -EINVAL;
	}
	stat_reset(s, d);
	return 0;
}

int vstats_voi_init(struct vstats_voi *v, enum vstats_dtype dtype, bool relupdate,
		    const struct vstats_spec *specs, uint32_t n, const char **why)
{
	int rc;

	*why = NULL;
	memset(v, 0, sizeof(*v));
	v->dtype = dtype;
	v->relupdate = relupdate;
	if (n == 0 || n > VSTATS_STATS_MAX) {
		*why = "a VOI has 1 to 8 statistics";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < i; j++)
			if (specs[j].stype == specs[i].stype) { /* voistat slots are by stype */
				*why = "a VOI has each statistic at most once";
				vstats_voi_free(v);
				return -EINVAL;
			}
		if ((rc = stat_init(&v->stat[i], dtype, &specs[i], why)) < 0) {
			vstats_voi_free(v);
			return rc;
		}
		v->nstats = i + 1;
	}
	return 0;
}

/* What stat_init allocates for a histogram of n buckets: the buckets,
 * their counts and between[n + 1]. */
static size_t hist_bytes(uint32_t n)
{
	return (size_t)n * (sizeof(struct vstats_bucket) + sizeof(uint64_t)) +
	       ((size_t)n + 1) * sizeof(uint64_t);
}

int vstats_voi_bytes(enum vstats_dtype dtype, const struct vstats_spec *specs, uint32_t n,
		     size_t *out, const char **why)
{
	struct vstats_bucket *b;
	uint32_t nb;
	int rc;

	*out = 0;
	*why = NULL;
	for (uint32_t i = 0; i < n && i < VSTATS_STATS_MAX; i++) {
		switch (specs[i].stype) {
		case VSTATS_CRHIST:
		case VSTATS_DRHIST:
		case VSTATS_DVHIST: /* made as stat_init makes them, to count them */
			if ((rc = vstats_hist_buckets(specs[i].stype, dtype, &specs[i].hist, &b,
						      &nb, why)) < 0)
				return rc;
			free(b);
			*out += hist_bytes(nb);
			break;
		case VSTATS_TDGST:
			if (!(specs[i].compression >= TDIGEST_COMPRESSION_MIN &&
			      specs[i].compression <= TDIGEST_COMPRESSION_MAX)) {
				*why = "a t-digest's compression must be 10 to 10000";
				return -EINVAL;
			}
			*out += tdigest_bytes_max(specs[i].compression);
			break;
		default: /* SUM, MAX, MIN: in the struct */
			break;
		}
	}
	return 0;
}

void vstats_voi_free(struct vstats_voi *v)
{
	for (uint32_t i = 0; i < v->nstats; i++)
		stat_free(&v->stat[i]);
	v->nstats = 0;
}

/* sum += x * n; false, and sum left as it was, when an integer sum
 * would pass its dtype's limits (worked in 128 bits: x * n of 64-bit
 * values fits, and the limit is checked after). */
static bool sum_add(struct vstats_value *sum, struct vstats_value x, uint64_t n)
{
	struct vstats_value r = *sum;

	if (sum->dtype == VSTATS_FLOAT) {
		sum->f += x.f * (double)n;
		return true;
	}
	if (vstats_dtype_signed(sum->dtype)) {
		__int128 t = (__int128)x.i * n + sum->i;
		if (t < INT64_MIN || t > INT64_MAX)
			return false;
		r.i = (int64_t)t;
	} else {
		unsigned __int128 t = (unsigned __int128)x.u * n;
		if (t > UINT64_MAX || __builtin_add_overflow((uint64_t)t, sum->u, &r.u))
			return false;
	}
	if (!vstats_value_fits(r))
		return false;
	*sum = r;
	return true;
}

/* A SUM past its dtype's limits saturates there, counted in errs: one
 * template's SUM never wraps to a sign its values did not have, and
 * never disagrees with its histograms' sums silently. */
static void sum_update(struct vstats_stat *s, struct vstats_value x, uint64_t n)
{
	if (sum_add(&s->v, x, n))
		return;
	s->errs++;
	if (vstats_dtype_signed(s->v.dtype) && x.i < 0)
		s->v = vstats_lowest(s->v.dtype);
	else
		s->v = vstats_highest(s->v.dtype);
}

static bool less(struct vstats_value a, struct vstats_value b)
{
	return vstats_value_cmp(a, b) < 0;
}

/* c += n, for a 32-bit count at most UINT32_MAX: false when it stops
 * there, short of n. */
static bool count_add(uint64_t *c, uint64_t n, bool counts32)
{
	uint64_t top = counts32 ? UINT32_MAX : UINT64_MAX;

	if (n > top - *c) {
		*c = top;
		return false;
	}
	*c += n;
	return true;
}

/* FreeBSD counts a value in no bucket as out of band; where it fell is
 * kept too, and every value in the histogram's sum. */
static void hist_update(struct vstats_stat *s, struct vstats_value x, uint64_t n)
{
	struct vstats_hist *h = &s->hist;
	uint64_t *c, before;
	uint32_t gap;
	int k = vstats_hist_find(h, s->stype, x, &gap);
	bool whole;

	/* A 32-bit count stops at UINT32_MAX (FreeBSD's wraps to a small
	 * one): counted in errs, and the sum keeps only what was counted, so
	 * the histogram stays one whose figures agree, marked as short. */
	c = k < 0 ? &h->between[gap] : &h->count[k];
	before = *c;
	whole = count_add(c, n, h->counts32);
	if (k < 0)
		whole &= count_add(&h->oob, *c - before, h->counts32);
	if (!whole)
		s->errs++;
	h->sum += vstats_value_f(x) * (double)(*c - before);
}

/* A digest holds finite values: an infinity is an err. A TDGSTCLUST32
 * one stops at VSTATS_TDGST32_COUNT_MAX samples (FreeBSD's s32 centroid
 * counts would wrap): what fits is taken, the update counted in errs. */
static void tdgst_update(struct vstats_stat *s, struct vstats_value x, uint64_t n)
{
	double w = (double)n, room = VSTATS_TDGST32_COUNT_MAX - tdigest_count(s->td);

	if (!isfinite(vstats_value_f(x))) {
		s->errs += n;
		return;
	}
	if (s->tdgst_counts32 && w > room) {
		w = room;
		s->errs++;
	}
	if (w > 0)
		tdigest_add(s->td, vstats_value_f(x), w);
}

/* n updates with x at once. */
static void stat_update(struct vstats_stat *s, struct vstats_value x, uint64_t n)
{
	switch (s->stype) {
	case VSTATS_SUM:
		sum_update(s, x, n);
		break;
	case VSTATS_MAX:
		if (less(s->v, x))
			s->v = x;
		break;
	case VSTATS_MIN:
		if (less(x, s->v))
			s->v = x;
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		hist_update(s, x, n);
		break;
	case VSTATS_TDGST:
		tdgst_update(s, x, n);
		break;
	}
}

int vstats_update_n(struct vstats_voi *v, struct vstats_value x, uint64_t n)
{
	if (x.dtype != v->dtype || (x.dtype == VSTATS_FLOAT && isnan(x.f)))
		return -EINVAL;
	if (!vstats_value_fits(x))
		return -ERANGE;
	if (n == 0)
		return 0;
	if (n > UINT64_MAX - v->updates)
		return -EOVERFLOW;
	for (uint32_t i = 0; i < v->nstats; i++)
		stat_update(&v->stat[i], x, n);
	v->prev = x;
	v->have_prev = true;
	v->updates += n;
	return 0;
}

int vstats_update_abs(struct vstats_voi *v, struct vstats_value x)
{
	return vstats_update_n(v, x, 1);
}

/* The previous value plus dx; the first relative update adds to zero. */
int vstats_update_rel(struct vstats_voi *v, struct vstats_value dx)
{
	struct vstats_value x = v->have_prev ? v->prev : (struct vstats_value){.dtype = v->dtype};

	if (!v->relupdate || dx.dtype != v->dtype)
		return -EINVAL;
	if (!sum_add(&x, dx, 1)) /* a value the dtype cannot hold: not taken */
		return -ERANGE;
	return vstats_update_abs(v, x);
}

void vstats_voi_reset(struct vstats_voi *v)
{
	for (uint32_t i = 0; i < v->nstats; i++)
		stat_reset(&v->stat[i], v->dtype);
	v->updates = 0;
}

static int stat_copy(struct vstats_stat *d, const struct vstats_stat *s)
{
	*d = *s;
	if (s->stype == VSTATS_TDGST)
		return (d->td = tdigest_copy(s->td)) ? 0 : -ENOMEM;
	if (s->stype < VSTATS_CRHIST)
		return 0;
	d->hist.bkt = malloc(s->hist.n * sizeof(*s->hist.bkt));
	d->hist.count = malloc(s->hist.n * sizeof(uint64_t));
	d->hist.between = malloc((s->hist.n + 1) * sizeof(uint64_t));
	if (!d->hist.bkt || !d->hist.count || !d->hist.between) {
		stat_free(d);
		return -ENOMEM;
	}
	memcpy(d->hist.bkt, s->hist.bkt, s->hist.n * sizeof(*s->hist.bkt));
	memcpy(d->hist.count, s->hist.count, s->hist.n * sizeof(uint64_t));
	memcpy(d->hist.between, s->hist.between, (s->hist.n + 1) * sizeof(uint64_t));
	return 0;
}

int vstats_voi_snapshot(struct vstats_voi *dst, struct vstats_voi *src, bool reset)
{
	*dst = *src;
	dst->nstats = 0;
	for (uint32_t i = 0; i < src->nstats; i++) {
		if (stat_copy(&dst->stat[i], &src->stat[i]) < 0) {
			vstats_voi_free(dst);
			return -ENOMEM;
		}
		dst->nstats = i + 1;
	}
	if (reset)
		vstats_voi_reset(src);
	return 0;
}

/* FNV-1a: stable across runs and hosts, so a source is chosen the same
 * way every time. */
static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int vstats_rollthedice(const uint32_t *pct, size_t n, const void *seed, size_t len)
{
	uint32_t roll = (uint32_t)(fnv1a(seed, len) % 100), cum = 0;

	for (size_t i = 0; i < n; i++) {
		cum += pct[i];
		if (roll < cum)
			return (int)i;
	}
	return -1;
}
