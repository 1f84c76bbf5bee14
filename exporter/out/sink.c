/* Output of one scrape part: a chain of chunks, raw or deflated, capped in size.
 * Deflated parts end with a sync flush so they can be concatenated (as pigz does). */
#include "sink.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "blockpool.h"

/* Freed chunks of the usual size wait here for the next scrape: its
 * output then lands in memory already touched rather than in new pages,
 * whose faults were a tenth of the writer's time. The pool keeps about
 * what one recent response took, at most SINK_POOL_MAX: a flood of
 * responses freed together leaves no more behind than one. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sink_chunk *pool;
static size_t pooled, pool_cap;

/* Text held now by the sinks of every uncompressed scrape in flight, which
 * share one budget: one large response stays text, a flood of them is kept
 * deflated. Atomic. */
static size_t spill_held;

size_t sink_spill_held(void)
{
	return __atomic_load_n(&spill_held, __ATOMIC_RELAXED);
}

static struct sink_chunk *chunk_new(size_t cap)
{
	struct sink_chunk *c = NULL;
	if (cap == SINK_CHUNK) {
		pthread_mutex_lock(&pool_lock);
		if ((c = pool)) {
			pool = c->next;
			pooled--;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	if (!c && !(c = malloc(sizeof(*c) + cap)))
		return NULL;
	c->next = NULL;
	c->len = 0;
	c->cap = cap;
	c->deflated = false;
	c->held = false;
	return c;
}

static void chunk_free(struct sink_chunk *c)
{
	if (c->held)
		__atomic_sub_fetch(&spill_held, c->len, __ATOMIC_RELAXED);
	if (c->cap == SINK_CHUNK) {
		pthread_mutex_lock(&pool_lock);
		if (pooled < pool_cap) {
			c->next = pool;
			pool = c;
			pooled++;
			c = NULL;
		}
		pthread_mutex_unlock(&pool_lock);
	}
	free(c);
}

/* Deflate stages of SINK_DEFLATE_STAGE bytes wait here for the next
 * deflating part: a megabyte's pages faulted in anew for each stage made
 * 949 faults a scrape of 10 MB with gzip. A stage carries its capacity
 * just before its data. */
struct stage_head {
	size_t cap;
	max_align_t align[];
};

_Static_assert(SINK_STAGE_POOL <= BLOCKPOOL_MAX, "every stage the pool is for is kept");
static struct blockpool stage_pool = BLOCKPOOL_INIT(SINK_STAGE_POOL, free);

static char *stage_take(size_t cap)
{
	struct stage_head *h = NULL;

	if (cap == SINK_DEFLATE_STAGE)
		h = blockpool_take(&stage_pool);
	if (!h && (h = malloc(sizeof(*h) + cap)))
		h->cap = cap;
	return h ? (char *)h->align : NULL;
}

static void stage_give(char *stage)
{
	if (!stage)
		return;
	struct stage_head *h = (struct stage_head *)(stage - offsetof(struct stage_head, align));
	if (h->cap == SINK_DEFLATE_STAGE)
		blockpool_give(&stage_pool, h);
	else
		free(h);
}

void sink_pool_drain(void)
{
	zcodec_cache_drain();
	blockpool_drain(&stage_pool);
	pthread_mutex_lock(&pool_lock);
	struct sink_chunk *c = pool, *next;
	pool = NULL;
	pooled = 0;
	pthread_mutex_unlock(&pool_lock);
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

static void chunk_push(struct sink *s, struct sink_chunk *c)
{
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	s->out_bytes += c->len;
}

int sink_init(struct sink *s, bool deflate, size_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit;
	s->deflating = deflate;
	s->want_crc = deflate;
	if (deflate && !(s->z = zcodec_deflate_new()))
		return -ENOMEM;
	return 0;
}

/* Raw mode: the stage is the data of a chunk not yet pushed, so a full stage
 * is pushed as is, without a copy. */
static struct sink_chunk *stage_chunk(struct sink *s)
{
	return (struct sink_chunk *)(s->stage - offsetof(struct sink_chunk, data));
}

static int deflate_bytes(struct sink *s, const char *buf, size_t len, bool sync)
{
	struct zcodec_buf b = {(const unsigned char *)buf, len, NULL, 0};

	if (s->want_crc)
		s->crc = zcodec_crc32(s->crc, buf, len);
	do {
		/* Deflated bytes never share a chunk with text (a spilled sink). */
		if (!s->tail || s->tail->cap - s->tail->len < ZCODEC_MIN_ROOM ||
		    !s->tail->deflated) {
			struct sink_chunk *c = chunk_new(SINK_CHUNK);
			if (!c)
				return -ENOMEM;
			c->deflated = true;
			chunk_push(s, c);
		}
		struct sink_chunk *t = s->tail;
		b.out = (unsigned char *)t->data + t->len;
		b.out_len = t->cap - t->len;
		if (zcodec_deflate_step(s->z, &b, sync) < 0)
			return -EIO;
		size_t made = t->cap - t->len - b.out_len;
		t->len += made;
		s->out_bytes += made;
	} while (b.out_len == 0 || b.in_len > 0);
	return 0;
}

static int deflate_handed(void *ctx, const char *buf, size_t len)
{
	return deflate_bytes(ctx, buf, len, false);
}

/* A full stage goes to the sink's thread, which from then on alone owns
 * the z_stream, the chunk list and the crc, until sink_finish. */
static int deflate_stage(struct sink *s, bool sync)
{
	int rc;

	s->raw_bytes += s->stage_len;
	if (!sync &&
	    (s->deflater || (s->deflater = sinkthread_start(deflate_handed, stage_give, s)))) {
		rc = sinkthread_push(s->deflater, s->stage, s->stage_len);
		s->stage = NULL;
		s->stage_cap = 0;
	} else {
		rc = deflate_bytes(s, s->stage, s->stage_len, sync);
	}
	s->stage_len = 0;
	return rc;
}

static int flush_stage(struct sink *s, bool sync)
{
	if (s->deflating)
		return deflate_stage(s, sync);
	if (!s->stage)
		return 0;
	struct sink_chunk *c = stage_chunk(s);
	c->len = s->stage_len;
	s->raw_bytes += c->len;
	if (s->spill_budget) {
		c->held = true;
		__atomic_add_fetch(&spill_held, c->len, __ATOMIC_RELAXED);
	}
	chunk_push(s, c);
	s->stage = NULL;
	s->stage_len = s->stage_cap = 0;
	return 0;
}

static int stage_alloc(struct sink *s, size_t n)
{
	/* Large stages only once a thread takes them: a small part never
	 * maps a megabyte. */
	size_t unit = s->deflater ? SINK_DEFLATE_STAGE : SINK_CHUNK;
	size_t cap = n > unit ? n : unit;
	if (s->deflating) {
		if (s->stage && s->stage_cap >= cap)
			return 0;
		/* Empty here: nothing to keep. */
		char *p = stage_take(cap);
		if (!p)
			return -ENOMEM;
		stage_give(s->stage);
		s->stage = p;
	} else {
		/* An empty stage too small for n: replace it. */
		struct sink_chunk *c = chunk_new(cap);
		if (!c)
			return -ENOMEM;
		if (s->stage)
			chunk_free(stage_chunk(s));
		s->stage = c->data;
	}
	s->stage_cap = cap;
	return 0;
}

void sink_spill_budget(struct sink *s, size_t budget)
{
	s->spill_budget = budget;
	s->spill_given = budget;
}

int sink_init_like(struct sink *s, const struct sink *like)
{
	int rc = sink_init(s, like->want_crc, like->limit);
	if (rc == 0 && !like->want_crc)
		sink_spill_budget(s, like->spill_given);
	return rc;
}

/* Raw until the budget is spent, then deflated: what was written stays as
 * it is. */
static int spill(struct sink *s)
{
	if (s->stage_len && flush_stage(s, false) < 0)
		return -ENOMEM;
	if (s->stage) {
		chunk_free(stage_chunk(s));
		s->stage = NULL;
		s->stage_cap = 0;
	}
	if (!(s->z = zcodec_deflate_new()))
		return -ENOMEM;
	s->deflating = true;
	s->spill_budget = 0;
	return 0;
}

/* sink_reserve's way when the stage has no room: a new stage, or a spill. */
char *sink_reserve_more(struct sink *s, size_t n)
{
	/* The limit counts uncompressed bytes, so it means the same with gzip. */
	if (s->overflow || s->raw_bytes + s->stage_len + n > s->limit)
		goto err_overflow;
	if (s->stage && s->stage_cap - s->stage_len >= n)
		return s->stage + s->stage_len;
	if (s->spill_budget && sink_spill_held() + s->stage_len >= s->spill_budget && spill(s) < 0)
		goto err_overflow;
	if (s->stage_len && flush_stage(s, false) < 0)
		goto err_overflow;
	if (stage_alloc(s, n) < 0)
		goto err_overflow;
	return s->stage + s->stage_len;
err_overflow:
	s->overflow = true;
	return NULL;
}

int sink_write(struct sink *s, const void *p, size_t n)
{
	char *d = sink_reserve(s, n);
	if (!d)
		return -ENOBUFS;
	memcpy(d, p, n);
	sink_commit(s, d + n);
	return 0;
}

int sink_finish(struct sink *s)
{
	int rc = 0;
	if (s->deflating) {
		if (s->deflater)
			rc = sinkthread_stop(s->deflater, false);
		s->deflater = NULL;
		if (rc == 0)
			rc = deflate_stage(s, true);
		zcodec_deflate_free(s->z);
		s->z = NULL;
		s->deflating = false;
		stage_give(s->stage);
		s->stage = NULL;
		s->stage_cap = 0;
		/* Finished deflated sinks can take raw bytes no more; mark them. */
		s->overflow = true;
		return rc;
	}
	if (s->stage_len)
		rc = flush_stage(s, false);
	else if (s->stage) {
		chunk_free(stage_chunk(s));
		s->stage = NULL;
		s->stage_cap = 0;
	}
	return rc;
}

void sink_append(struct sink *into, struct sink *s)
{
	if (!s->head)
		return;
	if (into->tail)
		into->tail->next = s->head;
	else
		into->head = s->head;
	into->tail = s->tail;
	into->out_bytes += s->out_bytes;
	into->crc = crc32_combine(into->crc, s->crc, (z_off_t)s->raw_bytes);
	into->raw_bytes += s->raw_bytes;
	s->head = s->tail = NULL;
	s->out_bytes = 0;
}

/* The pool's size follows the largest of the last responses freed, and
 * shrinks by an eighth with each smaller one. */
static void pool_size_for(const struct sink_chunk *c)
{
	size_t n = 0;
	for (; c; c = c->next)
		n += c->cap == SINK_CHUNK;
	if (n == 0)
		return;
	pthread_mutex_lock(&pool_lock);
	pool_cap -= pool_cap / 8;
	if (n > pool_cap)
		pool_cap = n < SINK_POOL_MAX ? n : SINK_POOL_MAX;
	pthread_mutex_unlock(&pool_lock);
}

void sink_free(struct sink *s)
{
	if (s->deflater) /* first: it may still be adding chunks */
		sinkthread_stop(s->deflater, true);
	pool_size_for(s->head);
	struct sink_chunk *c = s->head, *next;
	for (; c; c = next) {
		next = c->next;
		chunk_free(c);
	}
	if (s->deflating) {
		zcodec_deflate_free(s->z);
		stage_give(s->stage);
	} else if (s->stage) {
		chunk_free(stage_chunk(s));
	}
	memset(s, 0, sizeof(*s));
}

void gzip_header(unsigned char out[GZIP_HEADER_LEN])
{
	static const unsigned char h[GZIP_HEADER_LEN] = {
	    0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 /* Unix */
	};
	memcpy(out, h, sizeof(h));
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

void gzip_trailer(unsigned char out[GZIP_TRAILER_LEN], uint32_t crc, uint64_t len)
{
	/* A final, empty, fixed-Huffman block: BFINAL=1, BTYPE=01, EOB. */
	out[0] = 0x03;
	out[1] = 0x00;
	put_le32(out + 2, crc);
	put_le32(out + 6, (uint32_t)len);
}
