/* Processing between scrapes, the stage the configuration's
 * `processing:` section makes: a sampler thread reads the series its
 * groups select, from the running collectors, at its own rate, and feeds
 * each value to that source's statistics (the Linux statistics
 * infrastructure) and template VOI (FreeBSD's stats(3)). Scrapes write
 * what they hold through a built-in collector; the /statistics/
 * interface reads and changes them. Its insides are the folder's own
 * (stage_priv.h). */
#ifndef BS_PROCESSING_H
#define BS_PROCESSING_H

#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "processing_conf.h"
#include "stage.h"

struct processing;

/* Built stopped; processing_start starts the sampler over in's collectors. */
int processing_new(const struct processing_conf *conf, struct processing **out);
int processing_start(struct processing *p, const struct stage_input *in);
/* Stops the sampler (joined) and frees everything. */
void processing_free(struct processing *p);
/* processing_free for a void * owner (the collector set). */
void processing_release(void *p);

/* A reload: p, the stage the new configuration made, takes the data of
 * old, the running one's, for every statistic, template and source whose
 * definition is the same in both; old's sampler stops. Changed
 * definitions start afresh, and the log names them. */
void processing_take_over(struct processing *p, struct processing *old);

/* The scrape's built-in collector "processing": writes every statistic;
 * its state is the struct processing (collect and describe only, no init). */
const struct bs_collector *processing_collector(void);

/* GET or POST on path (below /statistics/, with ?format=json where the
 * interface takes it); body for POST. may_write: the client is one the
 * configuration lets write. */
void processing_iface(struct processing *p, const char *method, const char *path, const char *body,
		      bool may_write, uint64_t now_ns, struct stage_reply *r);

#endif
