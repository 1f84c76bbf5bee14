/* The Xen collector's output: each set's health, then every statistic,
 * in the generic families or those the mapping rules name. */
#ifndef XEN_EMIT_H
#define XEN_EMIT_H

#include <binstat/collector.h>

#include "xen_registry.h"

struct xen_member {
	struct xen_set *set;
	uint32_t stat;
};

/* Statistics grouped by family, rebuilt only when the registry's epoch moves. */
struct xen_families {
	uint64_t epoch;
	bool built;
	struct xen_member *m;
	size_t n;
};

void xen_families_free(struct xen_families *f);
/* Caller holds r->lock. */
int xen_emit(struct xen_registry *r, struct xen_families *f, struct bs_emitter *em);

#endif
