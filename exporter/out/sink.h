/* Output of one scrape part: a chain of chunks, raw or deflated, capped in size. */
#ifndef BS_SINK_H
#define BS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sinkthread.h"
#include "zcodec.h"

#define SINK_CHUNK 65536
/* A deflating sink hands stages this large to its thread: each hand-over
 * may wake a sleeping CPU, which costs tens of microseconds in a VM. */
#define SINK_DEFLATE_STAGE (1u << 20)
/* Free chunks kept for the next scrapes: at most 16 MiB. */
#define SINK_POOL_MAX 256
/* Free deflate stages kept: as many as a deflating part holds at once. */
#define SINK_STAGE_POOL (SINKTHREAD_QUEUE + 2)

struct sink_chunk {
	struct sink_chunk *next;
	size_t len;
	size_t cap;
	bool deflated; /* raw deflate data, not text */
	bool held;     /* text counted against the spill budget until freed */
	char data[];
};

struct sink {
	char *stage; /* where writers format; a chunk's data when raw */
	size_t stage_len;
	size_t stage_cap;
	struct sink_chunk *head, *tail;
	size_t out_bytes; /* bytes in finished chunks */
	size_t limit;	  /* the most raw (uncompressed) bytes it takes */
	bool overflow;	  /* a write was refused for the limit */
	bool deflating;
	size_t spill_budget;	  /* raw sinks: the text all may hold before the rest is deflated */
	size_t spill_given;	  /* the budget it was given, for sinks made like it */
	struct zcodec_deflate *z; /* while deflating */
	struct sinkthread *deflater; /* deflating full stages, once a stage filled */
	bool want_crc;		     /* a gzip response's part, not a spilled one */
	uint32_t crc;		     /* of the uncompressed bytes, for the gzip trailer */
	uint64_t raw_bytes;
};

/* `deflate`: compress into raw deflate blocks that end byte-aligned, so the
 * sinks of one scrape concatenate into one gzip member. Past its first full
 * stage a deflating sink deflates on a thread of its own. */
int sink_init(struct sink *s, bool deflate, size_t limit);
/* A sink made as `like` was: deflating or raw with its spill budget, and
 * the same limit (which each sink applies to its own bytes alone). */
int sink_init_like(struct sink *s, const struct sink *like);
/* A raw sink that keeps text while all such sinks together hold less than
 * `budget` bytes of it, and keeps the rest of its output deflated (its
 * chunks flagged): uncompressed responses never hold more than about the
 * budget as text, whatever their number. 0: it never spills. */
void sink_spill_budget(struct sink *s, size_t budget);
/* The text held by such sinks now. */
size_t sink_spill_held(void);
char *sink_reserve_more(struct sink *s, size_t n);
/* Room for n more bytes at the returned pointer, or NULL once over the limit
 * or out of memory (s->overflow is then set and the sink takes no more).
 * Inline while the stage has room: every line of a scrape asks. */
static inline char *sink_reserve(struct sink *s, size_t n)
{
	if (s->stage && s->stage_cap - s->stage_len >= n &&
	    s->raw_bytes + s->stage_len + n <= s->limit && !s->overflow)
		return s->stage + s->stage_len;
	return sink_reserve_more(s, n);
}
static inline void sink_commit(struct sink *s, char *end)
{
	s->stage_len = (size_t)(end - s->stage);
}
int sink_write(struct sink *s, const void *p, size_t n);
/* Flushes the stage; after it the chunks hold everything written. */
int sink_finish(struct sink *s);
/* Takes s's chunks onto the end of `into`, crc and length combined. */
void sink_append(struct sink *into, struct sink *s);
void sink_free(struct sink *s);
/* Frees the chunks, stages and deflaters kept for reuse (at exit, or to
 * count live memory). */
void sink_pool_drain(void);

/* The gzip member's header and trailer around a deflated scrape. */
#define GZIP_HEADER_LEN 10
#define GZIP_TRAILER_LEN 10 /* final empty block (2) + crc32 + isize */
void gzip_header(unsigned char out[GZIP_HEADER_LEN]);
void gzip_trailer(unsigned char out[GZIP_TRAILER_LEN], uint32_t crc, uint64_t len);

#endif
