/* The exporter's configuration schema: the global settings and the
 * collectors to run, read from the YAML tree of conftree.h. */
#ifndef BS_CONFIG_H
#define BS_CONFIG_H

#include <stdbool.h>

#include "processing_conf.h"
#include <stdint.h>

#include "conftree.h"

#define CONFIG_COLLECTORS_MAX 64
#define CONFIG_NAME_MAX 48

struct config_collector {
	const char *name; /* the key under collectors:, [a-z0-9_] */
	bool enabled;
	const struct conf_node *node; /* its options, `enabled` already consumed */
};

struct config {
	struct conf_doc *doc;	     /* owns every string and node below */
	struct conf_doc *flag_doc;   /* the options of collectors only flags named */
	double scrape_timeout;	     /* s: the deadline when Prometheus sends none */
	double timeout_offset;	     /* s: kept back from Prometheus' deadline */
	uint64_t max_response_bytes; /* per collector, before compression */
	uint64_t spill_after; /* uncompressed: text all scrapes keep before deflating (0: all) */
	const char *plugin_dir;
	struct config_collector collector[CONFIG_COLLECTORS_MAX];
	size_t ncollectors;
	struct processing_conf *processing; /* NULL: no `processing:` section */
	bool processing_off; /* the section was there, a --collector flag turned it off */
};

/* Loads and checks everything but the collectors' own options (their
 * plugins check those at init). NULL with the reason in err. */
struct config *config_load(const char *file, const char *text, const char *default_plugin_dir,
			   char *err, size_t errlen);
struct conf_settle;
/* config_load of the file as a reload reads it: only once it has settled
 * (conf_read_file). */
struct config *config_load_settled(const char *file, struct conf_settle *settle,
				   const char *default_plugin_dir, char *err, size_t errlen);
/* --collector.NAME (on) or --no-collector.NAME (off): overrides `enabled:`;
 * a collector the file does not name runs with its defaults. */
int config_set_enabled(struct config *c, const char *name, bool on, char *err, size_t errlen);
void config_free(struct config *c);
const struct config_collector *config_find(const struct config *c, const char *name);

#endif
