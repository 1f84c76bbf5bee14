/* When freed scrape memory goes back to the kernel: scrapes one after
 * another trim every 16 MiB freed, at most once a second; the last of
 * overlapping scrapes trims at once; and a trim does lower the RSS after
 * threads freed their blocks in arenas of their own. */
#include "helpers.h"

#include <pthread.h>
#include <time.h>

#include "memtrim.h"

#define MIB (1u << 20)

/* Past the once-a-second limit on trims for bytes freed. */
static void after_a_second(void)
{
	struct timespec ts = {1, 100000000};
	nanosleep(&ts, NULL);
}

static void test_one_after_another_trims_by_bytes(void **state)
{
	(void)state;
	after_a_second();
	for (int i = 0; i < 15; i++) {
		memtrim_scrape_begin();
		assert_false(memtrim_scrape_end(MIB));
	}
	memtrim_scrape_begin();
	assert_true(memtrim_scrape_end(MIB)); /* the 16th MiB */
	/* 16 MiB more within the second: no trim until it is over. */
	memtrim_scrape_begin();
	assert_false(memtrim_scrape_end(16 * MIB));
	after_a_second();
	memtrim_scrape_begin();
	assert_true(memtrim_scrape_end(MIB));
	memtrim_scrape_begin();
	assert_false(memtrim_scrape_end(MIB));
}

static void test_last_of_overlapping_trims(void **state)
{
	(void)state;
	memtrim_scrape_begin();
	memtrim_scrape_begin();
	memtrim_scrape_begin();
	assert_false(memtrim_scrape_end(1000));
	assert_false(memtrim_scrape_end(1000));
	assert_true(memtrim_scrape_end(1000));
	/* The burst is over: the next lone scrape does not trim again. */
	memtrim_scrape_begin();
	assert_false(memtrim_scrape_end(1000));
}

/* A trim for bytes in the middle of a burst does not end it: its last
 * scrape still trims, however recent that trim. */
static void test_burst_outlives_a_trim_by_bytes(void **state)
{
	(void)state;
	after_a_second();
	memtrim_scrape_begin();
	memtrim_scrape_begin();
	assert_true(memtrim_scrape_end(16 * MIB));
	assert_true(memtrim_scrape_end(1000));
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

#define BLOCKS 112	  /* 7 MiB */
#define BLOCK (64u << 10) /* a sink chunk's size: below the mmap threshold */

/* Like a scrape's thread: a large block (an emitter's scratch) freed,
 * then 7 MiB of chunks freed. With keep_last, the last stays in use (a
 * response not yet sent): the arena's top cannot shrink past it, so only
 * a trim gives back what is under it. Without, all of it is free at the
 * top of the thread's arena, which malloc_trim shrinks only if that is
 * the main one. */
static void *volatile big;
static pthread_barrier_t all_started; /* so that each has an arena */

static void *fill_and_free(void *keep_last)
{
	char *b[BLOCKS];

	pthread_barrier_wait(&all_started);
	big = malloc(4u << 20); /* through a volatile: not optimized away */
	free(big);
	for (int i = 0; i < BLOCKS; i++)
		if ((b[i] = malloc(BLOCK)))
			memset(b[i], 1, BLOCK);
	for (int i = 0; i < BLOCKS - 1; i++)
		free(b[i]);
	if (keep_last)
		return b[BLOCKS - 1];
	free(b[BLOCKS - 1]);
	return NULL;
}

/* Without memtrim_setup, each thread has an arena of its own, glibc
 * raises its thresholds once the 4 MiB block is freed, and the free tops
 * of those arenas stay; without the trim, the holes and the top stay. */
static void test_trim_gives_arenas_back(void **state)
{
	pthread_t t[4];
	void *kept[4];
	(void)state;

#ifdef __SANITIZE_ADDRESS__
	skip(); /* ASan's allocator keeps freed memory in quarantine */
#endif
	memtrim_setup();
	pthread_barrier_init(&all_started, NULL, 4);
	long before = rss_kib();
	memtrim_scrape_begin();
	memtrim_scrape_begin();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fill_and_free, (void *)(i & 1L)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], &kept[i]);
	pthread_barrier_destroy(&all_started);
	assert_false(memtrim_scrape_end(0));
	assert_true(memtrim_scrape_end(0));
	long after = rss_kib();
	print_message("RSS %ld -> %ld KiB, 28 MiB touched\n", before, after);
	assert_true(after - before < 6 * 1024);
	for (int i = 0; i < 4; i++)
		free(kept[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_after_another_trims_by_bytes),
	    cmocka_unit_test(test_last_of_overlapping_trims),
	    cmocka_unit_test(test_burst_outlives_a_trim_by_bytes),
	    cmocka_unit_test(test_trim_gives_arenas_back),
	};
	return cmocka_run_group_tests_name("memtrim", tests, NULL, NULL);
}
