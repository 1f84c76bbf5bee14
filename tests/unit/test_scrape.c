/* Scrapes end to end without HTTP: deadlines, selection, failure isolation. */
#include "helpers.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "collset.h"
#include "log.h"
#include "scrape.h"

__attribute__((sentinel)) static void host_log(enum bs_log_level l, const char *c, const char *m,
					       ...)
{
	(void)l;
	(void)c;
	(void)m;
}

static const struct bs_host host = {BS_COLLECTOR_ABI_VERSION, host_log};

static struct collset *build_in(const char *plugin_dir, const char *yaml)
{
	char err[CONF_ERR_MAX];
	struct collset *set = NULL;
	struct config *cfg = config_load("t.yml", yaml, plugin_dir, err, sizeof(err));
	if (!cfg)
		fail_msg("config: %s", err);
	if (collset_build(cfg, &host, &set, err, sizeof(err)) < 0)
		fail_msg("collset: %s", err);
	return set;
}

/* With the shipped plugins (example, the model collector). */
static struct collset *build(const char *yaml)
{
	return build_in(getenv("BS_PLUGINS"), yaml);
}

/* With the test plugins (synthetic: series, delays and faults on demand). */
static struct collset *build_test(const char *yaml)
{
	return build_in(getenv("BS_TEST_PLUGINS"), yaml);
}

/* Runs a scrape and returns its body as a string (gunzipped if needed). */
static char *run(struct collset *set, struct instance **only, size_t n, enum expo_format f, bool gz,
		 double timeout, double *took)
{
	struct scrape_request req = {
	    .set = set, .only = only, .nonly = n, .format = f, .gzip = gz, .timeout_s = timeout};
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct scrape *sc = scrape_run(&req);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (took)
		*took = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	assert_non_null(sc);
	if (!scrape_body_is_text(sc)) {
		/* large parts were kept deflated: the reader inflates them */
		size_t cap = 1 << 27, got = 0;
		char *text = malloc(cap);
		ssize_t r;
		while ((r = scrape_read(sc, text + got,
					65536 < cap - got - 1 ? 65536 : cap - got - 1)) > 0)
			got += (size_t)r;
		assert_int_equal(r, 0);
		text[got] = '\0';
		scrape_put(sc);
		return text;
	}
	const struct iovec *iov;
	size_t total, niov = scrape_body(sc, &iov, &total);
	unsigned char *raw = malloc(total + 1);
	size_t off = 0;
	for (size_t i = 0; i < niov; i++) {
		memcpy(raw + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	scrape_put(sc);
	if (!gz) {
		raw[off] = '\0';
		return (char *)raw;
	}
	size_t cap = 1 << 27;
	char *out = malloc(cap);
	z_stream z = {0};
	inflateInit2(&z, 16 + 15);
	z.next_in = raw;
	z.avail_in = (uInt)off;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap - 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	out[z.total_out] = '\0';
	inflateEnd(&z);
	free(raw);
	return out;
}

static void test_all_collectors(void **state)
{
	(void)state;
	struct collset *set = build("collectors:\n  example: {}\n");
	char *body = run(set, NULL, 0, EXPO_OPENMETRICS, false, 5, NULL);
	assert_non_null(
	    strstr(body, "example_events_total{device=\"max\"} 18446744073709551615\n"));
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"example\"} 1\n"));
	assert_non_null(strstr(body, "process_open_fds "));
	assert_non_null(strstr(body, "\n# EOF\n"));
	assert_string_equal(body + strlen(body) - 6, "# EOF\n");
	free(body);
	collset_put(set);
}

static long served_open_fds(struct collset *set)
{
	char *body = run(set, NULL, 0, EXPO_TEXT, false, 5, NULL);
	const char *at = strstr(body, "\nprocess_open_fds ");
	assert_non_null(at);
	long n = strtol(at + 18, NULL, 10);
	free(body);
	return n;
}

/* The count follows the fds held, by whichever way the kernel allows. */
static void test_open_fds_counted(void **state)
{
	(void)state;
	int fds[100];
	struct collset *set = build("collectors:\n  example: {}\n");
	long before = served_open_fds(set);
	for (int i = 0; i < 100; i++)
		assert_true((fds[i] = open("/dev/null", O_RDONLY)) >= 0);
	long during = served_open_fds(set);
	for (int i = 0; i < 100; i++)
		close(fds[i]);
	assert_true(before > 2);
	assert_int_equal(during - before, 100);
	collset_put(set);
}

static void test_gzip_matches_plain(void **state)
{
	(void)state;
	struct collset *set = build_test("collectors:\n  synthetic:\n    bench_series: 20000\n");
	char *plain = run(set, NULL, 0, EXPO_TEXT, false, 5, NULL);
	char *unz = run(set, NULL, 0, EXPO_TEXT, true, 5, NULL);
	/* Counters move between scrapes: compare the stable bench series. */
	const char *a = strstr(plain, "# HELP synthetic_bench_0_bytes");
	const char *b = strstr(unz, "# HELP synthetic_bench_0_bytes");
	assert_non_null(a);
	assert_non_null(b);
	assert_memory_equal(a, b, strstr(a, "# HELP binstat_scrape") - a);
	free(plain);
	free(unz);
	collset_put(set);
}

