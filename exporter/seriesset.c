/* The set of series (label sets) already written in one family: open
 * addressing over 64-bit label-set hashes, kept at most half full. */
#include "seriesset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void seriesset_clear(struct seriesset *s)
{
	/* Keep a large table only while families stay large. */
	if (s->cap > 4096 && s->used < s->cap / 8) {
		seriesset_free(s);
		return;
	}
	if (s->slot)
		memset(s->slot, 0, s->cap * sizeof(*s->slot));
	s->used = 0;
}

static void insert(uint64_t *slot, size_t cap, uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);
	while (slot[i])
		i = (i + 1) & (cap - 1);
	slot[i] = h;
}

static int grow(struct seriesset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	uint64_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i])
			insert(slot, cap, s->slot[i]);
	free(s->slot);
	s->slot = slot;
	s->cap = cap;
	return 0;
}

int seriesset_add(struct seriesset *s, uint64_t h)
{
	if (h == 0)
		h = 1;
	if ((s->used + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	size_t i = (size_t)h & (s->cap - 1);
	while (s->slot[i]) {
		if (s->slot[i] == h)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->slot[i] = h;
	s->used++;
	return 1;
}

void seriesset_free(struct seriesset *s)
{
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
