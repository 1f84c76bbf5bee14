/* Metric and label name rules, and escaping of label values and help text.
 * Escaping runs for every label of every series, so its common case is a table lookup. */
#include "names.h"

#include <stdint.h>
#include <string.h>

#include "utf8.h"

static bool is_name_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(unsigned char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

bool names_metric_valid(const char *s, size_t n)
{
	if (n == 0 || n > NAMES_METRIC_MAX)
		return false;
	if (!is_name_start((unsigned char)s[0]) && s[0] != ':')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_name_char((unsigned char)s[i]) && s[i] != ':')
			return false;
	return true;
}

bool names_label_valid(const char *s, size_t n)
{
	if (n == 0 || n > NAMES_LABEL_NAME_MAX || !is_name_start((unsigned char)s[0]))
		return false;
	if (n >= 2 && s[0] == '_' && s[1] == '_')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_name_char((unsigned char)s[i]))
			return false;
	return true;
}

bool names_snake_valid(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

bool names_has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static const char *const suffixes[][NAMES_SUFFIXES_MAX] = {
    [BS_COUNTER] = {"", "_total", "_created"},
    [BS_GAUGE] = {""},
    [BS_HISTOGRAM] = {"", "_bucket", "_count", "_sum", "_created"},
    [BS_SUMMARY] = {"", "_count", "_sum", "_created"},
    [BS_INFO] = {"", "_info"},
    [BS_STATESET] = {""},
    [BS_UNKNOWN] = {""},
};

const char *const *names_type_suffixes(enum bs_metric_type type)
{
	return suffixes[type];
}

size_t names_utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	size_t i = max;
	/* Step back over continuation bytes to the start of the cut sequence. */
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

/* PLAIN bytes are copied in runs; anything else stops the run. */
enum { PLAIN, SPECIAL };
static const unsigned char value_class[256] = {
    ['\0'] = SPECIAL, ['\\'] = SPECIAL,		 ['"'] = SPECIAL,
    ['\n'] = SPECIAL, [0x80 ... 0xFF] = SPECIAL,
};

/* U+061C (D8 9C), U+200E/F (E2 80 8E/8F), U+202A..E (E2 80 AA..AE),
 * U+2066..9 (E2 81 A6..A9). */
static bool is_bidi_control(const unsigned char *s, size_t len)
{
	if (len == 2)
		return s[0] == 0xD8 && s[1] == 0x9C;
	if (len != 3 || s[0] != 0xE2)
		return false;
	if (s[1] == 0x80)
		return s[2] == 0x8E || s[2] == 0x8F || (s[2] >= 0xAA && s[2] <= 0xAE);
	return s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9;
}

/* The bytes of w that end a plain run: a NUL, a backslash, a quote, a
 * newline or past ASCII. The lowest flagged byte is exact; flags above it
 * may be false (a borrow), and are never looked at. */
static uint64_t word_stops(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\'), l = w ^ (ones * '\n');
	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((l - ones) & ~l) | ((w - ones) & ~w) | w) &
	       high;
}

#define PAGE_BYTES 4096
/* Reads of a string's words past its NUL (below): ASan would take them
 * for overflows, so it is told. */
#define NAMES_READS_PAST_NUL __attribute__((no_sanitize_address))

typedef uint64_t __attribute__((may_alias, aligned(1))) unaligned_word;

/* The word at p, which must not cross a page boundary. */
NAMES_READS_PAST_NUL static uint64_t word_in_page(const unsigned char *p)
{
	return *(const unaligned_word *)p;
}

static bool word_in_one_page(const unsigned char *p)
{
	return ((uintptr_t)p & (PAGE_BYTES - 1)) <= PAGE_BYTES - 8;
}

/* Copies the plain run at the start of s (at most max bytes) to dst a
 * word at a time, in one pass that also finds its end; returns its length,
 * and whether the string ends there (from the word: reading the byte again
 * would wait for all of this). A word is read whole, so past the NUL too,
 * but never across a page boundary: the page of a byte that exists is
 * mapped (glibc's strlen reads the same way). */
NAMES_READS_PAST_NUL static size_t plain_words(char *dst, const unsigned char *s, size_t max,
					       bool *at_nul)
{
	size_t i = 0;

	*at_nul = false;
	while (i + 8 <= max && word_in_one_page(s + i)) {
		uint64_t w = word_in_page(s + i), stops = word_stops(w);
		memcpy(dst + i, &w, 8);
		if (stops) {
			unsigned bit = (unsigned)__builtin_ctzll(stops) & ~7u;
			*at_nul = ((w >> bit) & 0xff) == 0;
			return i + bit / 8;
		}
		i += 8;
	}
	return i;
}

char *names_escape(char *dst, const char *src, size_t max, bool quote, struct names_repairs *r,
		   bool *truncated)
{
	const unsigned char *s = (const unsigned char *)src;
	bool at_nul;
	size_t i = plain_words(dst, s, max, &at_nul);

	dst += i;
	*truncated = false;
	if (at_nul)
		return dst;
	for (;;) {
		size_t run = i;
		while (run < max && value_class[s[run]] == PLAIN)
			run++;
		memcpy(dst, s + i, run - i);
		dst += run - i;
		i = run;
		unsigned char c = s[i];
		if (c == '\0')
			return dst;
		if (i >= max) {
			*truncated = true;
			return dst;
		}
		if (c == '\\' || c == '\n' || (c == '"' && quote)) {
			*dst++ = '\\';
			*dst++ = c == '\n' ? 'n' : (char)c;
			i++;
		} else if (c == '"') {
			*dst++ = '"';
			i++;
		} else {
			size_t len = utf8_seq(s + i, strnlen(src + i, 4));
			bool bidi = len && is_bidi_control(s + i, len);
			if (len == 0 || bidi) {
				memcpy(dst, "\xEF\xBF\xBD", 3);
				dst += 3;
				if (bidi)
					r->bidi++;
				else
					r->utf8++;
				len = len ? len : 1;
			} else {
				memcpy(dst, s + i, len);
				dst += len;
			}
			i += len;
		}
	}
}

/* Words are read as plain_words reads them; one that would cross a page
 * boundary is compared by strcmp instead. */
NAMES_READS_PAST_NUL bool names_same(const char *s, const char *known, size_t len)
{
	const unsigned char *a = (const unsigned char *)s, *b = (const unsigned char *)known;

	for (size_t i = 0; i <= len; i += 8) {
		if (!word_in_one_page(a + i))
			return strcmp(s + i, known + i) == 0;
		uint64_t diff = word_in_page(a + i) ^ word_in_page(b + i);
		/* Only the bytes up to known's NUL count. */
		if (len - i < 7)
			diff &= ((uint64_t)1 << (8 * (len - i + 1))) - 1;
		if (diff)
			return false;
	}
	return true;
}

static const unsigned char label_char[256] = {
    ['a' ... 'z'] = 1,
    ['A' ... 'Z'] = 1,
    ['_'] = 1,
    ['0' ... '9'] = 2,
};

char *names_copy_label(char *dst, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i;

	if (label_char[s[0]] != 1 || (s[0] == '_' && s[1] == '_'))
		return NULL;
	for (i = 0; label_char[s[i]]; i++) {
		if (i == NAMES_LABEL_NAME_MAX)
			return NULL;
		dst[i] = (char)s[i];
	}
	return s[i] ? NULL : dst + i;
}
