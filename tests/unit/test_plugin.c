/* Plugin loading: the real example plugin loads; broken ones are refused by name. */
#include "helpers.h"

#include "plugin.h"

static char err[512];

static const char *dir(const char *var)
{
	const char *d = getenv(var);
	if (!d)
		fail_msg("%s is not set: run through make", var);
	return d;
}

static void test_loads_example(void **state)
{
	const struct bs_collector *c = NULL;
	(void)state;
	assert_int_equal(plugin_load(dir("BS_PLUGINS"), "example", &c, err, sizeof(err)), 0);
	assert_string_equal(c->name, "example");
	const struct bs_collector *again = NULL;
	assert_int_equal(plugin_load(dir("BS_PLUGINS"), "example", &again, err, sizeof(err)), 0);
	assert_ptr_equal(c, again); /* loaded once */
}

static void test_abi_mismatch(void **state)
{
	const struct bs_collector *c = NULL;
	char want[128];
	(void)state;
	assert_int_equal(plugin_load(dir("BS_TEST_PLUGINS"), "badabi", &c, err, sizeof(err)),
			 -EPROTO);
	snprintf(want, sizeof(want),
		 "badabi.so: collector ABI version %d, this exporter loads 1 to %d",
		 BS_COLLECTOR_ABI_VERSION + 1, BS_COLLECTOR_ABI_VERSION);
	assert_non_null(strstr(err, want));
}

static void test_missing_symbol(void **state)
{
	const struct bs_collector *c = NULL;
	(void)state;
	assert_int_equal(plugin_load(dir("BS_TEST_PLUGINS"), "nosym", &c, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "nosym.so: no symbol binstat_collector_nosym"));
}

static void test_missing_file(void **state)
{
	const struct bs_collector *c = NULL;
	(void)state;
	assert_int_equal(plugin_load("/nonexistent", "kvm", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/kvm.so"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loads_example),
	    cmocka_unit_test(test_abi_mismatch),
	    cmocka_unit_test(test_missing_symbol),
	    cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests_name("plugin", tests, NULL, NULL);
}
