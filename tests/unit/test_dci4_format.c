/* DCI4 presentation: every vocabulary, base and notation, and the refusals. */
#include "helpers.h"

#include "dci4_format.h"

static const char *fmt(uint32_t type, uint32_t format, uint32_t pres, uint32_t size,
		       const void *slot)
{
	static char out[DCI4_TEXT_MAX];
	struct dci4_desc d = {type, format, pres, size, 0, 0, 0, "x"};
	dci4_format_value(&d, slot, out);
	return out;
}

static void test_booleans(void **state)
{
	static const uint8_t one[4] = {1}, zero[4] = {0}, two[4] = {2};
	(void)state;
	assert_string_equal(fmt(ST_BOOLEAN, 0, 0, 4, one), "on");
	assert_string_equal(fmt(ST_BOOLEAN, 0, 1, 4, zero), "no");
	assert_string_equal(fmt(ST_BOOLEAN, 0, 2, 4, one), "true");
	assert_string_equal(fmt(ST_BOOLEAN, 0, 3, 4, one), "always");
	assert_string_equal(fmt(ST_BOOLEAN, 0, 4, 4, zero), "0");
	assert_string_equal(fmt(ST_BOOLEAN, SBF_INVERTED, 2, 4, one), "false");
	assert_string_equal(fmt(ST_BOOLEAN, 0, 0, 4, two), "off"); /* only bit 0 counts */
	assert_string_equal(fmt(ST_BOOLEAN, 0, 9, 4, one), "?");
}

static void test_integers(void **state)
{
	static const uint8_t v[8] = {0xff, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t ip[4] = {10, 0, 0, 1};
	(void)state;
	assert_string_equal(fmt(ST_INTEGER8, 0, 1, 4, v), "-1");
	assert_string_equal(fmt(ST_INTEGER8, SIF_UNSIGNED, 1, 4, v), "255");
	assert_string_equal(fmt(ST_INTEGER16, SIF_UNSIGNED, 0, 4, v), "0x00ff");
	assert_string_equal(fmt(ST_INTEGER32, SIF_UNSIGNED | SIF_BIGENDIAN, 2, 4, ip), "10.0.0.1");
	assert_string_equal(fmt(ST_INTEGER64, SIF_UNSIGNED, 1, 8, v), "255");
	assert_string_equal(fmt(ST_INTEGER32, 0, 7, 4, v), "?");
}

static void test_others(void **state)
{
	static const uint8_t mac[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1};
	static const uint8_t eco[4] = {1, 254};
	static const uint8_t ctrl[8] = {'a', 0x07, 'b', 0};
	static const uint8_t nonul[4] = {'a', 'b', 'c', 'd'};
	int64_t epoch = 0;
	(void)state;
	assert_string_equal(fmt(ST_ADDRESS, SAF_ETHERNET, 0, 8, mac), "de:ad:be:ef:00:01");
	assert_string_equal(fmt(ST_ADDRESS, SAF_ECONET, 0, 4, eco), "1.254");
	assert_string_equal(fmt(ST_ADDRESS, SAF_ETHERNET, 0, 4, mac), "?"); /* too small */
	assert_string_equal(fmt(ST_STRING, 0, 0, 8, ctrl), "a?b");
	assert_string_equal(fmt(ST_STRING, 0, 0, 4, nonul), "?");
	assert_string_equal(fmt(ST_TIME, STF_CTIME, 0, 8, &epoch), "1970-01-01 00:00:00 UTC");
	assert_string_equal(fmt(ST_TIME, STF_CTIME, 1, 8, &epoch), "0.00 seconds");
	assert_string_equal(fmt(ST_UNUSED, 0, 0, 0, mac), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_booleans),
	    cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_others),
	};
	return cmocka_run_group_tests_name("dci4_format", tests, NULL, NULL);
}
