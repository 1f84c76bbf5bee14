/* Test helpers: run emitter calls into a string. */
#ifndef BS_TEST_HELPERS_H
#define BS_TEST_HELPERS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "emitter.h"
#include "sink.h"

struct capture {
	struct sink sink;
	struct famreg reg;
	struct emitter em;
	char *text;
	int join_rc; /* emitter_join_forks': -ENOBUFS past the limit */
};

static inline void capture_begin(struct capture *c, enum expo_format f, size_t limit)
{
	assert_int_equal(sink_init(&c->sink, false, limit), 0);
	assert_int_equal(famreg_init(&c->reg), 0);
	emitter_init(&c->em, f, &c->sink, &c->reg, 0);
	c->text = NULL;
}

/* Ends the capture, as the scrape does a collect's (forks after the
 * emitter's own output), and returns everything written, NUL-terminated. */
static inline const char *capture_end(struct capture *c)
{
	size_t n = 0;
	c->join_rc = emitter_join_forks(&c->em);
	assert_true(c->join_rc == 0 || c->join_rc == -ENOBUFS);
	for (struct sink_chunk *k = c->sink.head; k; k = k->next)
		n += k->len;
	c->text = malloc(n + 1);
	n = 0;
	for (struct sink_chunk *k = c->sink.head; k; k = k->next) {
		memcpy(c->text + n, k->data, k->len);
		n += k->len;
	}
	c->text[n] = '\0';
	return c->text;
}

static inline void capture_free(struct capture *c)
{
	emitter_free(&c->em);
	famreg_free(&c->reg);
	sink_free(&c->sink);
	free(c->text);
}

/* The chunks of a finished sink, one after another, into out. */
static inline size_t sink_gather(const struct sink *s, unsigned char *out)
{
	size_t n = 0;
	for (struct sink_chunk *c = s->head; c; c = c->next) {
		memcpy(out + n, c->data, c->len);
		n += c->len;
	}
	return n;
}

/* A finished deflating sink as a gzip response wraps it, read back by
 * zlib (crc and length checked) into plain: the length read. */
static inline size_t sink_gunzip(const struct sink *s, unsigned char *plain, size_t cap)
{
	static unsigned char body[1 << 21];
	size_t n = GZIP_HEADER_LEN;
	z_stream z = {0};

	gzip_header(body);
	n += sink_gather(s, body + n);
	gzip_trailer(body + n, s->crc, s->raw_bytes);
	n += GZIP_TRAILER_LEN;
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = body;
	z.avail_in = (uInt)n;
	z.next_out = plain;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	inflateEnd(&z);
	return z.total_out;
}

static inline uint64_t capture_drops(const struct capture *c, const char *reason)
{
	for (size_t i = 0; i < c->em.ndrops; i++)
		if (strcmp(c->em.drops[i].reason, reason) == 0)
			return c->em.drops[i].n;
	return 0;
}

#endif
