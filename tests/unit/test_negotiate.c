/* Content negotiation: q-values, Prometheus' own headers, hostile headers. */
#include "helpers.h"

#include "negotiate.h"

static void test_format(void **state)
{
	(void)state;
	assert_int_equal(negotiate_format(NULL), EXPO_TEXT);
	assert_int_equal(negotiate_format(""), EXPO_TEXT);
	assert_int_equal(negotiate_format("*/*"), EXPO_TEXT);
	/* What Prometheus 3 sends. */
	assert_int_equal(
	    negotiate_format(
		"application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
		"application/openmetrics-text;version=0.0.1;q=0.4,"
		"text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,"
		"text/plain;version=0.0.4;q=0.2,*/*;q=0.1"),
	    EXPO_OPENMETRICS);
	/* Prometheus 2. */
	assert_int_equal(
	    negotiate_format(
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
	    EXPO_OPENMETRICS);
	assert_int_equal(negotiate_format("text/plain;q=0.9, application/openmetrics-text;q=0.5"),
			 EXPO_TEXT);
	assert_int_equal(negotiate_format("application/openmetrics-text;q=0"), EXPO_TEXT);
	assert_int_equal(negotiate_format("application/openmetrics-text; q=1.0 "),
			 EXPO_OPENMETRICS);
	assert_int_equal(negotiate_format("APPLICATION/OpenMetrics-Text"), EXPO_OPENMETRICS);
	assert_int_equal(negotiate_format("application/openmetrics-text;q=banana"), EXPO_TEXT);
	assert_int_equal(negotiate_format("application/openmetrics-text;q=2"), EXPO_TEXT);
	assert_int_equal(negotiate_format(";;;,,,=;q=;"), EXPO_TEXT);
}

static void test_huge_header(void **state)
{
	size_t n = 1 << 20;
	char *h = malloc(n + 64);
	(void)state;
	for (size_t i = 0; i < n; i += 4)
		memcpy(h + i, "a/b,", 4);
	memcpy(h + n, "application/openmetrics-text", sizeof("application/openmetrics-text"));
	assert_int_equal(negotiate_format(h), EXPO_OPENMETRICS);
	free(h);
}

static void test_gzip(void **state)
{
	(void)state;
	assert_false(negotiate_gzip(NULL));
	assert_true(negotiate_gzip("gzip"));
	assert_true(negotiate_gzip("deflate, gzip;q=0.8, br"));
	assert_false(negotiate_gzip("gzip;q=0"));
	assert_true(negotiate_gzip("*"));
	assert_false(negotiate_gzip("gzip;q=0, *"));
	assert_false(negotiate_gzip("identity"));
	assert_true(negotiate_gzip("x-gzip"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_huge_header),
	    cmocka_unit_test(test_gzip),
	};
	return cmocka_run_group_tests_name("negotiate", tests, NULL, NULL);
}
