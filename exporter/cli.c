/* Command-line flags, with node_exporter's names: --flag=value or --flag value. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listener.h"

void cli_usage(const char *prog)
{
	printf("usage: %s [flags]\n\n"
	       "Serves KVM's binary statistics, Xen PV statistics sets and DCI4 statistic\n"
	       "suppliers to Prometheus, and processes sampled values between scrapes as the\n"
	       "Linux statistics infrastructure and FreeBSD's stats(3) do.\n\n"
	       "  --config.file=PATH            YAML configuration (default "
	       "/etc/binstat_exporter/binstat_exporter.yml)\n"
	       "  --web.listen-address=ADDR     host:port, [v6]:port or :port; "
	       "repeatable (default :" CLI_DEFAULT_PORT ")\n"
	       "  --web.systemd-socket          listen on the sockets systemd passes instead\n"
	       "  --web.config.file=PATH        TLS, basic auth, headers and rate limit, in\n"
	       "                                exporter-toolkit's web-config.yml format\n"
	       "  --web.telemetry-path=PATH     where metrics are served (default /metrics)\n"
	       "  --web.disable-exporter-metrics  leave out process_* and binstat_exporter_*\n"
	       "  --web.max-requests=N          scrapes at once before 503; 0: no limit "
	       "(default 40)\n"
	       "  --web.connection-timeout=S    seconds a client may stall (default 30)\n"
	       "  --web.read-header-timeout=S   seconds to send a whole request head (default 10)\n"
	       "  --web.write-timeout=S         seconds to read a response, or a run of pipelined\n"
	       "                                ones (default 120)\n"
	       "  --web.idle-timeout=S          seconds a kept-alive connection may wait for its\n"
	       "                                next request (default 150)\n"
	       "  --web.max-connections-per-address=N  open at once from one address "
	       "(default 16)\n"
	       "  --collector.NAME              run collector NAME, whatever its enabled: says\n"
	       "  --no-collector.NAME           do not run collector NAME (processing: the\n"
	       "                                built-in one of the processing: section)\n"
	       "  --collector.disable-defaults  run only the collectors --collector.NAME names\n"
	       "  --log.level=LEVEL             debug, info, warn or error (default info)\n"
	       "  --log.format=FORMAT           logfmt or json (default logfmt); lines go to\n"
	       "                                the journal, each pair a field, when stderr is it\n"
	       "  --check-config                check the configuration and the web config, "
	       "and exit\n"
	       "  --version                     print the version and exit\n"
	       "  -h, --help, --help-long       print this and exit\n",
	       prog);
}

static int uint_arg(const char *v, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max || v[0] == '-')
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int apply(struct cli *c, const char *flag, const char *v, char *err, size_t errlen)
{
	if (strcmp(flag, "config.file") == 0) {
		c->config_file = v;
	} else if (strcmp(flag, "web.listen-address") == 0) {
		char host[256], port[16];
		int rc = listener_parse_address(v, host, sizeof(host), port, sizeof(port));
		if (rc < 0) {
			snprintf(err, errlen, "bad value '%s' for --%s: %s", v, flag,
				 listener_address_error(rc));
			return -1;
		}
		if (c->http.nlisten == HTTP_LISTEN_MAX)
			goto err_bad_value;
		c->http.listen[c->http.nlisten++] = v;
	} else if (strcmp(flag, "web.config.file") == 0) {
		c->web_config_file = *v ? v : NULL; /* node_exporter's: empty is none */
	} else if (strcmp(flag, "web.telemetry-path") == 0) {
		if (v[0] != '/' || strcmp(v, "/") == 0 || strcmp(v, "/-/healthy") == 0 ||
		    strcmp(v, "/-/ready") == 0)
			goto err_bad_value;
		c->http.telemetry_path = v;
	} else if (strcmp(flag, "web.max-requests") == 0) {
		if (uint_arg(v, 0, 10000, &c->http.max_requests) < 0)
			goto err_bad_value;
		if (c->http.max_requests == 0) /* node_exporter's "0: no limit" */
			c->http.max_requests = UINT_MAX;
	} else if (strcmp(flag, "web.connection-timeout") == 0) {
		if (uint_arg(v, 1, 3600, &c->http.connection_timeout) < 0)
			goto err_bad_value;
	} else if (strcmp(flag, "web.read-header-timeout") == 0) {
		if (uint_arg(v, 1, 3600, &c->http.head_timeout) < 0)
			goto err_bad_value;
	} else if (strcmp(flag, "web.write-timeout") == 0) {
		if (uint_arg(v, 1, 86400, &c->http.write_timeout) < 0)
			goto err_bad_value;
	} else if (strcmp(flag, "web.idle-timeout") == 0) {
		if (uint_arg(v, 1, 86400, &c->http.idle_timeout) < 0)
			goto err_bad_value;
	} else if (strcmp(flag, "web.max-connections-per-address") == 0) {
		if (uint_arg(v, 1, HTTP_CONNECTIONS_MAX, &c->http.max_per_address) < 0)
			goto err_bad_value;
	} else if (strcmp(flag, "log.level") == 0) {
		if (log_parse_level(v, &c->log_level) < 0) {
			snprintf(err, errlen, "bad value '%s' for --%s: one of %s", v, flag,
				 log_level_names());
			return -1;
		}
	} else if (strcmp(flag, "log.format") == 0) {
		if (strcmp(v, "json") != 0 && strcmp(v, "logfmt") != 0) {
			snprintf(err, errlen, "bad value '%s' for --%s: one of logfmt, json", v,
				 flag);
			return -1;
		}
		c->log_json = strcmp(v, "json") == 0;
	}
	return 0;
