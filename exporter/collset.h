/* The running collectors of one configuration generation. A scrape holds a
 * reference, so a reload never shuts a collector down under a scrape. */
#ifndef BS_COLLSET_H
#define BS_COLLSET_H

#include <pthread.h>
#include <stdbool.h>

#include <binstat/collector.h>

#include "config.h"
#include "emitter.h"
#include "selfstats.h"

struct instance {
	const char *name;
	const struct bs_collector *ops; /* NULL when the plugin did not load */
	void *state;
	int init_rc;		      /* 0, or why it is not running */
	char error[512];	      /* the reason, for logs */
	pthread_mutex_t collect_lock; /* one collect at a time per state */
	struct collstats *stats;
	/* The emitter's sets of series, lent to each collect under collect_lock,
	 * so a large family's tables and arenas are not grown again every scrape. */
	struct emitter_kept series;
	struct jobworker *worker; /* the thread its scrape jobs run on */
};

struct proc;

struct collset {
	int refs;
	struct config *config;
	struct instance inst[CONFIG_COLLECTORS_MAX + 1]; /* and "processing" */
	size_t n;					 /* enabled collectors only */
	struct proc *proc; /* the processing between scrapes, when configured */
};

/* Loads and inits every enabled collector of `cfg`, which it takes, and
 * the processing of its `processing:` section as the collector
 * "processing", whose sampler runs unless host is only checking.
 * A plugin that fails to load or init is kept as failed and logged; only a
 * configuration error (-EINVAL, message in err) fails the whole set. */
int collset_build(struct config *cfg, const struct bs_host *host, struct collset **out, char *err,
		  size_t errlen);
struct collset *collset_get(struct collset *s);
/* Drops a reference; the last one shuts the collectors down. */
void collset_put(struct collset *s);
struct instance *collset_find(struct collset *s, const char *name);

#endif
