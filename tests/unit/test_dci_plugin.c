/* The DCI plugin's init, collect and shutdown under the mock host, with
 * synthetic supplier directories: none, an empty one, one that is a file,
 * sockets with bad names, a supplier that accepts and never answers, ones
 * that are gone, more than max_suppliers; real suppliers (lib/dci4) that
 * together claim more than max_statistics_total; and every option's errors. */
#include "mockhost.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "dci4_supplier.h"

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
	static const struct mock_bad_conf bad[] = {
	    {"supplier_dir: [a]\n", "t.yml:1:15: 'supplier_dir' must be a single value"},
	    {"timeout_seconds: 0\n", "t.yml:1:18: 'timeout_seconds' must be between 0.01 and 600"},
	    {"timeout_seconds: 601\n",
	     "t.yml:1:18: 'timeout_seconds' must be between 0.01 and 600"},
	    {"timeout_seconds: fast\n",
	     "t.yml:1:18: 'timeout_seconds' must be a duration like 10s or 500ms, not 'fast'"},
	    {"describe_interval_seconds: 169h\n",
	     "t.yml:1:28: 'describe_interval_seconds' must be between 0 and 604800, not '169h'"},
	    {"max_suppliers: 0\n",
	     "t.yml:1:16: 'max_suppliers' must be between 1 and 65536, not 0"},
	    {"max_statistics: 65536\n",
	     "t.yml:1:17: 'max_statistics' must be between 1 and 65535, not 65536"},
	    {"max_statistics_total: 16777217\n",
	     "t.yml:1:23: 'max_statistics_total' must be between 1 and 16777216, not 16777217"},
	    {"max_label_length: 7\n",
	     "t.yml:1:19: 'max_label_length' must be between 8 and 1024, not 7"},
	    {"max_buffer_mib: 64MiB\n",
	     "t.yml:1:17: 'max_buffer_mib' must be a whole number, not '64MiB'"},
	    {"rules: {stat: x}\n", "t.yml:1:8: rules must be a list of at most"},
	    {"rules: [x]\n", "t.yml:1:9: a rule must be a mapping"},
	    {"rules:\n  - match: {stat: x}\n    type: histogram\n",
	     "t.yml:3:11: type must be counter, gauge or unknown"},
	    /* the rules speak of DCI's keys, not of Xen's */
	    {"rules:\n  - name: dci_{provider}\n",
	     "t.yml:2:11: name: a placeholder is not one of {module}, {title}, {supplier}, {stat}"},
	    {"rules:\n  - match: {provider: x}\n    name: y\n",
	     "t.yml:2:13: unknown key 'provider'"},
	    {"rules:\n  - match: {stat: x}\n    nmae: y\n", "t.yml:3:5: unknown key 'nmae'"},
	    {"supplier_directory: /run/dci4\n", "t.yml:1:1: unknown key 'supplier_directory'"},
	};
	struct mock m;
	(void)state;

	mock_expect_conf_errors(&binstat_collector_dci, 0, bad, sizeof(bad) / sizeof(bad[0]));
	mock_expect_conf_errors(&binstat_collector_dci, BS_HOST_CHECK_ONLY, bad,
				sizeof(bad) / sizeof(bad[0]));
	/* the defaults, and every option at a limit */
	assert_int_equal(mock_init(&m, &binstat_collector_dci, "", 0), 0);
	mock_shutdown(&m);
	assert_int_equal(
	    mock_init(&m, &binstat_collector_dci,
		      "supplier_dir: /nonexistent\ntimeout_seconds: 10ms\n"
		      "describe_interval_seconds: 0\nmax_suppliers: 65536\nmax_statistics: 65535\n"
		      "max_statistics_total: 16777216\nmax_label_length: 1024\nmax_buffer_mib: 1\n"
		      "rules:\n"
		      "  - match: {module: M*, title: T, supplier: s?, stat: x}\n"
		      "    name: dci_{module}_{stat}\n    type: counter\n    unit: bytes\n"
		      "    help: H\n    scale: 0.5\n"
		      "  - match: {stat: y}\n    drop: true\n",
		      0),
	    0);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fclose(f);
}

/* Collects twice from a supplier directory with no supplier in it: no
 * error, no drop, no log line, nothing about any supplier. */
static void expect_no_suppliers(const char *dir)
{
	char yaml[128];
	struct mock m;
	struct capture cap;

	snprintf(yaml, sizeof(yaml), "supplier_dir: %s\n", dir);
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_dci, yaml, 0), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mock_collect(&m, &cap), 0);
		mock_expect_in("collect", cap.text, "supplier=\"", true);
		mock_expect_no_drops(&cap);
		capture_free(&cap);
	}
	mock_expect_describe(&m, "0 suppliers in %s, 0 answering; 0 statistics described", dir);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
	assert_int_equal(mock_open_fds(), fds);
}

/* No directory yet: no supplier has started. */
static void test_missing_directory_is_no_suppliers(void **state)
{
	(void)state;
	expect_no_suppliers("/nonexistent/dci4");
}

/* What is not a socket is passed over without a word: a file, and a
 * folder named like a supplier's socket. */