err_bad_value:
	snprintf(err, errlen, "bad value '%s' for --%s (see --help)", v, flag);
	return -1;
}

/* --collector.NAME and --no-collector.NAME; the last one given wins. */
static int collector_flag(struct cli *c, const char *flag, char *err, size_t errlen)
{
	bool on = strncmp(flag, "collector.", 10) == 0;
	const char *name = strchr(flag, '.') + 1;
	size_t i;

	if (!*name) {
		snprintf(err, errlen, "--%s needs a collector name", flag);
		return -1;
	}
	for (i = 0; i < c->ncollector; i++)
		if (strcmp(c->collector[i].name, name) == 0)
			break;
	if (i == CLI_COLLECTOR_FLAGS_MAX) {
		snprintf(err, errlen, "more than %d --collector flags", CLI_COLLECTOR_FLAGS_MAX);
		return -1;
	}
	if (i == c->ncollector)
		c->ncollector++;
	c->collector[i] = (struct cli_collector_flag){name, on};
	return 0;
}

static bool is_collector_flag(const char *flag)
{
	return (strncmp(flag, "collector.", 10) == 0 || strncmp(flag, "no-collector.", 13) == 0) &&
	       strcmp(flag, "collector.disable-defaults") != 0;
}

/* The flags that take a value; apply() sets each. */
static bool is_value_flag(const char *flag)
{
	static const char *const names[] = {
	    "config.file",
	    "web.listen-address",
	    "web.config.file",
	    "web.telemetry-path",
	    "web.max-requests",
	    "web.connection-timeout",
	    "web.read-header-timeout",
	    "web.write-timeout",
	    "web.idle-timeout",
	    "web.max-connections-per-address",
	    "log.level",
	    "log.format",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(flag, names[i]) == 0)
			return true;
	return false;
}

static bool *switch_flag(struct cli *c, const char *flag)
{
	if (strcmp(flag, "check-config") == 0)
		return &c->check_config;
	if (strcmp(flag, "version") == 0)
		return &c->version;
	if (strcmp(flag, "web.systemd-socket") == 0)
		return &c->systemd_socket;
	if (strcmp(flag, "web.disable-exporter-metrics") == 0)
		return &c->http.no_exporter_metrics;
	if (strcmp(flag, "collector.disable-defaults") == 0)
		return &c->disable_defaults;
	/* kingpin's long help; here the one help there is. */
	if (strcmp(flag, "help") == 0 || strcmp(flag, "help-long") == 0)
		return &c->help;
	return NULL;
}

