/* Which endpoint a request goes to, by its path and method. */
#ifndef BS_HTTPROUTE_H
#define BS_HTTPROUTE_H

#include <stdbool.h>

#define HTTPROUTE_STATS_PREFIX "/statistics/"

enum httproute {
	HTTPROUTE_TELEMETRY,  /* the telemetry path: a scrape */
	HTTPROUTE_STATISTICS, /* /statistics/...: the processing's interface */
	HTTPROUTE_LANDING,    /* / */
	HTTPROUTE_HEALTHY,    /* /-/healthy */
	HTTPROUTE_READY,      /* /-/ready */
	HTTPROUTE_NOT_FOUND,
	HTTPROUTE_METHOD_NOT_ALLOWED, /* all but GET and HEAD, and POST to /statistics/ */
};

enum httproute httproute_of(const char *path, const char *method, const char *telemetry_path);
/* Whether the request brings a body the exporter reads (a POST to
 * /statistics/). */
bool httproute_takes_body(const char *path, const char *method);

#endif
