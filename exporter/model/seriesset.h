/* The set of series (label sets) already written in one family. */
#ifndef BS_SERIESSET_H
#define BS_SERIESSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Clearing zeroes the control bytes, or only those in use (found from the
 * arena) when the table is much larger than what it holds, so a table
 * grown by one large family costs little to the small ones after it, and
 * can be kept from one scrape to the next. */
struct seriesset {
	uint8_t *ctrl; /* per slot: 0 free, else 0x80 | the hash's top 7 bits */
	uint32_t *at;  /* per slot: where its series is in the arena, in 8-byte units */
	size_t cap;    /* slots: a power of two, at least 64 */
	size_t used, peak;
	char *arena; /* per series: its hash, slot, label count, block length and block */
	size_t alen, acap, apeak;
};

/* One label as written: `name="escaped value"`, in a block that joins a
 * series' labels with commas. */
struct seriesset_label {
	const char *text;
	size_t len;
};

/* Empties the set in the time of what it holds. */
void seriesset_clear(struct seriesset *s);
/* Frees the table and the arena if the largest family since the last trim
 * used less than an eighth of them: what one unusual scrape grew is not
 * held for the life of the process. */
void seriesset_trim(struct seriesset *s);
/* Adds the series of labels `l[0..n)`, written contiguously as one block
 * from l[0].text, whose order-independent hash is `h`. A hash already there
 * counts as the same series only if its labels are the same texts (in any
 * order): a collision never drops a genuine series. Returns 1 if added, 0
 * if already there, -ENOMEM. */
int seriesset_add(struct seriesset *s, uint64_t h, const struct seriesset_label *l, size_t n);
void seriesset_free(struct seriesset *s);

/* Whether a block of `nblock` labels as the emitter writes them (joined by
 * commas) holds exactly the labels l[0..n). Label names are unique within
 * a series, so equal counts and every label found means equal sets. */
bool seriesset_block_holds(const char *block, size_t len, size_t nblock,
			   const struct seriesset_label *l, size_t n);
/* The labels of such a block, at most max; returns how many. */
size_t seriesset_split(const char *block, size_t len, struct seriesset_label *l, size_t max);

#endif
