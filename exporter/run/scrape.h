/* One scrape: every selected collector runs in its own thread against the
 * scrape's deadline; what finished in time is assembled into the response. */
#ifndef BS_SCRAPE_H
#define BS_SCRAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
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
	bool no_exporter_metrics; /* leave out selfstats and process_* */
};

/* Runs the scrape and returns it with its response ready, or NULL when out
 * of memory. The response stays valid until scrape_put. */
struct scrape *scrape_run(const struct scrape_request *req);
/* The response body as a vector of pieces; returns how many. Only when
 * scrape_body_is_text: otherwise read it with scrape_read. */
size_t scrape_body(struct scrape *sc, const struct iovec **iov, size_t *total);
/* Bytes of output the scrape holds until it is put. */
size_t scrape_held_bytes(const struct scrape *sc);
/* False when part of an uncompressed response was kept deflated (a large
 * collector output): the body is then produced by scrape_read. */
bool scrape_body_is_text(const struct scrape *sc);
/* Fills buf with up to max bytes of text, inflating as it goes. Returns the
 * bytes written, 0 at the end, -1 on a corrupt stream. Not thread-safe: one
 * reader per scrape. */
ssize_t scrape_read(struct scrape *sc, char *buf, size_t max);
void scrape_put(struct scrape *sc);

#endif
