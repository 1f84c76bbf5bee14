/* lib/vstats' stats(3) text and blob utilities: u64
 * VOIs past 2^63, the template hash, the three template spec forms,
 * stats_tpl_sample_rates' input with every malformed case, and
 * stats_blob_visit's order and flags. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "vstats.h"

#define U(x) ((struct vstats_value){VSTATS_UINT, {.u = (x)}})

/* A u64 VOI takes values past 2^63 exactly: they neither wrap (negative
 * as an s64) nor are refused; its sum stops at 2^64-1 and counts the
 * update it could not take in errs (stats(3)'s u64 sums wrap there). */
static void test_u64_voi(void **state)
{
	const struct vstats_bucket usr[] = {{U(0), U(0)}, {U(1ull << 63), U(0)}};
	const struct vstats_bucket vals[] = {{U(UINT64_MAX - 1), U(UINT64_MAX - 1)}};
	const struct vstats_spec specs[] = {
	    {.stype = VSTATS_SUM},
	    {.stype = VSTATS_MAX},
	    {.stype = VSTATS_MIN},
	    {.stype = VSTATS_CRHIST, .hist = {.scheme = VSTATS_USR, .usr = usr, .nusr = 2}},
	    {.stype = VSTATS_DVHIST, .hist = {.scheme = VSTATS_USR, .usr = vals, .nusr = 1}},
	};
	struct vstats_voi v;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_UINT, true, specs, 5, &why), 0);
	assert_int_equal(vstats_update_abs(&v, U((1ull << 63) + 5)), 0);
	assert_int_equal(vstats_update_abs(&v, U(7)), 0);
	assert_int_equal(vstats_update_abs(&v, U(UINT64_MAX - 1)), 0);
	assert_true(v.stat[0].v.u == UINT64_MAX); /* 2^64 + 2^63 + 10 saturated */
	assert_int_equal(v.stat[0].errs, 1);
	assert_true(v.stat[1].v.u == UINT64_MAX - 1);
	assert_true(v.stat[2].v.u == 7);
	/* [0, 2^63) and [2^63, 2^64-1): the large values in the upper bucket */
	assert_int_equal(v.stat[3].hist.count[0], 1);
	assert_int_equal(v.stat[3].hist.count[1], 2);
	assert_int_equal(v.stat[4].hist.count[0], 1);
	/* relative: the previous value plus the increase, exactly */
	assert_int_equal(vstats_update_abs(&v, U(1ull << 63)), 0);
	assert_int_equal(vstats_update_rel(&v, U(3)), 0);
	assert_true(v.prev.u == (1ull << 63) + 3);
	assert_int_equal(vstats_update_abs(&v, (struct vstats_value){VSTATS_INT, {.i = 1}}),
			 -EINVAL);
	vstats_voi_reset(&v);
	assert_true(v.stat[1].v.u == 0 && v.stat[2].v.u == UINT64_MAX);
	vstats_voi_free(&v);
}

/* The hash is FreeBSD's hash32 over name, VOI name and schema: the same
 * for the same template, another for any change. */
static void test_tpl_hash(void **state)
{
	const struct vstats_spec a[] = {{.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}};
	const struct vstats_spec b[] = {{.stype = VSTATS_SUM}, {.stype = VSTATS_MIN}};
	const struct vstats_spec c[] = {{.stype = VSTATS_TDGST, .compression = 100}};
	const struct vstats_spec d[] = {{.stype = VSTATS_TDGST, .compression = 200}};
	const struct vstats_spec e[] = {
	    {.stype = VSTATS_TDGST, .compression = 100, .tdgst_counts32 = true}};
	(void)state;

	uint32_t h = vstats_tpl_hash("t", "v", VSTATS_INT, false, a, 2);
	assert_int_equal(h, vstats_tpl_hash("t", "v", VSTATS_INT, false, a, 2));
	assert_int_not_equal(h, vstats_tpl_hash("u", "v", VSTATS_INT, false, a, 2));
	assert_int_not_equal(h, vstats_tpl_hash("t", "w", VSTATS_INT, false, a, 2));
	assert_int_not_equal(h, vstats_tpl_hash("t", "v", VSTATS_UINT, false, a, 2));
	assert_int_not_equal(h, vstats_tpl_hash("t", "v", VSTATS_INT, true, a, 2));
	assert_int_not_equal(h, vstats_tpl_hash("t", "v", VSTATS_INT, false, b, 2));
	assert_int_not_equal(vstats_tpl_hash("t", "v", VSTATS_INT, false, c, 1),
			     vstats_tpl_hash("t", "v", VSTATS_INT, false, d, 1));
	/* a TDGSTCLUST32 is another template; a digest that does not ask
	 * for one hashes as before counts: 32 existed */
	assert_int_equal(vstats_tpl_hash("t", "v", VSTATS_INT, false, c, 1), 2933007977u);
	assert_int_not_equal(vstats_tpl_hash("t", "v", VSTATS_INT, false, c, 1),
			     vstats_tpl_hash("t", "v", VSTATS_INT, false, e, 1));
}

static void expect_spec(const char *text, const char *name, uint32_t hash)
{
	struct vstats_tplspec s;
	const char *why;

	assert_int_equal(vstats_tplspec_parse(text, strlen(text), &s, &why), 0);
	assert_string_equal(s.name, name);
	assert_int_equal(s.hash, hash);
}

