/* The exporter's configuration schema: global settings and the collectors
 * to run, read from a conftree (whose nodes each collector reads itself).
 * A file is parsed into a fresh struct; the caller swaps it in only on success. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* A duration as written, or the default's value. */
static void describe(const struct conf_node *n, double dflt, char *out, size_t outlen)
{
	if (n)
		snprintf(out, outlen, "%s", n->scalar);
	else
		snprintf(out, outlen, "%gs, the default", dflt);
}

/* An offset of scrape_timeout or more leaves a scrape given that timeout
 * by Prometheus no time at all: its deadline would be cut to the 50 ms
 * floor, every slow collector failing for no visible reason. The error
 * points at the offset, or at the timeout when the offset is the default. */
static int check_offset(const struct config *c, const struct conf_node *g)
{
	const struct conf_node *off = conf_child(g, "scrape_timeout_offset");
	const struct conf_node *to = conf_child(g, "scrape_timeout");
	char off_text[48], to_text[48];

	if (c->timeout_offset < c->scrape_timeout)
		return 0;
	describe(off, c->timeout_offset, off_text, sizeof(off_text));
	describe(to, c->scrape_timeout, to_text, sizeof(to_text));
	return conf_errorf(off ? off : to,
			   "'scrape_timeout_offset' (%s) must be less than 'scrape_timeout' "
			   "(%s): a scrape would have no time left",
			   off_text, to_text);
}

static int load_global(struct config *c, const struct conf_node *g)
{
	int rc;

	if (g->kind != BS_CONF_MAP)
		return conf_errorf(g, "'global' must be a mapping");
	rc = conf_get_duration(g, "scrape_timeout", 0.01, 3600, &c->scrape_timeout);
	if (rc == -EINVAL)
		return rc;
	rc = conf_get_duration(g, "scrape_timeout_offset", 0, 60, &c->timeout_offset);
	if (rc == -EINVAL)
		return rc;
	rc = conf_get_bytes(g, "max_response_bytes", 4096, 1ull << 40, &c->max_response_bytes);
	if (rc == -EINVAL)
		return rc;
	rc = conf_get_bytes(g, "spill_uncompressed_after", 0, 1ull << 40, &c->spill_after);
	if (rc == -EINVAL)
		return rc;
	rc = conf_get_str(g, "plugin_dir", &c->plugin_dir);
	if (rc == -EINVAL)
		return rc;
	rc = check_offset(c, g);
	if (rc == -EINVAL)
		return rc;
	return conf_check_unused(g);
}

static int load_collectors(struct config *c, const struct conf_node *m)
{
	if (m->kind != BS_CONF_MAP)
		return conf_errorf(m, "'collectors' must be a mapping of name to options");
	if (m->n > CONFIG_COLLECTORS_MAX)
		return conf_errorf(m, "more than %d collectors", CONFIG_COLLECTORS_MAX);
	for (size_t i = 0; i < m->n; i++) {
		struct config_collector *cc = &c->collector[c->ncollectors];
		const char *name = m->key[i];
		const struct conf_node *opts = conf_child(m, name);

		if (!names_snake_valid(name, strlen(name), CONFIG_NAME_MAX))
			return conf_errorf(m->key_pos[i],
					   "collector name '%s' must be 1 to %d of "
					   "a-z, 0-9 and _",
					   name, CONFIG_NAME_MAX);
		if (strcmp(name, "processing") == 0)
			return conf_errorf(m->key_pos[i],
					   "'processing' is the built-in collector of "
					   "the processing: section, not a plugin");
		/* "name:" with nothing after it means "with defaults". */
		if (opts->kind != BS_CONF_MAP &&
		    !(opts->kind == BS_CONF_SCALAR && opts->scalar[0] == '\0')) {
			return conf_errorf(opts, "options of collector '%s' must be a mapping",
					   name);
		}
		conf_null_to_map(opts);
		cc->name = name;
		cc->node = opts;
		cc->enabled = true;
		if (conf_get_bool(opts, "enabled", &cc->enabled) == -EINVAL)
			return -EINVAL;
		c->ncollectors++;
	}
	return 0;
}

static struct config *load(const char *file, const char *text, struct conf_settle *settle,
			   const char *default_plugin_dir, char *err, size_t errlen)
{
	struct config *c = calloc(1, sizeof(*c));
	const struct conf_node *n;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->scrape_timeout = 10;
	c->timeout_offset = 0.5;
	c->max_response_bytes = 256ull << 20;
	c->spill_after = 32ull << 20;
	c->plugin_dir = default_plugin_dir;
	c->doc =
	    text ? conf_load(file, text, err, errlen) : conf_load_file(file, settle, err, errlen);
	if (!c->doc)
		goto err_free;
	/* A file caught between its truncation and its rewrite reads empty:
	 * taken, it would stop every collector. `{}` is the empty one. */
	if (c->doc->empty) {
		snprintf(err, errlen,
			 "%s: no configuration in it (empty, or only blanks and comments); "
			 "an empty configuration is written {}",
			 file);
		goto err_free;
	}
	struct conf_node *root = c->doc->root;
	if ((n = conf_child(root, "global")) && load_global(c, n) < 0)
		goto err_copy_message;
	if ((n = conf_child(root, "collectors")) && load_collectors(c, n) < 0)
		goto err_copy_message;
	if ((n = conf_child(root, "processing")) && processing_conf_load(n, &c->processing) < 0)
		goto err_copy_message;
	/* Top level only: each collector's plugin checks its own options. */
	for (size_t i = 0; i < root->n; i++)
		if (!root->used[i]) {
			conf_errorf(root->key_pos[i], "unknown key '%s'", root->key[i]);
			goto err_copy_message;
		}
	return c;
err_copy_message:
	snprintf(err, errlen, "%s", c->doc->err);
err_free:
	config_free(c);
	return NULL;
}

struct config *config_load(const char *file, const char *text, const char *default_plugin_dir,
			   char *err, size_t errlen)
{
	return load(file, text, NULL, default_plugin_dir, err, errlen);
}

struct config *config_load_settled(const char *file, struct conf_settle *settle,
				   const char *default_plugin_dir, char *err, size_t errlen)
{
	return load(file, NULL, settle, default_plugin_dir, err, errlen);
}

int config_set_enabled(struct config *c, const char *name, bool on, char *err, size_t errlen)
{
	struct config_collector *cc = (struct config_collector *)config_find(c, name);

	if (cc) {
		cc->enabled = on;
		return 0;
	}
	if (!on)
		return 0;
	if (!names_snake_valid(name, strlen(name), CONFIG_NAME_MAX) ||
	    strcmp(name, "processing") == 0) {
		snprintf(err, errlen, "--collector.%s: not a collector name", name);
		return -EINVAL;
	}
	if (c->ncollectors == CONFIG_COLLECTORS_MAX) {
		snprintf(err, errlen, "--collector.%s: more than %d collectors", name,
			 CONFIG_COLLECTORS_MAX);
		return -EINVAL;
	}
	if (!c->flag_doc && !(c->flag_doc = conf_load("command line", "{}", err, errlen)))
		return -ENOMEM;
	c->collector[c->ncollectors++] =
	    (struct config_collector){.name = name, .enabled = true, .node = c->flag_doc->root};
	return 0;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	processing_conf_free(c->processing); /* its strings are the document's */
	conf_free(c->flag_doc);
	conf_free(c->doc);
	free(c);
}

const struct config_collector *config_find(const struct config *c, const char *name)
{
	for (size_t i = 0; i < c->ncollectors; i++)
		if (strcmp(c->collector[i].name, name) == 0)
			return &c->collector[i];
	return NULL;
}
