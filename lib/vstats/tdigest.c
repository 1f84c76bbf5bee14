/* The merging t-digest: added points wait in a buffer; a merge sorts them
 * with the centroids and folds neighbours while the k1 scale function
 * (k = d/2pi * asin(2q - 1)) allows, alternating direction each merge so
 * neither end is favoured. As the reference implementation's two-level
 * compression does, merges use d = twice the compression asked for: about
 * twice the centroids, for rank errors a third of a single-level digest's
 * (bench/tdigest_compare.c measures it). Quantiles interpolate between centroid
 * centres, treat single-point centroids as exact, and use the true min and
 * max at the ends. */
#include "tdigest.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct centroid {
	double mean, weight;
};

struct tdigest {
	double compression; /* as asked */
	double delta;	    /* the merges': 2 * compression */
	size_t cap_merged, cap_buf;
	struct centroid *merged; /* sorted by mean */
	size_t nmerged;
	struct centroid *buf; /* cap_merged + cap_buf: a merge sorts both here */
	size_t nbuf;
	double merged_weight, buf_weight, sum;
	double min, max;
	bool reverse; /* the next merge runs from the top */
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
	td->cap_merged = 2 * (size_t)ceil(td->delta);
	td->cap_buf = 8 * (size_t)ceil(compression);
	td->merged = malloc(td->cap_merged * sizeof(struct centroid));
	td->buf = malloc((td->cap_merged + td->cap_buf) * sizeof(struct centroid));
	if (!td->merged || !td->buf) {
		tdigest_free(td);
		return NULL;
	}
	tdigest_reset(td);
	return td;
}

void tdigest_free(struct tdigest *td)
{
	if (!td)
		return;
	free(td->merged);
	free(td->buf);
	free(td);
}

struct tdigest *tdigest_copy(const struct tdigest *td)
{
	struct tdigest *c = tdigest_new(td->compression);

	if (!c)
		return NULL;
	struct centroid *merged = c->merged, *buf = c->buf;
	*c = *td;
	c->merged = merged;
	c->buf = buf;
	memcpy(c->merged, td->merged, td->nmerged * sizeof(struct centroid));
	memcpy(c->buf, td->buf, td->nbuf * sizeof(struct centroid));
	return c;
}

void tdigest_reset(struct tdigest *td)
{
	td->nmerged = td->nbuf = 0;
	td->merged_weight = td->buf_weight = td->sum = 0;
	td->min = INFINITY;
	td->max = -INFINITY;
	td->reverse = false;
}

static int cmp_mean(const void *a, const void *b)
{
	double x = ((const struct centroid *)a)->mean, y = ((const struct centroid *)b)->mean;
	return (x > y) - (x < y);
}

/* The k1 scale function and its inverse, in units of the compression. */
static double k_of_q(double q, double c)
{
	return c * (asin(2 * q - 1) + M_PI / 2) / M_PI;
}

static double q_of_k(double k, double c)
{
	return (sin(fmin(k, c) * M_PI / c - M_PI / 2) + 1) / 2;
}

static void merge(struct tdigest *td)
{
	struct centroid *all = td->buf;
	size_t n = td->nbuf + td->nmerged, out = 0;
	double total = td->merged_weight + td->buf_weight, so_far, limit;

	if (td->nbuf == 0)
		return;
	memcpy(all + td->nbuf, td->merged, td->nmerged * sizeof(struct centroid));
	qsort(all, n, sizeof(*all), cmp_mean);
	if (td->reverse) /* fold from the top: reverse, merge, reverse back */
		for (size_t i = 0; i < n / 2; i++) {
			struct centroid t = all[i];
			all[i] = all[n - 1 - i];
			all[n - 1 - i] = t;
		}
	td->merged[0] = all[0];
	so_far = all[0].weight;
	limit = total * q_of_k(1, td->delta);
	for (size_t i = 1; i < n; i++) {
		struct centroid *last = &td->merged[out];
		double projected = so_far + all[i].weight;
		if (projected <= limit) {
			last->mean += (all[i].mean - last->mean) * all[i].weight /
				      (last->weight + all[i].weight);
			last->weight += all[i].weight;
		} else {
			double k = k_of_q(so_far / total, td->delta);
			limit = total * q_of_k(k + 1, td->delta);
			if (out + 1 == td->cap_merged) { /* cannot happen with k1; never overrun */
				last->mean += (all[i].mean - last->mean) * all[i].weight /
					      (last->weight + all[i].weight);
				last->weight += all[i].weight;
			} else {
				td->merged[++out] = all[i];
			}
		}
		so_far = projected;
	}
	td->nmerged = out + 1;
	if (td->reverse)
		for (size_t i = 0; i < td->nmerged / 2; i++) {
			struct centroid t = td->merged[i];
			td->merged[i] = td->merged[td->nmerged - 1 - i];
			td->merged[td->nmerged - 1 - i] = t;
		}
	td->reverse = !td->reverse;
	td->merged_weight = total;
	td->buf_weight = 0;
	td->nbuf = 0;
}

void tdigest_add(struct tdigest *td, double x, double w)
{
	if (!isfinite(x) || !(w > 0) || !isfinite(w))
		return;
	if (td->nbuf == td->cap_buf)
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
	return sizeof(*td) + (2 * td->cap_merged + td->cap_buf) * sizeof(struct centroid);
}

size_t tdigest_centroids(struct tdigest *td)
{
	merge(td);
	return td->nmerged;
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
	c = td->merged;
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
