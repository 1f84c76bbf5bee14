/* stats(3)'s data types of a VOI's values: their names, limits, order,
 * conversions and text, the one place that tells them apart. A Q type's
 * value is held as qmath's Q_GIFVAL (the number times 2^precision). */
#include "vstats.h"
#include "vstats_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* long is held in 64 bits: true of every Linux this builds on. */
_Static_assert(sizeof(long) <= sizeof(int64_t), "long wider than 64 bits");

bool vstats_dtype_q(enum vstats_dtype d)
{
	enum vstats_dtype b = VSTATS_DTYPE_BASE(d);

	return b >= VSTATS_Q_S32 && b <= VSTATS_Q_U64;
}

bool vstats_dtype_signed(enum vstats_dtype d)
{
	enum vstats_dtype b = VSTATS_DTYPE_BASE(d);

	return b == VSTATS_INT || b == VSTATS_S32 || b == VSTATS_LONG || b == VSTATS_Q_S32 ||
	       b == VSTATS_Q_S64;
}

/* qmath's Q_MAXNFBITS: the storage's bits less the sign and 3 control bits. */
static unsigned q_maxnfbits(enum vstats_dtype q)
{
	enum vstats_dtype b = VSTATS_DTYPE_BASE(q);
	unsigned bits = b == VSTATS_Q_S32 || b == VSTATS_Q_U32 ? 32 : 64;

	return bits - 3 - vstats_dtype_signed(b);
}

bool vstats_q_prec_ok(enum vstats_dtype q, unsigned prec)
{
	static const unsigned encoded[] = {2, 4, 6, 8, 16, 32, 48, 64};

	if (!vstats_dtype_q(q))
		return false;
	for (size_t i = 0; i < sizeof(encoded) / sizeof(encoded[0]); i++)
		if (prec == encoded[i])
			return prec < q_maxnfbits(q); /* an integer bit left */
	return false;
}

/* Whether d is a dtype this library knows (a Q type with a precision it
 * takes, any other without one). */
static bool dtype_ok(enum vstats_dtype d)
{
	if (VSTATS_DTYPE_BASE(d) >= VSTATS_DTYPES)
		return false;
	if (vstats_dtype_q(d))
		return vstats_q_prec_ok(d, VSTATS_DTYPE_PREC(d));
	return VSTATS_DTYPE_PREC(d) == 0;
}

const char *vstats_dtype_name(enum vstats_dtype d)
{
	static const char *const names[VSTATS_DTYPES] = {
	    [VSTATS_INT] = "s64",     [VSTATS_FLOAT] = "double", [VSTATS_UINT] = "u64",
	    [VSTATS_S32] = "s32",     [VSTATS_U32] = "u32",	 [VSTATS_LONG] = "slong",
	    [VSTATS_ULONG] = "ulong", [VSTATS_Q_S32] = "q_s32",	 [VSTATS_Q_U32] = "q_u32",
	    [VSTATS_Q_S64] = "q_s64", [VSTATS_Q_U64] = "q_u64",
	};

	return VSTATS_DTYPE_BASE(d) < VSTATS_DTYPES ? names[VSTATS_DTYPE_BASE(d)] : "?";
}

/* The largest magnitude of d: a signed dtype's lowest is its negation
 * but for the two's complement integers, one further. */
static uint64_t top(enum vstats_dtype d)
{
	switch (VSTATS_DTYPE_BASE(d)) {
	case VSTATS_INT:
		return INT64_MAX;
	case VSTATS_S32:
		return INT32_MAX;
	case VSTATS_LONG:
		return LONG_MAX;
	case VSTATS_U32:
		return UINT32_MAX;
	case VSTATS_ULONG:
		return ULONG_MAX;
	case VSTATS_UINT:
		return UINT64_MAX;
	case VSTATS_Q_S32: /* Q_IFMAXVAL: the bits left of sign and control */
		return (1ull << 28) - 1;
	case VSTATS_Q_U32:
		return (1ull << 29) - 1;
	case VSTATS_Q_S64:
		return (1ull << 60) - 1;
	case VSTATS_Q_U64:
		return (1ull << 61) - 1;
	case VSTATS_FLOAT:
		break;
	}
	return 0;
}

