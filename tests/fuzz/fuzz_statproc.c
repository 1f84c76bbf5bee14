/* Fuzzes what a client of /statistics/ writes: definition lines applied to
 * an interface of every type, each alone followed by reports and both
 * formats, then all at once as one POST's batch, which must change
 * nothing unless every line is taken; and the same bytes as a
 * sample_rates body and a template spec (stats(3)'s parsers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "statproc.h"
#include "vstats.h"

#define NSTATS 6

static const struct statproc_def defs[NSTATS] = {
    {.type = STATPROC_VALUE, .range_min = -100, .range_max = 100},
    {.type = STATPROC_RANGE, .range_min = 0, .range_max = 1000},
    {.type = STATPROC_ARRAY, .range_max = 1024, .base_interval = 1, .scale = STATPROC_LOG2},
    {.type = STATPROC_LIST, .range_max = 1 << 20, .entries_max = 4},
    {.type = STATPROC_RAW, .range_max = 100, .entries_max = 3},
    {.type = STATPROC_HISTORY,
     .range_max = 100,
     .entries_max = 3,
     .period_us = 1000,
     .mode = STATPROC_MODE_RANGE},
};
static const char *const names[NSTATS] = {"v", "r", "a", "l", "w", "h"};

static void make(struct statproc_stat *s, uint64_t now)
{
	for (size_t i = 0; i < NSTATS; i++)
		if (statproc_init(&s[i], names[i], "x/y", &defs[i], now) < 0)
			abort();
}

/* Each line alone, as statproc_write applies it. */
static void line_by_line(char *text, struct textbuf *t)
{
	struct statproc_stat s[NSTATS];
	uint64_t now = 1000000;
	const char *why;

	make(s, now);
	for (char *save, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		statproc_write(s, NSTATS, line, now, &why);
		for (size_t i = 0; i < NSTATS; i++) {
			statproc_add(&s[i], (int64_t)(now % 2048) - 512, now % 7, now);
			statproc_format_def(&s[i], t);
			statproc_format_data(&s[i], now, t);
		}
		now += 777777;
		t->len = 0;
	}
	for (size_t i = 0; i < NSTATS; i++)
		statproc_free(&s[i]);
}

/* All lines as one batch: with any refused, no definition and no on/off
 * state may have changed. */
static void as_one_post(const char *text)
{
	struct statproc_stat s[NSTATS];
	struct statproc_request rq;
	struct statproc_batch b;
	char line[4096];
	const char *why;
	bool refused = false;

	make(s, 5000);
	for (size_t i = 0; i < NSTATS; i++)
		statproc_add(&s[i], 3, 1, 6000);
	if (statproc_batch_init(&b, s, NSTATS) < 0)
		abort();
	while (*text) {
		size_t n = strcspn(text, "\n");
		if (n < sizeof(line)) {
			memcpy(line, text, n);
			line[n] = '\0';
			if (statproc_parse(line, &rq, &why) < 0 ||
			    statproc_batch_add(&b, &rq, &why) < 0)
				refused = true;
		}
		text += n + (text[n] == '\n');
	}
	if (!refused && statproc_batch_commit(&b, 7000) < 0)
		abort();
	statproc_batch_free(&b);
	for (size_t i = 0; i < NSTATS; i++) {
		if (refused && (memcmp(&s[i].def, &defs[i], sizeof(defs[i])) != 0 || s[i].on))
			abort(); /* a refused POST changed something */
		statproc_free(&s[i]);
	}
}

/* The sample_rates body and a template spec: every pair parsed must be
 * within its bounds. */
static void as_rates(const char *text, size_t size)
{
	struct vstats_rate rates[8];
	struct vstats_tplspec spec;
	const char *why;
	size_t n;

	if (vstats_rates_parse(text, rates, 8, &n, &why) == 0)
		for (size_t i = 0; i < n; i++)
			if (rates[i].pct > 100 || strlen(rates[i].spec.name) > VSTATS_TPL_NAME_MAX)
				abort();
	vstats_tplspec_parse(text, size, &spec, &why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct textbuf t = {.max = 1 << 20};
	char *text = malloc(size + 1);

	memcpy(text, data, size);
	text[size] = '\0';
	as_rates(text, strlen(text));
	as_one_post(text);
	line_by_line(text, &t);
	textbuf_free(&t);
	free(text);
	return 0;
}
