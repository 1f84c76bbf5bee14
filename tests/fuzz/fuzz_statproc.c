/* Fuzzes the definition-file writer of seed 001's statistics: lines as a
 * client of /statistics/<interface>/definition could POST them, applied to
 * an interface of every type, each followed by reports and both formats. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "statproc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct statproc_def defs[] = {
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
	static const char *const names[] = {"v", "r", "a", "l", "w", "h"};
	struct statproc_stat s[6];
	struct statproc_text t = {.max = 1 << 20};
	char *text = malloc(size + 1);
	const char *why;
	uint64_t now = 1000000;

	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < 6; i++)
		if (statproc_init(&s[i], names[i], "x/y", &defs[i], now) < 0)
			abort();
	for (char *save, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		statproc_write(s, 6, line, now, &why);
		for (size_t i = 0; i < 6; i++) {
			statproc_add(&s[i], (int64_t)(now % 2048) - 512, now % 7, now);
			statproc_format_def(&s[i], &t);
			statproc_format_data(&s[i], now, &t);
		}
		now += 777777;
		t.len = 0;
	}
	for (size_t i = 0; i < 6; i++)
		statproc_free(&s[i]);
	statproc_text_free(&t);
	free(text);
	return 0;
}