/* Past the spill budget an uncompressed collector output is kept deflated
 * and inflated on the way out: the text must come out the same as through
 * gzip. */
static void test_spilled_output_reads_back(void **state)
{
	(void)state;
	struct collset *set = build_test("global:\n  spill_uncompressed_after: 4MiB\n"
					 "collectors:\n  synthetic:\n    bench_series: 300000\n");
	char *text = run(set, NULL, 0, EXPO_OPENMETRICS, false, 30, NULL);
	char *unz = run(set, NULL, 0, EXPO_OPENMETRICS, true, 30, NULL);
	const char *a = strstr(text, "# HELP synthetic_bench_0_bytes");
	const char *b = strstr(unz, "# HELP synthetic_bench_0_bytes");
	assert_non_null(a);
	assert_non_null(b);
	assert_true(strlen(text) > (20u << 20));
	const char *a_end = strstr(a, "# HELP binstat_scrape");
	assert_non_null(a_end);
	assert_memory_equal(a, b, (size_t)(a_end - a));
	assert_non_null(strstr(text, "synthetic_bench_299_bytes{instance=\"host-"));
	assert_string_equal(text + strlen(text) - 6, "# EOF\n");
	free(text);
	free(unz);
	collset_put(set);
}

/* A collector past the deadline is reported failed; the rest arrive in time. */
static void test_deadline(void **state)
{
	(void)state;
	double took;
	struct collset *set = build_test("collectors:\n  synthetic:\n    sleep_seconds: 2s\n");
	char *body = run(set, NULL, 0, EXPO_TEXT, false, 0.3, &took);
	assert_true(took < 1.0);
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"synthetic\"} 0\n"));
	assert_null(strstr(body, "synthetic_scrapes_total"));
	free(body);
	/* The next scrape waits on the still-running collect and also fails in time. */
	body = run(set, NULL, 0, EXPO_TEXT, false, 0.3, &took);
	assert_true(took < 1.0);
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"synthetic\"} 0\n"));
	free(body);
	collset_put(set); /* the straggling threads hold their own references */
}

static void test_selection_and_failures(void **state)
{
	(void)state;
	struct collset *set = build("collectors:\n  example: {}\n  badabi: {}\n"
				    "  nothere: {}\n  off:\n    enabled: false\n");
	struct instance_info nothere;
	assert_int_equal(collset_count(set), 3);
	struct instance *ex = collset_find(set, "example");
	assert_null(collset_find(set, "off"));
	collset_instance_info(collset_find(set, "nothere"), &nothere);
	assert_non_null(strstr(nothere.error, "nothere.so"));
	char *body = run(set, NULL, 0, EXPO_TEXT, false, 5, NULL);
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"example\"} 1\n"));
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"nothere\"} 0\n"));
	assert_non_null(strstr(body, "example_events_total"));
	free(body);
	body = run(set, &ex, 1, EXPO_TEXT, false, 5, NULL);
	assert_null(strstr(body, "collector=\"nothere\""));
	free(body);
	collset_put(set);
}