struct vstats_value vstats_lowest(enum vstats_dtype d)
{
	struct vstats_value v = {.dtype = d};

	if (VSTATS_DTYPE_BASE(d) == VSTATS_FLOAT)
		v.f = -INFINITY;
	else if (vstats_dtype_q(d) && vstats_dtype_signed(d))
		v.i = -(int64_t)top(d); /* sign and magnitude: Q_IFMINVAL */
	else if (vstats_dtype_signed(d))
		v.i = -(int64_t)top(d) - 1;
	return v;
}

struct vstats_value vstats_highest(enum vstats_dtype d)
{
	struct vstats_value v = {.dtype = d};

	if (VSTATS_DTYPE_BASE(d) == VSTATS_FLOAT)
		v.f = INFINITY;
	else if (vstats_dtype_signed(d))
		v.i = (int64_t)top(d);
	else
		v.u = top(d);
	return v;
}

int vstats_value_cmp(struct vstats_value a, struct vstats_value b)
{
	if (a.dtype == VSTATS_FLOAT)
		return (a.f > b.f) - (a.f < b.f);
	if (vstats_dtype_signed(a.dtype))
		return (a.i > b.i) - (a.i < b.i);
	return (a.u > b.u) - (a.u < b.u);
}

bool vstats_value_fits(struct vstats_value v)
{
	if (!dtype_ok(v.dtype))
		return false;
	if (v.dtype == VSTATS_FLOAT)
		return !isnan(v.f);
	return vstats_value_cmp(v, vstats_lowest(v.dtype)) >= 0 &&
	       vstats_value_cmp(v, vstats_highest(v.dtype)) <= 0;
}

double vstats_value_f(struct vstats_value v)
{
	if (v.dtype == VSTATS_FLOAT)
		return v.f;
	double f = vstats_dtype_signed(v.dtype) ? (double)v.i : (double)v.u;
	return ldexp(f, -(int)VSTATS_DTYPE_PREC(v.dtype));
}

/* x, an integer the dtype's units count (a Q type's times 2^prec), as
 * a value of d: 0, or -ERANGE. */
static int of_units(enum vstats_dtype d, __int128 x, struct vstats_value *out)
{
	struct vstats_value lo = vstats_lowest(d), hi = vstats_highest(d);

	*out = (struct vstats_value){.dtype = d};
	if (!dtype_ok(d) || d == VSTATS_FLOAT)
		return -EINVAL;
	if (vstats_dtype_signed(d)) {
		if (x < lo.i || x > hi.i)
			return -ERANGE;
		out->i = (int64_t)x;
	} else {
		if (x < 0 || x > (__int128)hi.u)
			return -ERANGE;
		out->u = (uint64_t)x;
	}
	return 0;
}

int vstats_value_of_int(enum vstats_dtype d, __int128 x, struct vstats_value *out)
{
	unsigned prec = VSTATS_DTYPE_PREC(d);

	if (d == VSTATS_FLOAT) {
		*out = (struct vstats_value){VSTATS_FLOAT, {.f = (double)x}};
		return 0;
	}
	/* 2^64 times 2^48 fits 128 bits: the shift is exact, the range checked after */
	if (x > ((__int128)1 << 64) || x < -((__int128)1 << 64))
		return -ERANGE;
	return of_units(d, x * ((__int128)1 << prec), out);
}

int vstats_value_of_double(enum vstats_dtype d, double x, struct vstats_value *out)
{
	if (d == VSTATS_FLOAT) {
		*out = (struct vstats_value){VSTATS_FLOAT, {.f = x}};
		return isnan(x) ? -EINVAL : 0;
	}
	if (isnan(x))
		return -EINVAL;
	/* times 2^prec is exact in a double; round() halves away from zero */
	double r = round(ldexp(x, (int)VSTATS_DTYPE_PREC(d)));
	if (!(r > -0x1p64 && r < 0x1p64))
		return -ERANGE;
	return of_units(d, (__int128)r, out);
}

