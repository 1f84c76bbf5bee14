/* The landing page (/): what an operator wants at a glance, as plain HTML
 * that needs no JavaScript. */
#ifndef BS_LANDING_H
#define BS_LANDING_H

#include <stdbool.h>

#include "collset.h"
#include "webconf.h"

#include "textbuf.h"

struct landing_input {
	const char *telemetry_path;
	const char *config_file;
	const char *web_config_file; /* NULL: none */
	const struct webconf *web;   /* the web config in force */
	struct collset *set;	     /* the collectors running; NULL before the first load */
	bool exporter_metrics;	     /* process_* and binstat_exporter_* served */
};

/* Writes the page to out; false when out of memory. */
bool landing_page(const struct landing_input *in, struct textbuf *out);

#endif
