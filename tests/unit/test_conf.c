/* Configuration: every error names file, line and column; caps hold. */
#include "helpers.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "conftree.h"

static char err[CONF_ERR_MAX];

static struct config *load(const char *text)
{
	err[0] = '\0';
	return config_load("t.yml", text, "/plugins", err, sizeof(err));
}

static void expect_error(const char *text, const char *want)
{
	struct config *c = load(text);
	if (c)
		fail_msg("accepted: %s", text);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_defaults_and_values(void **state)
{
	(void)state;
	struct config *c = load("{}");
	assert_non_null(c);
	assert_true(c->scrape_timeout == 10);
	assert_string_equal(c->plugin_dir, "/plugins");
	config_free(c);

	c = load("global:\n  scrape_timeout: 1m30s\n  scrape_timeout_offset: 250ms\n"
		 "  max_response_bytes: 64MiB\n  plugin_dir: /x\n"
		 "collectors:\n  kvm:\n    enabled: false\n  example:\n    a: 1\n  dci:\n");
	assert_non_null(c);
	assert_true(c->scrape_timeout == 90);
	assert_true(c->timeout_offset == 0.25);
	assert_int_equal(c->max_response_bytes, 64 << 20);
	assert_string_equal(c->plugin_dir, "/x");
	assert_int_equal(c->ncollectors, 3);
	assert_false(config_find(c, "kvm")->enabled);
	assert_true(config_find(c, "dci")->enabled);
	/* A collector's own keys are left for its plugin to claim. */
	assert_int_equal(conf_check_unused(config_find(c, "example")->node), -EINVAL);
	config_free(c);
	c = load("global:\n  scrape_timeout: 1s\n  scrape_timeout_offset: 999ms\n");
	assert_non_null(c); /* just below: allowed */
	assert_true(c->timeout_offset == 0.999);
	config_free(c);
}

/* What a collector sees through bs_conf_ops, ABI 2's additions included. */
static void test_collector_view(void **state)
{
	(void)state;
	struct config *c = load("collectors:\n  x:\n    t: 500ms\n    n: 2\n"
				"    b: 64KiB\n    bad: 3 parsecs\n");
	assert_non_null(c);
	const struct bs_conf *x = &config_find(c, "x")->node->pub;
	double t = 0;
	uint64_t b = 0;
	assert_int_equal(x->ops->get_duration(x, "t", 0, 60, &t), 0);
	assert_true(t == 0.5);
	assert_int_equal(x->ops->get_duration(x, "n", 0, 60, &t), 0); /* plain: seconds */
	assert_true(t == 2);
	assert_int_equal(x->ops->get_duration(x, "absent", 0, 60, &t), -ENOENT);
	assert_int_equal(x->ops->get_bytes(x, "b", 0, 1 << 20, &b), 0);
	assert_int_equal(b, 65536);
	const struct bs_conf *bad = x->ops->child(x, "bad");
	assert_int_equal(x->ops->errorf(bad, "at most %d %s", 64, "parsecs"), -EINVAL);
	assert_string_equal(c->doc->err, "t.yml:6:10: at most 64 parsecs");
	config_free(c);
}

static void test_errors_have_positions(void **state)
{
	(void)state;
	expect_error("globl: 1\n", "t.yml:1:1: unknown key 'globl'");
	expect_error("global:\n  scrape_timeout: fast\n",
		     "t.yml:2:19: 'scrape_timeout' must be a duration");
	expect_error("global:\n  scrape_timeout: 2h\n",
		     "t.yml:2:19: 'scrape_timeout' must be between");
	expect_error("global:\n  max_response_bytes: 12XB\n", "t.yml:2:23:");
	/* An offset that leaves no time: at the offset's value, or at the
	 * timeout's when the offset is the default (500ms). */
	expect_error("global:\n  scrape_timeout: 2s\n  plugin_dir: /p\n"
		     "  scrape_timeout_offset: 3s\n",
		     "t.yml:4:26: 'scrape_timeout_offset' (3s) must be less than "
		     "'scrape_timeout' (2s): a scrape would have no time left");
	expect_error("global:\n  scrape_timeout_offset: 10s\n",
		     "t.yml:2:26: 'scrape_timeout_offset' (10s) must be less than "
		     "'scrape_timeout' (10s, the default)");
	expect_error("global:\n  scrape_timeout: 300ms\n",
		     "t.yml:2:19: 'scrape_timeout_offset' (0.5s, the default) must be less "
		     "than 'scrape_timeout' (300ms)");
	expect_error("global:\n  plugin_dir: [a]\n",
		     "t.yml:2:15: 'plugin_dir' must be a single value");
	expect_error("global: 3\n", "'global' must be a mapping");
	expect_error("collectors:\n  Bad-Name: {}\n", "t.yml:2:3: collector name 'Bad-Name'");
	expect_error("collectors:\n  x:\n    enabled: maybe\n",
		     "t.yml:3:14: 'enabled' must be true or false");
	expect_error("collectors:\n  x: 5\n", "options of collector 'x' must be a mapping");
	expect_error("a: 1\na: 2\n", "t.yml:2:1: duplicate key 'a'");
	expect_error("- 1\n", "must be a mapping");
	expect_error("global: {\n", "t.yml:");
}

static void test_hostile_yaml(void **state)
{
	char deep[4096] = "";
	(void)state;
	/* An alias bomb expands past the node cap instead of eating memory. */
	expect_error(
	    "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
	    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
	    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
	    "too many nodes");
	memset(deep, '[', 100);
	expect_error(deep, "t.yml:");
	/* YAML's "\0" escape: a key that would read as "kvm" when cut at the NUL. */
	expect_error("collectors:\n  \"kvm\\0x\": {}\n", "t.yml:2:3: NUL byte in a key");
	expect_error("global:\n  plugin_dir: \"/a\\0b\"\n", "NUL byte in a string");
	assert_null(config_load("/nonexistent/x.yml", NULL, "/p", err, sizeof(err)));
	assert_non_null(strstr(err, "/nonexistent/x.yml: No such file or directory"));
}

/* A file caught between its truncation and its rewrite reads empty: no
 * document is no configuration, whereas `{}` is the empty one. */
static void test_empty_file_refused(void **state)
{
	static const char *const nothing[] = {"", "\n  \n", "# all commented out\n#x: 1\n"};
	(void)state;
	for (size_t i = 0; i < sizeof(nothing) / sizeof(nothing[0]); i++)
		expect_error(nothing[i], "t.yml: no configuration in it");
	struct config *c = load("---\n{}\n");
	assert_non_null(c);
	config_free(c);
}

static void test_second_document_refused(void **state)
{
	(void)state;
	expect_error("global: {}\n---\ncollectors: {}\n",
		     "t.yml:2:1: a second YAML document: the file must hold exactly one");
	expect_error("global: {}\n...\n--- {}\n", "t.yml:3:1: a second YAML document");
}

/* libyaml's time grows with the square of the flow nesting: 160 KB of
 * '[' took 17 s. The cap refuses it at the 65th level, at once. */
static void test_deep_nesting_refused_at_once(void **state)
{
	size_t n = 160000;
	char *deep = malloc(n + 1);
	struct timespec t0, t1;
	(void)state;

	assert_non_null(deep);
	memset(deep, '[', n);
	deep[n] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	expect_error(deep, "t.yml:1:65: nested deeper than 64 levels");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (s > 0.5)
		fail_msg("took %.3f s", s);
	/* Block and flow levels count alike: three mappings, then 62 '['
	 * pass; the 62nd '[' is the 65th level. */
	char yaml[256] = "collectors:\n  x:\n    a: ";
	size_t head = strlen(yaml);
	memset(yaml + head, '[', 61);
	memset(yaml + head + 61, ']', 61);
	memcpy(yaml + head + 122, "\n", 2);
	struct config *c = load(yaml);
	if (!c)
		fail_msg("64 levels refused: %s", err);
	config_free(c);
	memset(yaml + head, '[', 62);
	memset(yaml + head + 62, ']', 62);
	memcpy(yaml + head + 124, "\n", 2);
	expect_error(yaml, "t.yml:3:69: nested deeper than 64 levels");
	free(deep);
}

/* A file saved in place while it is read. Every read of a file goes
 * through __wrap_readfile_bounded (this suite is linked with
 * --wrap=readfile_bounded): when a tear is armed, the file is rewritten in
 * place around that one read the way an editor saving in several writes
 * leaves it: truncated, the first `split` of its chunks written before the
 * read, the rest after. Each half-written state is a valid configuration
 * of its own (the first collector and comments), so only the check after
 * the read tells it from a whole version. No timing is involved. */
int __real_readfile_bounded(const char *path, size_t max, bool nofollow, char **out, size_t *len);
int __wrap_readfile_bounded(const char *path, size_t max, bool nofollow, char **out, size_t *len);

#define TEAR_CHUNKS 16
#define TEAR_CHUNK 4096

static struct {
	const char *path;
	bool armed;
	unsigned split; /* chunks written before the read: 1 .. TEAR_CHUNKS - 1 */
	const char *name;
} tear;

/* The collector "first", 64 KiB of comments, then the collector `name`. */
static char *tear_version(const char *name, size_t *len)
{
	size_t total = (size_t)TEAR_CHUNKS * TEAR_CHUNK;
	char *v = malloc(total + 1);

	assert_non_null(v);
	memset(v, ' ', total);
	static const char head[] = "collectors:\n  first: {}\n";
	memcpy(v, head, sizeof(head) - 1);
	for (size_t at = sizeof(head) - 1; at + 80 < total - 64; at += 80) {
		v[at] = '#';
		v[at + 79] = '\n';
	}
	int n = snprintf(v + total - 64, 64, "\n  %s: {}\n", name);
	*len = total - 64 + (size_t)n;
	return v;
}

static void write_chunks(int fd, const char *v, size_t len, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++) {
		size_t at = (size_t)i * TEAR_CHUNK;
		size_t n = i == TEAR_CHUNKS - 1 ? len - at : TEAR_CHUNK;
		assert_int_equal(write(fd, v + at, n), (ssize_t)n);
	}
}

