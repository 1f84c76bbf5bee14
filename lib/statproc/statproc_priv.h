/* What the parts of lib/statproc share and its users need not see. */
#ifndef STATPROC_PRIV_H
#define STATPROC_PRIV_H

#include "statproc.h"

size_t statproc_history_entry_size(const struct statproc_def *d);
void *statproc_history_slot(const struct statproc_stat *s, uint32_t i);
/* Brings a history up to now: one entry per period that ended since, zero
 * for periods without data; at most entries_max of them, the rest skipped
 * arithmetically, so a long pause costs no loop over it. */
void statproc_history_advance(struct statproc_stat *s, uint64_t now_ns);

#endif
