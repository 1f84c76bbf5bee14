/* The merging t-digest: added points wait in a small buffer; a merge sorts
 * them and walks them together with the centroids, folding neighbours
 * while the k1 scale function (k = d/2pi * asin(2q - 1)) allows,
 * alternating direction each merge so neither end is favoured. As the
 * reference implementation's two-level compression does, merges use
 * d = twice the compression asked for: about twice the centroids, for
 * rank errors a third of a single-level digest's (bench/tdigest_compare.c
 * measures it). The merge runs in place, in one array that holds only the
 * centroids and room for one buffer's worth: a digest costs what it keeps.
 * Quantiles interpolate between centroid centres, treat single-point
 * centroids as exact, and use the true min and max at the ends. */
#include "tdigest.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "growarr.h"

#define BUF_POINTS 32 /* points held before a merge */

struct centroid {
	double mean, weight;
};

struct tdigest {
	double compression; /* as asked */
	double delta;	    /* the merges': 2 * compression */
	size_t max_merged;  /* centroids the k1 function can make, and a margin */
	/* The centroids, sorted by mean, then merge room: reserved exactly
	 * (a digest costs what it keeps), never past max_merged and a buffer. */
	GROWARR_OF(struct centroid, c, room);
	size_t nmerged;
	struct centroid buf[BUF_POINTS];
	size_t nbuf;
	double merged_weight, buf_weight, sum;
	double min, max;
	bool reverse;	 /* the next merge runs from the top */
	uint64_t merges; /* since the reset: stats(3)'s compcnt */
};

struct tdigest *tdigest_new(double compression)
{
	struct tdigest *td;

	if (!(compression >= TDIGEST_COMPRESSION_MIN && compression <= TDIGEST_COMPRESSION_MAX))
		return NULL;
	if (!(td = calloc(1, sizeof(*td))))
		return NULL;
	td->compression = compression;
	td->delta = 2 * compression;
	td->max_merged = 2 * (size_t)ceil(td->delta);
	growarr_init(&td->room, sizeof(struct centroid), td->max_merged + BUF_POINTS + 1);
	tdigest_reset(td);
	return td;
}

void tdigest_free(struct tdigest *td)
{
	if (!td)
		return;
	growarr_free(&td->room);
	free(td);
}

struct tdigest *tdigest_copy(const struct tdigest *td)
{
	struct tdigest *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *td;
	growarr_init(&c->room, sizeof(struct centroid), td->room.max);
	if (growarr_reserve(&c->room, td->room.cap) < 0) {
		free(c);
		return NULL;
	}
	if (td->nmerged)
		memcpy(c->c, td->c, td->nmerged * sizeof(struct centroid));
	return c;
}

void tdigest_reset(struct tdigest *td)
{
	td->nmerged = td->nbuf = 0;
	td->merged_weight = td->buf_weight = td->sum = 0;
	td->min = INFINITY;
	td->max = -INFINITY;
	td->reverse = false;
	td->merges = 0;
}

static int cmp_mean(const void *a, const void *b)
{
	double x = ((const struct centroid *)a)->mean, y = ((const struct centroid *)b)->mean;
	return (x > y) - (x < y);
}

/* The k1 scale function and its inverse, in units of delta. */
static double k_of_q(double q, double d)
{
	return d * (asin(2 * q - 1) + M_PI / 2) / M_PI;
}

static double q_of_k(double k, double d)
{
	return (sin(fmin(k, d) * M_PI / d - M_PI / 2) + 1) / 2;
}

static void fold(struct centroid *into, const struct centroid *x)
{
	into->mean += (x->mean - into->mean) * x->weight / (into->weight + x->weight);
	into->weight += x->weight;
}

/* The walk over old centroids and buffered points, in the merge's order. */
struct walk {
	const struct centroid *old, *buf;
	size_t nold, nbuf, iold, ibuf;
	bool down;
};

static const struct centroid *walk_next(struct walk *w)
{
	bool old_left = w->iold < w->nold, buf_left = w->ibuf < w->nbuf;
	const struct centroid *o, *b;

	if (!old_left && !buf_left)
		return NULL;
	o = old_left ? &w->old[w->down ? w->nold - 1 - w->iold : w->iold] : NULL;
	b = buf_left ? &w->buf[w->down ? w->nbuf - 1 - w->ibuf : w->ibuf] : NULL;
	if (o && (!b || (w->down ? o->mean >= b->mean : o->mean <= b->mean))) {
		w->iold++;
		return o;
	}
	w->ibuf++;
	return b;
}

/* Upward, the old centroids move to the top of the array and the output
 * is written from the bottom; downward the other way round. The writer
 * never passes the reader: it has written at most what was read, and the
 * room left between them is at least the buffer's size. */
