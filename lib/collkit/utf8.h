/* UTF-8 sequences and cuts at a character boundary, for the core's log
 * and the collectors' labels (a name cut mid-character is invalid text). */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Length (2 to 4) of the valid multi-byte UTF-8 sequence at s, of at most
 * n bytes; 0 when s[0] is ASCII or starts no valid sequence (overlong
 * forms, surrogates and code points above U+10FFFF are invalid). */
size_t utf8_seq(const unsigned char *s, size_t n);

/* Bytes of the longest prefix of the C string s of at most max bytes that
 * ends at a character boundary: a valid sequence is kept whole or left
 * out; an invalid byte counts as one character. */
size_t utf8_cut(const char *s, size_t max);

#endif
