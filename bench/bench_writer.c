/* Writer benchmark: how many series per second the emitter validates,
 * de-duplicates and formats on one core (1,000,000 series, 3 labels each),
 * into new memory (as a large scrape's output is: its pages are faulted
 * in) and into memory already touched (as the peer's reused buffer is);
 * and the floor: a plain memcpy of the same output bytes. */
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emitter.h"
#include "sink.h"

#define SERIES 1000000
#define PER_FAMILY 1000
#define ROUNDS 5

struct row {
	char instance[16], device[16];
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Labels are prepared before timing, as a collector holds them already. */
/* The output gathered into one buffer, for the memcpy floor. */
static char *gather(const struct sink *s)
{
	char *out = malloc(s->raw_bytes), *p = out;
	for (const struct sink_chunk *c = s->head; c && out; c = c->next) {
		memcpy(p, c->data, c->len);
		p += c->len;
	}
	return out;
}

static double one_round(enum expo_format f, const struct row *rows, size_t *bytes, char **text)
{
	struct sink s;
	struct famreg reg;
	struct emitter e;
	char fam[64];

	sink_init(&s, false, SIZE_MAX);
	famreg_init(&reg);
	emitter_init(&e, f, &s, &reg, 0);
	double t0 = now();
	for (size_t i = 0; i < SERIES; i++) {
		if (i % PER_FAMILY == 0) {
			snprintf(fam, sizeof(fam), "bench_family_%zu_bytes", i / PER_FAMILY);
			bs_family(&e.pub, fam, BS_GAUGE, "bytes", "Benchmark series.");
		}
		struct bs_label l[3] = {
		    {"instance", rows[i].instance}, {"device", rows[i].device}, {"mode", "user"}};
		if (i & 1)
			bs_sample_u64(&e.pub, l, 3, i * 4096);
		else
			bs_sample_f64(&e.pub, l, 3, (double)i / 8.0);
	}
	sink_finish(&s);
	double t = now() - t0;
	*bytes = s.raw_bytes;
	if (text && !*text)
		*text = gather(&s);
	if (e.ndrops)
		fprintf(stderr, "unexpected drop: %s\n", e.drops[0].reason);
	emitter_free(&e);
	famreg_free(&reg);
	sink_free(&s);
	return t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The least any writer of these bytes does: copy them. Into memory already
 * touched (warm), and into new memory as a scrape's output always is. */
static double memcpy_floor(const char *text, size_t bytes, bool fresh)
{
	char *dst = fresh ? NULL : calloc(1, bytes);
	double best = 1e9;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now();
		if (fresh)
			dst = malloc(bytes);
		memcpy(dst, text, bytes);
		__asm__ volatile("" : : "r"(dst) : "memory");
		if (fresh) {
			free(dst);
			dst = NULL;
		}
		double t = now() - t0;
		best = t < best ? t : best;
	}
	free(dst);
	return best;
}

/* Each format's median and best over ROUNDS, into new or touched memory;
 * *text is the text format's output, of *text_bytes. */
static void rounds(const char *memory, const struct row *rows, char **text, size_t *text_bytes)
{
	const char *names[] = {"text 0.0.4", "OpenMetrics"};

	for (int f = 0; f < 2; f++) {
		double t[ROUNDS];
		size_t bytes = 0;
		for (int r = 0; r < ROUNDS; r++)
			t[r] = one_round((enum expo_format)f, rows, &bytes, f == 0 ? text : NULL);
		qsort(t, ROUNDS, sizeof(t[0]), cmp);
		printf("writer(%s) %-12s %d series x 3 labels: median %.3f s = %.2f M series/s "
		       "(best %.2f M/s), %.1f MB\n",
		       memory, names[f], SERIES, t[ROUNDS / 2], SERIES / t[ROUNDS / 2] / 1e6,
		       SERIES / t[0] / 1e6, bytes / 1e6);
		if (f == 0)
			*text_bytes = bytes;
	}
}

int main(void)
{
	struct row *rows = malloc(SERIES * sizeof(*rows));
	char *text = NULL;
	size_t bytes = 0;

	for (size_t i = 0; i < SERIES; i++) {
		snprintf(rows[i].instance, sizeof(rows[i].instance), "host-%zu", i % 97);
		snprintf(rows[i].device, sizeof(rows[i].device), "dev%zu", i);
	}
	/* Freed output goes back to the kernel (its top is trimmed), so every
	 * round's output lands in pages faulted in anew. */
	rounds("new", rows, &text, &bytes);
	double warm = memcpy_floor(text, bytes, false);
	double fresh = memcpy_floor(text, bytes, true);
	/* Then freed output is kept for the next round, as the peer's buffer is. */
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	mallopt(M_MMAP_THRESHOLD, INT_MAX);
	free(text);
	text = NULL;
	one_round(EXPO_TEXT, rows, &bytes, NULL);
	rounds("touched", rows, &text, &bytes);
	printf("writer floor: memcpy of the same %.1f MB (best of %d): into new memory %.4f s, "
	       "into touched memory %.4f s\n",
	       bytes / 1e6, ROUNDS, fresh, warm);
	free(text);
	free(rows);
	return 0;
}
