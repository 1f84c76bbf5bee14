/* Gives the memory of finished scrapes back to the kernel. A flood of
 * clients that never read their response (tests/integration/hostile_http.sh)
 * leaves tens of megabytes freed at once; an operator expects the RSS to
 * fall back after it, not to stay at whatever malloc kept. */
#include "memtrim.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>

/* glibc makes up to 8 arenas per core, one per thread at first; every
 * connection thread of a flood then leaves free memory in its own, and
 * malloc_trim cannot shrink the top of any arena but the main one. The
 * scrapes' busy memory comes from the sinks' pools (sink.c), so a few
 * arenas are contended little. */
#define MEMTRIM_ARENAS 4

/* Fixed, so that glibc does not raise them itself: once a large block is
 * freed it would serve blocks up to that size from the arenas and keep up
 * to twice that free at each arena's top (up to 32 and 64 MiB). Blocks
 * from 256 KiB are their own mappings, unmapped when freed; an emitter's
 * label scratch then has only the pages a scrape touched resident. */
#define MEMTRIM_MMAP_BYTES (256 << 10)
#define MEMTRIM_TOP_BYTES (1 << 20)

/* A trim at least once this many bytes of scrape bodies were freed. */
#define MEMTRIM_FREED_BYTES (16u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned in_flight, most_in_flight; /* the most since none was */
static uint64_t freed;			   /* since the last trim */

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
 * trims once they are all gone, whatever they freed. */
bool memtrim_scrape_end(size_t bytes)
{
	pthread_mutex_lock(&lock);
	in_flight--;
	freed += bytes;
	bool trim = freed >= MEMTRIM_FREED_BYTES;
	if (in_flight == 0) {
		trim |= most_in_flight > 1;
		most_in_flight = 0;
	}
	if (trim)
		freed = 0;
	pthread_mutex_unlock(&lock);
	if (trim)
		malloc_trim(0);
	return trim;
}
