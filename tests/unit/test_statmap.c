/* The shared mapping rules: YAML rules read and checked, matching in order,
 * name templates, sanitizing free text, and collisions made unique. */
#include "helpers.h"

#include "conftree.h"
#include "statmap.h"

static const char *const keys[] = {"module", "title", "stat"};

struct loaded {
	struct conf_doc *doc;
	struct statmap map;
	int rc;
};

static void load(struct loaded *l, const char *yaml)
{
	char err[CONF_ERR_MAX];
	l->doc = conf_load("t.yml", yaml, err, sizeof(err));
	assert_non_null(l->doc);
	const struct bs_conf *rules = l->doc->root->pub.ops->child(&l->doc->root->pub, "rules");
	l->rc = statmap_init(&l->map, rules, keys, 3);
	if (l->rc == 0)
		l->rc = conf_check_unused(l->doc->root);
}

static void unload(struct loaded *l)
{
	statmap_free(&l->map);
	conf_free(l->doc);
}

static void test_sanitize(void **state)
{
	char out[STATMAP_NAME_BUF];
	(void)state;
	assert_int_equal(statmap_sanitize("Rx Bytes (total)", out, sizeof(out)), 14);
	assert_string_equal(out, "rx_bytes_total");
	statmap_sanitize("  --weird__name--  ", out, sizeof(out));
	assert_string_equal(out, "weird_name");
	statmap_sanitize("caf\xc3\xa9 cr\xc3\xa8me", out, sizeof(out));
	assert_string_equal(out, "caf_cr_me");
	statmap_sanitize("!!!", out, sizeof(out));
	assert_string_equal(out, "");
	statmap_sanitize("abc def", out, 5); /* no room for "_d" after "abc" */
	assert_string_equal(out, "abc");
	statmap_sanitize("abcdef", out, 4);
	assert_string_equal(out, "abc");
}

static void test_expand(void **state)
{
	struct statmap m = {.keys = keys, .nkeys = 3};
	const char *v[] = {"dci4-netdev", "eth0", "RX bytes"};
	char out[STATMAP_NAME_BUF];
	(void)state;
	assert_int_equal(statmap_expand(&m, "dci_{module}_{stat}", v, NULL, out), 0);
	assert_string_equal(out, "dci_dci4_netdev_rx_bytes");
	assert_int_equal(statmap_expand(&m, "net_{stat}", v, "bytes", out), 0);
	assert_string_equal(out, "net_rx_bytes"); /* already ends in the unit */
	assert_int_equal(statmap_expand(&m, "net_{stat}", v, "seconds", out), 0);
	assert_string_equal(out, "net_rx_bytes_seconds");
	const char *digit[] = {"m", "t", "5min load"};
	assert_int_equal(statmap_expand(&m, "{stat}", digit, NULL, out), 0);
	assert_string_equal(out, "_5min_load");
	assert_int_equal(statmap_expand(&m, "x_{nope}", v, NULL, out), -EINVAL);
	assert_int_equal(statmap_expand(&m, "bad-name", v, NULL, out), -ERANGE);
	const char *empty[] = {"", "", "***"};
	assert_int_equal(statmap_expand(&m, "{stat}", empty, NULL, out), -ERANGE);
	char long_stat[400];
	memset(long_stat, 'a', sizeof(long_stat) - 1);
	long_stat[sizeof(long_stat) - 1] = '\0';
	const char *lv[] = {"m", "t", long_stat};
	/* Past the name's limit the statistic's part is cut, not the name refused. */
	assert_int_equal(statmap_expand(&m, "x_{stat}", lv, NULL, out), 0);
	assert_int_equal(strlen(out), STATMAP_NAME_MAX);
	assert_memory_equal(out, "x_aaaa", 6);
	assert_int_equal(statmap_expand(&m, "x_{stat}", lv, "bytes", out), 0);
	assert_int_equal(strlen(out), STATMAP_NAME_MAX);
	assert_string_equal(out + STATMAP_NAME_MAX - 6, "_bytes");
	/* Two long parts share what is left; a cut part never ends in '_'. */
	char spaced[300];
	for (size_t i = 0; i < sizeof(spaced) - 1; i++)
		spaced[i] = i % 10 == 9 ? ' ' : 'b';
	spaced[sizeof(spaced) - 1] = '\0';
	const char *two[] = {spaced, "t", long_stat};
	assert_int_equal(statmap_expand(&m, "{module}_{stat}", two, NULL, out), 0);
	assert_true(strlen(out) <= STATMAP_NAME_MAX && strlen(out) > STATMAP_NAME_MAX - 12);
	assert_null(strstr(out, "__"));
	assert_non_null(strstr(out, "_aaaaaaaaaaaaaaaaaaaa"));
	/* A template whose fixed text leaves less than STATMAP_PART_MIN bytes. */
	char tmpl[STATMAP_NAME_MAX];
	memset(tmpl, 'x', sizeof(tmpl));
	memcpy(tmpl + STATMAP_NAME_MAX - 16, "_{stat}", 8); /* 185 fixed bytes */
	assert_int_equal(statmap_expand(&m, tmpl, lv, NULL, out), -ERANGE);
}