static void merge(struct tdigest *td)
{
	size_t m = td->nmerged, n = td->nbuf, out = 0;
	double total = td->merged_weight + td->buf_weight, so_far, limit;
	bool down = td->reverse;

	if (n == 0)
		return;
	/* Room for the centroids and one buffer: the in-place merge needs it. */
	if (growarr_reserve(&td->room, m + n + 1) < 0) {
		/* no memory to merge: these points are lost, and leave the sum */
		for (size_t i = 0; i < n; i++)
			td->sum -= td->buf[i].mean * td->buf[i].weight;
		td->buf_weight = 0;
		td->nbuf = 0;
		return;
	}
	size_t cap = m + n + 1;
	qsort(td->buf, n, sizeof(*td->buf), cmp_mean);
	if (!down)
		memmove(td->c + cap - m, td->c, m * sizeof(*td->c));
	struct walk w = {down ? td->c : td->c + cap - m, td->buf, m, n, 0, 0, down};
	struct centroid cur = *walk_next(&w);
	const struct centroid *x;
	so_far = cur.weight;
	limit = total * q_of_k(1, td->delta);
	while ((x = walk_next(&w))) {
		if (so_far + x->weight <= limit || out + 1 >= td->max_merged) {
			fold(&cur, x);
		} else {
			td->c[down ? cap - 1 - out : out] = cur;
			out++;
			limit = total * q_of_k(k_of_q(so_far / total, td->delta) + 1, td->delta);
			cur = *x;
		}
		so_far += x->weight;
	}
	td->c[down ? cap - 1 - out : out] = cur;
	out++;
	if (down) /* written from the top, in ascending order: move it down */
		memmove(td->c, td->c + cap - out, out * sizeof(*td->c));
	td->nmerged = out;
	td->merges++;
	td->reverse = !td->reverse;
	td->merged_weight = total;
	td->buf_weight = 0;
	td->nbuf = 0;
}

void tdigest_add(struct tdigest *td, double x, double w)
{
	if (!isfinite(x) || !(w > 0) || !isfinite(w))
		return;
	if (td->nbuf == BUF_POINTS)
		merge(td);
	td->buf[td->nbuf++] = (struct centroid){x, w};
	td->buf_weight += w;
	td->sum += x * w;
	if (x < td->min)
		td->min = x;
	if (x > td->max)
		td->max = x;
}

double tdigest_count(const struct tdigest *td)
{
	return td->merged_weight + td->buf_weight;
}

double tdigest_sum(const struct tdigest *td)
{
	return td->sum;
}

size_t tdigest_bytes(const struct tdigest *td)
{
	return sizeof(*td) + td->room.cap * sizeof(struct centroid);
}

size_t tdigest_bytes_max(double compression)
{
	size_t max_merged = 2 * (size_t)ceil(2 * compression); /* as tdigest_new sets it */

	return sizeof(struct tdigest) + (max_merged + BUF_POINTS + 1) * sizeof(struct centroid);
}

size_t tdigest_centroids(struct tdigest *td)
{
	merge(td);
	return td->nmerged;
}

void tdigest_centroid(const struct tdigest *td, size_t i, double *mean, double *weight)
{
	*mean = td->c[i].mean;
	*weight = td->c[i].weight;
}

size_t tdigest_centroids_max(const struct tdigest *td)
{
	return td->max_merged;
}

uint64_t tdigest_merges(const struct tdigest *td)
{
	return td->merges;
}

static double between(double x1, double w1, double x2, double w2)
{
	double x = (x1 * w1 + x2 * w2) / (w1 + w2);
	return fmax(fmin(x1, x2), fmin(x, fmax(x1, x2)));
}

double tdigest_quantile(struct tdigest *td, double q)
{
	const struct centroid *c;
	size_t n;
	double total, index, so_far;

	merge(td);
	c = td->c;
	n = td->nmerged;
	total = td->merged_weight;
	if (n == 0 || !(q >= 0 && q <= 1))
		return NAN;
	if (n == 1)
		return c[0].weight == 1 ? c[0].mean : td->min + q * (td->max - td->min);
	index = q * total;
	if (index < 1)
		return td->min;
	/* between the minimum and the first centre */
	if (c[0].weight > 1 && index < c[0].weight / 2)
		return td->min + (index - 1) / (c[0].weight / 2 - 1) * (c[0].mean - td->min);
	if (index > total - 1)
		return td->max;
	if (c[n - 1].weight > 1 && total - index <= c[n - 1].weight / 2)
		return td->max -
		       (total - index - 1) / (c[n - 1].weight / 2 - 1) * (td->max - c[n - 1].mean);
	so_far = c[0].weight / 2;
	for (size_t i = 0; i + 1 < n; i++) {
		double dw = (c[i].weight + c[i + 1].weight) / 2;
		if (so_far + dw > index) {
			double left = 0, right = 0;
			if (c[i].weight == 1) { /* a single point is exact */
				if (index - so_far < 0.5)
					return c[i].mean;
				left = 0.5;
			}
			if (c[i + 1].weight == 1) {
				if (so_far + dw - index <= 0.5)
					return c[i + 1].mean;
				right = 0.5;
			}
			double z1 = index - so_far - left, z2 = so_far + dw - index - right;
			return between(c[i].mean, z2, c[i + 1].mean, z1);
		}
		so_far += dw;
	}
	/* in the top half of the last centroid */
	double z1 = index - total - c[n - 1].weight / 2, z2 = c[n - 1].weight / 2 - z1;
	return between(c[n - 1].mean, z1, td->max, z2);
}
