/* Raw deflate and inflate for the sinks: ISA-L's igzip when built with
 * HAVE_ISAL, zlib otherwise. One interface, so that the sinks and the
 * scrape never see which. */
#include "zcodec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "blockpool.h"

#ifdef HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

/* Both libraries count a step's bytes in 32 bits; a longer input simply
 * takes more steps. */
static uint32_t clamp32(size_t n)
{
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* What each backend (below) does: make, reset and free a deflater, and
 * make one call of its library on in[0..*in_left) and out[0..*out_left),
 * both left with what that call did not use. */
static struct zcodec_deflate *deflate_make(void);
static void deflate_reset(struct zcodec_deflate *d);
static void deflate_release(struct zcodec_deflate *d);
static int deflate_run(struct zcodec_deflate *d, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left, bool sync);
static int inflate_run(struct zcodec_inflate *z, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left);

static void deflate_release_block(void *d)
{
	deflate_release(d);
}

static struct blockpool cache = BLOCKPOOL_INIT(ZCODEC_CACHE, deflate_release_block);

void zcodec_deflate_free(struct zcodec_deflate *d)
{
	if (!d)
		return;
	deflate_reset(d);
	blockpool_give(&cache, d);
}

void zcodec_cache_drain(void)
{
	blockpool_drain(&cache);
}

struct zcodec_deflate *zcodec_deflate_new(void)
{
	struct zcodec_deflate *d = blockpool_take(&cache);
	return d ? d : deflate_make();
}

/* Moves b past what a step of `in` and `out` bytes used. */
static void advance(struct zcodec_buf *b, uint32_t in, uint32_t in_left, uint32_t out,
		    uint32_t out_left)
{
	b->in += in - in_left;
	b->in_len -= in - in_left;
	b->out += out - out_left;
	b->out_len -= out - out_left;
}

int zcodec_deflate_step(struct zcodec_deflate *d, struct zcodec_buf *b, bool sync)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len), in_left = in, out_left = out;

	if (out < ZCODEC_MIN_ROOM)
		return -EIO;
	/* A sync flush only once this call is given all that is left. */
	if (deflate_run(d, b->in, &in_left, b->out, &out_left, sync && in == b->in_len) < 0)
		return -EIO;
	advance(b, in, in_left, out, out_left);
	return 0;
}

int zcodec_inflate_step(struct zcodec_inflate *z, struct zcodec_buf *b)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len), in_left = in, out_left = out;

	if (inflate_run(z, b->in, &in_left, b->out, &out_left) < 0)
		return -EIO;
	advance(b, in, in_left, out, out_left);
	return 0;
}

#ifdef HAVE_ISAL

struct zcodec_deflate {
	struct isal_zstream s;
	unsigned char level_buf[ISAL_DEF_LVL1_DEFAULT];
};

struct zcodec_inflate {
	struct inflate_state s;
};

const char *zcodec_name(void)
{
	return "isa-l";
}

static struct zcodec_deflate *deflate_make(void)
{
	struct zcodec_deflate *d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	isal_deflate_init(&d->s);
	d->s.level = 1;
	d->s.level_buf = d->level_buf;
	d->s.level_buf_size = sizeof(d->level_buf);
	d->s.gzip_flag = IGZIP_DEFLATE;
	return d;
}

static int deflate_run(struct zcodec_deflate *d, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left, bool sync)
{
	d->s.next_in = (uint8_t *)in;
	d->s.avail_in = *in_left;
	d->s.next_out = out;
	d->s.avail_out = *out_left;
	d->s.flush = sync ? SYNC_FLUSH : NO_FLUSH;
	int rc = isal_deflate(&d->s);
	*in_left = d->s.avail_in;
	*out_left = d->s.avail_out;
	return rc == COMP_OK ? 0 : -EIO;
}

/* A stream anew, keeping level, buffer and wrapper. */
static void deflate_reset(struct zcodec_deflate *d)
{
	isal_deflate_reset(&d->s);
}

