/* Token buckets by client address and identity, in a fixed table. A
 * bucket forgotten holds no debt: one taken back from the table is full
 * when next used, so a client with many addresses who pushes others'
 * buckets out only ever gives them more tokens, never fewer. The slot of
 * a key is found by a hash keyed at random, so no one can choose addresses that
 * land on a scraper's. */
#include "webrate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define WEBRATE_SLOTS 1024 /* a power of two */
#define WEBRATE_PROBES 8
#define WEBRATE_WHO_MAX 64 /* longer names are cut: still one bucket each in practice */

struct bucket {
	bool used;
	unsigned char addr[16];
	char who[WEBRATE_WHO_MAX];
	double tokens;
	uint64_t last_ns;
};

struct webrate {
	pthread_mutex_t lock;
	double interval; /* the settings the buckets were filled for */
	unsigned burst;
	struct bucket slot[WEBRATE_SLOTS];
};

struct webrate *webrate_new(void)
{
	struct webrate *r = calloc(1, sizeof(*r));

	if (r)
		pthread_mutex_init(&r->lock, NULL);
	return r;
}

void webrate_free(struct webrate *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static bool same_key(const struct bucket *b, const unsigned char addr[16], const char *who)
{
	return b->used && memcmp(b->addr, addr, 16) == 0 &&
	       strncmp(b->who, who, WEBRATE_WHO_MAX - 1) == 0;
}

/* The key's bucket; else a free one or the longest unused of its probes,
 * made new and full. */
static struct bucket *find(struct webrate *r, const unsigned char addr[16], const char *who,
			   uint64_t now_ns)
{
	uint64_t h = hash_bytes(addr, 16, hash_seed());
	struct bucket *oldest = NULL;

	h = hash_bytes(who, strlen(who), h);
	for (unsigned i = 0; i < WEBRATE_PROBES; i++) {
		struct bucket *b = &r->slot[(h + i) & (WEBRATE_SLOTS - 1)];
		if (same_key(b, addr, who))
			return b;
		if (!oldest || !b->used || (oldest->used && b->last_ns < oldest->last_ns))
			oldest = b;
	}
	*oldest = (struct bucket){.used = true, .tokens = r->burst, .last_ns = now_ns};
	memcpy(oldest->addr, addr, 16);
	strncpy(oldest->who, who, WEBRATE_WHO_MAX - 1);
	return oldest;
}

/* With the lock held: the key's bucket, refilled up to now. */
static struct bucket *refilled(struct webrate *r, const unsigned char addr[16], const char *who,
			       double interval, unsigned burst, uint64_t now_ns)
{
	if (r->interval != interval || r->burst != burst) { /* new settings: all full */
		memset(r->slot, 0, sizeof(r->slot));
		r->interval = interval;
		r->burst = burst;
	}
	struct bucket *b = find(r, addr, who, now_ns);
	if (now_ns > b->last_ns)
		b->tokens += (double)(now_ns - b->last_ns) / 1e9 / interval;
	if (b->tokens > burst)
		b->tokens = burst;
	b->last_ns = now_ns;
	return b;
}

static bool bucket_op(struct webrate *r, const unsigned char addr[16], const char *who,
		      double interval, unsigned burst, uint64_t now_ns, enum webrate_op op)
{
	bool ok;

	if (interval <= 0)
		return true;
	pthread_mutex_lock(&r->lock);
	struct bucket *b = refilled(r, addr, who, interval, burst, now_ns);
	switch (op) {
	case WEBRATE_TAKE:
		ok = b->tokens >= 1;
		b->tokens -= ok ? 1 : 0;
		break;
	case WEBRATE_HAS:
		ok = b->tokens >= 1;
		break;
	case WEBRATE_FULL:
		ok = b->tokens >= burst;
		break;
	default: /* WEBRATE_DEBIT: owed, down to empty, never below */
		ok = b->tokens >= 1;
		b->tokens = ok ? b->tokens - 1 : 0;
		break;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

bool webrate_take(struct webrate *r, const unsigned char addr[16], const char *who, double interval,
		  unsigned burst, uint64_t now_ns)
{
	return bucket_op(r, addr, who, interval, burst, now_ns, WEBRATE_TAKE);
}

bool webrate_do(struct webrate *r, const unsigned char addr[16], const char *who, double interval,
		unsigned burst, uint64_t now_ns, enum webrate_op op)
{
	return bucket_op(r, addr, who, interval, burst, now_ns, op);
}
