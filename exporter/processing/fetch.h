/* stats(3)'s typed fetch as an interface verb (fetch.c). Under the lock. */
#ifndef BS_FETCH_H
#define BS_FETCH_H

#include "stage.h"
#include "vstats.h"

struct processing;
struct source;

/* The index in voi of statistic `name`, vs_stype2name's (SUM, MAX, MIN,
 * HIST: the VOI's first histogram, TDGST); -1 for none. */
int fetch_stat_of(const struct vstats_voi *voi, const char *name);
/* GET <group>/<id>/fetch/<voi id>/<stat>/<dtype>:
 * stats_voistat_fetch_<dtype> of one statistic of one VOI of the source's
 * blob. `what` is what follows fetch/. */
void fetch_get(struct processing *p, struct source *s, const char *what, struct stage_reply *r);

#endif
