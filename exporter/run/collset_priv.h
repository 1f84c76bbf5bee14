/* A collector set's insides, for run/ only (tools/checksrc refuses this
 * header elsewhere): the scrape runs instances field by field. */
#ifndef BS_COLLSET_PRIV_H
#define BS_COLLSET_PRIV_H

#include <pthread.h>

#include "collset.h"
#include "emitter.h"
#include "selfstats.h"

#define COLLSET_BUILTINS_MAX 1

struct instance {
	const char *name;
	const struct bs_collector *ops; /* NULL when the plugin did not load */
	void *state;
	int init_rc;		      /* 0, or why it is not running */
	char error[512];	      /* the reason, for logs */
	pthread_mutex_t collect_lock; /* one collect at a time per state */
	int scrapes_waiting;	      /* for collect_lock (atomic): the sampler yields */
	struct collstats *stats;
	/* The emitter's sets of series, lent to each collect under collect_lock,
	 * so a large family's tables and arenas are not grown again every scrape. */
	struct emitter_kept series;
	struct jobworker *worker;     /* the thread its scrape jobs run on */
	void (*release)(void *state); /* a built-in source's; NULL for a plugin */
};

struct collset {
	int refs;
	struct config *config;
	struct instance inst[CONFIG_COLLECTORS_MAX + COLLSET_BUILTINS_MAX];
	size_t nplugins; /* enabled collectors: inst[0 .. nplugins) */
	size_t n;	 /* and the built-in sources after them */
};

/* Takes in->collect_lock for a scrape, waiting at most until deadline_ns
 * (monotonic). While it waits, a sampler's collect holding the lock is
 * told to stop (collset_sample), so a scrape waits for another scrape's
 * collect at most, never for the processing. False when the deadline came
 * first. */
bool instance_lock_for_scrape(struct instance *in, uint64_t deadline_ns);

#endif
