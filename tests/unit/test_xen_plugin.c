/* The Xen plugin's init, collect and shutdown under the mock host, without
 * a hypervisor or xenstored: its options (limits named in the messages,
 * durations), --check-config opening nothing, and a clean failure with a
 * log line when xenstore cannot be reached. */
#include "mockhost.h"

#include <unistd.h>

extern const struct bs_collector binstat_collector_xen;

static void test_options(void **state)
{
	struct mock m;
	(void)state;

	assert_int_equal(
	    mock_init(&m, &binstat_collector_xen, "max_label_length: 100\n", BS_HOST_CHECK_ONLY),
	    -EINVAL);
	assert_string_equal(mock_conf_error(&m),
			    "t.yml:1:19: 'max_label_length' must be between 8 and 64, not 100");
	mock_shutdown(&m);
	assert_int_equal(mock_init(&m, &binstat_collector_xen, "resync_interval_seconds: 1d\n",
				   BS_HOST_CHECK_ONLY),
			 -EINVAL);
	assert_non_null(strstr(mock_conf_error(&m), "must be a duration like 10s or 500ms"));
	mock_shutdown(&m);
	/* --check-config: options read, xenstore not even opened */
	assert_int_equal(mock_init(&m, &binstat_collector_xen,
				   "timeout_seconds: 250ms\nrescan_min_interval_seconds: 50ms\n"
				   "resync_interval_seconds: 2m\n",
				   BS_HOST_CHECK_ONLY),
			 0);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
}

static void test_no_xenstore_fails_cleanly(void **state)
{
	struct mock m;
	(void)state;

	if (access("/dev/xen/xenbus", F_OK) == 0)
		skip(); /* a real Xen host: xenstore may well answer */
	setenv("XENSTORED_PATH", "/nonexistent/xenstored/socket", 1);
	int rc = mock_init(&m, &binstat_collector_xen, "", 0);
	assert_true(rc < 0 && rc != -EINVAL); /* not a configuration error */
	assert_string_equal(mock_conf_error(&m), "");
	assert_non_null(
	    strstr(mock_log, "error xen cannot open xenstore, grant tables or event channels"));
	mock_shutdown(&m);
	unsetenv("XENSTORED_PATH");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_no_xenstore_fails_cleanly),
	};
	return cmocka_run_group_tests_name("xen_plugin", tests, NULL, NULL);
}
