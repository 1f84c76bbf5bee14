/* The processing stage's life: made from the configuration's
 * `processing:` section, started over the running collectors, freed;
 * and the doors the rest of the daemon uses: the built-in collector a
 * scrape runs (emit.c) and the /statistics/ interface (iface.c). */
#include "processing.h"
#include "takeover.h"
#include "emit.h"
#include "iface.h"
#include "sampler.h"
#include "srctab.h"
#include "stage_priv.h"
#include "tpl.h"

#include <errno.h>
#include <stdlib.h>

#include "monoclock.h"

/* Every name the processing's families could claim, whatever the writes
 * make of its statistics' types. */
static int names_build(struct processing *p)
{
	const char *clash;
	uint32_t other;
	int rc = 0;

	for (uint32_t g = 0; rc != -ENOMEM && g < p->conf->ngroups; g++) {
		const struct processing_group_conf *c = &p->conf->group[g];
		for (uint32_t k = 0; rc != -ENOMEM && k < c->nstats; k++)
			rc = processing_names_stat(&p->ours, c->stat[k].name, 0x7f, 0, &clash,
						   &other);
		if (c->has_template && rc != -ENOMEM)
			rc = processing_conf_template_names(&p->ours, &c->tpl, 0, &clash, &other);
	}
	return rc == -ENOMEM ? rc : 0;
}

int processing_new(const struct processing_conf *conf, struct processing **out)
{
	struct processing *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (!(p->scratch = malloc(sizeof(*p->scratch)))) {
		free(p);
		return -ENOMEM;
	}
	p->conf = conf;
	p->epfd = -1;
	p->clock_ns = monoclock_ns;
	srctab_init(p);
	worker_init(&p->sampler);
	pthread_mutex_init(&p->lock, NULL);
	tpl_init(p);
	processing_names_init(&p->ours);
	processing_names_init(&p->lost);
	processing_names_init(&p->warned);
	processing_names_init(&p->served);
	if (names_build(p) < 0) {
		processing_free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

int processing_start(struct processing *p, const struct stage_input *in)
{
	return sampler_start(p, in);
}

void processing_free(struct processing *p)
{
	if (!p)
		return;
	sampler_stop(p);
	srctab_free(p);
	free(p->scratch);
	processing_names_free(&p->ours);
	processing_names_free(&p->lost);
	processing_names_free(&p->warned);
	processing_names_free(&p->served);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void processing_release(void *p)
{
	processing_free(p);
}

void processing_take_over(struct processing *p, struct processing *old)
{
	takeover_apply(p, old);
}

const struct bs_collector *processing_collector(void)
{
	return &emit_collector;
}

void processing_iface(struct processing *p, const char *method, const char *path, const char *body,
		      bool may_write, uint64_t now_ns, struct stage_reply *r)
{
	iface_request(p, method, path, body, may_write, now_ns, r);
}
