/* PromQL-style series selectors: the forms, anchoring, escapes, and what
 * is refused. */
#include "helpers.h"

#include "selector.h"

static bool m(const char *sel, const char *name, const struct bs_label *l, size_t n)
{
	struct selector s;
	char err[256];
	if (selector_parse(&s, sel, err, sizeof(err)) < 0)
		fail_msg("'%s' refused: %s", sel, err);
	bool r = selector_match(&s, name, l, n);
	selector_free(&s);
	return r;
}

static void refused(const char *sel, const char *want)
{
	struct selector s;
	char err[256] = "";
	assert_int_equal(selector_parse(&s, sel, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("'%s': error '%s' lacks '%s'", sel, err, want);
}

static void test_forms(void **state)
{
	struct bs_label l[] = {{"vm", "web1"}, {"vcpu", "0"}};
	(void)state;

	assert_true(m("kvm_exits_total", "kvm_exits_total", l, 2));
	assert_false(m("kvm_exits_total", "kvm_exits", l, 2));
	assert_true(m("kvm_exits_total{vm=\"web1\"}", "kvm_exits_total", l, 2));
	assert_false(m("kvm_exits_total{vm=\"web2\"}", "kvm_exits_total", l, 2));
	assert_true(m("{__name__=~\"kvm_.*\", vcpu!=\"1\"}", "kvm_exits_total", l, 2));
	assert_true(m(" { __name__ =~ \"kvm_.*\" , vm !~ \"db.*\" , } ", "kvm_x", l, 2));
	/* regular expressions match the whole value, as in PromQL */
	assert_false(m("{__name__=~\"kvm\"}", "kvm_exits_total", l, 2));
	assert_true(m("{__name__=~\"kvm|xen\"}", "xen", l, 2));
	/* brackets and escapes hold literal characters */
	assert_true(m("{__name__=~\"k[+*{]?v\\\\+m\"}", "kv+m", l, 2));
	assert_true(m("{__name__=~\"(k(v(m)+)*)?_.+\"}", "kvm_x", l, 2));
	/* a label the series lacks is "" */
	assert_true(m("x{missing=\"\"}", "x", l, 2));
	assert_false(m("x{missing!=\"\"}", "x", l, 2));
	/* escapes in values */
	struct bs_label q[] = {{"path", "a\"b\\c"}};
	assert_true(m("x{path=\"a\\\"b\\\\c\"}", "x", q, 1));
}

static void test_refused(void **state)
{
	(void)state;
	refused("{}", "an empty value fails");
	refused("{a=\"\"}", "an empty value fails");
	refused("{a=~\".*\"}", "an empty value fails");
	refused("x{a=\"1\"", ", or } expected");
	refused("x{a=1}", "double-quoted value");
	refused("x{=\"1\"}", "a label name expected");
	refused("x{a==\"1\"}", "double-quoted value");
	refused("x{a=~\"(\"}", "bad regular expression");
	refused("x y", "a metric name or { expected");
	/* what would make glibc's regcomp copy trees without end */
	refused("x{a=~\"b++++++++++++++++++++++++++++++++++++++++++\"}",
		"a quantifier may not follow another");
	refused("x{a=~\"(a{99}){99}\"}", "bounded repetition");
	refused("x{a=~\"(((((((((a)))))))))\"}", "at most 8 deep");
	refused("x{a=\"1\"} y", "nothing may follow");
	refused(
	    "x{a=\"1\",a=\"2\",a=\"3\",a=\"4\",a=\"5\",a=\"6\",a=\"7\",a=\"8\",a=\"9\",a=\"10\","
	    "a=\"11\",a=\"12\",a=\"13\",a=\"14\",a=\"15\",a=\"16\"}",
	    "at most 16 matchers");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests_name("selector", tests, NULL, NULL);
}
