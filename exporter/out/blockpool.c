/* A few freed blocks of one kind kept for the next scrape (deflate stages,
 * deflaters, emitters' label scratch). */
#include "blockpool.h"

void *blockpool_take(struct blockpool *p)
{
	void *block = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->n)
		block = p->kept[--p->n];
	pthread_mutex_unlock(&p->lock);
	return block;
}

void blockpool_give(struct blockpool *p, void *block)
{
	if (!block)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->n < p->max && p->n < BLOCKPOOL_MAX) {
		p->kept[p->n++] = block;
		block = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	if (block)
		p->release(block);
}

void blockpool_drain(struct blockpool *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->n)
		p->release(p->kept[--p->n]);
	pthread_mutex_unlock(&p->lock);
}
