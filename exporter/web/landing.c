/* The landing page: version, configuration and its last reload, the web
 * config, and each collector with its last scrape, what it found and what
 * it dropped. Everything a plugin or a file supplied is escaped: a
 * collector's error may quote a path, and its describe line is its own. */
#include "landing.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "processing.h"
#include "selfstats.h"
#include "version.h"

#define PAGE_MAX (1u << 20)

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;"
    "color:#222}"
    "table{border-collapse:collapse;margin-bottom:1.5em}"
    "th,td{border:1px solid #ccc;padding:.35em .7em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}.ok{color:#1a6e1a}.bad{color:#b00020;font-weight:bold}"
    "small{color:#666}nav a{margin-right:1.2em}";

static void escaped(struct textbuf *t, const char *s)
{
	while (s && *s) {
		size_t n = strcspn(s, "<>&\"'");
		if (n)
			textbuf_printf(t, "%.*s", (int)n, s);
		s += n;
		if (!*s)
			break;
		textbuf_printf(t, "%s",
			       *s == '<'   ? "&lt;"
			       : *s == '>' ? "&gt;"
			       : *s == '&' ? "&amp;"
			       : *s == '"' ? "&quot;"
					   : "&#39;");
		s++;
	}
}

/* "2026-11-23 17:40:02 UTC (3 s ago)" */
static void when(struct textbuf *t, double unix_s)
{
	char buf[64];
	time_t secs = (time_t)unix_s;
	struct tm tm;
	double ago = (double)time(NULL) - unix_s;

	gmtime_r(&secs, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
	textbuf_printf(t, "%s (%.0f s ago)", buf, ago < 0 ? 0 : ago);
}

static void head(struct textbuf *t, const struct landing_input *in)
{
	textbuf_printf(t,
		       "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		       "<title>binstat_exporter</title><style>%s</style></head>\n<body>\n"
		       "<h1>binstat_exporter</h1>\n"
		       "<p>Version %s (revision %s, compiler %s). KVM, Xen and DCI4 binary "
		       "statistics for Prometheus.</p>\n<nav><a href=\"",
		       style, BS_VERSION, BS_REVISION, BS_COMPILER);
	escaped(t, in->telemetry_path);
	textbuf_printf(t, "\">Metrics</a>");
	if (in->set && collset_builtin(in->set, processing_collector()->name))
		textbuf_printf(t, "<a href=\"/statistics/\">Statistics interface</a>");
	textbuf_printf(t, "<a href=\"/-/healthy\">Health</a><a href=\"/-/ready\">Ready</a>"
			  "</nav>\n");
}

static void configuration(struct textbuf *t, const struct landing_input *in)
{
	struct selfstats_reload_info r;

	selfstats_reload_get(&r);
	textbuf_printf(t, "<h2>Configuration</h2>\n<table>\n<tr><th>File</th><td>");
	escaped(t, in->config_file);
	textbuf_printf(t, "</td></tr>\n<tr><th>Last load</th>");
	if (r.ok) {
		textbuf_printf(t, "<td class=\"ok\">succeeded ");
		when(t, r.success_unix);
	} else {
		textbuf_printf(t, "<td class=\"bad\">failed ");
		when(t, r.attempt_unix);
		textbuf_printf(t, ": ");
		escaped(t, r.error);
		textbuf_printf(t, "<br><small>still running the configuration loaded ");
		when(t, r.success_unix);
		textbuf_printf(t, "</small>");
	}
	textbuf_printf(t, "</td></tr>\n<tr><th>Web config</th><td>");
	if (in->web_config_file) {
		escaped(t, in->web_config_file);
		textbuf_printf(t, ": TLS %s, basic auth %s (%zu users), rate limit %s",
			       in->web->tls ? "on" : "off", in->web->nusers ? "on" : "off",
			       in->web->nusers, in->web->rate_interval > 0 ? "on" : "off");
	} else {
		textbuf_printf(t, "none: plain HTTP, no authentication");
	}
	textbuf_printf(t,
		       "</td></tr>\n<tr><th>Exporter metrics</th><td>%s</td></tr>\n"
		       "</table>\n",
		       in->exporter_metrics ? "served"
					    : "left out (--web.disable-exporter-metrics)");
}

static void drops(struct textbuf *t, const struct collstats *cs)
{
	bool any = false;
	for (size_t i = 0; i < cs->ndrops; i++) {
		if (!cs->drops[i].n)
			continue;
		textbuf_printf(t, "%s", any ? "<br>" : "");
		escaped(t, cs->drops[i].reason);
		textbuf_printf(t, ": %llu", (unsigned long long)cs->drops[i].n);
		any = true;
	}
	if (!any)
		textbuf_printf(t, "none");
}

/* A describe line; what follows its first newline is a warning the
 * collector wants seen (collector-abi.md), shown apart and in red. */
static void found(struct textbuf *t, char *line)
{
	char *warning = strchr(line, '\n');

	if (warning)
		*warning++ = '\0';
	escaped(t, line[0] ? line : "-");
	if (warning && *warning) {
		textbuf_printf(t, "<br><span class=\"bad\">warning: ");
		escaped(t, warning);
		textbuf_printf(t, "</span>");
	}
}

static void collector_row(struct textbuf *t, const struct instance *inst)
{
	struct instance_info in;
	struct collstats cs;

	collset_instance_info(inst, &in);
	bool have = selfstats_collector_get(in.name, &cs);
	textbuf_printf(t, "<tr><td><b>");
	escaped(t, in.name);
	textbuf_printf(t, "</b>");
	if (in.description) {
		textbuf_printf(t, "<br><small>");
		escaped(t, in.description);
		textbuf_printf(t, "</small>");
	}
	textbuf_printf(t, "</td>");
	if (in.error) {
		textbuf_printf(t, "<td class=\"bad\" colspan=\"3\">not running: ");
		escaped(t, in.error);
		textbuf_printf(t, "</td>");
	} else if (!have || !cs.scraped) {
		textbuf_printf(t, "<td colspan=\"3\">not scraped yet</td>");
	} else {
		textbuf_printf(t, "<td class=\"%s\">%s ", cs.last_ok ? "ok" : "bad",
			       cs.last_ok ? "succeeded" : "failed");
		when(t, cs.last_unix);
		if (!cs.last_ok && cs.why[0]) {
			textbuf_printf(t, ": ");
			escaped(t, cs.why);
		}
		if (cs.last_seconds < 1)
			textbuf_printf(t, "</td><td>%.1f ms</td><td>", cs.last_seconds * 1e3);
		else
			textbuf_printf(t, "</td><td>%.2f s</td><td>", cs.last_seconds);
		found(t, cs.found);
		textbuf_printf(t, "</td>");
	}
	textbuf_printf(t, "<td>");
	if (have)
		drops(t, &cs);
	else
		textbuf_printf(t, "none");
	textbuf_printf(t, "</td></tr>\n");
}

static void collectors(struct textbuf *t, const struct landing_input *in)
{
	textbuf_printf(t, "<h2>Collectors</h2>\n");
	if (!in->set || !collset_count(in->set)) {
		textbuf_printf(t, "<p>None enabled.</p>\n");
		return;
	}
	textbuf_printf(t, "<table>\n<tr><th>Collector</th><th>Last scrape</th>"
			  "<th>Duration</th><th>Found</th><th>Dropped, by reason</th></tr>\n");
	for (size_t i = 0; i < collset_count(in->set); i++)
		collector_row(t, collset_at(in->set, i));
	textbuf_printf(t, "</table>\n");
}

bool landing_page(const struct landing_input *in, struct textbuf *out)
{
	out->max = PAGE_MAX;
	head(out, in);
	configuration(out, in);
	collectors(out, in);
	textbuf_printf(out, "</body></html>\n");
	return !out->failed;
}
