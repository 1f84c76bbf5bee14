/* What the parts of lib/statproc share and its users need not see. */
#ifndef STATPROC_PRIV_H
#define STATPROC_PRIV_H

#include "statproc.h"

size_t statproc_history_entry_size(const struct statproc_def *d);
void *statproc_history_slot(const struct statproc_stat *s, uint32_t i);
/* Brings a history up to now: one entry per period begun since, zero for
 * periods without data; at most entries_max of them, the rest skipped
 * arithmetically, so a long pause costs no loop over it. */
void statproc_history_advance(struct statproc_stat *s, uint64_t now_ns);

/* A definition's data in two steps, so that a batch allocates everything
 * it needs before it changes anything: statproc_data_alloc gives the data
 * def needs (-ENOMEM), statproc_data_install frees s's data and takes mem
 * (owned by s from then), def and an empty start at now. */
int statproc_data_alloc(const struct statproc_def *def, void **mem, uint32_t *n);
void statproc_data_install(struct statproc_stat *s, const struct statproc_def *def, void *mem,
			   uint32_t n, uint64_t now_ns);

#endif