static void test_empty_directory(void **state)
{
	char dir[] = "/tmp/dciplugin.XXXXXX", path[128];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/README", dir);
	touch(path);
	snprintf(path, sizeof(path), "%s/old.sock", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	expect_no_suppliers(dir);
	mock_rmtree(dir);
}

/* A supplier_dir that cannot be read fails collect, with one log line
 * until it can be read again; the next failure is logged again. */
static void test_unreadable_directory(void **state)
{
	char dir[] = "/tmp/dciplugin.XXXXXX", path[128], yaml[160], want[256];
	struct mock m;
	struct capture cap;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/dci4", dir);
	snprintf(yaml, sizeof(yaml), "supplier_dir: %s\n", path);
	snprintf(want, sizeof(want),
		 "error dci cannot read the supplier directory dir=%s error=Not a directory\n",
		 path);
	touch(path);
	assert_int_equal(mock_init(&m, &binstat_collector_dci, yaml, 0), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mock_collect(&m, &cap), -ENOTDIR);
		capture_free(&cap);
		assert_string_equal(mock_log, want);
	}
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	capture_free(&cap);
	assert_string_equal(mock_log, want);
	rmdir(path);
	touch(path);
	assert_int_equal(mock_collect(&m, &cap), -ENOTDIR);
	capture_free(&cap);
	assert_string_equal(mock_log + strlen(want), want);
	mock_shutdown(&m);
	mock_rmtree(dir);
}

/* "mute" accepts and never answers: it fails alone, at the timeout; "gone"
 * is a socket nobody listens on; "bad name!" is not a supplier's name. */
static void test_broken_suppliers(void **state)
{
	char dir[] = "/tmp/dciplugin.XXXXXX", yaml[128];
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
	mock_rmtree(dir);
}

/* max_suppliers: the first by name are kept, the rest counted. These
 * are sockets nobody listens on any more: each kept one is counted stale,
 * and none is up. */
static void test_max_suppliers(void **state)
{
	char dir[] = "/tmp/dciplugin.XXXXXX", yaml[128];
	const char *names[] = {"a.sock", "b.sock", "c.sock"};
	struct mock m;
	struct capture cap;
	(void)state;

	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < 3; i++)
		close(listen_at(dir, names[i]));
	snprintf(yaml, sizeof(yaml), "supplier_dir: %s\nmax_suppliers: 2\n", dir);
	assert_int_equal(mock_init(&m, &binstat_collector_dci, yaml, 0), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	assert_int_equal(capture_drops(&cap, "too_many_suppliers"), 1);
	assert_int_equal(capture_drops(&cap, "stale_socket"), 2);
	assert_int_equal(cap.em.ndrops, 2);
	mock_expect_in("collect", cap.text, "supplier=\"", true);
	capture_free(&cap);
	mock_expect_describe(&m, "2 suppliers in %s, 0 answering; 0 statistics described", dir);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
	mock_rmtree(dir);
}

/* Lines of the text that start with `prefix` and end with `suffix`. */
static size_t lines_with(const char *text, const char *prefix, const char *suffix)
{
	size_t n = 0, plen = strlen(prefix), slen = strlen(suffix);

	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		n += len >= plen + slen && strncmp(p, prefix, plen) == 0 &&
		     strncmp(p + len - slen, suffix, slen) == 0;
		p += len + (end != NULL);
	}
	return n;
}

/* max_statistics_total holds within one exchange: twelve suppliers of 256
 * statistics, all described in the same scrape, against a cap of 1,000.
 * Each description claims its statistics as it starts, so three are
 * described and nine refused and counted, in that scrape and the next. */
static void test_max_statistics_total_in_one_exchange(void **state)
{
	enum { NSUP = 12, NSTATS = 256, CAP = 1000 };
	char dir[] = "/tmp/dciplugin.XXXXXX", yaml[160], names[NSTATS][16];
	struct dci4_stat stats[NSTATS];
	struct dci4_supplier *sup[NSUP];
	struct mock m;
	struct capture cap;
	int err;
	(void)state;

	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < NSTATS; i++) {
		snprintf(names[i], sizeof(names[i]), "c_%03d", i);
		stats[i] =
		    (struct dci4_stat){ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, names[i]};
	}
	for (int i = 0; i < NSUP; i++) {
		char name[16];
		snprintf(name, sizeof(name), "s.%02d", i);
		struct dci4_supplier_conf c = {dir,  name, SPT_GENERAL_SUPPLIER, 100, "many",
					       name, "d"};
		assert_non_null(sup[i] = dci4_supplier_open(&c, stats, NSTATS, &err));
		assert_int_equal(dci4_supplier_start(sup[i]), 0);
	}
	snprintf(yaml, sizeof(yaml), "supplier_dir: %s\nmax_statistics_total: %d\n", dir, CAP);
	assert_int_equal(mock_init(&m, &binstat_collector_dci, yaml, 0), 0);
	for (int scrape = 0; scrape < 2; scrape++) {
		assert_int_equal(mock_collect(&m, &cap), 0);
		size_t served = lines_with(cap.text, "dci_many_c_", "");
		if (served > CAP)
			fail_msg("scrape %d: %zu statistics served past a cap of %d", scrape,
				 served, CAP);
		assert_int_equal(served, (CAP / NSTATS) * NSTATS);
		assert_int_equal(lines_with(cap.text, "dci_supplier_up{", " 1"), CAP / NSTATS);
		assert_int_equal(capture_drops(&cap, "too_many_stats_total"), NSUP - CAP / NSTATS);
		capture_free(&cap);
	}
	mock_expect_describe(&m, "%d suppliers in %s, %d answering; %d statistics described", NSUP,
			     dir, CAP / NSTATS, (CAP / NSTATS) * NSTATS);
	mock_shutdown(&m);
	for (int i = 0; i < NSUP; i++)
		dci4_supplier_close(sup[i]);
	mock_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_options),
	    cmocka_unit_test(test_missing_directory_is_no_suppliers),
	    cmocka_unit_test(test_empty_directory),
	    cmocka_unit_test(test_unreadable_directory),
	    cmocka_unit_test(test_broken_suppliers),
	    cmocka_unit_test(test_max_suppliers),
	    cmocka_unit_test(test_max_statistics_total_in_one_exchange),
	};
	return cmocka_run_group_tests_name("dci_plugin", tests, NULL, NULL);
}
