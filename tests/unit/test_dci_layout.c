/* The DCI collector's layout: what each described statistic maps to, the
 * names it gets (collisions resolved), what is skipped and counted, and the
 * ranges a scrape reads. */
#include "helpers.h"

#include "dci_layout.h"

struct drops {
	char reason[16][32];
	int n;
};

static void record_drop(void *ctx, const char *reason)
{
	struct drops *d = ctx;
	snprintf(d->reason[d->n++], 32, "%s", reason);
}

static const char *const keys[] = {"module", "title", "supplier", "stat"};
static const uint8_t reset[8] = "RESET01";

static struct dci_layout *build(const struct dci4_desc *d, uint32_t n, const struct statmap *map,
				struct drops *drops)
{
	struct dci_layout *l = dci_layout_new(n - 1, reset, DCI_IVERSION_ADDRESS_TIME);
	assert_non_null(l);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(dci_layout_set(l, i, &d[i]), 0);
	assert_int_equal(
	    dci_layout_finish(l, map, "my-module", "eth0", "sup.eth0", record_drop, drops), 0);
	return l;
}

#define D(type, fmt, size, vol, name)                                                              \
	{                                                                                          \
		type, fmt, 0, size, vol, 0, 0, name                                                \
	}

static void test_kinds_and_names(void **state)
{
	static const struct dci4_desc d[] = {
	    D(ST_INTEGER64, SIF_UNSIGNED, 8, SV_VOLATILE, "RX Bytes"),
	    D(ST_INTEGER32, 0, 4, SV_VOLATILE, "rx-bytes"), /* the same name once sanitized */
	    D(ST_UNUSED, 0, 0, 0, ""),
	    D(ST_BOOLEAN, SBF_INVERTED, 4, SV_VARIABLE, "link"),
	    D(ST_STRING, 0, 16, SV_STATIC, "driver"),
	    D(ST_ADDRESS, SAF_ETHERNET, 8, SV_STATIC, "mac"),
	    D(ST_TIME, STF_CTIME, 8, SV_VARIABLE, "changed"),
	    D(42, 0, 4, SV_VOLATILE, "future type"),
	    D(ST_ADDRESS, 9, 4, SV_STATIC, "future address"),
	    D(ST_TIME, STF_MONOTONIC, 12, SV_VOLATILE, "bad monotonic"),
	};
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	struct drops drops = {0};
	(void)state;
	struct dci_layout *l = build(d, 10, &map, &drops);

	assert_int_equal(l->stat[0].kind, DCI_INT);
	assert_int_equal(l->stat[0].mtype, BS_UNKNOWN); /* DCI says nothing of counters */
	assert_string_equal(l->stat[0].metric, "dci_my_module_rx_bytes");
	assert_string_equal(l->stat[1].metric, "dci_my_module_rx_bytes_1");
	assert_int_equal(l->stat[2].kind, DCI_SKIP);
	assert_int_equal(l->stat[3].kind, DCI_BOOL);
	assert_int_equal(l->stat[3].mtype, BS_GAUGE);
	assert_int_equal(l->stat[4].kind, DCI_TEXT);
	assert_int_equal(l->stat[4].mtype, BS_INFO);
	assert_int_equal(l->stat[5].kind, DCI_TEXT);
	assert_int_equal(l->stat[6].kind, DCI_TIME);
	assert_string_equal(l->stat[6].metric, "dci_my_module_changed_seconds");
	assert_string_equal(l->stat[6].unit, "seconds");
	for (int i = 7; i < 10; i++)
		assert_int_equal(l->stat[i].kind, DCI_SKIP);
	assert_int_equal(drops.n, 3);
	assert_string_equal(drops.reason[0], "unknown_type");
	assert_string_equal(drops.reason[1], "unknown_format");
	assert_string_equal(drops.reason[2], "unknown_format");
	/* Offsets follow the sizes, skipped statistics included. */
	assert_int_equal(l->stat[3].offset, 12);
	assert_int_equal(l->value_bytes, 8 + 4 + 4 + 16 + 8 + 8 + 4 + 4 + 12);
	dci_layout_free(l);
}

/* Address and time statistics exist from interface 1.01: a 1.00 supplier's
 * are refused and counted, the rest of its statistics kept. */
static void test_interface_1_00_has_no_address_or_time(void **state)
{
	static const struct dci4_desc d[] = {
	    D(ST_INTEGER32, 0, 4, SV_VOLATILE, "packets"),
	    D(ST_ADDRESS, SAF_IP, 4, SV_STATIC, "ipv4"),
	    D(ST_TIME, STF_CTIME, 8, SV_VARIABLE, "changed"),
	    D(ST_STRING, 0, 16, SV_STATIC, "driver"),
	};
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	struct drops drops = {0};
	(void)state;
	struct dci_layout *l = dci_layout_new(3, reset, 100);
	assert_non_null(l);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(dci_layout_set(l, i, &d[i]), 0);
	assert_int_equal(dci_layout_finish(l, &map, "m", "t", "s", record_drop, &drops), 0);
	assert_int_equal(l->stat[0].kind, DCI_INT);
	assert_int_equal(l->stat[1].kind, DCI_SKIP);
	assert_int_equal(l->stat[2].kind, DCI_SKIP);
	assert_int_equal(l->stat[3].kind, DCI_TEXT);
	assert_int_equal(drops.n, 2);
	assert_string_equal(drops.reason[0], "type_needs_interface_1_01");
	assert_string_equal(drops.reason[1], "type_needs_interface_1_01");
	dci_layout_free(l);

	/* The same statistics from a 1.01 supplier are all taken. */
	memset(&drops, 0, sizeof(drops));
	l = dci_layout_new(3, reset, DCI_IVERSION_ADDRESS_TIME);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(dci_layout_set(l, i, &d[i]), 0);
	assert_int_equal(dci_layout_finish(l, &map, "m", "t", "s", record_drop, &drops), 0);
	assert_int_equal(l->stat[1].kind, DCI_TEXT);
	assert_int_equal(l->stat[2].kind, DCI_TIME);
	assert_int_equal(drops.n, 0);
	dci_layout_free(l);
}

