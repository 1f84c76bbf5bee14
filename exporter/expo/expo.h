/* Exposition writer: family headers and sample lines in Prometheus text 0.0.4
 * or OpenMetrics 1.0.0. It trusts its input; the emitter validates. */
#ifndef BS_EXPO_H
#define BS_EXPO_H

#include <binstat/collector.h>

#include "lebounds.h"
#include "names.h"

struct sink; /* sink.h: only expo.c and those who make sinks see it */

enum expo_format { EXPO_TEXT, EXPO_OPENMETRICS };

#define EXPO_CONTENT_TYPE_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_CONTENT_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct expo_family {
	const char *base; /* the OpenMetrics family name: no _total or _info */
	size_t base_len;
	enum bs_metric_type type;
	const char *unit;
	const char *help; /* NUL-terminated */
	size_t help_len;
};

int expo_family_header(struct sink *s, enum expo_format f, const struct expo_family *fam,
		       struct names_repairs *repaired);

/* An extra label after the series' own (le, quantile, a stateset's state);
 * its value is written as given. */
struct expo_extra {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/* One line: name+suffix{labels,extra} value */
int expo_line(struct sink *s, const char *name, size_t name_len, const char *suffix,
	      size_t suffix_len, const char *labels, size_t labels_len,
	      const struct expo_extra *extra, struct bs_value v);

/* A histogram's bucket lines, counts cumulated from count[0..n), bounds
 * as lebounds_use last took them, then the +Inf bucket of `total` when
 * `add_inf` (the last bound is finite): name_bucket{labels,le="..."} cum */
int expo_buckets(struct sink *s, const char *name, size_t name_len, const char *labels,
		 size_t labels_len, const struct lebounds *b, const uint64_t *count, size_t n,
		 bool add_inf, uint64_t total);

int expo_eof(struct sink *s, enum expo_format f);

#endif
