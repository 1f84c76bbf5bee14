/* Series identity: a hash collision between two label sets never makes one
 * of them a duplicate; the same labels in another order are one series. */
#include "helpers.h"

#include "seriesset.h"

/* Splits a block as the emitter writes it into its labels. */
static size_t split(const char *block, size_t n, struct seriesset_label *l)
{
	const char *p = block;
	for (size_t i = 0; i < n; i++) {
		const char *q = strchr(p, '"') + 1;
		while (*q != '"')
			q += *q == '\\' ? 2 : 1;
		l[i] = (struct seriesset_label){p, (size_t)(q + 1 - p)};
		p = q + 2;
	}
	return n;
}

static void test_collision_keeps_both(void **state)
{
	struct seriesset s = {0};
	struct seriesset_label a[2], b[2], a_swapped[2], a_prefix[1], q1[2], q2[2];
	(void)state;
	split("vm=\"web1\",vcpu=\"0\"", 2, a);
	split("vm=\"web2\",vcpu=\"0\"", 2, b);
	split("vcpu=\"0\",vm=\"web1\"", 2, a_swapped);
	split("vm=\"web1\"", 1, a_prefix);
	/* Escaped quotes and commas inside values are not label boundaries. */
	split("vm=\"a\\\",b=\\\"c\",x=\"1\"", 2, q1);
	split("vm=\"a\",b=\"c\",x=\"1\"", 2, q2);

	/* Every one forced onto the same hash: only the texts tell them apart. */
	assert_int_equal(seriesset_add(&s, 42, a, 2), 1);
	assert_int_equal(seriesset_add(&s, 42, b, 2), 1);
	assert_int_equal(seriesset_add(&s, 42, a_prefix, 1), 1);
	assert_int_equal(seriesset_add(&s, 42, a, 2), 0);
	assert_int_equal(seriesset_add(&s, 42, a_swapped, 2), 0);
	assert_int_equal(seriesset_add(&s, 42, b, 2), 0);
	assert_int_equal(seriesset_add(&s, 42, q1, 2), 1);
	assert_int_equal(seriesset_add(&s, 42, q2, 2), 1);
	assert_int_equal(seriesset_add(&s, 42, q1, 2), 0);
	assert_int_equal(s.used, 5);
	seriesset_clear(&s);
	assert_int_equal(seriesset_add(&s, 42, a, 2), 1);
	seriesset_free(&s);
}

static void test_many_colliding(void **state)
{
	struct seriesset s = {0};
	char text[32];
	(void)state;

	/* 5,000 series on one hash, through table growth and arena growth. */
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(text, sizeof(text), "id=\"%d\"", i);
		struct seriesset_label l = {text, (size_t)n};
		assert_int_equal(seriesset_add(&s, 7, &l, 1), 1);
	}
	for (int i = 0; i < 5000; i += 499) {
		int n = snprintf(text, sizeof(text), "id=\"%d\"", i);
		struct seriesset_label l = {text, (size_t)n};
		assert_int_equal(seriesset_add(&s, 7, &l, 1), 0);
	}
	seriesset_free(&s);
}

/* Series whose hashes share the first group and the control byte (they
 * differ only in the middle bits) fill that group, go on past the table's
 * end into the first ones, and are each still found as themselves. */
static void test_full_groups_wrap(void **state)
{
	struct seriesset s = {0};
	char text[32];
	(void)state;

	assert_int_equal(seriesset_add(&s, 1, NULL, 0), 1); /* the table, 64 slots */
	uint64_t last_group = s.cap - 8;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t k = 1; k <= 30; k++) {
			int n = snprintf(text, sizeof(text), "id=\"%d\"", (int)k);
			struct seriesset_label l = {text, (size_t)n};
			assert_int_equal(seriesset_add(&s, last_group | k << 20, &l, 1), pass == 0);
		}
	}
	assert_int_equal(s.cap, 64);
	assert_int_equal(s.used, 31);
	for (size_t i = 0; i < 8; i++) /* wrapped into the first group */
		assert_int_not_equal(s.ctrl[i], 0);
	seriesset_free(&s);
}

static int add_id(struct seriesset *s, int i)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "id=\"%d\"", i);
	struct seriesset_label l = {text, (size_t)n};
	return seriesset_add(s, (uint64_t)i * 0x9E3779B97F4A7C15ull, &l, 1);
}

/* A clear empties the set, keeping its table; what it held is gone and
 * what comes after is placed anew; a trim frees only what the last
 * families left unused. */
static void test_clear_keeps_table_trim_frees(void **state)
{
	struct seriesset s = {0};
	(void)state;

	for (int i = 0; i < 20000; i++)
		assert_int_equal(add_id(&s, i), 1);
	size_t cap = s.cap;
	seriesset_clear(&s);
	assert_int_equal(s.cap, cap);
	for (size_t i = 0; i < s.cap; i++)
		assert_int_equal(s.ctrl[i], 0);
	assert_int_equal(add_id(&s, 5), 1); /* gone with the clear */
	assert_int_equal(add_id(&s, 5), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(add_id(&s, i), 1);
	seriesset_clear(&s); /* four in a large table: only their slots zeroed */
	for (size_t i = 0; i < s.cap; i++)
		assert_int_equal(s.ctrl[i], 0);
	for (int i = 0; i < 20000; i += 1000)
		assert_int_equal(add_id(&s, i), 1);

	seriesset_trim(&s); /* 20,000 were in one family since the last trim */
	assert_int_equal(s.cap, cap);
	assert_int_equal(add_id(&s, 1), 1);
	seriesset_trim(&s); /* only small families since */
	assert_null(s.ctrl);
	assert_null(s.arena);
	assert_int_equal(add_id(&s, 1), 1);
	assert_int_equal(add_id(&s, 1), 0);
	seriesset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_collision_keeps_both),
	    cmocka_unit_test(test_many_colliding),
	    cmocka_unit_test(test_full_groups_wrap),
	    cmocka_unit_test(test_clear_keeps_table_trim_frees),
	};
	return cmocka_run_group_tests_name("seriesset", tests, NULL, NULL);
}