static void expect_bad_spec(const char *text, size_t len)
{
	struct vstats_tplspec s;
	const char *why = NULL;

	assert_int_equal(vstats_tplspec_parse(text, len, &s, &why), -EINVAL);
	assert_non_null(why);
}

/* stats(3)'s three forms; quotes optional; anything else refused. */
static void test_tplspec(void **state)
{
	char longname[200];
	(void)state;

	expect_spec("\"TCP_DEFAULT\":1731235399", "TCP_DEFAULT", 1731235399);
	expect_spec("TCP_DEFAULT:1731235399", "TCP_DEFAULT", 1731235399);
	expect_spec("\"TCP_DEFAULT\"", "TCP_DEFAULT", 0);
	expect_spec("TCP_DEFAULT", "TCP_DEFAULT", 0);
	expect_spec(":4294967295", "", 4294967295u);
	expect_bad_spec("", 0);
	expect_bad_spec("\"\"", 2);
	expect_bad_spec("t:", 2);
	expect_bad_spec("t:4294967296", 12);
	expect_bad_spec("t:-1", 4);
	expect_bad_spec("t:1x", 4);
	expect_bad_spec("t:1:2", 5);
	expect_bad_spec("a\"b", 3);
	expect_bad_spec("a\0b", 3);
	memset(longname, 'n', sizeof(longname));
	expect_bad_spec(longname, 129);
	expect_bad_spec("\"", 1); /* one quote is not a pair */
}

/* stats_tpl_sample_rates' spec=pct list: blanks around pairs, a last
 * comma; the whole input must be pairs. */
static void test_rates(void **state)
{
	struct vstats_rate r[4];
	const char *why;
	size_t n;
	(void)state;

	assert_int_equal(vstats_rates_parse(" \"a\":12=50 , b=0,:7 = 100,\n", r, 4, &n, &why), 0);
	assert_int_equal(n, 3);
	assert_string_equal(r[0].spec.name, "a");
	assert_int_equal(r[0].spec.hash, 12);
	assert_int_equal(r[0].pct, 50);
	assert_string_equal(r[1].spec.name, "b");
	assert_int_equal(r[1].pct, 0);
	assert_int_equal(r[2].spec.hash, 7);
	assert_int_equal(r[2].pct, 100);
	assert_int_equal(vstats_rates_parse("  \n", r, 4, &n, &why), 0);
	assert_int_equal(n, 0);
	static const char *const bad[] = {
	    "a",       "a=",   "=5",	"a=101", "a=-1", "a=5x",	 "a=5,,b=1",
	    "a=5 b=6", ",a=1", "a=1,,", "a:x=1", "a==1", "a=4294967301",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(vstats_rates_parse(bad[i], r, 4, &n, &why), -EINVAL);
		assert_non_null(why);
	}
	assert_int_equal(vstats_rates_parse("a=1,b=2,c=3", r, 2, &n, &why), -EFBIG);
}

struct seen {
	int calls;
	uint32_t flags[8];
	enum vstats_stype stype[8];
	bool valid[8];
	int stop_at;
};

static int record(const struct vstats_visit *v, void *ctx)
{
	struct seen *s = ctx;

	s->flags[s->calls] = v->flags;
	s->stype[s->calls] = v->stat->stype;
	s->valid[s->calls] = v->valid;
	s->calls++;
	return s->calls == s->stop_at ? 42 : 0;
}

/* Every statistic of every VOI once, in order, the first and last marked,
 * valid once a value was taken; a non-zero return ends the visit. */
static void test_visit(void **state)
{
	const struct vstats_spec specs[] = {{.stype = VSTATS_SUM},
					    {.stype = VSTATS_MAX},
					    {.stype = VSTATS_TDGST, .compression = 50}};
	struct vstats_voi v[2];
	struct seen s = {0};
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v[0], VSTATS_INT, false, specs, 3, &why), 0);
	assert_int_equal(vstats_voi_init(&v[1], VSTATS_INT, false, specs, 1, &why), 0);
	vstats_update_abs(&v[1], (struct vstats_value){VSTATS_INT, {.i = 3}});
	assert_int_equal(vstats_blob_visit(v, 2, 99, record, &s), 0);
	assert_int_equal(s.calls, 4);
	assert_int_equal(s.flags[0],
			 VSTATS_IT_FIRST_CB | VSTATS_IT_FIRST_VOI | VSTATS_IT_FIRST_VOISTAT);
	assert_int_equal(s.flags[1], VSTATS_IT_FIRST_VOI);
	assert_int_equal(s.flags[2], VSTATS_IT_FIRST_VOI | VSTATS_IT_LAST_VOISTAT);
	assert_int_equal(s.flags[3], VSTATS_IT_LAST_CB | VSTATS_IT_LAST_VOI |
					 VSTATS_IT_FIRST_VOISTAT | VSTATS_IT_LAST_VOISTAT);
	assert_int_equal(s.stype[2], VSTATS_TDGST);
	assert_false(s.valid[0]);
	assert_true(s.valid[3]);
	s = (struct seen){.stop_at = 2};
	assert_int_equal(vstats_blob_visit(v, 2, 99, record, &s), 42);
	assert_int_equal(s.calls, 2);
	vstats_voi_free(&v[0]);
	vstats_voi_free(&v[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_u64_voi), cmocka_unit_test(test_tpl_hash),
	    cmocka_unit_test(test_tplspec), cmocka_unit_test(test_rates),
	    cmocka_unit_test(test_visit),
	};
	return cmocka_run_group_tests_name("vstats_blob", tests, NULL, NULL);
}
