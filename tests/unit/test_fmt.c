/* Number formatting: exact integers, and doubles that read back exactly. */
#include "helpers.h"

#include <math.h>
#include <stdio.h>

#include "fmt.h"

static const char *f64(double v)
{
	static char buf[FMT_NUM_MAX + 1];
	*fmt_f64(buf, v) = '\0';
	return buf;
}

static void test_integers(void **state)
{
	char buf[FMT_NUM_MAX + 1];
	(void)state;
	*fmt_u64(buf, 0) = '\0';
	assert_string_equal(buf, "0");
	*fmt_u64(buf, UINT64_MAX) = '\0';
	assert_string_equal(buf, "18446744073709551615");
	*fmt_i64(buf, INT64_MIN) = '\0';
	assert_string_equal(buf, "-9223372036854775808");
	for (uint64_t v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
		char want[32];
		snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
		*fmt_u64(buf, v) = '\0';
		assert_string_equal(buf, want);
	}
	/* Where the digit count changes: 10^k - 1, 10^k and 2^k - 1, 2^k. */
	for (uint64_t p10 = 10, p2 = 2;; p10 = p10 > UINT64_MAX / 10 ? 0 : p10 * 10, p2 <<= 1) {
		uint64_t v[4] = {p10 - 1, p10, p2 - 1, p2};
		for (int i = 0; i < 4; i++) {
			char want[32];
			snprintf(want, sizeof(want), "%llu", (unsigned long long)v[i]);
			*fmt_u64(buf, v[i]) = '\0';
			assert_string_equal(buf, want);
		}
		if (p2 == 1ull << 63)
			break;
	}
}

static void test_specials(void **state)
{
	(void)state;
	assert_string_equal(f64(NAN), "NaN");
	assert_string_equal(f64(INFINITY), "+Inf");
	assert_string_equal(f64(-INFINITY), "-Inf");
	assert_string_equal(f64(0.0), "0");
	assert_string_equal(f64(-0.0), "-0");
	assert_string_equal(f64(0.1), "0.1");
	assert_string_equal(f64(-2.5), "-2.5");
	assert_string_equal(f64(123456789.0 / 1e9), "0.123456789");
	assert_string_equal(f64(1e300), "1e+300");
	assert_string_equal(f64(36028797018963968.0), "3.602879701896397e+16");
}

static void test_canonical(void **state)
{
	char buf[FMT_NUM_MAX + 1];
	(void)state;
	*fmt_f64_canonical(buf, 1) = '\0';
	assert_string_equal(buf, "1.0");
	*fmt_f64_canonical(buf, 0.25) = '\0';
	assert_string_equal(buf, "0.25");
	*fmt_f64_canonical(buf, INFINITY) = '\0';
	assert_string_equal(buf, "+Inf");
	*fmt_f64_canonical(buf, 1e300) = '\0';
	assert_string_equal(buf, "1e+300");
}

/* Every double, whatever its bits, must parse back to itself. */
/* The fewest significant digits that read back as v. */
static int shortest_digits(double v)
{
	char buf[40];
	for (int p = 1; p < 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			return p;
	}
	return 17;
}

/* Significant digits of a number written without an exponent. */
static int digits_in(const char *s)
{
	int n = 0;
	bool leading = true;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			continue;
		leading = leading && *s == '0';
		n += !leading;
	}
	return n;
}

static void test_round_trip(void **state)
{
	uint64_t x = 0x9E3779B97F4A7C15ull;
	(void)state;
	for (int i = 0; i < 2000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double v;
		if (i % 3 == 0) {
			memcpy(&v, &x, sizeof(v));
			if (isnan(v) || isinf(v))
				continue;
		} else if (i % 3 == 1) {
			v = (double)(x % 100000000) / 1e6; /* decimal-looking values */
		} else {
			v = (double)(x >> 11) * 0x1p-53 * 1000; /* random fractions */
		}
		const char *s = f64(v);
		double back = strtod(s, NULL);
		if (memcmp(&back, &v, sizeof(v)) != 0)
			fail_msg("%.17g printed as %s", v, s);
		/* A fraction in no more digits than it must be (integers are
		 * written whole, and below 1e-7 with an exponent). */
		if (i % 8 == 1 && !strchr(s, 'e') && v != trunc(v) &&
		    digits_in(s) != shortest_digits(v))
			fail_msg("%.17g printed as %s, in more digits than %d", v, s,
				 shortest_digits(v));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_specials),
	    cmocka_unit_test(test_canonical),
	    cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests_name("fmt", tests, NULL, NULL);
}
