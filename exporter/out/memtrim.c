/* Gives the memory of finished scrapes back to the kernel. A flood of
 * clients that never read their response (tests/integration/hostile_http.sh)
 * leaves tens of megabytes freed at once; an operator expects the RSS to
 * fall back after it, not to stay at whatever malloc kept. */
#include "memtrim.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>

#include "monoclock.h"

/* One arena: glibc otherwise makes up to 8 per core, one per thread at
 * first, each connection thread of a flood leaves free memory in its own,
 * and malloc_trim cannot shrink the top of any arena but the main one (4
 * arenas left 4-18 MiB behind after hostile_http's non-readers, one
 * 4-5 MiB). The scrapes' busy memory comes from pools (sink.c,
 * blockpool.c) and small blocks from each thread's cache, so the one
 * lock is contended little. */
#define MEMTRIM_ARENAS 1

/* Fixed, so that glibc does not raise them itself: once a large block is
 * freed it would serve blocks up to that size from the arena. Blocks from
 * 256 KiB are their own mappings, unmapped when freed; an emitter's label
 * scratch then has only the pages a scrape touched resident. Setting one
 * fixes the other too, at 128 KiB: the arena's top is kept up to 64 MiB
 * instead (glibc's own limit), the next scrape's memory, and given back by
 * the trims below; with 1 to 4 MiB, 20 MB scrapes back to back (the Xen
 * bench) gave back and faulted in 10 MB each, in some runs. */
#define MEMTRIM_MMAP_BYTES (256 << 10)
#define MEMTRIM_TOP_BYTES (64 << 20)

/* A trim once this many bytes of scrape bodies were freed, at most once a
 * second: a trim after each of large scrapes back to back only makes the
 * next fault its memory in again. */
#define MEMTRIM_FREED_BYTES (16u << 20)
#define MEMTRIM_FREED_EVERY_NS 1000000000u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned in_flight, most_in_flight; /* the most since none was */
static uint64_t freed, last_ns;		   /* since the last trim; its time */

void memtrim_setup(void)
{
	mallopt(M_ARENA_MAX, MEMTRIM_ARENAS);
	mallopt(M_MMAP_THRESHOLD, MEMTRIM_MMAP_BYTES);
	mallopt(M_TRIM_THRESHOLD, MEMTRIM_TOP_BYTES);
}

void memtrim_scrape_begin(void)
{
	pthread_mutex_lock(&lock);
	if (++in_flight > most_in_flight)
		most_in_flight = in_flight;
	pthread_mutex_unlock(&lock);
}

/* Scrapes one after another (Prometheus, one at a time per target) trim
 * only every MEMTRIM_FREED_BYTES; the last of scrapes that overlapped
 * trims once they are all gone, whatever they freed and whenever the last
 * trim was. */
bool memtrim_scrape_end(size_t bytes)
{
	pthread_mutex_lock(&lock);
	in_flight--;
	freed += bytes;
	uint64_t now = monoclock_ns();
	bool trim = freed >= MEMTRIM_FREED_BYTES && now - last_ns >= MEMTRIM_FREED_EVERY_NS;
	if (in_flight == 0) {
		trim |= most_in_flight > 1;
		most_in_flight = 0;
	}
	if (trim) {
		freed = 0;
		last_ns = now;
	}
	pthread_mutex_unlock(&lock);
	if (trim)
		malloc_trim(0);
	return trim;
}
