/* Number formatting for the exposition: exact integers, round-trip doubles. */
#ifndef BS_FMT_H
#define BS_FMT_H

#include <stdint.h>

/* The most any fmt_ function writes; none writes a terminating NUL. */
#define FMT_NUM_MAX 32

char *fmt_u64(char *p, uint64_t v);
char *fmt_i64(char *p, int64_t v);
/* Shortest text that parses back to exactly `v`; NaN, +Inf, -Inf as Prometheus spells them. */
char *fmt_f64(char *p, double v);
/* As fmt_f64, but an integral value keeps a ".0" (OpenMetrics canonical le/quantile). */
char *fmt_f64_canonical(char *p, double v);

#endif