static void deflate_release(struct zcodec_deflate *d)
{
	free(d);
}

struct zcodec_inflate *zcodec_inflate_new(void)
{
	struct zcodec_inflate *z = malloc(sizeof(*z));
	if (z)
		isal_inflate_init(&z->s);
	return z;
}

void zcodec_inflate_reset(struct zcodec_inflate *z)
{
	isal_inflate_reset(&z->s);
}

static int inflate_run(struct zcodec_inflate *z, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left)
{
	z->s.next_in = (uint8_t *)in;
	z->s.avail_in = *in_left;
	z->s.next_out = out;
	z->s.avail_out = *out_left;
	int rc = isal_inflate(&z->s);
	*in_left = z->s.avail_in;
	*out_left = z->s.avail_out;
	return rc == ISAL_DECOMP_OK || rc == ISAL_END_INPUT || rc == ISAL_OUT_OVERFLOW ? 0 : -EIO;
}

void zcodec_inflate_free(struct zcodec_inflate *z)
{
	free(z);
}

uint32_t zcodec_crc32(uint32_t crc, const void *p, size_t n)
{
	/* crc32_gzip_refl takes a length of 64 bits. */
	return crc32_gzip_refl(crc, (unsigned char *)p, n);
}

#else /* zlib */

struct zcodec_deflate {
	z_stream z;
};

struct zcodec_inflate {
	z_stream z;
};

const char *zcodec_name(void)
{
	return "zlib";
}

static struct zcodec_deflate *deflate_make(void)
{
	struct zcodec_deflate *d = calloc(1, sizeof(*d));
	if (d && deflateInit2(&d->z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(d);
		d = NULL;
	}
	return d;
}

static int deflate_run(struct zcodec_deflate *d, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left, bool sync)
{
	d->z.next_in = (Bytef *)in;
	d->z.avail_in = *in_left;
	d->z.next_out = out;
	d->z.avail_out = *out_left;
	int rc = deflate(&d->z, sync ? Z_SYNC_FLUSH : Z_NO_FLUSH);
	*in_left = d->z.avail_in;
	*out_left = d->z.avail_out;
	return rc == Z_STREAM_ERROR ? -EIO : 0;
}

static void deflate_reset(struct zcodec_deflate *d)
{
	deflateReset(&d->z);
}

static void deflate_release(struct zcodec_deflate *d)
{
	deflateEnd(&d->z);
	free(d);
}

struct zcodec_inflate *zcodec_inflate_new(void)
{
	struct zcodec_inflate *z = calloc(1, sizeof(*z));
	if (z && inflateInit2(&z->z, -15) != Z_OK) {
		free(z);
		z = NULL;
	}
	return z;
}

void zcodec_inflate_reset(struct zcodec_inflate *z)
{
	inflateReset(&z->z);
}

static int inflate_run(struct zcodec_inflate *z, const unsigned char *in, uint32_t *in_left,
		       unsigned char *out, uint32_t *out_left)
{
	z->z.next_in = (Bytef *)in;
	z->z.avail_in = *in_left;
	z->z.next_out = out;
	z->z.avail_out = *out_left;
	int rc = inflate(&z->z, Z_SYNC_FLUSH);
	*in_left = z->z.avail_in;
	*out_left = z->z.avail_out;
	return rc == Z_OK || rc == Z_BUF_ERROR || rc == Z_STREAM_END ? 0 : -EIO;
}

void zcodec_inflate_free(struct zcodec_inflate *z)
{
	if (!z)
		return;
	inflateEnd(&z->z);
	free(z);
}

uint32_t zcodec_crc32(uint32_t crc, const void *p, size_t n)
{
	while (n > 0) {
		uInt k = clamp32(n);
		crc = (uint32_t)crc32(crc, p, k);
		p = (const unsigned char *)p + k;
		n -= k;
	}
	return crc;
}

#endif
