/* stats(3)'s data types of a VOI's values: their names, limits, order
 * and text, the one place that tells them apart. */
#include "vstats.h"
#include "vstats_priv.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

/* long is held in 64 bits: true of every Linux this builds on. */
_Static_assert(sizeof(long) <= sizeof(int64_t), "long wider than 64 bits");

bool vstats_dtype_signed(enum vstats_dtype d)
{
	return d == VSTATS_INT || d == VSTATS_S32 || d == VSTATS_LONG;
}

const char *vstats_dtype_name(enum vstats_dtype d)
{
	static const char *const names[VSTATS_DTYPES] = {
	    [VSTATS_INT] = "s64",     [VSTATS_FLOAT] = "double", [VSTATS_UINT] = "u64",
	    [VSTATS_S32] = "s32",     [VSTATS_U32] = "u32",	 [VSTATS_LONG] = "slong",
	    [VSTATS_ULONG] = "ulong",
	};

	return (unsigned)d < VSTATS_DTYPES ? names[d] : "?";
}

struct vstats_value vstats_lowest(enum vstats_dtype d)
{
	struct vstats_value v = {.dtype = d};

	switch (d) {
	case VSTATS_INT:
		v.i = INT64_MIN;
		break;
	case VSTATS_S32:
		v.i = INT32_MIN;
		break;
	case VSTATS_LONG:
		v.i = LONG_MIN;
		break;
	case VSTATS_FLOAT:
		v.f = -INFINITY;
		break;
	default: /* the unsigned ones */
		v.u = 0;
		break;
	}
	return v;
}

struct vstats_value vstats_highest(enum vstats_dtype d)
{
	struct vstats_value v = {.dtype = d};

	switch (d) {
	case VSTATS_INT:
		v.i = INT64_MAX;
		break;
	case VSTATS_S32:
		v.i = INT32_MAX;
		break;
	case VSTATS_LONG:
		v.i = LONG_MAX;
		break;
	case VSTATS_FLOAT:
		v.f = INFINITY;
		break;
	case VSTATS_U32:
		v.u = UINT32_MAX;
		break;
	case VSTATS_ULONG:
		v.u = ULONG_MAX;
		break;
	case VSTATS_UINT:
		v.u = UINT64_MAX;
		break;
	}
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
	if ((unsigned)v.dtype >= VSTATS_DTYPES)
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
	return vstats_dtype_signed(v.dtype) ? (double)v.i : (double)v.u;
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
	if (vstats_dtype_signed(v.dtype))
		return snprintf(buf, size, "%" PRId64, v.i);
	return snprintf(buf, size, "%" PRIu64, v.u);
}
