/* The series of one family while all of them come as a label prefix of
 * the same names and labels of their own: each distinct prefix once, with
 * the set of its series' own labels beside it. A series is looked for
 * among its prefix's few others (one page), not among all of the family's:
 * for 256,000 Xen statistics in one family that table was megabytes, and a
 * cache and TLB miss at every series. */
#ifndef BS_PREFIXSET_H
#define BS_PREFIXSET_H

#include <stddef.h>
#include <stdint.h>

#include "seriesset.h"

/* 8 bytes, so that a prefix's table stays in the first-level cache: a
 * probe compares 32 more bits of the hash before any text. */
struct prefixset_slot {
	uint32_t tag; /* the hash's high half */
	uint32_t at;  /* 1 + where the series is in the texts, in 8-byte units; 0: free */
};

/* A distinct prefix, with its own labels' table among the set's slots. */
struct prefixset_node {
	uint64_t hash;	  /* of the prefix's labels */
	uint32_t text;	  /* its block in the texts, in 8-byte units */
	uint32_t home;	  /* its place in byhash */
	uint32_t slot;	  /* its own labels' table: slots[slot, slot + cap) */
	uint32_t cap;	  /* a power of two */
	uint32_t used;	  /* series in that table */
	uint32_t nlabels; /* the prefix's */
};

struct prefixset {
	uint32_t *byhash; /* node index + 1 by the prefix's hash; 0: free */
	size_t hcap;	  /* a power of two */
	struct prefixset_node *node;
	size_t nnodes, ncap;
	struct prefixset_slot *slot; /* every node's table, one after another */
	size_t nslots, scap;
	char *text; /* prefix and own blocks, each after its hash, count and length */
	size_t tlen, tcap;
	size_t cur;    /* the node of prefixset_enter's prefix + 1; 0: none */
	size_t series; /* held, all prefixes */
	size_t peak_nodes, peak_slots, peak_text;
};

/* Makes the prefix of labels l[0..n) (hash h, a block as the emitter
 * writes it) the one the next series come under, found or added. Returns
 * 0 or -ENOMEM. */
int prefixset_enter(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n);
/* Adds the series of the entered prefix with own labels l[0..n) (their
 * hash h, a block from l[0].text): 1 if added, 0 if that prefix already
 * has exactly these own labels, -ENOMEM. */
int prefixset_add(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n);
/* Adds every series held to `into` as one label set (hashed as the
 * emitter hashes one: the sum of its labels' hashes, xor their count),
 * then empties p: for a family whose series stop sharing prefix names.
 * On -ENOMEM p keeps them all, for another try. */
int prefixset_move(struct prefixset *p, struct seriesset *into);
/* Empties the set, in the time of what it holds. */
void prefixset_clear(struct prefixset *p);
/* As seriesset_trim: frees what the families since the last trim left
 * mostly unused. */
void prefixset_trim(struct prefixset *p);
void prefixset_free(struct prefixset *p);

#endif
