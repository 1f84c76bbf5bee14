/* What the operator is told of what runs: --help lists the collectors
 * with their state (as node_exporter lists its own), and the start-up log
 * says which run and what guards the web endpoint. */
#include "announce.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "version.h"
#include "weblive.h"

#define LIST_MAX 128 /* plugin files listed in --help */
#define NAMES_LEN 1024

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/* The collector names of the plugin files in dir, sorted; the caller frees each. */
static size_t plugin_names(const char *dir, char **out, size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		size_t len = strlen(e->d_name);
		char *name;
		if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0 && e->d_name[0] != '.' &&
		    (name = strndup(e->d_name, len - 3)))
			out[n++] = name;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), cmp_str);
	return n;
}

static void help_line(const char *name, bool on, const char *why)
{
	if (*why)
		printf("  %-24s %-4s (%s)\n", name, on ? "on" : "off", why);
	else
		printf("  %-24s %s\n", name, on ? "on" : "off");
}

void announce_help_collectors(const struct cli *cli)
{
	char err[CONF_ERR_MAX];
	struct config *cfg =
	    config_load(cli->config_file, NULL, bs_default_plugin_dir, err, sizeof(err));
	const char *dir = cfg ? cfg->plugin_dir : bs_default_plugin_dir;
	const char *shown[CONFIG_COLLECTORS_MAX + CLI_COLLECTOR_FLAGS_MAX + 1];
	char *plugins[LIST_MAX];
	size_t nshown = 0, nplugins = plugin_names(dir, plugins, LIST_MAX);
	const char *why;

	printf("\nCollectors (--collector.NAME runs one, --no-collector.NAME stops it),\n"
	       "from %s and the plugins in %s:\n",
	       cli->config_file, dir);
	if (!cfg)
		printf("  the configuration was not read: %s\n", err);
	for (size_t i = 0; cfg && i < cfg->ncollectors; i++) {
		const struct config_collector *cc = &cfg->collector[i];
		bool on = cli_collector_on(cli, cc->name, cc->enabled, &why);
		if (!*why && !cc->enabled)
			why = "enabled: false";
		else if (on && !listed((const char *const *)plugins, nplugins, cc->name))
			why = "no plugin file";
		help_line(cc->name, on, why);
		shown[nshown++] = cc->name;
	}
	if (cfg) { /* the built-in one, configured by its section */
		bool on = cli_collector_on(cli, CLI_PROCESSING, cfg->processing != NULL, &why);
		if (!*why)
			why = cfg->processing ? "built in: the processing: section"
					      : "built in: no processing: section";
		else if (on && !cfg->processing)
			why = "--collector.NAME, but no processing: section: an error";
		help_line(CLI_PROCESSING, on && cfg->processing, why);
		shown[nshown++] = CLI_PROCESSING;
	}
	for (size_t i = 0; i < cli->ncollector; i++)
		if (cli->collector[i].enabled && !listed(shown, nshown, cli->collector[i].name)) {
			help_line(cli->collector[i].name, true,
				  "--collector.NAME, not in the configuration: its defaults");
			shown[nshown++] = cli->collector[i].name;
		}
	for (size_t i = 0; i < nplugins; i++) {
		if (!listed(shown, nshown, plugins[i]))
			help_line(plugins[i], false, "not in the configuration");
		free(plugins[i]);
	}
	config_free(cfg);
}

/* Appends name to a comma-separated list, cut at its size. */
static void add_name(char *list, const char *name)
{
	size_t n = strlen(list);
	snprintf(list + n, NAMES_LEN - n, "%s%s", n ? "," : "", name);
}

int announce_check_collector_flags(const struct cli *cli, char *err, size_t errlen)
{
	char cerr[CONF_ERR_MAX], known[NAMES_LEN] = "";
	struct config *cfg;
	char *plugins[LIST_MAX];
	size_t nplugins;
	int rc = 0;

	if (!cli->ncollector ||
	    !(cfg = config_load(cli->config_file, NULL, bs_default_plugin_dir, cerr, sizeof(cerr))))
		return 0; /* no flag, or the load's own error says what is wrong */
	nplugins = plugin_names(cfg->plugin_dir, plugins, LIST_MAX);
	for (size_t i = 0; i < cli->ncollector && !rc; i++) {
		const char *name = cli->collector[i].name;
		if (!config_find(cfg, name) && strcmp(name, CLI_PROCESSING) != 0 &&
		    !listed((const char *const *)plugins, nplugins, name))
			rc = -1;
	}
	if (rc) {
		for (size_t i = 0; i < cfg->ncollectors; i++)
			add_name(known, cfg->collector[i].name);
		for (size_t i = 0; i < nplugins; i++)
			if (!config_find(cfg, plugins[i]))
				add_name(known, plugins[i]);
		add_name(known, CLI_PROCESSING);
		for (size_t i = 0; i < cli->ncollector; i++) {
			const char *name = cli->collector[i].name;
			if (!config_find(cfg, name) && strcmp(name, CLI_PROCESSING) != 0 &&
			    !listed((const char *const *)plugins, nplugins, name)) {
				snprintf(
				    err, errlen,
				    "unknown collector '%s' (--%scollector.%s): the configuration "
				    "and %s know %s",
				    name, cli->collector[i].enabled ? "" : "no-", name,
				    cfg->plugin_dir, known);
				break;
			}
		}
	}
	for (size_t i = 0; i < nplugins; i++)
		free(plugins[i]);
	config_free(cfg);
	return rc;
}

void announce_start(const struct cli *cli, struct collset *set)
{
	char running[NAMES_LEN] = "", failed[NAMES_LEN] = "", off[NAMES_LEN] = "";
	const struct config *cfg = collset_config(set);

	for (size_t i = 0; i < collset_count(set); i++) {
		struct instance_info in;
		collset_instance_info(collset_at(set, i), &in);
		add_name(in.error ? failed : running, in.name);
	}
	for (size_t i = 0; i < cfg->ncollectors; i++)
		if (!cfg->collector[i].enabled)
			add_name(off, cfg->collector[i].name);
	if (cfg->processing_off)
		add_name(off, CLI_PROCESSING);
	log_info("collectors", "running", running, "failed", failed, "off", off);

	weblive_log_endpoint(cli->http.web);
}
