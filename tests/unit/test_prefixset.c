/* The set of series by prefix: duplicates found per prefix, a prefix met
 * again found again, own tables and arrays grown, every series moved into a
 * flat set as the whole label set it is, and a clear that forgets all. */
#include "helpers.h"

#include "prefixset.h"

/* A prefix block `dom="D",set="S"` and its labels. */
struct block {
	char text[64];
	struct seriesset_label l[2];
	uint64_t h;
};

static void make_prefix(struct block *b, int dom, int set)
{
	int a = snprintf(b->text, sizeof(b->text), "dom=\"%d\"", dom);
	int c = snprintf(b->text + a, sizeof(b->text) - (size_t)a, ",set=\"%d\"", set);
	b->l[0] = (struct seriesset_label){b->text, (size_t)a};
	b->l[1] = (struct seriesset_label){b->text + a + 1, (size_t)c - 1};
	b->h = (uint64_t)(dom * 1000 + set) * 0x9E3779B97F4A7C15ull;
}

static int add_stat(struct prefixset *p, int stat, uint64_t *h)
{
	char text[32];
	int n = snprintf(text, sizeof(text), "stat=\"%d\"", stat);
	struct seriesset_label l = {text, (size_t)n};
	*h = (uint64_t)(stat + 1) * 0xC2B2AE3D27D4EB4Full;
	return prefixset_add(p, *h, &l, 1);
}

static void test_by_prefix(void **state)
{
	struct prefixset p = {0};
	struct block b;
	uint64_t h;
	(void)state;

	for (int dom = 0; dom < 300; dom++) {
		make_prefix(&b, dom, dom % 3);
		assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
		/* 100 series: the own table grows from 16 slots */
		for (int s = 0; s < 100; s++)
			assert_int_equal(add_stat(&p, s, &h), 1);
		assert_int_equal(add_stat(&p, 7, &h), 0);
	}
	assert_int_equal(p.series, 30000);
	/* A prefix met again is the same prefix, with its series. */
	make_prefix(&b, 42, 0);
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	assert_int_equal(add_stat(&p, 99, &h), 0);
	assert_int_equal(add_stat(&p, 100, &h), 1);
	/* Same hash, other labels: another prefix. */
	struct block other;
	make_prefix(&other, 42, 1);
	assert_int_equal(prefixset_enter(&p, b.h, other.l, 2), 0);
	assert_int_equal(add_stat(&p, 99, &h), 1);

	/* Into a flat set: each is there as its whole label set. */
	struct seriesset flat = {0};
	assert_int_equal(prefixset_move(&p, &flat), 0);
	assert_int_equal(p.series, 0);
	assert_int_equal(flat.used, 30002);
	make_prefix(&b, 299, 2);
	char whole[96];
	int n = snprintf(whole, sizeof(whole), "%s,stat=\"5\"", b.text);
	struct seriesset_label l[3];
	assert_int_equal(seriesset_split(whole, (size_t)n, l, 3), 3);
	uint64_t own = (uint64_t)6 * 0xC2B2AE3D27D4EB4Full;
	assert_int_equal(seriesset_add(&flat, (b.h + own) ^ 3, l, 3), 0);
	/* A label set in another order is the same series too. */
	struct seriesset_label swapped[3] = {l[2], l[0], l[1]};
	assert_int_equal(seriesset_add(&flat, (b.h + own) ^ 3, swapped, 3), 0);
	seriesset_free(&flat);

	/* Cleared: nothing is held, the prefix is new again. */
	make_prefix(&b, 1, 1);
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	assert_int_equal(add_stat(&p, 1, &h), 1);
	prefixset_clear(&p);
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	assert_int_equal(add_stat(&p, 1, &h), 1);
	prefixset_trim(&p);
	prefixset_free(&p);
}

/* A prefix's own table starts as large as the one before it ended up
 * needing: the second of two alike never grows, and leaves no smaller
 * tables unused behind it. */
static void test_table_sized_by_last(void **state)
{
	struct prefixset p = {0};
	struct block b;
	uint64_t h;
	(void)state;

	for (int dom = 0; dom < 3; dom++) {
		size_t before = p.nslots;
		make_prefix(&b, dom, 0);
		assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
		for (int s = 0; s < 100; s++)
			assert_int_equal(add_stat(&p, s, &h), 1);
		/* the first grows 16, 32, 64, 128, 256; the others take 256 */
		assert_int_equal(p.nslots - before, dom == 0 ? 496 : 256);
	}
	make_prefix(&b, 9, 0); /* after one of 100: 256 slots, for one series */
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	assert_int_equal(add_stat(&p, 1, &h), 1);
	size_t before = p.nslots;
	make_prefix(&b, 10, 0); /* after one of 1: the first size again */
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	assert_int_equal(p.nslots - before, 16);
	prefixset_free(&p);
}

/* Own labels that all hash alike: each still counts, by its text. */
static void test_own_collisions(void **state)
{
	struct prefixset p = {0};
	struct block b;
	char text[32];
	(void)state;

	make_prefix(&b, 1, 2);
	assert_int_equal(prefixset_enter(&p, b.h, b.l, 2), 0);
	for (int pass = 0; pass < 2; pass++)
		for (int s = 0; s < 500; s++) {
			int n = snprintf(text, sizeof(text), "stat=\"%d\"", s);
			struct seriesset_label l = {text, (size_t)n};
			assert_int_equal(prefixset_add(&p, 77, &l, 1), pass ? 0 : 1);
		}
	prefixset_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_by_prefix),
	    cmocka_unit_test(test_own_collisions),
	    cmocka_unit_test(test_table_sized_by_last),
	};
	return cmocka_run_group_tests_name("prefixset", tests, NULL, NULL);
}