int __wrap_readfile_bounded(const char *path, size_t max, bool nofollow, char **out, size_t *len)
{
	if (!tear.armed || strcmp(path, tear.path) != 0)
		return __real_readfile_bounded(path, max, nofollow, out, len);
	tear.armed = false;
	size_t vlen;
	char *v = tear_version(tear.name, &vlen);
	int fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	write_chunks(fd, v, vlen, 0, tear.split);
	int rc = __real_readfile_bounded(path, max, nofollow, out, len);
	write_chunks(fd, v, vlen, tear.split, TEAR_CHUNKS);
	close(fd);
	free(v);
	return rc;
}

static void test_torn_read_read_again(void **state)
{
	char path[] = "/tmp/bs-conf-torn-XXXXXX";
	static const char *const names[] = {"a", "bbbbbbbbbbbbbbbbbb"};
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t vlen;
	char *v = tear_version(names[1], &vlen);
	assert_int_equal(write(fd, v, vlen), (ssize_t)vlen);
	close(fd);
	free(v);
	tear.path = path;
	/* Every split point, each rewrite a version of a new name: a torn
	 * read taken would show "first" alone, or the name before. */
	for (unsigned i = 0; i < 2 * (TEAR_CHUNKS - 1); i++) {
		tear.split = 1 + i % (TEAR_CHUNKS - 1);
		tear.name = names[i % 2];
		tear.armed = true;
		struct config *c = config_load(path, NULL, "/p", err, sizeof(err));
		assert_false(tear.armed);
		if (!c)
			fail_msg("load %u (split after %u of %u writes): %s", i, tear.split,
				 TEAR_CHUNKS, err);
		if (c->ncollectors != 2 || strcmp(c->collector[1].name, tear.name) != 0)
			fail_msg("load %u (split after %u of %u writes): a torn version taken "
				 "(%zu collectors, the last %s)",
				 i, tear.split, TEAR_CHUNKS, c->ncollectors,
				 c->collector[c->ncollectors - 1].name);
		config_free(c);
	}
	unlink(path);
}

