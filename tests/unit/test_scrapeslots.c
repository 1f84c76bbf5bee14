/* The scrape slots shared out by client address: within the pool anyone
 * gets one; past it, an address holding few still does and the biggest
 * holder is refused, up to twice the pool. */
#include "helpers.h"

#include <limits.h>

#include "scrapeslots.h"

static void test_rule(void **state)
{
	(void)state;
	assert_true(scrapeslots_admit(39, 40, 39, 39)); /* within the pool */
	/* the pool full, 16 addresses holding 2 or 3 each */
	assert_true(scrapeslots_admit(40, 40, 0, 3));  /* a scraper holding none */
	assert_true(scrapeslots_admit(40, 40, 1, 3));  /* fewer than the most but one */
	assert_false(scrapeslots_admit(40, 40, 2, 3)); /* one of the biggest holders */
	assert_false(scrapeslots_admit(40, 40, 3, 3));
	assert_false(scrapeslots_admit(80, 40, 0, 3)); /* twice the pool: none */
}

static void test_table(void **state)
{
	unsigned char a[16] = {[15] = 1}, b[16] = {[15] = 2}, c[16] = {[15] = 3};
	struct scrapeslots *p = scrapeslots_new(2);
	(void)state;

	assert_non_null(p);
	assert_true(scrapeslots_take(p, a));
	assert_true(scrapeslots_take(p, a));
	assert_false(scrapeslots_take(p, a)); /* full, and a holds the most */
	assert_true(scrapeslots_take(p, b));  /* b holds none */
	assert_true(scrapeslots_take(p, c));  /* c neither: 4, twice the pool */
	assert_false(scrapeslots_take(p, c));
	scrapeslots_put(p, a);
	scrapeslots_put(p, a);
	scrapeslots_put(p, b);
	assert_true(scrapeslots_take(p, b)); /* 2 held again: within the pool */
	scrapeslots_put(p, b);
	scrapeslots_put(p, c);
	scrapeslots_free(p);
	p = scrapeslots_new(UINT_MAX); /* no limit */
	for (int i = 0; i < 1000; i++)
		assert_true(scrapeslots_take(p, a));
	scrapeslots_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rule),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
