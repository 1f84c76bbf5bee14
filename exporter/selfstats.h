/* The exporter's own counters that outlive a configuration: per-collector
 * drops, reload status, HTTP responses. */
#ifndef BS_SELFSTATS_H
#define BS_SELFSTATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "emitter.h"

#define SELFSTATS_COLLECTORS_MAX 128

struct collstats {
	char name[48 + 1];
	struct emitter_drop drops[EMITTER_MAX_REASONS];
	size_t ndrops;
};

/* Drop counters for `name`, created on first use; NULL past the cap. */
struct collstats *selfstats_collector(const char *name);
void selfstats_add_drops(struct collstats *cs, const struct emitter *em);

void selfstats_reload(bool ok);
void selfstats_http_response(unsigned code);
/* A connection cut for `why`: "head_timeout" or "write_timeout". */
void selfstats_http_cut(const char *why);

/* Writes the exporter-wide families (build info, reload, drops, HTTP). */
void selfstats_emit(struct bs_emitter *em);

#endif
