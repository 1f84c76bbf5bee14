/* A scrape's sampling: every live set asked at once through its event
 * channel, one wait for all the answers, then each answered set's value
 * pages copied once. */
#ifndef XEN_SAMPLE_H
#define XEN_SAMPLE_H

#include <binstat/collector.h>

#include "xen_registry.h"

/* Takes and releases r->lock; returns holding it, with each set's `fresh`
 * saying whether its copy holds this scrape's values. */
void xen_sample(struct xen_registry *r, double timeout_s, struct bs_emitter *em);

#endif
