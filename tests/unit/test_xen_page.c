/* The PV statistics pages: the name rule, tuples parsed up to type 0 or the
 * last page, bad tuples left out and counted, and values decoded. */
#include "helpers.h"

#include "xen_page.h"

struct rejects {
	char reason[64][16];
	int n;
};

static void reject(void *ctx, const char *reason)
{
	struct rejects *r = ctx;
	snprintf(r->reason[r->n++], 16, "%s", reason);
}

static void tuple(uint8_t *pages, size_t slot, uint8_t type, const char *name)
{
	pages[slot * 64] = type;
	memcpy(pages + slot * 64 + 1, name, strlen(name));
}

static void test_name_rule(void **state)
{
	size_t len;
	(void)state;
	assert_true(xen_name_valid("rx bytes (total) #0", 63, &len));
	assert_int_equal(len, 19);
	assert_false(xen_name_valid("", 63, &len));
	assert_false(xen_name_valid("tab\there", 63, &len));
	assert_false(xen_name_valid("caf\xc3\xa9", 63, &len)); /* not ASCII */
	char full[63];
	memset(full, 'x', sizeof(full)); /* 63 bytes, no NUL */
	assert_false(xen_name_valid(full, 63, &len));
	full[62] = '\0';
	assert_true(xen_name_valid(full, 63, &len));
	assert_int_equal(len, 62);
}

static void test_parse(void **state)
{
	uint8_t *pages = calloc(2, PVSTATS_PAGE_SIZE);
	struct xen_tuple out[128];
	struct rejects r = {0};
	(void)state;
	tuple(pages, 0, PVSTATS_U64, "bytes");
	tuple(pages, 1, 9, "future");		     /* unknown type */
	tuple(pages, 2, PVSTATS_S64, "bad\x01name"); /* forbidden character */
	tuple(pages, 3, PVSTATS_ASCII, "link");
	memset(pages + 4 * 64 + 1, 'n', 63); /* no NUL in the 63 bytes */
	pages[4 * 64] = PVSTATS_DOUBLE;
	tuple(pages, 5, PVSTATS_DOUBLE, "load");
	tuple(pages, 7, PVSTATS_U64, "after the end"); /* slot 6 is type 0 */
	size_t n = xen_parse_names(pages, 2, out, reject, &r);
	assert_int_equal(n, 3);
	assert_string_equal(out[0].name, "bytes");
	assert_int_equal(out[0].slot, 0);
	assert_string_equal(out[1].name, "link");
	assert_int_equal(out[1].slot, 3); /* the value is at the tuple's own offset */
	assert_int_equal(out[2].slot, 5);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.reason[0], "unknown_type");
	assert_string_equal(r.reason[1], "bad_name");
	assert_string_equal(r.reason[2], "bad_name");

	/* Full pages: the list ends with the last page, not at a type 0. */
	memset(pages, 0, 2 * PVSTATS_PAGE_SIZE);
	for (size_t i = 0; i < 128; i++)
		tuple(pages, i, PVSTATS_U64, "s");
	assert_int_equal(xen_parse_names(pages, 2, out, reject, &r), 128);
	assert_int_equal(out[127].slot, 127);
	free(pages);
}

static void test_values(void **state)
{
	uint8_t slot[64] = {0x01, 0x02, 0, 0, 0, 0, 0, 0x80};
	const char *text;
	(void)state;
	assert_true(xen_value_u64(slot) == 0x8000000000000201ull);
	memset(slot, 0, sizeof(slot));
	memcpy(slot, "up, 10Gb/s", 10);
	assert_true(xen_value_ascii(slot, &text));
	assert_string_equal(text, "up, 10Gb/s");
	memset(slot, 0, sizeof(slot));
	assert_true(xen_value_ascii(slot, &text)); /* empty is a value */
	memset(slot, 'z', sizeof(slot));	   /* 64 bytes, no NUL */
	assert_false(xen_value_ascii(slot, &text));
	memcpy(slot, "a\nb", 4);
	assert_false(xen_value_ascii(slot, &text));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_name_rule),
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
