/* The exporter's own counters that outlive a configuration: per-collector
 * drops, reload status, HTTP responses. */
#ifndef BS_SELFSTATS_H
#define BS_SELFSTATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "emitter.h"

#define SELFSTATS_COLLECTORS_MAX 128

#define SELFSTATS_FOUND_MAX 256
#define SELFSTATS_WHY_MAX 128

struct collstats {
	char name[48 + 1];
	struct emitter_drop drops[EMITTER_MAX_REASONS];
	size_t ndrops;
	/* The last scrape of this collector, for the landing page. */
	bool scraped, last_ok;
	double last_seconds, last_unix;
	char found[SELFSTATS_FOUND_MAX]; /* its describe line */
	char why[SELFSTATS_WHY_MAX];	 /* why the last scrape failed ("" when it did not) */
};

/* The last reload, for the landing page. */
struct selfstats_reload_info {
	bool ok;
	double success_unix, attempt_unix;
	char error[512]; /* why the last attempt failed */
};

/* Drop counters for `name`, created on first use; NULL past the cap. */
struct collstats *selfstats_collector(const char *name);
void selfstats_add_drops(struct collstats *cs, const struct emitter *em);

/* A reload: err is why it failed (NULL when ok). */
void selfstats_reload(bool ok, const char *err);
void selfstats_reload_get(struct selfstats_reload_info *out);
/* The outcome of one collector in one scrape: why is why it failed (NULL
 * when it succeeded), copied. */
void selfstats_scraped(struct collstats *cs, const char *why, double seconds);
void selfstats_found(struct collstats *cs, const char *line);
/* A copy of `name`'s, false if it has none. */
bool selfstats_collector_get(const char *name, struct collstats *out);
void selfstats_http_response(unsigned code);
enum selfstats_cut {
	SELFSTATS_CUT_HEAD,
	SELFSTATS_CUT_WRITE,
	SELFSTATS_CUT_EVICTED,
	SELFSTATS_CUT_SLOW_READER, /* read its response below the minimum data rate */
	SELFSTATS_CUT_IDLE,	   /* kept alive, idle past --web.idle-timeout: no fault */
	SELFSTATS_CUT_LIFETIME,	   /* open past a connection's whole lifetime */
	SELFSTATS_CUTS
};
/* A connection cut for sending its request head, or reading its response,
 * too slowly, or evicted, having made the least progress, for a new one
 * when every connection slot was taken. */
void selfstats_http_cut(enum selfstats_cut why);

enum selfstats_refusal {
	SELFSTATS_REFUSED_AUTH,		 /* basic auth failed: 401 */
	SELFSTATS_REFUSED_RATE_LIMIT,	 /* 429 */
	SELFSTATS_REFUSED_CLIENT_CERT,	 /* TLS handshake refused */
	SELFSTATS_REFUSED_FRAMING,	 /* 400: a body's length given two ways (smuggling) */
	SELFSTATS_REFUSED_URI,		 /* 414: more arguments than a request may have */
	SELFSTATS_REFUSED_NO_FDS,	 /* a connection closed unserved: no fd was free */
	SELFSTATS_REFUSED_ADDRESS_LIMIT, /* its address held --web.max-connections-per-address */
	SELFSTATS_REFUSED_NUL_PATH,	 /* 400: the path holds %00, which would cut it */
	SELFSTATS_REFUSED_NUL_TARGET,	 /* 400: the request target holds a raw NUL byte */
	SELFSTATS_REFUSED_PIPELINED, /* 429: more requests queued on one connection than allowed */
	SELFSTATS_REFUSED_NO_SLOT,   /* every connection slot held, none could be evicted */
	SELFSTATS_REFUSED_AUTH_BUSY, /* 429: no room in the bcrypt pool for its address */
	SELFSTATS_REFUSED_TLS_HANDSHAKE,    /* a TLS handshake failed after the client's hello */
	SELFSTATS_REFUSED_SCRAPES,	    /* 503: its address's share of the scrape slots held */
	SELFSTATS_REFUSED_HEADER_TOO_LARGE, /* 431: a header past the request memory */
	SELFSTATS_REFUSALS
};
void selfstats_http_refused(enum selfstats_refusal why);
/* A load of the web config (--web.config.file). */
void selfstats_web_reload(bool ok);

/* Writes the exporter-wide families (build info, reload, drops, HTTP). */
void selfstats_emit(struct bs_emitter *em);

#endif
