/* Histogram bucket bounds, checked and formatted once and reused while the
 * next histogram has the same bounds. They are compared bit for bit: 0 and
 * -0 are written differently, so they must not match. */
#include "lebounds.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

static int reserve(struct lebounds *b, size_t n)
{
	if (n <= b->cap)
		return 0;
	double *upper = malloc(n * sizeof(*upper));
	char *text = malloc(n * (FMT_NUM_MAX + 4));
	uint32_t *end = malloc(n * sizeof(*end));
	if (!upper || !text || !end) {
		free(upper);
		free(text);
		free(end);
		return -ENOMEM;
	}
	lebounds_free(b);
	b->upper = upper;
	b->text = text;
	b->end = end;
	b->cap = n;
	return 0;
}

int lebounds_use(struct lebounds *b, const double *upper, size_t n)
{
	if (n && n == b->n && memcmp(upper, b->upper, n * sizeof(*upper)) == 0)
		return 0;
	b->n = 0;
	for (size_t i = 0; i < n; i++)
		if (isnan(upper[i]) || (i && upper[i] <= upper[i - 1]))
			return -EINVAL;
	if (reserve(b, n) < 0)
		return -ENOMEM;
	char *p = b->text;
	for (size_t i = 0; i < n; i++) {
		p = fmt_f64_canonical(p, upper[i]);
		b->end[i] = (uint32_t)(p - b->text);
	}
	memcpy(b->upper, upper, n * sizeof(*upper));
	b->n = n;
	return 0;
}

const char *lebounds_text(const struct lebounds *b, size_t i, size_t *len)
{
	size_t start = i ? b->end[i - 1] : 0;
	*len = b->end[i] - start;
	return b->text + start;
}

void lebounds_free(struct lebounds *b)
{
	free(b->upper);
	free(b->text);
	free(b->end);
	memset(b, 0, sizeof(*b));
}
