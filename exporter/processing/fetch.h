/* stats(3)'s typed fetch as an interface verb (fetch.c). Under the lock. */
#ifndef BS_FETCH_H
#define BS_FETCH_H

#include "stage.h"

struct processing;
struct source;

/* GET <group>/<id>/fetch/<voi id>/<stat>/<dtype>:
 * stats_voistat_fetch_<dtype> of one statistic of one VOI of the source's
 * blob. `what` is what follows fetch/. */
void fetch_get(struct processing *p, struct source *s, const char *what, struct stage_reply *r);

#endif
