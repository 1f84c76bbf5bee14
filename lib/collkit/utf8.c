/* UTF-8 sequences and cuts at a character boundary. */
#include "utf8.h"

size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t len;

	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F; /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F; /* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

size_t utf8_cut(const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < max && u[i]) {
		size_t len = u[i] < 0x80 ? 1 : utf8_seq(u + i, 4);
		len = len ? len : 1;
		if (len > max - i)
			break;
		i += len;
	}
	return i;
}