static void test_help(void **state)
{
	struct statmap m = {.keys = keys, .nkeys = 3};
	const char *v[] = {"dci4-netdev", "eth0", "RX bytes"};
	char out[64];
	(void)state;
	statmap_help(&m, "{stat} of {title} ({nope}) {", v, out, sizeof(out));
	assert_string_equal(out, "RX bytes of eth0 ({nope}) {");
	statmap_help(&m, "{module}{module}{module}", v, out, 20);
	assert_string_equal(out, "dci4-netdevdci4-net");
}

static void test_rules(void **state)
{
	struct loaded l;
	(void)state;
	load(&l, "rules:\n"
		 "  - match: {module: dci4-netdev, stat: 'rx_*'}\n"
		 "    name: 'node_net_{stat}'\n"
		 "    type: counter\n"
		 "    unit: bytes\n"
		 "    help: Received.\n"
		 "  - match: {stat: 'junk*'}\n"
		 "    drop: true\n"
		 "  - match: {module: 'dci4-*'}\n"
		 "    type: gauge\n"
		 "    scale: 0.01\n");
	assert_int_equal(l.rc, 0);
	assert_int_equal(l.map.n, 3);
	const char *rx[] = {"dci4-netdev", "eth0", "rx_bytes"};
	const struct statmap_rule *r = statmap_match(&l.map, rx);
	assert_ptr_equal(r, &l.map.rule[0]);
	assert_true(r->typed);
	assert_int_equal(r->type, BS_COUNTER);
	assert_string_equal(r->help, "Received.");
	const char *junk[] = {"dci4-netdev", "eth0", "junk1"};
	assert_true(statmap_match(&l.map, junk)->drop);
	const char *tx[] = {"dci4-netdev", "eth0", "tx_bytes"};
	r = statmap_match(&l.map, tx);
	assert_ptr_equal(r, &l.map.rule[2]);
	assert_true(r->scale == 0.01);
	assert_null(r->name);
	const char *other[] = {"other", "x", "rx_bytes"};
	r = statmap_match(&l.map, other);
	assert_ptr_equal(r, &l.map.fallback);
	assert_false(r->typed);
	assert_true(r->scale == 1);
	unload(&l);
}

static void expect_error(const char *yaml, const char *msg)
{
	struct loaded l;
	load(&l, yaml);
	assert_int_equal(l.rc, -EINVAL);
	if (!strstr(l.doc->err, msg))
		fail_msg("error '%s' lacks '%s'", l.doc->err, msg);
	unload(&l);
}

static void test_rule_errors(void **state)
{
	(void)state;
	expect_error("rules: {a: 1}\n", "t.yml:1:8: rules must be a list");
	expect_error("rules:\n  - 5\n", "a rule must be a mapping");
	expect_error("rules:\n  - match: x\n", "match must be a mapping");
	expect_error("rules:\n  - match: {colour: red}\n", "unknown key 'colour'");
	expect_error("rules:\n  - type: histogram\n", "type must be counter, gauge or unknown");
	expect_error("rules:\n  - unit: Bytes\n", "unit must be");
	expect_error("rules:\n  - scale: 0\n", "scale must not be 0");
	expect_error("rules:\n  - name: 'x_{colour}'\n",
		     "t.yml:2:11: name: a placeholder is not one of {module}, {title}, {stat}");
	expect_error("rules:\n  - name: 'a-b'\n", "name must make a valid metric name");
	expect_error("rules:\n  - nmae: x\n", "unknown key 'nmae'");
}

static void test_unique(void **state)
{
	char buf[6][STATMAP_NAME_BUF] = {"rx", "rx", "tx", "", "rx_1", "rx"};
	char *names[6];
	(void)state;
	for (int i = 0; i < 6; i++)
		names[i] = buf[i];
	assert_int_equal(statmap_unique(names, 6), 3);
	assert_string_equal(names[0], "rx");
	assert_string_equal(names[1], "rx_1");
	assert_string_equal(names[2], "tx");
	assert_string_equal(names[3], "");
	assert_string_equal(names[4], "rx_1_4"); /* its own name was taken by 1 */
	assert_string_equal(names[5], "rx_5");

	/* A long name keeps its suffix: the base is cut. */
	char a[STATMAP_NAME_BUF], b[STATMAP_NAME_BUF];
	memset(a, 'n', STATMAP_NAME_MAX);
	a[STATMAP_NAME_MAX] = '\0';
	memcpy(b, a, sizeof(a));
	char *two[] = {a, b};
	assert_int_equal(statmap_unique(two, 2), 1);
	assert_int_equal(strlen(b), STATMAP_NAME_MAX);
	assert_string_equal(b + STATMAP_NAME_MAX - 2, "_1");

	/* 5,000 equal names: all distinct afterwards, and the same every time. */
	enum { N = 5000 };
	char(*many)[STATMAP_NAME_BUF] = calloc(N, STATMAP_NAME_BUF);
	char **p = calloc(N, sizeof(char *));
	for (int i = 0; i < N; i++) {
		snprintf(many[i], STATMAP_NAME_BUF, "same");
		p[i] = many[i];
	}
	assert_int_equal(statmap_unique(p, N), N - 1);
	assert_string_equal(p[4321], "same_4321");
	for (int i = 1; i < N; i++)
		assert_string_not_equal(p[i], p[i - 1]);
	free(many);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sanitize),	cmocka_unit_test(test_expand),
	    cmocka_unit_test(test_help),	cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_rule_errors), cmocka_unit_test(test_unique),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
