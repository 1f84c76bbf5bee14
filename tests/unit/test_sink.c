/* Sinks: raw chunks, and deflated parts that concatenate into one gzip member. */
#include "helpers.h"

static void fill(struct sink *s, const char *pattern, size_t total)
{
	size_t plen = strlen(pattern);
	for (size_t i = 0; i < total; i += plen)
		assert_int_equal(sink_write(s, pattern, plen), 0);
}

static void test_raw_chunks(void **state)
{
	struct sink s;
	static unsigned char out[1 << 20];
	(void)state;

	sink_init(&s, false, SIZE_MAX);
	fill(&s, "0123456789", 300000);
	assert_int_equal(sink_finish(&s), 0);
	assert_int_equal(sink_gather(&s, out), 300000);
	assert_memory_equal(out + 299990, "0123456789", 10);
	assert_non_null(s.head->next); /* more than one chunk */
	sink_free(&s);
}

/* A freed sink's chunks serve the next one, which sees only its own bytes. */
static void test_chunks_reused(void **state)
{
	struct sink s;
	static unsigned char out[1 << 20];
	(void)state;

	sink_init(&s, false, SIZE_MAX);
	fill(&s, "old old ", 200000);
	sink_finish(&s);
	const struct sink_chunk *last = s.tail; /* freed last, taken first */
	sink_free(&s);
	sink_init(&s, false, SIZE_MAX);
	fill(&s, "new", 3);
	sink_finish(&s);
	assert_ptr_equal(s.head, last);
	assert_int_equal(sink_gather(&s, out), 3);
	assert_memory_equal(out, "new", 3);
	sink_free(&s);
	sink_pool_drain();
}

/* Three parts deflated separately, then wrapped: zlib must read one stream. */
static void test_gzip_concatenation(void **state)
{
	static const char *const parts[] = {"alpha ", "beta beta ", "gamma! "};
	static const size_t sizes[] = {200000, 7, 100000};
	static unsigned char plain[1 << 20];
	struct sink all, part;
	size_t want = 0;
	(void)state;

	sink_init(&all, false, SIZE_MAX);
	for (int i = 0; i < 3; i++) {
		sink_init(&part, true, SIZE_MAX);
		fill(&part, parts[i], sizes[i]);
		want += part.stage_len + part.raw_bytes;
		assert_int_equal(sink_finish(&part), 0);
		sink_append(&all, &part);
		sink_free(&part);
	}
	assert_int_equal(all.raw_bytes, want);
	assert_int_equal(sink_gunzip(&all, plain, sizeof(plain)), want);
	assert_memory_equal(plain, "alpha alpha ", 12);
	assert_memory_equal(plain + want - 7, "gamma! ", 7);
	sink_free(&all);
}

/* Past its first full stage a gzip sink deflates on its own thread; what
 * it made reads back whole and in order, and a sink freed while that
 * thread still works frees everything (ASan's leak check). */
static void test_threaded_deflate(void **state)
{
	static unsigned char body[1 << 20], plain[3 << 20];
	struct sink s;
	char line[32];
	size_t want = 0;
	(void)state;

	sink_init(&s, true, SIZE_MAX);
	for (int i = 0; want < (2u << 20); i++) {
		int n = snprintf(line, sizeof(line), "line %d\n", i);
		assert_int_equal(sink_write(&s, line, (size_t)n), 0);
		want += (size_t)n;
	}
	assert_non_null(s.deflater);
	assert_int_equal(sink_finish(&s), 0);
	assert_null(s.deflater);
	size_t n = sink_gather(&s, body);
	z_stream z = {0};
	assert_int_equal(inflateInit2(&z, -15), Z_OK);
	z.next_in = body;
	z.avail_in = (uInt)n;
	z.next_out = plain;
	z.avail_out = sizeof(plain);
	inflate(&z, Z_SYNC_FLUSH);
	assert_int_equal(z.total_out, want);
	assert_memory_equal(plain, "line 0\nline 1\n", 14);
	assert_int_equal(crc32(0, plain, (uInt)want), s.crc);
	inflateEnd(&z);
	sink_free(&s);

	sink_init(&s, true, SIZE_MAX);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(sink_write(&s, "abandoned scrape\n", 17), 0);
	sink_free(&s);
}

struct consumed {
	size_t n;
	char first[8];
};

static int consume(void *ctx, const char *buf, size_t len)
{
	struct consumed *c = ctx;
	(void)len;
	c->first[c->n++] = buf[0];
	return c->n == 3 ? -EIO : 0;
}

static char *buffer(char c)
{
	char *b = malloc(1);
	*b = c;
	return b;
}

