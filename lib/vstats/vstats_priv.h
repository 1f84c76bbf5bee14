/* What the parts of lib/vstats share and its users need not see. */
#ifndef VSTATS_PRIV_H
#define VSTATS_PRIV_H

#include "vstats.h"

/* The bucket of h holding x, or -1 when x is out of band. */
int vstats_hist_find(const struct vstats_hist *h, enum vstats_stype stype, struct vstats_value x);

/* The dtype's largest value (MIN's start, the last CRHIST bucket's end). */
struct vstats_value vstats_highest(enum vstats_dtype d);

#endif
