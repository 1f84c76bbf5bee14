/* The example collector's init, collect and shutdown under the mock host:
 * its one option (host_label) with its limit, unknown keys, the defaults,
 * and what each collect writes. */
#include "mockhost.h"

extern const struct bs_collector binstat_collector_example;

/* 63 bytes: the most host_label holds. */
#define LABEL_63 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"

static void test_defaults(void **state)
{
	struct mock m;
	struct capture cap;
	char line[64];
	(void)state;

	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_example, "", 0), 0);
	assert_int_equal(mock_open_fds(), fds);
	/* Each collect is a scrape: the counter counts them. */
	for (int i = 1; i <= 2; i++) {
		assert_int_equal(mock_collect(&m, &cap), 0);
		snprintf(line, sizeof(line), "\nexample_events_total{device=\"vda\"} %d\n", i);
		mock_expect_in("collect", cap.text, line, false);
		mock_expect_in("collect", cap.text,
			       "\nexample_events_total{device=\"max\"} 18446744073709551615\n",
			       false);
		mock_expect_in("collect", cap.text,
			       "\nexample_build_info{version=\"1.0\",host=\"example\"} 1\n", false);
		mock_expect_no_drops(&cap);
		capture_free(&cap);
	}
	char desc[64];
	binstat_collector_example.describe(m.state, desc, sizeof(desc));
	assert_string_equal(desc, "8 families, one of each metric type");
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
}

static void test_host_label(void **state)
{
	struct mock m;
	struct capture cap;
	(void)state;

	assert_int_equal(mock_init(&m, &binstat_collector_example, "host_label: h1\n", 0), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	mock_expect_in("collect", cap.text, "example_build_info{version=\"1.0\",host=\"h1\"} 1\n",
		       false);
	capture_free(&cap);
	mock_shutdown(&m);
	/* at the limit: kept whole */
	assert_int_equal(mock_init(&m, &binstat_collector_example, "host_label: " LABEL_63 "\n", 0),
			 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	mock_expect_in("collect", cap.text, "host=\"" LABEL_63 "\"} 1\n", false);
	capture_free(&cap);
	mock_shutdown(&m);
}

static void test_option_errors(void **state)
{
	static const struct mock_bad_conf bad[] = {
	    {"host_label: " LABEL_63 "x\n", "t.yml:1:13: host_label: at most 63 bytes"},
	    {"host_label: [a, b]\n", "t.yml:1:13: 'host_label' must be a single value"},
	    {"host_label: {a: b}\n", "t.yml:1:13: 'host_label' must be a single value"},
	    {"hostlabel: h1\n", "t.yml:1:1: unknown key 'hostlabel'"},
	    {"host_label: h1\nscrapes: 3\n", "t.yml:2:1: unknown key 'scrapes'"},
	};
	(void)state;

	mock_expect_conf_errors(&binstat_collector_example, 0, bad, sizeof(bad) / sizeof(bad[0]));
	mock_expect_conf_errors(&binstat_collector_example, BS_HOST_CHECK_ONLY, bad,
				sizeof(bad) / sizeof(bad[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_host_label),
	    cmocka_unit_test(test_option_errors),
	};
	return cmocka_run_group_tests_name("example_plugin", tests, NULL, NULL);
}
