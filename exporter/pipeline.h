/* One configuration generation as the daemon runs it: the collectors
 * (run/) and, when configured, the processing stage (processing/) sampling them,
 * its output served by scrapes as the built-in source "processing". The
 * two stages never see each other; this is where they are joined. */
#ifndef BS_PIPELINE_H
#define BS_PIPELINE_H

#include <stddef.h>

#include <binstat/collector.h>

#include "collset.h"
#include "config.h"

/* Builds the collectors of cfg (taken) and the processing over them; the
 * sampler starts unless host is only checking. Errors as collset_build. */
int pipeline_build(struct config *cfg, const struct bs_host *host, struct collset **out, char *err,
		   size_t errlen);
/* A reload: set, just built, takes over from old (the running generation,
 * or NULL) what the processing stage keeps for definitions that did not
 * change. */
void pipeline_hand_over(struct collset *set, struct collset *old);
#endif
