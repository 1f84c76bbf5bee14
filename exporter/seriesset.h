/* The set of series (label sets) already written in one family. */
#ifndef BS_SERIESSET_H
#define BS_SERIESSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct seriesset {
	uint64_t *slot; /* 0 = empty */
	size_t cap;	/* power of two */
	size_t used;
};

void seriesset_clear(struct seriesset *s);
/* Adds `h`; returns 1 if added, 0 if already there, -ENOMEM. */
int seriesset_add(struct seriesset *s, uint64_t h);
void seriesset_free(struct seriesset *s);

#endif