/* The digits of s (at most max of them, at least one) into *v; the end. */
static const char *digits(const char *s, unsigned max, unsigned __int128 *v, unsigned *n)
{
	*v = 0;
	*n = 0;
	for (; *s >= '0' && *s <= '9'; s++, (*n)++) {
		if (*n == max)
			return NULL;
		*v = *v * 10 + (unsigned)(*s - '0');
	}
	return *n ? s : NULL;
}

int vstats_value_parse(enum vstats_dtype d, const char *s, struct vstats_value *out)
{
	unsigned __int128 ip, fp = 0, pow10 = 1;
	unsigned prec = VSTATS_DTYPE_PREC(d), ni, nf = 0;
	bool neg = *s == '-';

	if (d == VSTATS_FLOAT || !dtype_ok(d))
		return -EINVAL;
	if (!(s = digits(s + neg, 20, &ip, &ni)))
		return -EINVAL;
	if (*s == '.' && vstats_dtype_q(d) && !(s = digits(s + 1, 19, &fp, &nf)))
		return -EINVAL;
	if (*s)
		return -EINVAL;
	if (ip > ((unsigned __int128)1 << 64))
		return -ERANGE;
	for (unsigned i = 0; i < nf; i++)
		pow10 *= 10;
	/* the fraction's units, rounded halves away from zero: fp < 10^19,
	 * times 2^48 at most, fits 128 bits */
	unsigned __int128 units = (ip << prec) + (((fp << prec) * 2 + pow10) / (pow10 * 2));
	return of_units(d, neg ? -(__int128)units : (__int128)units, out);
}

int vstats_decimal_units(const char *s, unsigned prec, unsigned __int128 *units)
{
	unsigned __int128 ip, fp = 0, pow10 = 1;
	unsigned ni, nf = 0;

	if (prec > 64 || !(s = digits(s, 20, &ip, &ni)))
		return -EINVAL;
	if (*s == '.' && !(s = digits(s + 1, 19, &fp, &nf)))
		return -EINVAL;
	if (*s || ip > ((unsigned __int128)1 << 64))
		return -EINVAL;
	for (unsigned i = 0; i < nf; i++)
		pow10 *= 10;
	/* fp < 10^19 times 2^64 at most fits 128 bits, as ip times 2^64 does */
	unsigned __int128 f = fp << prec;
	if (f % pow10)
		return -EINVAL;
	*units = (ip << prec) + f / pow10;
	return 0;
}

/* Q_TOSTR(q, -1, 10): a Q value's magnitude as its integer part, a point
 * and prec decimals, each the next of the binary fraction times 10, so
 * the prec decimals are the fraction exactly (2^-prec has prec of them). */
static int q_tostr(struct vstats_value v, char *buf, size_t size)
{
	unsigned prec = VSTATS_DTYPE_PREC(v.dtype);
	bool neg = vstats_dtype_signed(v.dtype) && v.i < 0;
	uint64_t mag = vstats_dtype_signed(v.dtype) ? (neg ? -(uint64_t)v.i : (uint64_t)v.i) : v.u;
	unsigned __int128 frac = mag & ((1ull << prec) - 1);
	char dec[65];
	unsigned k = 0;

	for (; k < prec; k++) {
		frac *= 10;
		dec[k] = (char)('0' + (unsigned)(frac >> prec));
		frac &= ((unsigned __int128)1 << prec) - 1;
	}
	dec[k] = '\0';
	return snprintf(buf, size, "%s%" PRIu64 ".%s", neg ? "-" : "", mag >> prec, dec);
}

int vstats_value_tostr(struct vstats_value v, char *buf, size_t size)
{
	if (v.dtype == VSTATS_FLOAT) {
		if (isnan(v.f))
			return snprintf(buf, size, "NaN");
		if (isinf(v.f))
			return snprintf(buf, size, v.f > 0 ? "+Inf" : "-Inf");
		return snprintf(buf, size, "%.17g", v.f);
	}
	if (vstats_dtype_q(v.dtype))
		return q_tostr(v, buf, size);
	if (vstats_dtype_signed(v.dtype))
		return snprintf(buf, size, "%" PRId64, v.i);
	return snprintf(buf, size, "%" PRIu64, v.u);
}
