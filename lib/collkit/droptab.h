/* Drops a collector's own thread finds between scrapes, kept until the next
 * collect reports them through the emitter. */
#ifndef DROPTAB_H
#define DROPTAB_H

#include <stdint.h>

#include <binstat/collector.h>

#define DROPTAB_REASONS_MAX 32

/* The owner's lock guards it; zeroed is empty. */
struct droptab {
	struct {
		const char *reason; /* a string literal of the collector's fixed set */
		uint64_t n;
	} slot[DROPTAB_REASONS_MAX];
	uint64_t other; /* reasons past the table: still counted, as "other" */
};

void droptab_add(struct droptab *t, const char *reason, uint64_t n);
/* Reports every count through bs_drop and empties the table. */
void droptab_flush(struct droptab *t, struct bs_emitter *em);

#endif
