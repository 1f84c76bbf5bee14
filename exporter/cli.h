/* Command-line flags, with node_exporter's names. */
#ifndef BS_CLI_H
#define BS_CLI_H

#include <stdbool.h>

#include "config.h"
#include "http.h"
#include "log.h"

#define CLI_DEFAULT_PORT "10187"
#define CLI_COLLECTOR_FLAGS_MAX 64
/* The built-in collector of the processing: section, which the
 * --collector flags turn on and off as they do a plugin. */
#define CLI_PROCESSING "processing"

/* --collector.NAME or --no-collector.NAME: overrides `enabled:` in the YAML. */
struct cli_collector_flag {
	const char *name;
	bool enabled;
};

struct cli {
	const char *config_file;
	const char *web_config_file; /* exporter-toolkit's web-config.yml, or NULL */
	bool systemd_socket;	     /* listen on the sockets systemd passes */
	struct cli_collector_flag collector[CLI_COLLECTOR_FLAGS_MAX];
	size_t ncollector;
	struct http_options http;
	enum bs_log_level log_level;
	bool log_json;
	bool check_config;
	bool version;
	bool help;
	/* --collector.disable-defaults: only --collector.NAME runs a collector. */
	bool disable_defaults;
};

/* Returns 0, or -1 with a message in err. */
int cli_parse(int argc, char **argv, struct cli *out, char *err, size_t errlen);
/* The flags; the daemon lists the collectors after them. */
void cli_usage(const char *prog);

/* Whether collector `name` runs, given what its configuration says
 * (`configured`: in the file and not `enabled: false`), and why, for
 * --help: the last --collector.NAME or --no-collector.NAME wins, then
 * --collector.disable-defaults turns everything else off. `why` is a
 * static string; "" when the configuration decides. */
bool cli_collector_on(const struct cli *c, const char *name, bool configured, const char **why);
/* Sets each collector of cfg on or off by cli_collector_on, and adds the
 * ones only --collector.NAME names (with their defaults). The processing
 * runs when the file has a processing: section, unless
 * --no-collector.processing, or --collector.disable-defaults without
 * --collector.processing, turns it off (cfg->processing is then dropped);
 * --collector.processing without the section is an error. 0, or -1 with
 * the reason in err. */
int cli_apply_collectors(const struct cli *c, struct config *cfg, char *err, size_t errlen);

#endif
