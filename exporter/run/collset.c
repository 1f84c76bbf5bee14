/* The running collectors of one configuration generation. Reload builds a
 * new set beside the old and swaps only if it is valid (OpenBSD's reconfigure). */
#include "collset_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobworker.h"
#include "log.h"
#include "monoclock.h"
#include "plugin.h"
#include "yieldem.h"

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

static void instance_shutdown(struct instance *in)
{
	jobworker_stop(in->worker);
	if (in->ops && in->init_rc == 0 && !in->release)
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
		s->nplugins = s->n;
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
	for (size_t i = s->nplugins; i < s->n; i++) /* they sample the plugins: first */
		s->inst[i].release(s->inst[i].state);
	for (size_t i = 0; i < s->n; i++)
		instance_shutdown(&s->inst[i]);
	config_free(s->config);
	free(s);
}

int collset_add_builtin(struct collset *s, const struct bs_collector *ops, void *state,
			void (*release)(void *state))
{
	if (s->n >= CONFIG_COLLECTORS_MAX + COLLSET_BUILTINS_MAX || collset_find(s, ops->name))
		return -EEXIST;
	struct instance *in = &s->inst[s->n++];
	*in = (struct instance){.name = ops->name, .ops = ops, .state = state, .release = release};
	pthread_mutex_init(&in->collect_lock, NULL);
	in->stats = selfstats_collector(in->name);
	return 0;
}

void *collset_builtin(struct collset *s, const char *name)
{
	for (size_t i = s->nplugins; i < s->n; i++)
		if (strcmp(s->inst[i].name, name) == 0)
			return s->inst[i].state;
	return NULL;
}

bool instance_lock_for_scrape(struct instance *in, uint64_t deadline_ns)
{
	struct timespec until = monoclock_timespec(deadline_ns);

	__atomic_add_fetch(&in->scrapes_waiting, 1, __ATOMIC_ACQ_REL);
	int rc = pthread_mutex_clocklock(&in->collect_lock, CLOCK_MONOTONIC, &until);
	__atomic_sub_fetch(&in->scrapes_waiting, 1, __ATOMIC_ACQ_REL);
	return rc == 0;
}

/* The sampler goes after every scrape: it does not start while one waits,
 * and its collect is told to stop (yieldem) as soon as one does. A pass
 * given up so returns 1, as one that found the lock held. */
int collset_sample(struct collset *s, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct instance *in = &s->inst[i];
	struct timespec until = monoclock_timespec(monoclock_ns() + wait_ns);
	struct yieldem y;

	if (i >= s->nplugins || !in->ops)
		return -ENODEV;
	if (__atomic_load_n(&in->scrapes_waiting, __ATOMIC_ACQUIRE) > 0 ||
	    pthread_mutex_clocklock(&in->collect_lock, CLOCK_MONOTONIC, &until) != 0)
		return 1;
	yieldem_init(&y, e, &in->scrapes_waiting);
	int rc = in->ops->collect(in->state, &y.pub);
	pthread_mutex_unlock(&in->collect_lock);
	return y.yielded ? 1 : rc;
}

const struct config *collset_config(const struct collset *s)
{
	return s->config;
}

size_t collset_count(const struct collset *s)
{
	return s->n;
}

struct instance *collset_at(struct collset *s, size_t i)
{
	return i < s->n ? &s->inst[i] : NULL;
}

struct instance *collset_find(struct collset *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->inst[i].name, name) == 0)
			return &s->inst[i];
	return NULL;
}

size_t collset_index(const struct collset *s, const struct instance *in)
{
	return (size_t)(in - s->inst);
}

bool collset_busy(const struct collset *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (jobworker_busy(s->inst[i].worker))
			return true;
	return false;
}

void collset_instance_info(const struct instance *in, struct instance_info *out)
{
	out->name = in->name;
	out->description = in->ops ? in->ops->description : NULL;
	out->error = !in->ops || in->init_rc < 0 ? in->error : NULL;
}
