/* Feeding sampled values to the sources (feed.c). */
#ifndef BS_FEED_H
#define BS_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

struct processing;
struct source;

/* What the probe sampled of a series: a value, or a histogram. */
struct feed_sample {
	struct bs_value value;
	const struct bs_histogram *h; /* NULL: a value */
};

/* The groups whose selectors the metric name alone allows, as a mask. */
uint64_t feed_groups(const struct processing *p, const char *name);
/* Feeds the series to each group of mask whose label matchers it meets.
 * last (NULL: none) holds per group the source the collector's pass fed
 * before: the series is looked for after it first, then by its key.
 * True when a group selected it. */
bool feed_series(struct processing *p, uint64_t mask, const char *name,
		 const struct bs_label *labels, size_t n, const struct feed_sample *v,
		 struct source **last, uint64_t due_ns, uint64_t now_ns);
/* A histogram series, checked as the emitter checks one (a malformed one,
 * or with more than STAGE_HIST_BUCKETS_MAX buckets, is counted as
 * invalid_histogram): from its second sample on, each bucket's increase Y
 * with its value X (its le; the open last bucket's, the last finite le),
 * times x_scale. */
bool feed_hist_series(struct processing *p, uint64_t mask, const char *name,
		      const struct bs_label *labels, size_t n, const struct bs_histogram *h,
		      struct source **last, uint64_t due_ns, uint64_t now_ns);
/* The emitter's checks of a histogram, and the cap on what a source
 * keeps of one; a refused one is counted as invalid_histogram. */
bool feed_hist_valid(struct processing *p, const struct bs_histogram *h);
/* The groups whose template has a VOI past its first fed by the series
 * of metric `name`, as a mask. */
uint64_t feed_voi_groups(const struct processing *p, const char *name);
/* The series to those VOIs of the blob (the source of the group's own
 * metric with the same labels; none yet: not fed); in_pass: a sampler's
 * pass, where a second write of a series is a duplicate. Whether a
 * blob took it. */
bool feed_voi_series(struct processing *p, uint64_t mask, const char *name,
		     const struct bs_label *labels, size_t n, const struct feed_sample *v,
		     bool in_pass, uint64_t now_ns);
/* One value, or one histogram, of a series at now_ns, to every group
 * (tests feed through these). */
bool feed_value(struct processing *p, const char *name, const struct bs_label *labels, size_t n,
		double value, uint64_t now_ns);
bool feed_histogram(struct processing *p, const char *name, const struct bs_label *labels, size_t n,
		    const struct bs_histogram *h, uint64_t now_ns);

#endif
