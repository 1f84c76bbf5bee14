/* One scrape: every selected collector runs in its own thread against the
 * scrape's deadline; what finished in time is assembled into the response. */
#ifndef BS_SCRAPE_H
#define BS_SCRAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "collset.h"
#include "expo.h"

struct scrape;

struct scrape_request {
	struct collset *set;
	struct instance **only; /* the collect[] selection; NULL: all */
	size_t nonly;
	enum expo_format format;
	bool gzip;
	double timeout_s;
};

/* Runs the scrape and returns it with its response ready, or NULL when out
 * of memory. The response stays valid until scrape_put. */
struct scrape *scrape_run(const struct scrape_request *req);
/* The response body as a vector of pieces; returns how many. */
size_t scrape_body(struct scrape *sc, const struct iovec **iov, size_t *total);
void scrape_put(struct scrape *sc);

#endif