static void test_config_error_in_plugin_options(void **state)
{
	(void)state;
	char err[CONF_ERR_MAX];
	struct collset *set = NULL;
	struct config *cfg =
	    config_load("t.yml", "collectors:\n  synthetic:\n    sleep_secnds: 1\n",
			getenv("BS_TEST_PLUGINS"), err, sizeof(err));
	assert_non_null(cfg);
	assert_int_equal(collset_build(cfg, &host, &set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.yml:3:5: unknown key 'sleep_secnds'"));
	cfg = config_load("t.yml", "collectors:\n  synthetic:\n    bench_series: -4\n",
			  getenv("BS_TEST_PLUGINS"), err, sizeof(err));
	assert_int_equal(collset_build(cfg, &host, &set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.yml:3:19: 'bench_series' must be a whole number"));
	cfg = config_load("t.yml", "collectors:\n  synthetic:\n    sleep_seconds: 3 fortnights\n",
			  getenv("BS_TEST_PLUGINS"), err, sizeof(err));
	assert_int_equal(collset_build(cfg, &host, &set, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t.yml:3:20: 'sleep_seconds' must be a duration like 10s"));
}

static void test_hostile_collector_counted(void **state)
{
	(void)state;
	struct collset *set = build_test("collectors:\n  synthetic:\n    hostile: true\n");
	char *body = run(set, NULL, 0, EXPO_OPENMETRICS, false, 5, NULL);
	free(body);
	body = run(set, NULL, 0, EXPO_OPENMETRICS, false, 5, NULL);
	assert_non_null(strstr(body, "binstat_collector_dropped_total{collector=\"synthetic\","
				     "reason=\"duplicate_series\"} 2\n"));
	assert_non_null(strstr(body, "reason=\"invalid_utf8_repaired\"} 4\n"));
	assert_non_null(strstr(body, "reason=\"synthetic_reason\"} 6\n"));
	assert_non_null(
	    strstr(body, "synthetic_hostile{value=\"ok\xef\xbf\xbd\xef\xbf\xbd\"} 1\n"));
	free(body);
	collset_put(set);
}

/* A plugin built for the oldest ABI still loads and serves; "name:" with
 * nothing after it reaches init as an empty map. */
static void test_oldest_abi_plugin_serves(void **state)
{
	(void)state;
	const char *dir = getenv("BS_TEST_PLUGINS");
	struct collset *set = build_in(dir, "collectors:\n  abi1:\n    value: 7\n");
	char *body = run(set, NULL, 0, EXPO_TEXT, false, 5, NULL);
	assert_non_null(strstr(body, "\nabi1_value 7\n"));
	assert_non_null(strstr(body, "binstat_scrape_collector_success{collector=\"abi1\"} 1\n"));
	free(body);
	collset_put(set);
	set = build_in(dir, "collectors:\n  abi1:\n");
	body = run(set, NULL, 0, EXPO_TEXT, false, 5, NULL);
	assert_non_null(strstr(body, "\nabi1_value 1\n"));
	free(body);
	collset_put(set);
}

/* The processing's sampler as collset_sample serves it: an emitter that
 * counts the families it is given and never expires. */
struct sampler_em {
	struct bs_emitter pub;
	int families; /* atomic: the test thread watches it */
	int rc;	      /* collset_sample's */
	struct collset *set;
};

static int sampler_family(struct bs_emitter *em, const struct bs_family *f)
{
	(void)f;
	__atomic_add_fetch(&((struct sampler_em *)em)->families, 1, __ATOMIC_ACQ_REL);
	return 0;
}

static int sampler_sample(struct bs_emitter *em, const struct bs_label *l, size_t n,
			  struct bs_value v)
{
	(void)em, (void)l, (void)n, (void)v;
	return 0;
}

static bool sampler_expired(struct bs_emitter *em)
{
	(void)em;
	return false;
}

static const struct bs_emitter_ops sampler_ops = {
    .family = sampler_family, .sample = sampler_sample, .expired = sampler_expired};

static void *sampler_main(void *arg)
{
	struct sampler_em *e = arg;
	e->rc = collset_sample(e->set, 0, &e->pub, 1000000000u);
	return NULL;
}

/* A scrape never waits for the sampler: the sampler's collect of a slow
 * source (one that lingers 10 s, asking expired) stops the moment a scrape
 * wants the collector; the scrape is on time and whole, and the sampler's
 * pass is given up (1: busy) with nothing passed on after it stopped. */
static void test_scrape_does_not_wait_for_sampler(void **state)
{
	(void)state;
	struct collset *set = build_test("collectors:\n  synthetic:\n    linger_seconds: 10s\n");
	struct sampler_em e = {.pub = {&sampler_ops}, .set = set};
	pthread_t t;
	double took;

	assert_int_equal(pthread_create(&t, NULL, sampler_main, &e), 0);
	/* The sampler's collect has written its first family: it lingers now. */
	for (int i = 0; i < 5000 && !__atomic_load_n(&e.families, __ATOMIC_ACQUIRE); i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	assert_int_equal(__atomic_load_n(&e.families, __ATOMIC_ACQUIRE), 1);
	char *body = run(set, NULL, 0, EXPO_TEXT, false, 3, &took);
	pthread_join(t, NULL);
	if (took > 1.0)
		fail_msg("the scrape waited %.2f s for the sampler", took);
	assert_non_null(
	    strstr(body, "binstat_scrape_collector_success{collector=\"synthetic\"} 1\n"));
	assert_non_null(strstr(body, "\nsynthetic_scrapes_total 2\n"));
	assert_int_equal(e.rc, 1);	 /* given up: busy, not the collector's own code */
	assert_int_equal(e.families, 1); /* "synthetic_lingered" was not passed on */
	free(body);
	collset_put(set);
}

int main(void)
{
	log_setup(BS_LOG_ERROR + 1, false);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_collectors),
	    cmocka_unit_test(test_open_fds_counted),
	    cmocka_unit_test(test_gzip_matches_plain),
	    cmocka_unit_test(test_deadline),
	    cmocka_unit_test(test_spilled_output_reads_back),
	    cmocka_unit_test(test_selection_and_failures),
	    cmocka_unit_test(test_config_error_in_plugin_options),
	    cmocka_unit_test(test_hostile_collector_counted),
	    cmocka_unit_test(test_oldest_abi_plugin_serves),
	    cmocka_unit_test(test_scrape_does_not_wait_for_sampler),
	};
	return cmocka_run_group_tests_name("scrape", tests, NULL, NULL);
}
