/* stats(3)'s typed fetch as an interface verb (fetch.c). Under the lock. */
#ifndef BS_FETCH_H
#define BS_FETCH_H

#include "stage.h"
#include "vstats.h"

struct processing;
struct source;

/* Statistic `name` (vs_stype2name's: SUM, MAX, MIN, HIST: the VOI's
 * first histogram, TDGST) of VOI voi of s's blob; NULL with r answered:
 * 404 without a blob, 400 without that VOI or statistic. */
const struct vstats_stat *fetch_locate(struct source *s, unsigned long voi, const char *name,
				       struct stage_reply *r);
/* GET <group>/<id>/fetch/<voi id>/<stat>/<dtype>:
 * stats_voistat_fetch_<dtype> of one statistic of one VOI of the source's
 * blob. `what` is what follows fetch/. */
void fetch_get(struct processing *p, struct source *s, const char *what, struct stage_reply *r);

#endif
