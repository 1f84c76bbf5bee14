/* Metric and label name rules, and escaping of label values and help text.
 * Escaping runs for every label of every series, so its common case is a table lookup. */
#include "names.h"

#include <stdint.h>
#include <string.h>

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

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid.
 * Rejects overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;

	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
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

/* Whether any byte of the word is a backslash, a quote, a newline or past
 * ASCII. A byte of the word is never missed; one after it may be taken
 * for one too, which only sends the string the slow way. */
static bool word_special(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\'), l = w ^ (ones * '\n');
	return (((q - ones) & ~q) | ((b - ones) & ~b) | ((l - ones) & ~l) | w) & high;
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint64_t load32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* Whether s[0..n) (no NUL among them) is all bytes copied as they are, as
 * most label values are: whole words, overlapping at the end, and no loop
 * at all below eight bytes, so that a value's length mispredicts nothing. */
static bool all_plain(const unsigned char *s, size_t n)
{
	if (n >= 8) {
		size_t i = 0;
		for (; i + 8 < n; i += 8)
			if (word_special(load64(s + i)))
				return false;
		return !word_special(load64(s + n - 8));
	}
	if (n >= 4)
		return !word_special(load32(s) | load32(s + n - 4) << 32);
	if (n > 0)
		return !word_special((uint64_t)s[0] | (uint64_t)s[n / 2] << 8 |
				     (uint64_t)s[n - 1] << 16);
	return true;
}

char *names_escape(char *dst, const char *src, size_t max, bool quote, struct names_repairs *r,
		   bool *truncated)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strnlen(src, max), i = 0;

	if (all_plain(s, n)) {
		memcpy(dst, s, n);
		*truncated = n == max && s[n] != '\0';
		return dst + n;
	}
	*truncated = false;
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
