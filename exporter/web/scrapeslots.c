/* The scrape slots by client address: a table of the addresses holding
 * slots (at most twice max of them, as many as slots can be held), looked
 * through whole under one mutex; a scrape takes milliseconds, so it is
 * short. */
#include "scrapeslots.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct holder {
	unsigned char addr[16];
	unsigned n; /* 0: a free entry */
};

struct scrapeslots {
	pthread_mutex_t lock;
	unsigned max, total;
	size_t cap; /* entries: 2 * max */
	struct holder h[];
};

struct scrapeslots *scrapeslots_new(unsigned max)
{
	size_t cap = max == UINT_MAX ? 0 : 2 * (size_t)max;
	struct scrapeslots *p = calloc(1, sizeof(*p) + cap * sizeof(p->h[0]));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->max = max;
	p->cap = cap;
	return p;
}

void scrapeslots_free(struct scrapeslots *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p);
}

bool scrapeslots_admit(unsigned total, unsigned max, unsigned mine, unsigned most)
{
	if (total < max)
		return true;
	if (total >= 2 * max)
		return false;
	return mine == 0 || mine + 1 < most;
}

/* With the lock held: addr's entry, or a free one (NULL if none). */
static struct holder *entry(struct scrapeslots *p, const unsigned char addr[16], unsigned *most)
{
	struct holder *mine = NULL, *spare = NULL;

	*most = 0;
	for (size_t i = 0; i < p->cap; i++) {
		struct holder *h = &p->h[i];
		if (!h->n) {
			spare = spare ? spare : h;
			continue;
		}
		*most = h->n > *most ? h->n : *most;
		if (memcmp(h->addr, addr, 16) == 0)
			mine = h;
	}
	return mine ? mine : spare;
}

bool scrapeslots_take(struct scrapeslots *p, const unsigned char addr[16])
{
	unsigned most;
	bool ok;

	if (p->max == UINT_MAX)
		return true;
	pthread_mutex_lock(&p->lock);
	struct holder *h = entry(p, addr, &most);
	ok = h && scrapeslots_admit(p->total, p->max, h->n, most);
	if (ok) {
		if (!h->n)
			memcpy(h->addr, addr, 16);
		h->n++;
		p->total++;
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

void scrapeslots_put(struct scrapeslots *p, const unsigned char addr[16])
{
	unsigned most;

	if (p->max == UINT_MAX)
		return;
	pthread_mutex_lock(&p->lock);
	struct holder *h = entry(p, addr, &most);
	if (h && h->n && memcmp(h->addr, addr, 16) == 0) {
		h->n--;
		p->total--;
	}
	pthread_mutex_unlock(&p->lock);
}
