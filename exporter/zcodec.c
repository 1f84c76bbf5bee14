/* Raw deflate and inflate for the sinks: ISA-L's igzip when built with
 * HAVE_ISAL, zlib otherwise. One interface, so that the sinks and the
 * scrape never see which. */
#include "zcodec.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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

struct zcodec_deflate;
static void deflate_reset(struct zcodec_deflate *d);
static void deflate_release(struct zcodec_deflate *d);

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zcodec_deflate *cache[ZCODEC_CACHE];
static size_t cached;

static struct zcodec_deflate *cache_take(void)
{
	struct zcodec_deflate *d = NULL;

	pthread_mutex_lock(&cache_lock);
	if (cached)
		d = cache[--cached];
	pthread_mutex_unlock(&cache_lock);
	return d;
}

void zcodec_deflate_free(struct zcodec_deflate *d)
{
	if (!d)
		return;
	deflate_reset(d);
	pthread_mutex_lock(&cache_lock);
	if (cached < ZCODEC_CACHE) {
		cache[cached++] = d;
		d = NULL;
	}
	pthread_mutex_unlock(&cache_lock);
	if (d)
		deflate_release(d);
}

void zcodec_cache_drain(void)
{
	pthread_mutex_lock(&cache_lock);
	while (cached)
		deflate_release(cache[--cached]);
	pthread_mutex_unlock(&cache_lock);
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

struct zcodec_deflate *zcodec_deflate_new(void)
{
	struct zcodec_deflate *d = cache_take();
	if (d)
		return d;
	if (!(d = malloc(sizeof(*d))))
		return NULL;
	isal_deflate_init(&d->s);
	d->s.level = 1;
	d->s.level_buf = d->level_buf;
	d->s.level_buf_size = sizeof(d->level_buf);
	d->s.gzip_flag = IGZIP_DEFLATE;
	return d;
}

int zcodec_deflate_step(struct zcodec_deflate *d, struct zcodec_buf *b, bool sync)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len);

	if (out < ZCODEC_MIN_ROOM)
		return -EIO;
	d->s.next_in = (uint8_t *)b->in;
	d->s.avail_in = in;
	d->s.next_out = b->out;
	d->s.avail_out = out;
	/* A sync flush only once this call is given all that is left. */
	d->s.flush = sync && in == b->in_len ? SYNC_FLUSH : NO_FLUSH;
	if (isal_deflate(&d->s) != COMP_OK)
		return -EIO;
	b->in += in - d->s.avail_in;
	b->in_len -= in - d->s.avail_in;
	b->out += out - d->s.avail_out;
	b->out_len -= out - d->s.avail_out;
	return 0;
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

int zcodec_inflate_step(struct zcodec_inflate *z, struct zcodec_buf *b)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len);

	z->s.next_in = (uint8_t *)b->in;
	z->s.avail_in = in;
	z->s.next_out = b->out;
	z->s.avail_out = out;
	int rc = isal_inflate(&z->s);
	if (rc != ISAL_DECOMP_OK && rc != ISAL_END_INPUT && rc != ISAL_OUT_OVERFLOW)
		return -EIO;
	b->in += in - z->s.avail_in;
	b->in_len -= in - z->s.avail_in;
	b->out += out - z->s.avail_out;
	b->out_len -= out - z->s.avail_out;
	return 0;
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

struct zcodec_deflate *zcodec_deflate_new(void)
{
	struct zcodec_deflate *d = cache_take();
	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (d && deflateInit2(&d->z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(d);
		d = NULL;
	}
	return d;
}

int zcodec_deflate_step(struct zcodec_deflate *d, struct zcodec_buf *b, bool sync)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len);

	if (out < ZCODEC_MIN_ROOM)
		return -EIO;
	d->z.next_in = (Bytef *)b->in;
	d->z.avail_in = in;
	d->z.next_out = b->out;
	d->z.avail_out = out;
	if (deflate(&d->z, sync && in == b->in_len ? Z_SYNC_FLUSH : Z_NO_FLUSH) == Z_STREAM_ERROR)
		return -EIO;
	b->in += in - d->z.avail_in;
	b->in_len -= in - d->z.avail_in;
	b->out += out - d->z.avail_out;
	b->out_len -= out - d->z.avail_out;
	return 0;
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

int zcodec_inflate_step(struct zcodec_inflate *z, struct zcodec_buf *b)
{
	uint32_t in = clamp32(b->in_len), out = clamp32(b->out_len);

	z->z.next_in = (Bytef *)b->in;
	z->z.avail_in = in;
	z->z.next_out = b->out;
	z->z.avail_out = out;
	int rc = inflate(&z->z, Z_SYNC_FLUSH);
	if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END)
		return -EIO;
	b->in += in - z->z.avail_in;
	b->in_len -= in - z->z.avail_in;
	b->out += out - z->z.avail_out;
	b->out_len -= out - z->z.avail_out;
	return 0;
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
