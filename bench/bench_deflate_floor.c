/* The floor for gzip scrapes: zlib deflating the same bytes, at the level
 * and in the pieces the sinks use, with the crc32 gzip needs; the sinks'
 * own codec (ISA-L where built with it) the same way; and, when built with
 * it, libdeflate on the same 1 MiB pieces (each a whole stream, so not a
 * drop-in: a reference for what another deflate would give).
 *   bench_deflate_floor FILE */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "sink.h"
#include "zcodec.h"

#define ROUNDS 5

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(buf = malloc((size_t)n)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	*len = buf ? (size_t)n : 0;
	return buf;
}

static double zlib_once(const char *in, size_t len, unsigned char *out, size_t cap, size_t *made)
{
	z_stream z = {0};
	double t0 = now();
	uLong crc = crc32(0, NULL, 0);

	deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	for (size_t at = 0; at < len; at += SINK_DEFLATE_STAGE) {
		size_t n = len - at < SINK_DEFLATE_STAGE ? len - at : SINK_DEFLATE_STAGE;
		crc = crc32(crc, (const Bytef *)in + at, (uInt)n);
		z.next_in = (Bytef *)in + at;
		z.avail_in = (uInt)n;
		deflate(&z, at + n == len ? Z_SYNC_FLUSH : Z_NO_FLUSH);
	}
	*made = cap - z.avail_out;
	deflateEnd(&z);
	double t = now() - t0;
	__asm__ volatile("" : : "r"(crc) : "memory");
	return t;
}

static double codec_once(const char *in, size_t len, unsigned char *out, size_t cap, size_t *made)
{
	struct zcodec_deflate *d = zcodec_deflate_new();
	double t0 = now();
	uint32_t crc = 0;
	struct zcodec_buf b = {NULL, 0, out, cap};

	for (size_t at = 0; d && at < len; at += SINK_DEFLATE_STAGE) {
		size_t n = len - at < SINK_DEFLATE_STAGE ? len - at : SINK_DEFLATE_STAGE;
		crc = zcodec_crc32(crc, in + at, n);
		b.in = (const unsigned char *)in + at;
		b.in_len = n;
		while (b.in_len > 0 || (at + n == len && b.out_len == 0))
			if (zcodec_deflate_step(d, &b, at + n == len) < 0)
				break;
	}
	*made = cap - b.out_len;
	double t = now() - t0;
	zcodec_deflate_free(d);
	__asm__ volatile("" : : "r"(crc) : "memory");
	return t;
}

#ifdef HAVE_LIBDEFLATE
static double libdeflate_once(const char *in, size_t len, unsigned char *out, size_t cap,
			      size_t *made)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
	double t0 = now();
	uint32_t crc = 0;

	*made = 0;
	for (size_t at = 0; at < len; at += SINK_DEFLATE_STAGE) {
		size_t n = len - at < SINK_DEFLATE_STAGE ? len - at : SINK_DEFLATE_STAGE;
		crc = libdeflate_crc32(crc, in + at, n);
		*made += libdeflate_deflate_compress(c, in + at, n, out + *made, cap - *made);
	}
	double t = now() - t0;
	libdeflate_free_compressor(c);
	__asm__ volatile("" : : "r"(crc) : "memory");
	return t;
}
#endif

int main(int argc, char **argv)
{
	size_t len, cap, made = 0;
	char *in = argc == 2 ? read_all(argv[1], &len) : NULL;
	if (!in) {
		fprintf(stderr, "usage: bench_deflate_floor FILE (a non-empty file)\n");
		return 2;
	}
	cap = len + len / 8 + 65536;
	unsigned char *out = malloc(cap);
	double best = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t = zlib_once(in, len, out, cap, &made);
		best = t < best ? t : best;
	}
	printf("deflate floor: zlib level 1 with crc32, %.1f MB -> %.1f MB: %.3f s (best of %d)\n",
	       len / 1e6, made / 1e6, best, ROUNDS);
	best = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t = codec_once(in, len, out, cap, &made);
		best = t < best ? t : best;
	}
	printf(
	    "deflate floor: the sinks' codec (%s) level 1 with crc32, %.1f MB -> %.1f MB: %.3f s "
	    "(best of %d)\n",
	    zcodec_name(), len / 1e6, made / 1e6, best, ROUNDS);
#ifdef HAVE_LIBDEFLATE
	best = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t = libdeflate_once(in, len, out, cap, &made);
		best = t < best ? t : best;
	}
	printf("deflate floor: libdeflate level 1 with crc32, 1 MiB streams, %.1f MB -> %.1f MB: "
	       "%.3f s (best of %d)\n",
	       len / 1e6, made / 1e6, best, ROUNDS);
#else
	printf("SKIP libdeflate floor: built without libdeflate (libdeflate-dev)\n");
#endif
	free(out);
	free(in);
	return 0;
}
