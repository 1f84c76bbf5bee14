/* A series named as /metrics would write it, for a stage that keeps series
 * between scrapes (the processing): checked and escaped by the same rules
 * as the emitter's, so a key never holds what a scrape would refuse or
 * repair. */
#ifndef BS_SERIESKEY_H
#define BS_SERIESKEY_H

#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

/* Whether the emitter accepts family f: its name, type and unit. */
bool serieskey_family_valid(const struct bs_family *f);
/* Writes name{k="v",...} and a NUL into key[0..max): label names checked
 * (valid, not reserved, none repeated), values escaped with invalid UTF-8
 * and bidirectional controls repaired (names_escape). Its length; 0 when
 * a label is refused or the key would not fit. */
size_t serieskey_write(char *key, size_t max, const char *name, const struct bs_label *labels,
		       size_t n);

#endif