/* A large flat mapping loads in time in proportion to its size, and a
 * duplicate key among many is still refused with its place: a scan of
 * every earlier key made 50,000 keys take 5.6 s. 49,000 keys: 98,001
 * nodes, under the node cap. */
static void test_many_keys_load_fast(void **state)
{
	const size_t nkeys = 49000, size = nkeys * 16 + 32;
	char *text = malloc(size);
	size_t at = 0;
	struct timespec t0, t1;
	(void)state;

	assert_non_null(text);
	for (size_t i = 0; i < nkeys; i++)
		at += (size_t)snprintf(text + at, size - at, "k%zu: %zu\n", i, i);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct conf_doc *doc = conf_load("t.yml", text, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("%zu keys loaded in %.3f s\n", nkeys, s);
	if (!doc)
		fail_msg("%zu keys refused: %s", nkeys, err);
	assert_int_equal(doc->root->n, nkeys);
	conf_free(doc);
	assert_true(s < 1.0);

	at -= strlen("k48999: 48999\n");
	snprintf(text + at, size - at, "k17: 17\n");
	doc = conf_load("t.yml", text, err, sizeof(err));
	assert_null(doc);
	assert_non_null(strstr(err, "t.yml:49000:1: duplicate key 'k17'"));
	free(text);
}

/* Under a reload's settle rule a file is taken only once its mtime is a
 * second old; one that never waits says "still being written" and marks
 * the rule, so that a request can try again later. An mtime far in the
 * future (a clock set back) tells nothing and counts as settled. */
static void test_settle_rule(void **state)
{
	char path[] = "/tmp/bs-conf-settle-XXXXXX";
	struct timespec now;
	struct conf_settle settle;
	(void)state;

	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "collectors:\n  a: {}\n", 20), 20);
	close(fd);
	conf_settle_init(&settle, 0);
	assert_null(config_load_settled(path, &settle, "/p", err, sizeof(err)));
	assert_true(settle.unsettled);
	assert_non_null(strstr(err, "still being written: changed less than 1 s ago"));
	/* Without a rule (start, --check-config), the file as it is. */
	struct config *c = config_load(path, NULL, "/p", err, sizeof(err));
	assert_non_null(c);
	config_free(c);

	/* 2 s old: settled. The second before this one, stamped as a file
	 * system that keeps seconds only stamps it: it may have been written
	 * up to a second later, so not yet (read without the rule for whole
	 * seconds, over a second old). 5 s ahead: settled. Not in the last
	 * tenth of a second, so that no second ends before the loads. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_nsec > 900000000) {
		nanosleep(&(struct timespec){0, 1000000000 - now.tv_nsec}, NULL);
		clock_gettime(CLOCK_REALTIME, &now);
	}
	const struct {
		time_t offset;
		bool taken;
	} cases[] = {{-2, true}, {-1, false}, {5, true}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct timespec t[2] = {now, now};
		t[0].tv_sec += cases[i].offset;
		t[1].tv_sec += cases[i].offset;
		t[1].tv_nsec = cases[i].offset == -1 ? 0 : t[1].tv_nsec;
		assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
		conf_settle_init(&settle, 0);
		c = config_load_settled(path, &settle, "/p", err, sizeof(err));
		if ((c != NULL) != cases[i].taken)
			fail_msg("mtime %+ld s: %s", (long)cases[i].offset, c ? "taken" : err);
		assert_int_equal(settle.unsettled, !cases[i].taken);
		config_free(c);
	}
	unlink(path);
}

static void test_getters(void **state)
{
	(void)state;
	struct config *c = load("collectors:\n  x:\n    n: 12\n    neg: -1\n    f: 0.5\n"
				"    s: hi\n    b: yes\n");
	const struct conf_node *x = config_find(c, "x")->node;
	uint64_t u = 0;
	double f = 0;
	const char *s = NULL;
	bool b = false;
	assert_int_equal(conf_get_u64(x, "n", 0, 100, &u), 0);
	assert_int_equal(u, 12);
	assert_int_equal(conf_get_u64(x, "missing", 0, 100, &u), -ENOENT);
	assert_int_equal(conf_get_f64(x, "f", 0, 1, &f), 0);
	assert_true(f == 0.5);
	assert_int_equal(conf_get_str(x, "s", &s), 0);
	assert_string_equal(s, "hi");
	assert_int_equal(conf_get_bool(x, "b", &b), 0);
	assert_true(b);
	assert_int_equal(conf_get_u64(x, "neg", 0, 100, &u), -EINVAL);
	assert_non_null(strstr(c->doc->err, "t.yml:4:10: 'neg' must be a whole number"));
	config_free(c);
}

/* s64 and u64 read exactly over their whole range:
 * 2^53 + 1 through a double would be 2^53. */
