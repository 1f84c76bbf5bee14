/* A few freed blocks of one kind kept for the next scrape, which then
 * writes into memory already touched (and mapped) rather than made anew.
 * Thread-safe; what it cannot keep it releases. */
#ifndef BS_BLOCKPOOL_H
#define BS_BLOCKPOOL_H

#include <pthread.h>
#include <stddef.h>

#define BLOCKPOOL_MAX 8

struct blockpool {
	pthread_mutex_t lock;
	void *kept[BLOCKPOOL_MAX];
	size_t n, max;
	void (*release)(void *block);
};

/* A pool keeping up to max (at most BLOCKPOOL_MAX) blocks. */
#define BLOCKPOOL_INIT(max_, release_)                                                             \
	{                                                                                          \
		.lock = PTHREAD_MUTEX_INITIALIZER, .max = (max_), .release = (release_)            \
	}

/* A kept block, or NULL when there is none. */
void *blockpool_take(struct blockpool *p);
/* Keeps block, or releases it when the pool is full. NULL is ignored. */
void blockpool_give(struct blockpool *p, void *block);
/* Releases every kept block. */
void blockpool_drain(struct blockpool *p);

#endif
