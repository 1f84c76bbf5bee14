/* The one clock of the daemon and its collectors: intervals, deadlines and
 * timed waits all use CLOCK_MONOTONIC, which never steps with the wall clock. */
#ifndef MONOCLOCK_H
#define MONOCLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t monoclock_ns(void);
/* A monotonic instant in ns as the timespec that pthread_cond_timedwait (on
 * a condition variable set to CLOCK_MONOTONIC) and pthread_mutex_clocklock
 * (with CLOCK_MONOTONIC) take: no wall-clock deadline is ever built. */
struct timespec monoclock_timespec(uint64_t ns);

#endif
