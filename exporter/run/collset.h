/* The running collectors of one configuration generation. A scrape holds a
 * reference, so a reload never shuts a collector down under a scrape.
 * Outside run/ a set and its instances are opaque (collset_priv.h). */
#ifndef BS_COLLSET_H
#define BS_COLLSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "config.h"

struct collset;
struct instance;

/* Loads and inits every enabled collector of `cfg`, which it takes.
 * A plugin that fails to load or init is kept as failed and logged; only a
 * configuration error (-EINVAL, message in err) fails the whole set. */
int collset_build(struct config *cfg, const struct bs_host *host, struct collset **out, char *err,
		  size_t errlen);
struct collset *collset_get(struct collset *s);
/* Drops a reference; the last one releases the built-in sources, then
 * shuts the collectors down. */
void collset_put(struct collset *s);

/* A source the daemon adds beside the plugins (the processing's output):
 * scraped as a collector is, through ops->collect and ops->describe only;
 * it has no init or shutdown of its own: the set calls release(state) at
 * its end, before the collectors it may sample shut down. */
int collset_add_builtin(struct collset *s, const struct bs_collector *ops, void *state,
			void (*release)(void *state));
/* The state of the built-in source `name`; NULL when there is none. */
void *collset_builtin(struct collset *s, const char *name);

/* Collects plugin i (of collset_count) into e for a sampler between
 * scrapes, if its collect lock frees within wait_ns: its collect's return,
 * or 1 (apart from any code a collector returns) when a scrape held the
 * lock longer or waits for it (a scrape that comes during the collect
 * makes it stop: e then gets nothing more, and it is 1 too), -ENODEV for
 * one that is not running or is built in. */
int collset_sample(struct collset *s, size_t i, struct bs_emitter *e, uint64_t wait_ns);

const struct config *collset_config(const struct collset *s);
size_t collset_count(const struct collset *s); /* built-in sources included */
struct instance *collset_at(struct collset *s, size_t i);
struct instance *collset_find(struct collset *s, const char *name);
size_t collset_index(const struct collset *s, const struct instance *in);
/* A scrape's job still runs on one of its collectors' threads. */
bool collset_busy(const struct collset *s);

/* What the landing page and --check-config show of an instance. */
struct instance_info {
	const char *name;
	const char *description; /* NULL: its plugin did not load */
	const char *error;	 /* NULL: it runs; else why not */
};
void collset_instance_info(const struct instance *in, struct instance_info *out);

#endif
