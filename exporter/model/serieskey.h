/* A series named as /metrics would write it, for a stage that keeps series
 * between scrapes (the processing): checked and escaped by the same rules
 * as the emitter's, so a key never holds what a scrape would refuse or
 * repair. */
#ifndef BS_SERIESKEY_H
#define BS_SERIESKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <binstat/collector.h>

#include "names.h"

/* A key buffer that holds a name and four labels at the emitter's caps,
 * each value escaped at its worst (3 bytes a byte): any one label a scrape
 * serves fits, whatever its length. */
#define SERIESKEY_MAX                                                                              \
	(NAMES_METRIC_MAX + 4 * (NAMES_LABEL_NAME_MAX + 3 * NAMES_LABEL_VALUE_MAX + 8))

/* Whether the emitter accepts family f: its name, type and unit. */
bool serieskey_family_valid(const struct bs_family *f);
/* Writes name{k="v",...} and a NUL into key[0..max): label names checked
 * (valid, not reserved, none repeated), values escaped with invalid UTF-8
 * and bidirectional controls repaired (names_escape). Its length; -EINVAL
 * when a label is refused (as a scrape refuses it), -E2BIG when the key
 * would not fit. */
ssize_t serieskey_write(char *key, size_t max, const char *name, const struct bs_label *labels,
			size_t n);

#endif
