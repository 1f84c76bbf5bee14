/* A growable array with a hard cap, as curl's dynbuf is for text: elements
 * of one size, added at the end or at an index with the room doubled as it
 * runs out, or reserved to an exact count, never past the cap given at
 * init. Every size is checked for overflow. */
#ifndef GROWARR_H
#define GROWARR_H

#include <stddef.h>

/* Made by growarr_init (a zeroed one may only be freed). Whoever holds the
 * struct owns p and gives it back with growarr_free. p moves when the
 * array grows: pointers into it last until the next call that grows it.
 * The owner reads and writes the elements p[0..cap) itself, and may set n
 * anywhere in 0..cap (drop the last, move the last into a slot it
 * empties, or count in what it wrote into room it made). */
struct growarr {
	void *p;     /* the elements; NULL until the first growth */
	size_t n;    /* elements in use */
	size_t cap;  /* elements allocated */
	size_t size; /* bytes an element */
	size_t max;  /* elements never more than this */
};

/* Inside an owner's struct: the growarr `arr`, whose elements read as the
 * array `view` of `type` (view[i] is element i: view shares its storage
 * with p, arr's first member), so readers index it as a plain array. */
#define GROWARR_OF(type, view, arr)                                                                \
	union {                                                                                    \
		struct growarr arr;                                                                \
		type *view;                                                                        \
	}

/* Empty, for elements of `size` (> 0) bytes, at most `max` of them; a cap
 * whose bytes would not fit a size_t is lowered to what fits. */
void growarr_init(struct growarr *a, size_t size, size_t max);
/* Room for `want` elements in all, grown to exactly that (for a caller
 * that knows its size). Returns 0, -E2BIG past the cap, or -ENOMEM; on
 * failure the array is as it was. */
int growarr_reserve(struct growarr *a, size_t want);
/* Room for `more` elements past n, the room doubled until they fit (4
 * elements first, never past the cap). Returns 0, -E2BIG when n + more is
 * past the cap, or -ENOMEM; on failure the array is as it was. */
int growarr_room(struct growarr *a, size_t more);
/* Copies the element at `e` in at the end, or at index `at` (0..n, those
 * from `at` on moved up one), with growarr_room's growth. Returns 0,
 * -E2BIG when it holds `max` elements, -EINVAL for `at` past n, or
 * -ENOMEM; on failure nothing changed. */
int growarr_push(struct growarr *a, const void *e);
int growarr_insert(struct growarr *a, size_t at, const void *e);
/* Removes element `at` (< n), those after it moved down one. */
void growarr_remove(struct growarr *a, size_t at);
/* Hands the elements over: the caller owns the returned block (n elements,
 * NULL when none were ever added) and frees it with free(); the array is
 * empty again. */
void *growarr_take(struct growarr *a);
/* Frees the elements; the array is empty again, keeping its element size
 * and max. A zeroed or empty one may be freed, as often as wanted. */
void growarr_free(struct growarr *a);

#endif
