/* A merging t-digest (Dunning and Ertl, "Computing Extremely Accurate
 * Quantiles Using t-digests"): quantiles of a stream in memory fixed by
 * its compression, most accurate at the tails. */
#ifndef TDIGEST_H
#define TDIGEST_H

#include <stddef.h>
#include <stdint.h>

#define TDIGEST_COMPRESSION_MIN 10
#define TDIGEST_COMPRESSION_MAX 10000

struct tdigest;

/* NULL for a compression outside [MIN, MAX] or no memory. Its memory
 * (tdigest_bytes) grows with the centroids it keeps, to at most 4 *
 * compression centroids of 16 bytes and a 512-byte buffer: 64 bytes per
 * unit of compression. */
struct tdigest *tdigest_new(double compression);
void tdigest_free(struct tdigest *td);
struct tdigest *tdigest_copy(const struct tdigest *td);
void tdigest_reset(struct tdigest *td);

/* x with weight w; NaN, infinities and weights not above 0 are ignored. */
void tdigest_add(struct tdigest *td, double x, double w);
/* The q-quantile, q in [0, 1]; NaN when empty. */
double tdigest_quantile(struct tdigest *td, double q);
double tdigest_count(const struct tdigest *td);
double tdigest_sum(const struct tdigest *td);
size_t tdigest_bytes(const struct tdigest *td);
/* The most tdigest_bytes can reach for a digest of this compression: its
 * merge room full (what a total of digests is bounded by). */
size_t tdigest_bytes_max(double compression);
/* Centroids after merging what is buffered (memory and tests). */
size_t tdigest_centroids(struct tdigest *td);
/* Centroid i < tdigest_centroids, by increasing mean (stats(3)'s ctds). */
void tdigest_centroid(const struct tdigest *td, size_t i, double *mean, double *weight);
/* The most centroids it keeps, and its merges since the reset (stats(3)'s
 * maxctds and compcnt). */
size_t tdigest_centroids_max(const struct tdigest *td);
uint64_t tdigest_merges(const struct tdigest *td);

#endif
