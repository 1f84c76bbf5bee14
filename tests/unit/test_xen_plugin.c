/* The Xen plugin's init and shutdown under the mock host, without a
 * hypervisor or xenstored: every option's errors (a configuration error
 * before anything is opened), --check-config opening nothing, and init
 * failing cleanly, with a log line and every fd closed, when xenstore
 * cannot be reached or the grant device is missing. Without xenstore
 * init fails, so there is no collect to drive here: tests/integration/xen.sh
 * drives it over the stand-in hypervisor (tests/fixtures/xen/fakexen.c). */
#include "mockhost.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern const struct bs_collector binstat_collector_xen;

/* Wrong values are configuration errors before anything is opened, so
 * a real start refuses them as --check-config does, xenstore or not. */
static const struct mock_bad_conf bad_values[] = {
    {"create_stats_key: maybe\n",
     "t.yml:1:19: 'create_stats_key' must be true or false, not 'maybe'"},
    {"timeout_seconds: 0\n", "t.yml:1:18: 'timeout_seconds' must be between 0.001 and 600"},
    {"timeout_seconds: 11m\n", "t.yml:1:18: 'timeout_seconds' must be between 0.001 and 600"},
    {"rescan_min_interval_seconds: 61s\n",
     "t.yml:1:30: 'rescan_min_interval_seconds' must be between 0 and 60, not '61s'"},
    {"resync_interval_seconds: 500ms\n",
     "t.yml:1:26: 'resync_interval_seconds' must be between 1 and 86400, not '500ms'"},
    {"resync_interval_seconds: 1d\n",
     "t.yml:1:26: 'resync_interval_seconds' must be a duration like 10s or 500ms, not '1d'"},
    {"max_domains: 0\n", "t.yml:1:14: 'max_domains' must be between 1 and 65536, not 0"},
    {"max_providers_per_domain: 1025\n",
     "t.yml:1:27: 'max_providers_per_domain' must be between 1 and 1024, not 1025"},
    {"max_sets_per_domain: [1]\n", "t.yml:1:22: 'max_sets_per_domain' must be a single value"},
    {"max_pages_per_set: 257\n",
     "t.yml:1:20: 'max_pages_per_set' must be between 1 and 256, not 257"},
    {"max_label_length: 7\n", "t.yml:1:19: 'max_label_length' must be between 8 and 64, not 7"},
    {"max_label_length: 100\n", "t.yml:1:19: 'max_label_length' must be between 8 and 64, not 100"},
    {"max_label_length: 300\n", "t.yml:1:19: 'max_label_length' must be between 8 and 64, not 300"},
    {"rules: [x]\n", "t.yml:1:9: a rule must be a mapping"},
    /* the rules speak of Xen's keys, not of DCI's */
    {"rules:\n  - name: xen_{module}\n",
     "t.yml:2:11: name: a placeholder is not one of {provider}, {set}, {stat}"},
};

static void test_options(void **state)
{
	static const struct mock_bad_conf unknown[] = {
	    {"rules:\n  - match: {module: x}\n    name: y\n", "t.yml:2:13: unknown key 'module'"},
	    {"max_domain: 5\n", "t.yml:1:1: unknown key 'max_domain'"},
	};
	struct mock m;
	(void)state;

	mock_expect_conf_errors(&binstat_collector_xen, BS_HOST_CHECK_ONLY, bad_values,
				sizeof(bad_values) / sizeof(bad_values[0]));
	mock_expect_conf_errors(&binstat_collector_xen, BS_HOST_CHECK_ONLY, unknown,
				sizeof(unknown) / sizeof(unknown[0]));
	/* --check-config: options read, xenstore not even opened, no fd */
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_xen,
				   "timeout_seconds: 250ms\nrescan_min_interval_seconds: 50ms\n"
				   "resync_interval_seconds: 2m\n",
				   BS_HOST_CHECK_ONLY),
			 0);
	assert_int_equal(mock_open_fds(), fds);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
	/* the defaults, and every option at a limit */
	assert_int_equal(mock_init(&m, &binstat_collector_xen, "", BS_HOST_CHECK_ONLY), 0);
	mock_shutdown(&m);
	assert_int_equal(
	    mock_init(&m, &binstat_collector_xen,
		      "create_stats_key: true\ntimeout_seconds: 1ms\n"
		      "rescan_min_interval_seconds: 0\nresync_interval_seconds: 24h\n"
		      "max_domains: 65536\nmax_providers_per_domain: 1024\n"
		      "max_sets_per_domain: 4096\nmax_pages_per_set: 256\nmax_label_length: 64\n"
		      "rules:\n  - match: {provider: vif, set: '*', stat: rx_*}\n"
		      "    name: xen_{provider}_{stat}\n    type: counter\n",
		      BS_HOST_CHECK_ONLY),
	    0);
	assert_int_equal(mock_open_fds(), fds);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
}

/* Init's failure to reach Xen: not a configuration error, one log line,
 * and whatever was opened before it closed again. */
static void expect_no_xen(const char *xenstored_path)
{
	struct mock m;

	setenv("XENSTORED_PATH", xenstored_path, 1);
	int fds = mock_open_fds();
	int rc = mock_init(&m, &binstat_collector_xen, "", 0);
	unsetenv("XENSTORED_PATH");
	assert_true(rc < 0 && rc != -EINVAL); /* not a configuration error */
	assert_string_equal(mock_conf_error(&m), "");
	mock_expect_in(
	    "log", mock_log,
	    "error xen cannot open xenstore, grant tables or event channels error=", false);
	mock_shutdown(&m);
	assert_int_equal(mock_open_fds(), fds);
}

static void test_no_xenstore_fails_cleanly(void **state)
{
	(void)state;

	if (access("/dev/xen/xenbus", F_OK) == 0)
		skip(); /* a real Xen host: xenstore may well answer */
	expect_no_xen("/nonexistent/xenstored/socket");
	/* Still a configuration error first, whether xenstore is there or not. */
	setenv("XENSTORED_PATH", "/nonexistent/xenstored/socket", 1);
	mock_expect_conf_errors(&binstat_collector_xen, 0, bad_values,
				sizeof(bad_values) / sizeof(bad_values[0]));
	unsetenv("XENSTORED_PATH");
}

/* A xenstored that takes the connection, on a host without the grant
 * device: the xenstore connection made is closed again. */
static void test_no_grant_device_fails_cleanly(void **state)
{
	char dir[] = "/tmp/xenplugin.XXXXXX", path[64];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	(void)state;

	if (access("/dev/xen/gntdev", F_OK) == 0)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/socket", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	expect_no_xen(path);
	/* xenstore was reached, and that connection is closed already */
	int conn = accept(fd, NULL, NULL);
	char byte;
	assert_true(conn >= 0);
	assert_int_equal(read(conn, &byte, 1), 0);
	close(conn);
	close(fd);
	mock_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_no_xenstore_fails_cleanly),
	    cmocka_unit_test(test_no_grant_device_fails_cleanly),
	};
	return cmocka_run_group_tests_name("xen_plugin", tests, NULL, NULL);
}
