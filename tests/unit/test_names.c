/* Name rules, escaping and UTF-8 repair. */
#include "helpers.h"

#include "names.h"

static const char *esc(const char *s, unsigned *repaired)
{
	static char buf[256];
	*names_escape_value(buf, s, strlen(s), repaired) = '\0';
	return buf;
}

static void test_metric_names(void **state)
{
	(void)state;
	assert_true(names_metric_valid("a", 1));
	assert_true(names_metric_valid("kvm_vm:rate5m", 13));
	assert_true(names_metric_valid("_x9", 3));
	assert_false(names_metric_valid("9x", 2));
	assert_false(names_metric_valid("a-b", 3));
	assert_false(names_metric_valid("", 0));
	assert_false(names_metric_valid("a b", 3));
}

static void test_label_names(void **state)
{
	(void)state;
	assert_true(names_label_valid("device", 6));
	assert_true(names_label_valid("_x", 2));
	assert_false(names_label_valid("__name__", 8)); /* reserved */
	assert_false(names_label_valid("a:b", 3));
	assert_false(names_label_valid("1a", 2));
}

static void test_escape(void **state)
{
	unsigned rep = 0;
	(void)state;
	assert_string_equal(esc("plain", &rep), "plain");
	assert_string_equal(esc("a\\b\"c\nd", &rep), "a\\\\b\\\"c\\nd");
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", &rep),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_int_equal(rep, 0);
}

static void test_utf8_repair(void **state)
{
	unsigned rep = 0;
	(void)state;
	/* A lone continuation, an overlong '/', a surrogate, a truncated sequence. */
	assert_string_equal(esc("a\x80z", &rep), "a\xef\xbf\xbdz");
	assert_int_equal(rep, 1);
	rep = 0;
	esc("\xc0\xaf", &rep);
	assert_int_equal(rep, 2);
	rep = 0;
	esc("\xed\xa0\x80", &rep);
	assert_int_equal(rep, 3);
	rep = 0;
	assert_string_equal(esc("x\xe2\x82", &rep), "x\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(rep, 2);
	rep = 0;
	esc("\xf4\x90\x80\x80", &rep); /* above U+10FFFF */
	assert_int_equal(rep, 4);
}

static void test_help_escape(void **state)
{
	char buf[64];
	unsigned rep = 0;
	(void)state;
	*names_escape_help(buf, "say \"hi\"\\\n", 10, false, &rep) = '\0';
	assert_string_equal(buf, "say \"hi\"\\\\\\n");
	*names_escape_help(buf, "say \"hi\"", 8, true, &rep) = '\0';
	assert_string_equal(buf, "say \\\"hi\\\"");
}

static void test_utf8_cut(void **state)
{
	const char *s = "ab\xe2\x82\xac";
	(void)state;
	assert_int_equal(names_utf8_cut(s, 5, 10), 5);
	assert_int_equal(names_utf8_cut(s, 5, 4), 2); /* would split the euro sign */
	assert_int_equal(names_utf8_cut(s, 5, 2), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_names),  cmocka_unit_test(test_label_names),
		cmocka_unit_test(test_escape),	      cmocka_unit_test(test_utf8_repair),
		cmocka_unit_test(test_help_escape),   cmocka_unit_test(test_utf8_cut),
	};
	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
