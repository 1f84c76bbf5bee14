/* The Xen collector's output: each set's health, then every statistic,
 * in the generic families or those the mapping rules name. */
#ifndef XEN_EMIT_H
#define XEN_EMIT_H

#include <binstat/collector.h>

#include "famgroup.h"
#include "xen_registry.h"

/* Caller holds r->lock. */
int xen_emit(struct xen_registry *r, struct famgroup *g, const struct bs_host *host,
	     struct bs_emitter *em);

#endif