static void test_integer_getters_exact(void **state)
{
	(void)state;
	struct config *c = load("collectors:\n  x:\n    a: 9007199254740993\n"
				"    max: 9223372036854775807\n    min: -9223372036854775808\n"
				"    umax: 18446744073709551615\n    over: 9223372036854775808\n"
				"    plus: '+1'\n    blank: ' 1'\n    frac: 1.0\n    exp: 1e3\n");
	const struct conf_node *x = config_find(c, "x")->node;
	int64_t i = 0;
	uint64_t u = 0;

	assert_int_equal(conf_get_i64(x, "a", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == 9007199254740993LL);
	assert_int_equal(conf_get_u64(x, "a", 0, UINT64_MAX, &u), 0);
	assert_true(u == 9007199254740993ULL);
	assert_int_equal(conf_get_i64(x, "max", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(conf_get_i64(x, "min", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(conf_get_u64(x, "umax", 0, UINT64_MAX, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(conf_get_i64(x, "missing", 0, 1, &i), -ENOENT);
	assert_int_equal(conf_get_i64(x, "a", 0, 9007199254740992LL, &i), -EINVAL);
	assert_non_null(strstr(c->doc->err, "t.yml:3:8: 'a' must be between 0 and "
					    "9007199254740992, not 9007199254740993"));
	static const char *const bad[] = {"over", "plus", "blank", "frac", "exp"};
	for (size_t k = 0; k < 5; k++) {
		c->doc->has_err = false;
		assert_int_equal(conf_get_i64(x, bad[k], INT64_MIN, INT64_MAX, &i), -EINVAL);
		assert_non_null(strstr(c->doc->err, "must be a whole number"));
	}
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_and_values),
	    cmocka_unit_test(test_collector_view),
	    cmocka_unit_test(test_errors_have_positions),
	    cmocka_unit_test(test_hostile_yaml),
	    cmocka_unit_test(test_empty_file_refused),
	    cmocka_unit_test(test_second_document_refused),
	    cmocka_unit_test(test_deep_nesting_refused_at_once),
	    cmocka_unit_test(test_torn_read_read_again),
	    cmocka_unit_test(test_many_keys_load_fast),
	    cmocka_unit_test(test_settle_rule),
	    cmocka_unit_test(test_getters),
	    cmocka_unit_test(test_integer_getters_exact),
	};
	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