static void release(char *buf)
{
	free(buf);
}

/* Buffers are consumed in order; the thread's first error stops it and
 * reaches both the writer and the end. */
static void test_sinkthread_error(void **state)
{
	struct consumed c = {0};
	(void)state;

	struct sinkthread *t = sinkthread_start(consume, release, &c);
	assert_non_null(t);
	int rc = 0;
	for (char i = 'a'; i <= 'h' && rc == 0; i++)
		rc = sinkthread_push(t, buffer(i), 1);
	assert_int_equal(sinkthread_stop(t, false), -EIO);
	assert_int_equal(c.n, 3);
	assert_memory_equal(c.first, "abc", 3);
}

static void test_limit(void **state)
{
	struct sink s;
	char block[999];
	(void)state;
	memset(block, 'x', sizeof(block));
	sink_init(&s, true, 1000);
	assert_int_equal(sink_write(&s, block, sizeof(block)), 0);
	assert_int_equal(sink_write(&s, "xx", 2), -ENOBUFS);
	assert_true(s.overflow);
	assert_int_equal(sink_write(&s, "x", 1), -ENOBUFS); /* stays refused */
	sink_finish(&s);
	sink_free(&s);
}

static bool any_deflated(const struct sink *s)
{
	for (const struct sink_chunk *c = s->head; c; c = c->next)
		if (c->deflated)
			return true;
	return false;
}

/* Raw sinks share one spill budget: the first keeps its text, the second,
 * over the budget, keeps its rest deflated; what is freed (or handed on
 * and freed) is given back, so a third keeps text again. */
static void test_spill_budget_shared(void **state)
{
	struct sink a, b, c, moved;
	const size_t budget = 1 << 20;
	(void)state;

	assert_int_equal(sink_spill_held(), 0);
	sink_init(&a, false, SIZE_MAX);
	sink_init(&b, false, SIZE_MAX);
	sink_spill_budget(&a, budget);
	sink_spill_budget(&b, budget);
	fill(&a, "0123456789abcdef", 900000);
	sink_finish(&a);
	assert_false(any_deflated(&a));
	assert_true(sink_spill_held() >= 900000);
	fill(&b, "0123456789abcdef", 900000);
	sink_finish(&b);
	assert_true(any_deflated(&b));
	assert_false(b.head->deflated); /* it kept text while the budget allowed */
	assert_true(sink_spill_held() <= budget + SINK_CHUNK);

	sink_init(&moved, false, SIZE_MAX);
	sink_append(&moved, &a); /* still held, by the scrape's body now */
	sink_free(&a);
	assert_true(sink_spill_held() >= 900000);
	sink_free(&moved);
	sink_free(&b);
	assert_int_equal(sink_spill_held(), 0);

	sink_init(&c, false, SIZE_MAX);
	sink_spill_budget(&c, budget);
	fill(&c, "0123456789abcdef", 900000);
	sink_finish(&c);
	assert_false(any_deflated(&c));
	sink_free(&c);
	assert_int_equal(sink_spill_held(), 0);
	sink_pool_drain();
}

/* A sink made like another (an emitter's fork's) deflates when that one
 * was made to, and otherwise spills as it was told, even once that one
 * has spilled. */
static void test_init_like(void **state)
{
	struct sink gz, a, b, like;
	const size_t budget = 1 << 20;
	(void)state;

	sink_init(&gz, true, 12345);
	assert_int_equal(sink_init_like(&like, &gz), 0);
	assert_true(like.deflating);
	assert_int_equal(like.limit, 12345);
	sink_free(&like);
	sink_free(&gz);

	sink_init(&a, false, SIZE_MAX);
	sink_spill_budget(&a, budget);
	fill(&a, "0123456789abcdef", 1200000);
	assert_true(a.deflating); /* spilled */
	assert_int_equal(sink_init_like(&b, &a), 0);
	assert_false(b.deflating);
	fill(&b, "0123456789abcdef", 900000);
	sink_finish(&b);
	assert_true(any_deflated(&b)); /* a holds the budget */
	sink_free(&b);
	sink_free(&a);
	assert_int_equal(sink_spill_held(), 0);
	sink_pool_drain();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_raw_chunks),		cmocka_unit_test(test_chunks_reused),
	    cmocka_unit_test(test_gzip_concatenation),	cmocka_unit_test(test_threaded_deflate),
	    cmocka_unit_test(test_sinkthread_error),	cmocka_unit_test(test_limit),
	    cmocka_unit_test(test_spill_budget_shared), cmocka_unit_test(test_init_like),
	};
	return cmocka_run_group_tests_name("sink", tests, NULL, NULL);
}
