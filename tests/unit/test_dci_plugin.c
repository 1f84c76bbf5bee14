/* The DCI plugin's init, collect and shutdown under the mock host, with
 * synthetic supplier directories: no directory, sockets with bad names,
 * a supplier that accepts and never answers, one that is gone; and its
 * options, durations included. */
#include "mockhost.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern const struct bs_collector binstat_collector_dci;

static int listen_at(const char *dir, const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_options(void **state)
{
	struct mock m;
	(void)state;

	assert_int_equal(mock_init(&m, &binstat_collector_dci,
				   "timeout_seconds: 500ms\ndescribe_interval_seconds: 10m\n", 0),
			 0);
	mock_shutdown(&m);
	assert_int_equal(mock_init(&m, &binstat_collector_dci, "timeout_seconds: 0\n", 0), -EINVAL);
	assert_non_null(strstr(mock_conf_error(&m),
			       "t.yml:1:18: 'timeout_seconds' must be between 0.01 and 600"));
	mock_shutdown(&m);
	assert_int_equal(mock_init(&m, &binstat_collector_dci,
				   "rules:\n  - match: {stat: x}\n    type: histogram\n", 0),
			 -EINVAL);
	assert_non_null(
	    strstr(mock_conf_error(&m), "t.yml:3:11: type must be counter, gauge or unknown"));
	mock_shutdown(&m);
}

static void test_missing_directory_is_no_suppliers(void **state)
{
	struct mock m;
	struct capture cap;
	(void)state;

	assert_int_equal(
	    mock_init(&m, &binstat_collector_dci, "supplier_dir: /nonexistent/dci4\n", 0), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	assert_null(strstr(cap.text, "supplier=\""));
	capture_free(&cap);
	mock_shutdown(&m);
}

/* "mute" accepts and never answers: it fails alone, at the timeout; "gone"
 * is a socket nobody listens on; "bad name!" is not a supplier's name. */
static void test_broken_suppliers(void **state)
{
	char dir[] = "/tmp/dciplugin.XXXXXX", yaml[128], path[128];
	struct mock m;
	struct capture cap;
	(void)state;

	assert_non_null(mkdtemp(dir));
	int mute = listen_at(dir, "mute.sock");
	close(listen_at(dir, "gone.sock"));
	int bad = listen_at(dir, "bad name!.sock");
	snprintf(yaml, sizeof(yaml), "supplier_dir: %s\ntimeout_seconds: 300ms\n", dir);

	assert_int_equal(mock_init(&m, &binstat_collector_dci, yaml, 0), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	assert_non_null(strstr(cap.text, "dci_supplier_up{supplier=\"mute\"} 0\n"));
	assert_null(strstr(cap.text, "supplier=\"bad"));
	assert_int_equal(capture_drops(&cap, "bad_socket_name"), 1);
	assert_true(capture_drops(&cap, "timeout") >= 1);
	capture_free(&cap);
	mock_shutdown(&m);

	close(mute);
	close(bad);
	const char *names[] = {"mute.sock", "gone.sock", "bad name!.sock"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_missing_directory_is_no_suppliers),
	    cmocka_unit_test(test_broken_suppliers),
	};
	return cmocka_run_group_tests_name("dci_plugin", tests, NULL, NULL);
}
