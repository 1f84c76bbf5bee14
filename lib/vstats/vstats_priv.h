/* What the parts of lib/vstats share and its users need not see. */
#ifndef VSTATS_PRIV_H
#define VSTATS_PRIV_H

#include "vstats.h"

/* The bucket of h holding x, or -1 when x is out of band; *gap is where x
 * fell among the buckets (the index of between[] it counts in when out
 * of band). */
int vstats_hist_find(const struct vstats_hist *h, enum vstats_stype stype, struct vstats_value x,
		     uint32_t *gap);

/* a and b of one dtype in its order: -1, 0, 1. */
int vstats_value_cmp(struct vstats_value a, struct vstats_value b);

#endif
