/* The one clock collectors measure intervals and deadlines with. */
#ifndef MONOCLOCK_H
#define MONOCLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds: never steps with the wall clock. */
uint64_t monoclock_ns(void);

#endif
