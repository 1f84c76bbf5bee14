/* Histogram bucket bounds, checked and formatted once: the series of a
 * family, and often whole families, share their bounds, and formatting a
 * bound that is not a short decimal costs a printf. */
#ifndef BS_LEBOUNDS_H
#define BS_LEBOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lebounds {
	double *upper; /* the bounds as last given: sorted, no NaN */
	char *text;    /* each bound as written in le="...", back to back */
	uint32_t *end; /* bound i's text is text[end[i-1] .. end[i]) */
	size_t n, cap;
};

/* Makes `upper[0..n)` the held bounds: kept as they are if equal to the
 * held ones, else checked (strictly increasing, no NaN) and formatted.
 * Returns 0, -EINVAL for bounds that are not, -ENOMEM. */
int lebounds_use(struct lebounds *b, const double *upper, size_t n);
/* Bound i's text and length, of the bounds lebounds_use last accepted. */
const char *lebounds_text(const struct lebounds *b, size_t i, size_t *len);
void lebounds_free(struct lebounds *b);

#endif
