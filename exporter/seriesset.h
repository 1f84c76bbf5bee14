/* The set of series (label sets) already written in one family. */
#ifndef BS_SERIESSET_H
#define BS_SERIESSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct seriesset_slot {
	uint64_t hash; /* 0 = empty */
	size_t at;     /* the series' labels in the arena */
};

struct seriesset {
	struct seriesset_slot *slot;
	size_t cap; /* power of two */
	size_t used;
	char *arena; /* per series: its label count, block length and block as written */
	size_t alen, acap;
};

/* One label as written: `name="escaped value"`, in a block that joins a
 * series' labels with commas. */
struct seriesset_label {
	const char *text;
	size_t len;
};

void seriesset_clear(struct seriesset *s);
/* Adds the series of labels `l[0..n)`, written contiguously as one block
 * from l[0].text, whose order-independent hash is `h`. A hash already there
 * counts as the same series only if its labels are the same texts (in any
 * order): a collision never drops a genuine series. Returns 1 if added, 0
 * if already there, -ENOMEM. */
int seriesset_add(struct seriesset *s, uint64_t h, const struct seriesset_label *l, size_t n);
void seriesset_free(struct seriesset *s);

#endif
