/* Metric and label name rules, and escaping of label values and help text. */
#ifndef BS_NAMES_H
#define BS_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

#define NAMES_METRIC_MAX 256 /* bytes in a metric family name */
#define NAMES_LABEL_NAME_MAX 128
#define NAMES_LABEL_VALUE_MAX 4096 /* longer values are cut at a character boundary */
#define NAMES_HELP_MAX 4096

bool names_metric_valid(const char *s, size_t n);
/* A label name a collector may use: valid, and not reserved (no "__" prefix). */
bool names_label_valid(const char *s, size_t n);
/* 1 to max of a-z, 0-9 and _: units and drop reasons. */
bool names_snake_valid(const char *s, size_t n, size_t max);
bool names_has_suffix(const char *s, size_t n, const char *suffix);

/* The metric names a family of a type claims: its name plus each of these
 * suffixes (OpenMetrics': a counter x owns x, x_total and x_created, which
 * covers the text format's names too); NULL after the last. */
#define NAMES_SUFFIXES_MAX 5
const char *const *names_type_suffixes(enum bs_metric_type type);

/* What names_escape replaced with U+FFFD. */
struct names_repairs {
	unsigned utf8; /* bytes of invalid UTF-8 */
	unsigned bidi; /* Unicode bidirectional controls */
};

/* Writes the C string `src` escaped into `dst`: \\ and \n always, \" too when
 * `quote` (label values, OpenMetrics help). Stops at the NUL or once `max`
 * bytes are read, never inside a UTF-8 sequence; *truncated says which.
 * Invalid UTF-8 bytes and the bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069) become U+FFFD, counted in *r: a
 * guest's label value must not reorder what an operator reads beside it
 * (the "Trojan Source" trick). `dst` must hold 3 * max + 3 bytes. */
char *names_escape(char *dst, const char *src, size_t max, bool quote, struct names_repairs *r,
		   bool *truncated);
/* Copies a label name into dst while checking it (names_label_valid);
 * NULL when invalid. dst must hold NAMES_LABEL_NAME_MAX bytes. */
char *names_copy_label(char *dst, const char *src);
/* Whether the C string s is exactly known[0..len), which has a NUL at
 * len and room for whole words past it (NAMES_LABEL_NAME_MAX + 8 bytes):
 * the label name a series had before, compared a word at a time. */
bool names_same(const char *s, const char *known, size_t len);
/* Length of the longest prefix of s[0..n) no longer than max that does not
 * split a UTF-8 sequence. */
size_t names_utf8_cut(const char *s, size_t n, size_t max);

#endif
