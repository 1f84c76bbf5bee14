/* The running collectors of one configuration generation. Reload builds a
 * new set beside the old and swaps only if it is valid (OpenBSD's reconfigure). */
#include "collset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobworker.h"
#include "log.h"
#include "plugin.h"
#include "proc.h"

static int instance_init(struct instance *in, const struct config *cfg,
			 const struct config_collector *cc, const struct bs_host *host)
{
	const struct conf_node *node = cc->node; /* a map, even for "name:" */

	in->name = cc->name;
	pthread_mutex_init(&in->collect_lock, NULL);
	in->stats = selfstats_collector(cc->name);
	in->init_rc =
	    plugin_load(cfg->plugin_dir, cc->name, &in->ops, in->error, sizeof(in->error));
	if (in->init_rc < 0) {
		in->ops = NULL;
		return 0;
	}
	in->init_rc = in->ops->init(host, &node->pub, &in->state);
	if (in->init_rc == 0 && (in->init_rc = conf_check_unused(node)) < 0)
		in->ops->shutdown(in->state);
	if (in->init_rc == 0)
		return 0;
	if (cfg->doc->has_err)
		return -EINVAL; /* the file is wrong: the caller reports it */
	snprintf(in->error, sizeof(in->error), "init failed: %s", strerror(-in->init_rc));
	in->ops = NULL;
	return 0;
}

/* The built-in collector that writes the processing's statistics; its
 * sampler starts once every other collector is up. */
static int processing_init(struct collset *s, const struct bs_host *host)
{
	struct instance *in = &s->inst[s->n];
	int rc;

	if ((rc = proc_new(s->config->processing, &s->proc)) < 0)
		return rc;
	*in = (struct instance){.name = "processing", .ops = &proc_collector, .state = s->proc};
	pthread_mutex_init(&in->collect_lock, NULL);
	in->stats = selfstats_collector(in->name);
	s->n++;
	if (!(host->flags & BS_HOST_CHECK_ONLY) && (rc = proc_start(s->proc, s)) < 0)
		log_error("processing sampler failed to start", "err", strerror(-rc));
	return 0;
}

static void instance_shutdown(struct instance *in)
{
	jobworker_stop(in->worker);
	if (in->ops && in->init_rc == 0)
		in->ops->shutdown(in->state);
	seriesset_free(&in->series.series);
	prefixset_free(&in->series.byprefix);
	pthread_mutex_destroy(&in->collect_lock);
}

int collset_build(struct config *cfg, const struct bs_host *host, struct collset **out, char *err,
		  size_t errlen)
{
	struct collset *s = calloc(1, sizeof(*s));

	if (!s) {
		config_free(cfg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->refs = 1;
	s->config = cfg;
	for (size_t i = 0; i < cfg->ncollectors; i++) {
		const struct config_collector *cc = &cfg->collector[i];
		if (!cc->enabled)
			continue;
		struct instance *in = &s->inst[s->n++];
		if (instance_init(in, cfg, cc, host) < 0) {
			snprintf(err, errlen, "%s", cfg->doc->err);
			/* This one's init failed, and shut itself down. */
			in->ops = NULL;
			collset_put(s);
			return -EINVAL;
		}
		if (in->init_rc < 0)
			log_error("collector failed to start", "collector", in->name, "err",
				  in->error);
	}
	if (cfg->processing && processing_init(s, host) < 0) {
		snprintf(err, errlen, "cannot start the processing: out of memory");
		collset_put(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

struct collset *collset_get(struct collset *s)
{
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
	return s;
}

void collset_put(struct collset *s)
{
	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	proc_free(s->proc); /* its sampler collects from the others: first */
	for (size_t i = 0; i < s->n; i++)
		instance_shutdown(&s->inst[i]);
	config_free(s->config);
	free(s);
}

struct instance *collset_find(struct collset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->inst[i].name, name) == 0)
			return &s->inst[i];
	return NULL;
}
