/* The monotonic clock in nanoseconds, and its instants as timespecs. */
#include "monoclock.h"

uint64_t monoclock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec monoclock_timespec(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
				 .tv_nsec = (long)(ns % 1000000000u)};
}