static void test_runs(void **state)
{
	struct dci4_desc d[40];
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	struct drops drops = {0};
	(void)state;

	/* volatile, 300 bytes of statics, volatile, a small static, volatile */
	d[0] = (struct dci4_desc)D(ST_INTEGER64, 0, 8, SV_VOLATILE, "a");
	d[1] = (struct dci4_desc)D(ST_STRING, 0, 300, SV_STATIC, "big");
	d[2] = (struct dci4_desc)D(ST_INTEGER64, 0, 8, SV_VOLATILE, "b");
	d[3] = (struct dci4_desc)D(ST_INTEGER32, 0, 4, SV_STATIC, "small");
	d[4] = (struct dci4_desc)D(ST_INTEGER64, 0, 8, SV_VOLATILE, "c");
	struct dci_layout *l = build(d, 5, &map, &drops);
	assert_int_equal(l->nrun, 2);
	assert_int_equal(l->run[0].first, 0);
	assert_int_equal(l->run[0].last, 0);
	assert_int_equal(l->run[0].bytes, 8);
	assert_int_equal(l->run[1].first, 2); /* the small static read along */
	assert_int_equal(l->run[1].last, 4);
	assert_int_equal(l->run[1].bytes, 20);
	dci_layout_free(l);

	/* 20 volatiles each behind 300 bytes of static: too scattered, one range. */
	for (int i = 0; i < 40; i++)
		d[i] = i % 2 ? (struct dci4_desc)D(ST_STRING, 0, 300, SV_STATIC, "s")
			     : (struct dci4_desc)D(ST_INTEGER64, 0, 8, SV_VOLATILE, "v");
	l = build(d, 40, &map, &drops);
	assert_int_equal(l->nrun, 1);
	assert_int_equal(l->run[0].first, 0);
	assert_int_equal(l->run[0].last, 38);
	assert_int_equal(l->run[0].bytes, 20 * 8 + 19 * 300);
	dci_layout_free(l);

	/* Nothing but statics: nothing to read after the first time. */
	d[0] = (struct dci4_desc)D(ST_INTEGER64, 0, 8, SV_STATIC, "only");
	l = build(d, 1, &map, &drops);
	assert_int_equal(l->nrun, 0);
	dci_layout_free(l);
}

static void test_rules_applied(void **state)
{
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	struct statmap_rule rules[2] = {
	    {.match = {"my-*", NULL, NULL, "rx*"},
	     .name = "net_{title}_{stat}",
	     .unit = "bytes",
	     .type = BS_COUNTER,
	     .typed = true,
	     .scale = 1},
	    {.match = {NULL, NULL, NULL, "junk"}, .drop = true, .scale = 1},
	};
	static const struct dci4_desc d[] = {
	    D(ST_INTEGER64, SIF_UNSIGNED, 8, SV_VOLATILE, "rx"),
	    D(ST_INTEGER64, SIF_UNSIGNED, 8, SV_VOLATILE, "junk"),
	    D(ST_INTEGER64, SIF_UNSIGNED, 8, SV_VOLATILE, "tx"),
	};
	struct drops drops = {0};
	(void)state;
	map.rule = rules;
	map.n = 2;
	struct dci_layout *l = build(d, 3, &map, &drops);
	assert_string_equal(l->stat[0].metric, "net_eth0_rx_bytes");
	assert_int_equal(l->stat[0].mtype, BS_COUNTER);
	assert_int_equal(l->stat[1].kind, DCI_SKIP);
	assert_int_equal(drops.n, 0); /* a rule's drop is not a fault */
	assert_string_equal(l->stat[2].metric, "dci_my_module_tx");
	assert_int_equal(l->nrun, 1); /* across the dropped one: 8 bytes are no gap */
	assert_int_equal(l->run[0].bytes, 24);
	dci_layout_free(l);
}

static void test_same_and_caps(void **state)
{
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	struct dci4_desc d[2] = {D(ST_INTEGER64, 0, 8, SV_VOLATILE, "a"),
				 D(ST_INTEGER64, 0, 8, SV_VOLATILE, "b")};
	struct drops drops = {0};
	(void)state;
	struct dci_layout *a = build(d, 2, &map, &drops), *b = build(d, 2, &map, &drops);
	assert_true(dci_layout_same(a, b));
	dci_layout_free(b);
	snprintf(d[1].name, sizeof(d[1].name), "renamed");
	b = build(d, 2, &map, &drops);
	assert_false(dci_layout_same(a, b));
	dci_layout_free(b);
	dci_layout_free(a);

	/* More value bytes than one supplier may hold: refused. */
	struct dci_layout *big = dci_layout_new(299, reset, DCI_IVERSION_ADDRESS_TIME);
	struct dci4_desc s = D(ST_STRING, 0, DCI4_VALUE_MAX, SV_STATIC, "s");
	for (uint32_t i = 0; i < 300; i++)
		assert_int_equal(dci_layout_set(big, i, &s), 0);
	assert_int_equal(dci_layout_finish(big, &map, "m", "t", "s", record_drop, &drops), -E2BIG);
	dci_layout_free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds_and_names),
	    cmocka_unit_test(test_interface_1_00_has_no_address_or_time),
	    cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_rules_applied),
	    cmocka_unit_test(test_same_and_caps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
