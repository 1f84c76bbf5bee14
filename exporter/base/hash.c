/* The process's hash seed: drawn once, on first use, from the kernel. */
#include "hash.h"

#include <pthread.h>
#include <sys/random.h>
#include <time.h>

static uint64_t seed;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void draw_seed(void)
{
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		/* No entropy at all this early is a broken host; still differ per run. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec;
	}
}

uint64_t hash_seed(void)
{
	pthread_once(&seed_once, draw_seed);
	return seed;
}
