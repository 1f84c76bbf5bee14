/* The DCI collector's output: each supplier's up, info and describe count,
 * then every statistic's family, with the suppliers sharing a name as its
 * samples. */
#ifndef DCI_EMIT_H
#define DCI_EMIT_H

#include <binstat/collector.h>

#include "dci_set.h"

struct dci_member {
	struct dci_sup *sup;
	uint32_t stat;
};

/* Statistics grouped by family name, rebuilt only when set->epoch moves. */
struct dci_families {
	uint64_t epoch;
	bool built;
	struct dci_member *m;
	size_t n;
};

void dci_families_free(struct dci_families *f);
/* -ENOMEM when the families could not be rebuilt (nothing of them written). */
int dci_emit(struct dci_set *set, const struct dci_config *cfg, struct dci_families *f,
	     struct bs_emitter *em);

#endif
