/* The DCI collector's output: each supplier's up, info and describe count,
 * then every statistic's family, with the suppliers sharing a name as its
 * samples. */
#ifndef DCI_EMIT_H
#define DCI_EMIT_H

#include <binstat/collector.h>

#include "dci_set.h"
#include "famgroup.h"

/* -ENOMEM when the families could not be rebuilt (nothing of them written). */
int dci_emit(struct dci_set *set, const struct dci_config *cfg, struct famgroup *g,
	     struct bs_emitter *em);

#endif
