/* Number formatting for the exposition: exact integers, round-trip doubles.
 * Hot path of every scrape, so no snprintf unless a double needs 17 digits. */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pow10.h"

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v >= 1: log10 from the bit length (1233 / 4096 is
 * just above log10(2)), then one compare (Bit Twiddling Hacks). */
static unsigned digits10(uint64_t v)
{
	unsigned t = ((64u - (unsigned)__builtin_clzll(v)) * 1233u) >> 12;
	return t + (v >= pow10_u64[t]);
}

/* The four digits of x < 10000 at t. */
static void put4(char *t, uint32_t x)
{
	memcpy(t, digit_pairs + x / 100 * 2, 2);
	memcpy(t + 2, digit_pairs + x % 100 * 2, 2);
}

/* Written from its last digit back, in place: eight digits at a time as
 * two halves of four, whose pairs do not wait on each other, so a long
 * value's divisions run side by side instead of in one chain. */
char *fmt_u64(char *p, uint64_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	char *end = p + digits10(v), *t = end;
	while (v >= 100000000) {
		uint32_t eight = (uint32_t)(v % 100000000);
		v /= 100000000;
		t -= 8;
		put4(t, eight / 10000);
		put4(t + 4, eight % 10000);
	}
	uint32_t w = (uint32_t)v;
	if (w >= 10000) {
		t -= 4;
		put4(t, w % 10000);
		w /= 10000;
	}
	if (w >= 100) {
		t -= 2;
		memcpy(t, digit_pairs + w % 100 * 2, 2);
		w /= 100;
	}
	if (w >= 10)
		memcpy(t - 2, digit_pairs + w * 2, 2);
	else
		t[-1] = (char)('0' + w);
	return end;
}

char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

#define TWO_POW_53 9007199254740992.0

/* Fixed-point fast path: find the fewest decimals d such that an integer
 * s < 2^53 gives s / 10^d == v. Both operands are exact doubles, so that one
 * division is correctly rounded, just as strtod would round the text. */
static char *fmt_fixed(char *p, double v, int *ok)
{
	double a = fabs(v);

	*ok = 0;
	if (a < 1e-7 || a >= 1e15)
		return p;
	for (int d = 1; d <= 17; d++) {
		double scaled = a * pow10_f64[d];
		if (scaled >= TWO_POW_53)
			return p;
		/* Round half to even as nearbyint, inline: adding 2^52 leaves
		 * no fraction bits (scaled is below 2^53). No call, no saved
		 * floating-point environment, and the iterations overlap. */
		double s = scaled < 0x1p52 ? (scaled + 0x1p52) - 0x1p52 : scaled;
		/* If s / 10^d rounds to a, s is within 1.5 ulp of scaled (a
		 * rounding of a * 10^d): farther, no division can say yes. */
		if (fabs(scaled - s) > scaled * 0x1p-50 || s / pow10_f64[d] != a)
			continue;
		uint64_t n = (uint64_t)s;
		char digits[24];
		char *e = fmt_u64(digits, n);
		int nd = (int)(e - digits);
		if (v < 0)
			*p++ = '-';
		if (nd <= d) {
			*p++ = '0';
			*p++ = '.';
			memset(p, '0', (size_t)(d - nd));
			p += d - nd;
			memcpy(p, digits, (size_t)nd);
			p += nd;
		} else {
			memcpy(p, digits, (size_t)(nd - d));
			p += nd - d;
			*p++ = '.';
			memcpy(p, digits + nd - d, (size_t)d);
			p += d;
		}
		*ok = 1;
		return p;
	}
	return p;
}

/* Slow path for values the fixed form cannot carry in 2^53: the shortest of
 * %.15g, %.16g, %.17g that reads back exactly. */
static char *fmt_general(char *p, double v)
{
	char buf[40];
	for (int prec = 15; prec <= 17; prec++) {
		int n = snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (prec == 17 || strtod(buf, NULL) == v) {
			memcpy(p, buf, (size_t)n);
			return p + n;
		}
	}
	return p; /* not reached */
}

char *fmt_f64(char *p, double v)
{
	if (isnan(v)) {
		memcpy(p, "NaN", 3);
		return p + 3;
	}
	if (isinf(v)) {
		memcpy(p, v > 0 ? "+Inf" : "-Inf", 4);
		return p + 4;
	}
	if (v == 0) {
		if (signbit(v)) {
			memcpy(p, "-0", 2);
			return p + 2;
		}
		*p = '0';
		return p + 1;
	}
	if (fabs(v) < TWO_POW_53 && v == (double)(int64_t)v)
		return fmt_i64(p, (int64_t)v);
	int ok;
	char *e = fmt_fixed(p, v, &ok);
	return ok ? e : fmt_general(p, v);
}

char *fmt_f64_canonical(char *p, double v)
{
	char *start = p;
	char *e = fmt_f64(p, v);

	if (isnan(v) || isinf(v))
		return e;
	for (char *c = start; c < e; c++)
		if (*c == '.' || *c == 'e')
			return e;
	memcpy(e, ".0", 2);
	return e + 2;
}
