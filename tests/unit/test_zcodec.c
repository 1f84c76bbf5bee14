/* The sinks' codec (ISA-L or zlib, as built): what it deflates zlib
 * inflates, streams chain after a sync flush, any buffer sizes work down
 * to one byte, its inflater reads it back, and its CRC is gzip's. */
#include "helpers.h"

#include <sys/random.h>
#include <zlib.h>

#include "zcodec.h"

#define TEXT_LEN (3u << 20)

/* Exposition-like text with some randomness, so that matches and
 * literals both occur. */
static unsigned char *make_text(size_t len)
{
	unsigned char *t = malloc(len);
	size_t n = 0;
	unsigned seed = 7;

	assert_non_null(t);
	while (n < len) {
		char line[96];
		seed = seed * 1103515245u + 12345u;
		int k = snprintf(line, sizeof(line),
				 "kvm_vcpu_exits_total{vm=\"vm%u\",vcpu=\"%u\"} %u\n", seed % 1000,
				 seed % 8, seed);
		size_t take = (size_t)k < len - n ? (size_t)k : len - n;
		memcpy(t + n, line, take);
		n += take;
	}
	return t;
}

/* Deflates `in` in pieces of `piece` bytes into outputs of `room` bytes,
 * a sync flush after every `sync_every` pieces and at the end. */
static size_t deflate_all(const unsigned char *in, size_t len, size_t piece, size_t room,
			  size_t sync_every, unsigned char *out, size_t cap)
{
	struct zcodec_deflate *d = zcodec_deflate_new();
	size_t made = 0, k = 0;

	assert_non_null(d);
	for (size_t at = 0; at < len; at += piece, k++) {
		size_t n = len - at < piece ? len - at : piece;
		bool sync = at + n == len || (k + 1) % sync_every == 0;
		struct zcodec_buf b = {in + at, n, NULL, 0};
		do {
			size_t r = cap - made < room ? cap - made : room;
			assert_true(r > 0);
			b.out = out + made;
			b.out_len = r;
			assert_int_equal(zcodec_deflate_step(d, &b, sync), 0);
			made += r - b.out_len;
		} while (b.out_len == 0 || b.in_len > 0);
	}
	zcodec_deflate_free(d);
	return made;
}

static size_t zlib_inflate(const unsigned char *in, size_t len, unsigned char *out, size_t cap)
{
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = inflate(&z, Z_SYNC_FLUSH);
	assert_true(rc == Z_OK || rc == Z_BUF_ERROR);
	assert_int_equal(z.avail_in, 0); /* every byte was deflate */
	size_t n = z.total_out;
	inflateEnd(&z);
	return n;
}

/* Deflates `in` as deflate_all does into `packed` (room for cap bytes),
 * and checks that zlib reads back exactly `in`; returns the packed size. */
static size_t round_trip(const unsigned char *in, size_t len, size_t piece, size_t room,
			 size_t sync_every, unsigned char *packed, size_t cap)
{
	unsigned char *back = malloc(len + 1);
	size_t n = deflate_all(in, len, piece, room, sync_every, packed, cap);

	assert_non_null(back);
	assert_int_equal(zlib_inflate(packed, n, back, len + 1), len);
	assert_memory_equal(back, in, len);
	free(back);
	return n;
}

static void test_zlib_reads_it(void **state)
{
	unsigned char *text = make_text(TEXT_LEN), *packed = malloc(TEXT_LEN);
	(void)state;

	/* Large pieces as the sinks' stages; then 1 KiB pieces, syncing often. */
	size_t n = round_trip(text, TEXT_LEN, 1u << 20, 65536, 1000, packed, TEXT_LEN);
	assert_true(n < TEXT_LEN / 4);
	round_trip(text, TEXT_LEN, 1024, 4096, 3, packed, TEXT_LEN);
	free(text);
	free(packed);
}

