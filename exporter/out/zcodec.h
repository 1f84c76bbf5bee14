/* Raw deflate for the sinks, and its inverse for spilled text: Intel
 * ISA-L's igzip where the build found libisal (five times zlib's speed at
 * level 1 here, with output as small), zlib otherwise. Either writes
 * streams any inflater reads. */
#ifndef BS_ZCODEC_H
#define BS_ZCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a step reads and writes; both advance as it goes. */
struct zcodec_buf {
	const unsigned char *in;
	size_t in_len;
	unsigned char *out;
	size_t out_len;
};

struct zcodec_deflate;
struct zcodec_inflate;

/* "isa-l" or "zlib": which one this build uses. */
const char *zcodec_name(void);

/* The least output room a step may be given: a sync flush into less
 * can end with no room left and begin again at the next step, for ever. */
#define ZCODEC_MIN_ROOM 16

/* A raw deflate stream at the fastest level (1). NULL when out of memory.
 * Freed ones are kept for the next (at most ZCODEC_CACHE): each holds a
 * few hundred KiB whose pages would be faulted in anew. */
#define ZCODEC_CACHE 4
struct zcodec_deflate *zcodec_deflate_new(void);
/* Deflates as much of b's input as b's output (at least ZCODEC_MIN_ROOM)
 * takes. `sync` ends what was given so far on a byte boundary (an empty
 * stored block), so that another stream's bytes may follow as the same
 * stream's. Call again while b->out_len is 0 or input is left. Returns 0,
 * or -EIO (also for too little room). */
int zcodec_deflate_step(struct zcodec_deflate *d, struct zcodec_buf *b, bool sync);
void zcodec_deflate_free(struct zcodec_deflate *d);
/* Frees the deflaters kept (at exit, or to count live memory). */
void zcodec_cache_drain(void);

/* Inflates what zcodec_deflate made (raw deflate, no final block needed). */
struct zcodec_inflate *zcodec_inflate_new(void);
/* A new stream from the next byte on. */
void zcodec_inflate_reset(struct zcodec_inflate *z);
/* Inflates as much of b's input as b's output takes. Returns 0, or -EIO on
 * data that is not deflate. */
int zcodec_inflate_step(struct zcodec_inflate *z, struct zcodec_buf *b);
void zcodec_inflate_free(struct zcodec_inflate *z);

/* gzip's CRC-32 of p[0..n) continued from crc (0 to start). */
uint32_t zcodec_crc32(uint32_t crc, const void *p, size_t n);

#endif
