/* A reload's hand-over: the stage a new configuration made takes the
 * data of the running one for every group, statistic and template whose
 * definition in the file is the same as before, as a definition written
 * back unchanged through the interface keeps its data. A source moves
 * with its id, its last values (a delta goes on without a gap) and its
 * statistics as they are now (their definitions changed at run time
 * included); a statistic or template whose definition changed starts
 * afresh, and the log names it. Both samplers are stopped meanwhile, so
 * no pass holds a source that moves or is freed. */
#include "takeover.h"
#include "sampler.h"
#include "srctab.h"
#include "stage_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Lines naming a changed definition, then one with a count: fewer than
 * the log writes of one kind a second (LOG_BURST). */
#define CHANGED_LOGGED 4

struct changes {
	unsigned n;
	char more[256]; /* the names past CHANGED_LOGGED, as many as fit */
};

static void changed(struct changes *c, const char *what, const char *group, const char *name)
{
	char id[512];
	size_t len = strlen(c->more);

	snprintf(id, sizeof(id), "%s%s%s", group, name ? "/" : "", name ? name : "");
	if (c->n++ < CHANGED_LOGGED) {
		log_info("reload: a definition changed, its data start afresh", what, id);
	} else if (len + strlen(id) + 2 < sizeof(c->more)) { /* past it, left out: bounded */
		if (len)
			c->more[len++] = ' ';
		memcpy(c->more + len, id, strlen(id) + 1);
	}
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A group selects and scales the same series. */
static bool same_group(const struct processing_group_conf *a, const struct processing_group_conf *b)
{
	return same_str(a->select_text, b->select_text) && a->x == b->x &&
	       memcmp(&a->x_scale, &b->x_scale, sizeof(double)) == 0;
}

static bool same_def(const struct statproc_def *a, const struct statproc_def *b)
{
	return a->type == b->type && a->range_min == b->range_min && a->range_max == b->range_max &&
	       a->mode == b->mode && a->entries_max == b->entries_max &&
	       a->base_interval == b->base_interval && a->scale == b->scale &&
	       a->period_us == b->period_us;
}

static bool same_stat(const struct processing_stat_conf *a, const struct processing_stat_conf *b)
{
	return same_str(a->units, b->units) && a->on == b->on && same_def(&a->def, &b->def);
}

static bool same_value(struct vstats_value a, struct vstats_value b)
{
	return a.dtype == b.dtype && a.u == b.u; /* the bits of whichever it is */
}

static bool same_hist(const struct vstats_hist_spec *a, const struct vstats_hist_spec *b)
{
	if (a->scheme != b->scheme || !same_value(a->lb, b->lb) || !same_value(a->ub, b->ub) ||
	    memcmp(&a->stepinc, &b->stepinc, sizeof(double)) != 0 ||
	    memcmp(&a->stepbase, &b->stepbase, sizeof(double)) != 0 ||
	    memcmp(&a->stepexp, &b->stepexp, sizeof(double)) != 0 || a->nlinsteps != b->nlinsteps ||
	    a->nusr != b->nusr || a->flags != b->flags || a->counts32 != b->counts32)
		return false;
	for (uint32_t i = 0; i < a->nusr; i++)
		if (!same_value(a->usr[i].lb, b->usr[i].lb) ||
		    !same_value(a->usr[i].ub, b->usr[i].ub))
			return false;
	return true;
}

/* Everything a VOI says: its name, series, data type, statistics and
 * quantiles. */
static bool same_voi(const struct processing_voi_conf *a, const struct processing_voi_conf *b)
{
	if (!same_str(a->name, b->name) || !same_str(a->series, b->series) ||
	    a->relative != b->relative || a->dtype != b->dtype || a->nspec != b->nspec ||
	    a->nquantile != b->nquantile ||
	    memcmp(a->quantile, b->quantile, a->nquantile * sizeof(double)) != 0)
		return false;
	for (uint32_t i = 0; i < a->nspec; i++)
		if (a->spec[i].stype != b->spec[i].stype ||
		    memcmp(&a->spec[i].compression, &b->spec[i].compression, sizeof(double)) != 0 ||
		    a->spec[i].tdgst_counts32 != b->spec[i].tdgst_counts32 ||
		    !same_hist(&a->spec[i].hist, &b->spec[i].hist))
			return false;
	return true;
}

/* Everything a template says: its name, rate, form and each VOI. */
static bool same_template(const struct processing_template_conf *a,
			  const struct processing_template_conf *b)
{
	if (!same_str(a->name, b->name) || a->sample_pct != b->sample_pct ||
	    a->listed != b->listed || a->nvoi != b->nvoi || !same_str(a->anchor, b->anchor))
		return false;
	for (uint32_t v = 0; v < a->nvoi; v++)
		if (!same_voi(&a->voi[v], &b->voi[v]))
			return false;
	return true;
}

/* How a group of the new configuration takes the old one's: per new
 * statistic, the old one it keeps (-1: none, it starts afresh), and
 * whether the template is kept. */
struct plan {
	uint32_t old_group;
	int keep[PROCESSING_STATS_MAX];
	bool tpl_kept;
};

static int old_stat(const struct processing_group_conf *o, const char *name)
{
	for (uint32_t j = 0; j < o->nstats; j++)
		if (strcmp(o->stat[j].name, name) == 0)
			return (int)j;
	return -1;
}

static void plan_group(const struct processing_group_conf *n, const struct processing_group_conf *o,
		       struct plan *pl, struct changes *c)
{
	for (uint32_t k = 0; k < n->nstats; k++) {
		int j = old_stat(o, n->stat[k].name);
		pl->keep[k] = j >= 0 && same_stat(&n->stat[k], &o->stat[j]) ? j : -1;
		if (j >= 0 && pl->keep[k] < 0)
			changed(c, "statistic", n->name, n->stat[k].name);
	}
	pl->tpl_kept = n->has_template && o->has_template && same_template(&n->tpl, &o->tpl);
	if (n->has_template && o->has_template && !pl->tpl_kept)
		changed(c, "template", n->name, n->tpl.name);
}

/* s's statistics and VOI as group g of p defines them: the kept ones
 * moved, the others made afresh. -ENOMEM: s, now of group g, is then to
 * be discarded by p. */
static int rebuild(struct processing *p, struct processing *old, struct source *s, uint32_t g,
		   const struct plan *pl, uint64_t now_ns)
{
	const struct processing_group_conf *n = &p->conf->group[g];
	const struct processing_group_conf *o = &old->conf->group[s->group];
	struct statproc_stat *st = n->nstats ? calloc(n->nstats, sizeof(*st)) : NULL;
	bool moved[PROCESSING_STATS_MAX] = {false};
	int rc = n->nstats && !st ? -ENOMEM : 0;

	for (uint32_t k = 0; rc == 0 && k < n->nstats; k++) {
		if (pl->keep[k] >= 0) {
			st[k] = s->stat[pl->keep[k]];
			moved[pl->keep[k]] = true;
		} else if ((rc = statproc_init(&st[k], n->stat[k].name, n->stat[k].units,
					       &n->stat[k].def, now_ns)) == 0 &&
			   n->stat[k].on) {
			statproc_start(&st[k], now_ns);
		}
	}
	for (uint32_t j = 0; s->stat && j < o->nstats; j++)
		if (!moved[j])
			statproc_free(&s->stat[j]);
	free(s->stat);
	s->stat = st; /* on failure too: discarding s frees what it holds */
	if (s->sampled && !pl->tpl_kept) {
		srctab_vois_free(&s->voi, s->more, s->nmore);
		s->more = NULL;
		s->nmore = 0;
		s->sampled = false;
		s->voi_stopped = false;
	}
	s->group = g;
	if (rc < 0 || pl->tpl_kept || !n->has_template)
		return rc;
	uint32_t pct = p->sample_pct[g];
	if (vstats_rollthedice(&pct, 1, s->key, s->keylen) != 0)
		return 0;
	if (srctab_vois_make(&n->tpl, &s->voi, &s->more, &s->nmore) < 0)
		return -ENOMEM;
	s->sampled = true;
	s->created_ns = s->lastrst_ns = p->clock_ns(); /* a blob made anew */
	return 0;
}

/* Group g of p takes the sources of old's group pl->old_group: the ones
 * p's sampler made since it started are freed first (their ids would
 * collide, and the old ones hold more). */
static void take_group(struct processing *p, struct processing *old, uint32_t g,
		       const struct plan *pl, uint64_t now_ns)
{
	struct stage_group_srcs *os = &old->grp[pl->old_group];
	struct source **moving = os->srcs.n ? malloc(os->srcs.n * sizeof(*moving)) : NULL;
	size_t n = os->srcs.n;

	srctab_drop_group(p, g);
	if (!moving)
		return; /* none, or no memory: they start afresh */
	memcpy(moving, os->src, n * sizeof(*moving));
	for (size_t i = 0; i < old->srcs.n; i++)
		old->src[i]->expired = old->src[i]->group == pl->old_group;
	srctab_take_marked(old);
	if (pl->tpl_kept)
		p->sample_pct[g] = old->sample_pct[pl->old_group];
	if (p->next_id[g] < old->next_id[pl->old_group])
		p->next_id[g] = old->next_id[pl->old_group];
	for (size_t i = 0; i < n; i++) {
		struct source *s = moving[i];
		int rc = rebuild(p, old, s, g, pl, now_ns);
		if (rc == 0)
			rc = srctab_adopt(p, s);
		if (rc < 0) { /* counted as a new source would be */
			srctab_discard(p, s);
			*(rc == -EFBIG ? &p->count.memory_limit : &p->count.too_many_sources) += 1;
		}
	}
	free(moving);
}

static int group_of(const struct processing_conf *c, const char *name)
{
	for (uint32_t g = 0; g < c->ngroups; g++)
		if (strcmp(c->group[g].name, name) == 0)
			return (int)g;
	return -1;
}

static void takeover_groups(struct processing *p, struct processing *old, struct changes *c)
{
	uint64_t now_ns = p->clock_ns();

	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		const struct processing_group_conf *n = &p->conf->group[g];
		int og = group_of(old->conf, n->name);
		struct plan pl = {.old_group = (uint32_t)og};
		if (og < 0)
			continue;
		if (!same_group(n, &old->conf->group[og])) {
			/* Afresh, but under ids the old group never gave out: a
			 * client's <group>/<id> never reaches another series. */
			srctab_drop_group(p, g);
			if (p->next_id[g] < old->next_id[og])
				p->next_id[g] = old->next_id[og];
			changed(c, "group", n->name, NULL);
			continue;
		}
		plan_group(n, &old->conf->group[og], &pl, c);
		take_group(p, old, g, &pl, now_ns);
	}
}

void takeover_apply(struct processing *p, struct processing *old)
{
	bool restart = p->sampler.started;
	struct stage_input in = p->in;
	struct changes c = {0};
	int rc;

	sampler_stop(old); /* for good: the old stage is on its way out */
	if (restart)
		sampler_stop(p);
	pthread_mutex_lock(&old->lock);
	pthread_mutex_lock(&p->lock);
	takeover_groups(p, old, &c);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_unlock(&old->lock);
	if (c.n > CHANGED_LOGGED) {
		char count[16];
		snprintf(count, sizeof(count), "%u", c.n - CHANGED_LOGGED);
		log_info("reload: more definitions changed, their data start afresh", "count",
			 count, "names", c.more);
	}
	if (restart && (rc = sampler_start(p, &in)) < 0)
		log_error("processing sampler failed to start", "err", strerror(-rc));
}
