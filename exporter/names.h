/* Metric and label name rules, and escaping of label values and help text. */
#ifndef BS_NAMES_H
#define BS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAMES_METRIC_MAX 256      /* bytes in a metric family name */
#define NAMES_LABEL_NAME_MAX 128
#define NAMES_LABEL_VALUE_MAX 4096 /* longer values are cut at a character boundary */
#define NAMES_HELP_MAX 4096

bool names_metric_valid(const char *s, size_t n);
/* A label name a collector may use: valid, and not reserved (no "__" prefix). */
bool names_label_valid(const char *s, size_t n);
bool names_has_suffix(const char *s, size_t n, const char *suffix);

/* Writes `src` escaped for a label value (\\, \", \n) into `dst`, which must
 * hold 3 * n bytes. Invalid UTF-8 bytes become U+FFFD; *repaired counts them. */
char *names_escape_value(char *dst, const char *src, size_t n, unsigned *repaired);
/* Help text: \\ and \n always, \" too when `quote` (OpenMetrics). */
char *names_escape_help(char *dst, const char *src, size_t n, bool quote,
			unsigned *repaired);
/* Length of the longest prefix of s[0..n) no longer than max that does not
 * split a UTF-8 sequence. */
size_t names_utf8_cut(const char *s, size_t n, size_t max);

#endif