bool cli_collector_on(const struct cli *c, const char *name, bool configured, const char **why)
{
	for (size_t i = 0; i < c->ncollector; i++)
		if (strcmp(c->collector[i].name, name) == 0) {
			*why = c->collector[i].enabled ? "--collector.NAME" : "--no-collector.NAME";
			return c->collector[i].enabled;
		}
	if (c->disable_defaults) {
		*why = "--collector.disable-defaults";
		return false;
	}
	*why = "";
	return configured;
}

int cli_parse(int argc, char **argv, struct cli *c, char *err, size_t errlen)
{
	static char flag[64];

	memset(c, 0, sizeof(*c));
	c->config_file = "/etc/binstat_exporter/binstat_exporter.yml";
	c->http.telemetry_path = "/metrics";
	c->http.max_requests = 40;
	c->http.connection_timeout = 30;
	c->http.head_timeout = 10;
	c->http.write_timeout = 120;
	c->http.idle_timeout = 150;
	c->http.max_per_address = 16;
	c->log_level = BS_LOG_INFO;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == '\0') {
			snprintf(err, errlen, "unexpected argument '%s'", a);
			return -1;
		}
		/* As kingpin: one dash is a short flag, and -h the only one. */
		if (a[1] != '-') {
			if (strcmp(a, "-h") == 0) {
				c->help = true;
				continue;
			}
			snprintf(err, errlen, "unknown short flag '-%c', try --help", a[1]);
			return -1;
		}
		a += 2;
		const char *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		if (n >= sizeof(flag)) {
			snprintf(err, errlen, "unknown long flag '%s', try --help", argv[i]);
			return -1;
		}
		memcpy(flag, a, n);
		flag[n] = '\0';
		if (is_collector_flag(flag)) {
			if (eq && strchr(flag, '.')[1]) {
				snprintf(err, errlen, "flag --%s takes no value", flag);
				return -1;
			}
			/* "--collector.=" says what "--collector." does. The name
			 * points into argv, which lives as long as we do. */
			if (collector_flag(c, eq ? flag : a, err, errlen) < 0)
				return -1;
			continue;
		}
		bool *sw = switch_flag(c, flag);
		if (sw && !eq) {
			*sw = true;
			continue;
		}
		if (!sw && !is_value_flag(flag)) {
			snprintf(err, errlen, "unknown long flag '--%s', try --help", flag);
			return -1;
		}
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!v || sw) {
			snprintf(err, errlen, "flag --%s %s", flag,
				 sw ? "takes no value" : "needs a value");
			return -1;
		}
		if (apply(c, flag, v, err, errlen) < 0)
			return -1;
	}
	if (c->systemd_socket && c->http.nlisten) {
		snprintf(err, errlen,
			 "--web.systemd-socket and --web.listen-address exclude each other");
		return -1;
	}
	if (c->http.nlisten == 0 && !c->systemd_socket)
		c->http.listen[c->http.nlisten++] = ":" CLI_DEFAULT_PORT;
	return 0;
}

int cli_apply_collectors(const struct cli *c, struct config *cfg, char *err, size_t errlen)
{
	const char *why;

	for (size_t i = 0; i < cfg->ncollectors; i++) {
		struct config_collector *cc = &cfg->collector[i];
		cc->enabled = cli_collector_on(c, cc->name, cc->enabled, &why);
	}
	/* The built-in processing follows the flags as a plugin does; it is
	 * configured by the processing: section, which it needs. */
	bool proc_on = cli_collector_on(c, CLI_PROCESSING, cfg->processing != NULL, &why);
	if (proc_on && !cfg->processing) {
		snprintf(err, errlen,
			 "--collector." CLI_PROCESSING ": the configuration has no processing: "
			 "section, which is what it runs");
		return -1;
	}
	if (!proc_on && cfg->processing) {
		processing_conf_free(cfg->processing);
		cfg->processing = NULL;
		cfg->processing_off = true;
	}
	for (size_t i = 0; i < c->ncollector; i++)
		if (c->collector[i].enabled && strcmp(c->collector[i].name, CLI_PROCESSING) != 0 &&
		    config_set_enabled(cfg, c->collector[i].name, true, err, errlen) < 0)
			return -1;
	return 0;
}
