/* The request router: which endpoint a path and method go to; and the
 * request target's checks before libmicrohttpd cuts it at a NUL or parses
 * its arguments. */
#include "helpers.h"

#include "httproute.h"
#include "httptarget.h"

static void test_routes(void **state)
{
	(void)state;
	assert_int_equal(httproute_of("/metrics", "GET", "/metrics"), HTTPROUTE_TELEMETRY);
	assert_int_equal(httproute_of("/metrics", "HEAD", "/metrics"), HTTPROUTE_TELEMETRY);
	assert_int_equal(httproute_of("/custom", "GET", "/custom"), HTTPROUTE_TELEMETRY);
	assert_int_equal(httproute_of("/metrics", "GET", "/custom"), HTTPROUTE_NOT_FOUND);
	assert_int_equal(httproute_of("/", "GET", "/metrics"), HTTPROUTE_LANDING);
	assert_int_equal(httproute_of("/-/healthy", "GET", "/metrics"), HTTPROUTE_HEALTHY);
	assert_int_equal(httproute_of("/-/ready", "GET", "/metrics"), HTTPROUTE_READY);
	assert_int_equal(httproute_of("/statistics/templates", "GET", "/metrics"),
			 HTTPROUTE_STATISTICS);
	/* the path whole: no prefix of it, no path under it */
	assert_int_equal(httproute_of("/metricsx", "GET", "/metrics"), HTTPROUTE_NOT_FOUND);
	assert_int_equal(httproute_of("/metrics/", "GET", "/metrics"), HTTPROUTE_NOT_FOUND);
	assert_int_equal(httproute_of("/statistics", "GET", "/metrics"), HTTPROUTE_NOT_FOUND);
}

static void test_methods(void **state)
{
	(void)state;
	/* only /statistics/ takes a POST, and a body */
	assert_int_equal(httproute_of("/statistics/x/definition", "POST", "/metrics"),
			 HTTPROUTE_STATISTICS);
	assert_true(httproute_takes_body("/statistics/x/definition", "POST"));
	assert_int_equal(httproute_of("/metrics", "POST", "/metrics"),
			 HTTPROUTE_METHOD_NOT_ALLOWED);
	assert_false(httproute_takes_body("/metrics", "POST"));
	assert_int_equal(httproute_of("/statistics/x", "PUT", "/metrics"),
			 HTTPROUTE_METHOD_NOT_ALLOWED);
	assert_int_equal(httproute_of("/", "DELETE", "/metrics"), HTTPROUTE_METHOD_NOT_ALLOWED);
	/* methods are case-sensitive (RFC 9110 9.1) */
	assert_int_equal(httproute_of("/metrics", "get", "/metrics"), HTTPROUTE_METHOD_NOT_ALLOWED);
}

static void test_encoded_nul(void **state)
{
	(void)state;
	assert_int_equal(httptarget_check("/metrics"), HTTPTARGET_OK);
	assert_int_equal(httptarget_check("/metrics%00.png"), HTTPTARGET_NUL_ENCODED);
	assert_int_equal(httptarget_check("/statistics/templates/0%00xyz"), HTTPTARGET_NUL_ENCODED);
	/* in the query, collect[] checks its own values */
	assert_int_equal(httptarget_check("/metrics?collect[]=a%00b"), HTTPTARGET_OK);
	assert_int_equal(httptarget_check("/metrics%0"), HTTPTARGET_OK);
	assert_int_equal(httptarget_check("/metrics%2500"), HTTPTARGET_OK);
}

static void test_many_args(void **state)
{
	char uri[4096];
	size_t n = (size_t)snprintf(uri, sizeof(uri), "/metrics?a=1");
	(void)state;
	for (int i = 1; i < HTTPTARGET_ARGS_MAX; i++)
		n += (size_t)snprintf(uri + n, sizeof(uri) - n, "&a=1");
	assert_int_equal(httptarget_check(uri), HTTPTARGET_OK);
	snprintf(uri + n, sizeof(uri) - n, "&a=1");
	assert_int_equal(httptarget_check(uri), HTTPTARGET_TOO_MANY_ARGS);
}

/* Fewer arguments than the cap, but a target and argument records past
 * the query's memory: refused before libmicrohttpd parses them. */
static void test_query_memory(void **state)
{
	static char uri[HTTPTARGET_QUERY_MEMORY + 64];
	size_t args = 100, fits = HTTPTARGET_QUERY_MEMORY - args * HTTPTARGET_ARG_RECORD;
	(void)state;
	memset(uri, 'a', sizeof(uri) - 1);
	memcpy(uri, "/metrics?", 9);
	for (size_t i = 1; i < args; i++)
		uri[9 + i * 100] = '&';
	uri[fits] = '\0'; /* exactly the query's memory */
	assert_int_equal(httptarget_check(uri), HTTPTARGET_OK);
	uri[fits] = 'a';
	uri[fits + 1] = '\0';
	assert_int_equal(httptarget_check(uri), HTTPTARGET_TOO_MANY_ARGS);
	/* no query: nothing parsed, the path's own length is libmicrohttpd's */
	uri[8] = 'a';
	assert_int_equal(httptarget_check(uri), HTTPTARGET_OK);
}

static void test_raw_nul(void **state)
{
	/* libmicrohttpd's request line once split: the target, its end where
	 * the space was, then the version */
	static const char line[] = "/metrics\0.png\0HTTP/1.1";
	static const char plain[] = "/metrics\0HTTP/1.1";
	(void)state;
	assert_true(httptarget_raw_nul(line, strlen(line), line + 14));
	assert_false(httptarget_raw_nul(plain, strlen(plain), plain + 9));
	/* a request without a version has no end to compare with */
	assert_false(httptarget_raw_nul(line, strlen(line), ""));
	assert_false(httptarget_raw_nul(line, strlen(line), line));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_routes),	 cmocka_unit_test(test_methods),
	    cmocka_unit_test(test_encoded_nul),	 cmocka_unit_test(test_many_args),
	    cmocka_unit_test(test_query_memory), cmocka_unit_test(test_raw_nul),
	};
	return cmocka_run_group_tests_name("httproute", tests, NULL, NULL);
}
