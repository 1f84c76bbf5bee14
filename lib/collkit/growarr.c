/* The one capped growable array: doubling growth, exact reservations, and
 * sizes that cannot overflow because the cap is bounded at init. */
#include "growarr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GROWARR_FIRST 4 /* elements the first doubling growth makes room for */

_Static_assert(offsetof(struct growarr, p) == 0, "GROWARR_OF's view shares p's storage");

void growarr_init(struct growarr *a, size_t size, size_t max)
{
	size = size ? size : 1;
	*a = (struct growarr){.size = size, .max = max > SIZE_MAX / size ? SIZE_MAX / size : max};
}

/* cap <= max <= SIZE_MAX / size: cap * size cannot overflow. */
static int resize(struct growarr *a, size_t cap)
{
	void *p = realloc(a->p, cap * a->size);

	if (!p)
		return -ENOMEM;
	a->p = p;
	a->cap = cap;
	return 0;
}

int growarr_reserve(struct growarr *a, size_t want)
{
	if (want <= a->cap)
		return 0;
	return want > a->max ? -E2BIG : resize(a, want);
}

int growarr_room(struct growarr *a, size_t more)
{
	if (more <= a->cap - a->n)
		return 0;
	if (more > a->max - a->n)
		return -E2BIG;
	size_t want = a->n + more, cap = a->cap ? a->cap : GROWARR_FIRST / 2;
	do
		cap = cap > a->max / 2 ? a->max : 2 * cap;
	while (cap < want);
	return resize(a, cap);
}

int growarr_push(struct growarr *a, const void *e)
{
	return growarr_insert(a, a->n, e);
}

int growarr_insert(struct growarr *a, size_t at, const void *e)
{
	int rc = at > a->n ? -EINVAL : growarr_room(a, 1);

	if (rc < 0)
		return rc;
	char *slot = (char *)a->p + at * a->size;
	memmove(slot + a->size, slot, (a->n - at) * a->size);
	memcpy(slot, e, a->size);
	a->n++;
	return 0;
}

void growarr_remove(struct growarr *a, size_t at)
{
	char *slot = (char *)a->p + at * a->size;

	memmove(slot, slot + a->size, (a->n - at - 1) * a->size);
	a->n--;
}

void *growarr_take(struct growarr *a)
{
	void *p = a->p;

	a->p = NULL;
	a->n = a->cap = 0;
	return p;
}

void growarr_free(struct growarr *a)
{
	free(growarr_take(a));
}