/* The least output room at a time, and incompressible input. */
static void test_tiny_buffers(void **state)
{
	size_t len = 200000;
	unsigned char *text = make_text(len), *rnd = malloc(len), *packed = malloc(4 * len);
	(void)state;

	/* A sync flush every 35 bytes: an empty stored block each time. */
	round_trip(text, len, 7, ZCODEC_MIN_ROOM, 5, packed, 4 * len);
	assert_int_equal(getrandom(rnd, len, 0), (ssize_t)len);
	round_trip(rnd, len, 65536, ZCODEC_MIN_ROOM, 1, packed, 4 * len);
	free(text);
	free(rnd);
	free(packed);
}

/* Two streams, each ending with a sync flush, read as one; the codec's
 * inflater reads them a byte of input and of output at a time too. */
static void test_chained_streams_inflate(void **state)
{
	size_t len = 300000;
	unsigned char *text = make_text(len);
	unsigned char *packed = malloc(len), *back = malloc(len + 1);
	(void)state;

	size_t a = deflate_all(text, len / 3, 65536, 65536, 1000, packed, len);
	size_t b =
	    deflate_all(text + len / 3, len - len / 3, 65536, 65536, 1000, packed + a, len - a);
	struct zcodec_inflate *z = zcodec_inflate_new();
	assert_non_null(z);
	struct zcodec_buf buf = {packed, a + b, back, len + 1};
	assert_int_equal(zcodec_inflate_step(z, &buf), 0);
	assert_int_equal(buf.in_len, 0);
	assert_int_equal(len + 1 - buf.out_len, len);
	assert_memory_equal(back, text, len);

	zcodec_inflate_reset(z);
	size_t got = 0;
	for (size_t at = 0; at < a + b; at++) {
		struct zcodec_buf one = {packed + at, 1, back + got, 1};
		do {
			one.out = back + got;
			one.out_len = 1;
			assert_int_equal(zcodec_inflate_step(z, &one), 0);
			got += 1 - one.out_len;
		} while (one.out_len == 0);
		assert_int_equal(one.in_len, 0);
	}
	assert_int_equal(got, len);
	assert_memory_equal(back, text, len);

	/* Not deflate: a reserved block type (BTYPE 11) is refused. */
	unsigned char bad[8] = {0x07, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	zcodec_inflate_reset(z);
	struct zcodec_buf wrong = {bad, sizeof(bad), back, len};
	assert_int_equal(zcodec_inflate_step(z, &wrong), -EIO);
	zcodec_inflate_free(z);
	free(text);
	free(packed);
	free(back);
}

/* A deflater freed and taken again starts a stream of its own: what it
 * made before is no history for the next (which back-references would
 * need, and an inflater of the next alone would not have). */
static void test_reused_deflater_starts_anew(void **state)
{
	size_t len = 100000;
	unsigned char *text = make_text(len), *packed = malloc(len);
	(void)state;

	zcodec_cache_drain();
	for (int i = 0; i < 4; i++) /* the first makes it, the others take it again */
		round_trip(text, len, 65536, 65536, 1000, packed, len);
	zcodec_cache_drain();
	free(text);
	free(packed);
}

static void test_crc_is_gzips(void **state)
{
	size_t len = 100003;
	unsigned char *text = make_text(len);
	(void)state;

	uint32_t mine = 0;
	for (size_t at = 0; at < len; at += 4096)
		mine = zcodec_crc32(mine, text + at, len - at < 4096 ? len - at : 4096);
	assert_int_equal(mine, (uint32_t)crc32(0, text, (uInt)len));
	assert_int_equal(zcodec_crc32(0, text, 0), 0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zlib_reads_it),
	    cmocka_unit_test(test_tiny_buffers),
	    cmocka_unit_test(test_chained_streams_inflate),
	    cmocka_unit_test(test_reused_deflater_starts_anew),
	    cmocka_unit_test(test_crc_is_gzips),
	};
	fprintf(stderr, "codec: %s\n", zcodec_name());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
