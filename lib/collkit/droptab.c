/* Deferred drop counts: a fixed table, so adding never allocates, and a
 * reason that finds no room is counted as `other`, never lost. */
#include "droptab.h"

#include <string.h>

void droptab_add(struct droptab *t, const char *reason, uint64_t n)
{
	for (size_t i = 0; i < DROPTAB_REASONS_MAX; i++) {
		/* reasons are literals: the pointer test mostly decides */
		if (!t->slot[i].reason || t->slot[i].reason == reason ||
		    strcmp(t->slot[i].reason, reason) == 0) {
			t->slot[i].reason = reason;
			t->slot[i].n += n;
			return;
		}
	}
	t->other += n;
}

void droptab_flush(struct droptab *t, struct bs_emitter *em)
{
	for (size_t i = 0; i < DROPTAB_REASONS_MAX && t->slot[i].reason; i++)
		bs_drop(em, t->slot[i].reason, t->slot[i].n);
	if (t->other)
		bs_drop(em, "other", t->other);
	memset(t, 0, sizeof(*t));
}
