/* The sampler and the sources it feeds. Each pass runs the collectors
 * that produce selected series with a probe emitter, which formats
 * nothing: it only matches series against the groups' selectors and
 * feeds the values. The sources' lock is taken per value, never across a
 * collector's I/O; a collector busy with a scrape is skipped, not waited
 * for past the pass. */
#include "proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "monoclock.h"
#include "names.h"
#include "serieskey.h"

#define TAG_STOP 1
#define DISCOVERY_NS 30000000000ull /* every collector is looked at this often */
#define KEY_MAX 4096

/* ---- the source table ---- */

static uint64_t source_hash(uint32_t group, const char *key, size_t len)
{
	return hash_bytes(key, len, 0x9e3779b97f4a7c15ull * (group + 1));
}

static void source_free(struct proc *p, struct proc_source *s)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; s->stat && i < g->nstats; i++)
		statproc_free(&s->stat[i]);
	free(s->stat);
	if (s->sampled)
		vstats_voi_free(&s->voi);
	for (size_t i = 0; i < s->nlabels; i++) {
		free((char *)s->labels[i].name);
		free((char *)s->labels[i].value);
	}
	free(s->labels);
	free(s->key);
	free(s->name);
	free(s);
}

static void index_insert(struct proc *p, size_t i)
{
	size_t k = p->src[i]->hash & (p->index_cap - 1);

	while (p->index[k].s)
		k = (k + 1) & (p->index_cap - 1);
	p->index[k] = (struct proc_slot){p->src[i]->hash, p->src[i]};
}

static int index_rebuild(struct proc *p, size_t cap)
{
	struct proc_slot *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	free(p->index);
	p->index = idx;
	p->index_cap = cap;
	for (size_t i = 0; i < p->srcs.n; i++)
		index_insert(p, i);
	return 0;
}

static struct proc_source *source_find(struct proc *p, uint32_t group, const char *key, size_t len,
				       uint64_t h)
{
	if (!p->index_cap)
		return NULL;
	for (size_t k = h & (p->index_cap - 1); p->index[k].s; k = (k + 1) & (p->index_cap - 1)) {
		struct proc_source *s = p->index[k].s;
		if (p->index[k].hash == h && s->group == group && s->keylen == len &&
		    memcmp(s->key, key, len) == 0)
			return s;
	}
	return NULL;
}

static int source_stats(struct proc *p, struct proc_source *s, uint64_t now_ns)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	const char *why;

	if (g->nstats && !(s->stat = calloc(g->nstats, sizeof(*s->stat))))
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nstats; i++) {
		const struct proc_stat_conf *c = &g->stat[i];
		if (statproc_init(&s->stat[i], c->name, c->units, &c->def, now_ns) < 0)
			return -ENOMEM; /* the definition was checked at load */
		if (c->on)
			statproc_start(&s->stat[i], now_ns);
	}
	if (g->has_template) {
		uint32_t pct = g->tpl.sample_pct;
		s->sampled = vstats_rollthedice(&pct, 1, s->key, strlen(s->key)) == 0;
		if (s->sampled &&
		    vstats_voi_init(&s->voi, g->x == PROC_X_RATE ? VSTATS_FLOAT : VSTATS_INT,
				    g->tpl.relative, g->tpl.spec, g->tpl.nspec, &why) < 0) {
			s->sampled = false;
			return -ENOMEM;
		}
	}
	return 0;
}

static struct proc_source *source_new(struct proc *p, uint32_t group, const char *key, size_t len,
				      uint64_t h, const char *name, const struct bs_label *labels,
				      size_t n, uint64_t now_ns)
{
	struct proc_source *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->group = group;
	s->hash = h;
	s->keylen = len;
	s->seen_ns = now_ns;
	if (!(s->key = strdup(key)) || !(s->name = strdup(name)) ||
	    !(s->labels = calloc(n ? n : 1, sizeof(*s->labels))))
		goto err_free;
	for (; s->nlabels < n; s->nlabels++) {
		struct bs_label *l = &s->labels[s->nlabels];
		l->name = strdup(labels[s->nlabels].name);
		l->value = strdup(labels[s->nlabels].value);
		if (!l->name || !l->value) {
			s->nlabels++;
			goto err_free;
		}
	}
	if (source_stats(p, s, now_ns) < 0)
		goto err_free;
	if (growarr_push(&p->srcs, &s) < 0)
		goto err_free;
	if (p->srcs.n * 2 > p->index_cap) {
		if (index_rebuild(p, p->index_cap ? 2 * p->index_cap : 128) < 0) {
			p->srcs.n--;
			goto err_free;
		}
	} else {
		index_insert(p, p->srcs.n - 1);
	}
	s->id = p->next_id[group]++;
	return s;
err_free:
	source_free(p, s);
	return NULL;
}

/* ---- feeding ---- */

/* The X of seed 001's (X, 1) and the VOI's value, from the sampled value;
 * false when there is none yet (a delta's first sample) or it is not a
 * number. */
static bool x_of(const struct proc_group_conf *g, struct proc_source *s, double v, uint64_t now_ns,
		 double *x)
{
	bool had = s->have_prev;
	double prev = s->prev;
	uint64_t prev_ns = s->prev_ns;

	s->have_prev = true;
	s->prev = v;
	s->prev_ns = now_ns;
	*x = v;
	switch (g->x) {
	case PROC_X_VALUE:
		break;
	case PROC_X_DELTA:
	case PROC_X_RATE:
		if (!had || now_ns <= prev_ns)
			return false;
		*x = v >= prev ? v - prev : v; /* a counter that went back was reset */
		if (g->x == PROC_X_RATE)
			*x /= (double)(now_ns - prev_ns) / 1e9;
		break;
	}
	*x *= g->x_scale;
	return isfinite(*x);
}

static int64_t to_i64(double x)
{
	if (x >= 9.2e18)
		return INT64_MAX;
	if (x <= -9.2e18)
		return INT64_MIN;
	return (int64_t)llround(x);
}

static void feed_source(struct proc *p, struct proc_source *s, double v, uint64_t now_ns)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	double x;

	s->seen_ns = now_ns;
	if (!x_of(g, s, v, now_ns, &x))
		return;
	for (uint32_t i = 0; i < g->nstats; i++)
		statproc_add(&s->stat[i], to_i64(x), 1, now_ns);
	if (s->sampled) {
		struct vstats_value val = {.dtype = s->voi.dtype};
		if (val.dtype == VSTATS_INT)
			val.i = to_i64(x);
		else
			val.f = x;
		if (g->tpl.relative)
			vstats_update_rel(&s->voi, val);
		else
			vstats_update_abs(&s->voi, val);
	}
	p->count.values++;
}

/* The groups whose selectors the metric name alone allows, as a mask. */
static uint64_t name_candidates(const struct proc *p, const char *name)
{
	uint64_t mask = 0;

	for (uint32_t g = 0; g < p->conf->ngroups; g++)
		if (selector_match_name(&p->conf->group[g].select, name))
			mask |= 1ull << g;
	return mask;
}

/* Feeds the series to each candidate group whose label matchers it meets;
 * the name matchers were applied once for its family. */
static bool feed_candidates(struct proc *p, uint64_t mask, const char *name,
			    const struct bs_label *labels, size_t n, double value, uint64_t now_ns)
{
	char key[KEY_MAX];
	bool matched = false;
	size_t len = 0;

	for (uint32_t g = 0; mask >> g; g++) {
		if (!(mask >> g & 1) ||
		    !selector_match_labels(&p->conf->group[g].select, labels, n))
			continue;
		if (!len && !(len = serieskey_write(key, sizeof(key), name, labels, n)))
			return false;
		matched = true;
		uint64_t h = source_hash(g, key, len);
		pthread_mutex_lock(&p->lock);
		struct proc_source *s = source_find(p, g, key, len, h);
		if (!s && p->srcs.n >= p->conf->max_sources)
			p->count.too_many_sources++;
		else if (!s && !(s = source_new(p, g, key, len, h, name, labels, n, now_ns)))
			p->count.too_many_sources++; /* no memory: counted as not kept */
		if (s)
			feed_source(p, s, value, now_ns);
		pthread_mutex_unlock(&p->lock);
	}
	return matched;
}

bool proc_feed(struct proc *p, const char *name, const struct bs_label *labels, size_t n,
	       double value, uint64_t now_ns)
{
	return feed_candidates(p, name_candidates(p, name), name, labels, n, value, now_ns);
}

/* ---- the probe emitter ---- */

struct probe {
	struct bs_emitter pub;
	struct proc *p;
	uint64_t now_ns;
	char name[NAMES_METRIC_MAX + 8]; /* the open family as exposed */
	uint64_t candidates;		 /* groups whose name matchers allow it */
	bool matched;			 /* a series of this collector was selected */
};

/* A counter is exposed with _total: that is the name selectors use. */
static int probe_family(struct bs_emitter *em, const struct bs_family *f)
{
	struct probe *pr = (struct probe *)em;
	size_t n = strnlen(f->name, NAMES_METRIC_MAX + 1);

	pr->candidates = 0;
	if (!serieskey_family_valid(f)) /* what a scrape refuses is not sampled */
		return 0;
	memcpy(pr->name, f->name, n + 1);
	if (f->type == BS_COUNTER && !names_has_suffix(f->name, n, "_total"))
		memcpy(pr->name + n, "_total", 7);
	if (f->type != BS_COUNTER && f->type != BS_GAUGE && f->type != BS_UNKNOWN)
		return 0;
	pr->candidates = name_candidates(pr->p, pr->name);
	return 0;
}

static int probe_sample(struct bs_emitter *em, const struct bs_label *l, size_t n,
			struct bs_value v)
{
	struct probe *pr = (struct probe *)em;
	double x;

	if (!pr->candidates)
		return 0;
	switch (v.kind) {
	case BS_VAL_U64:
		x = (double)v.u;
		break;
	case BS_VAL_I64:
		x = (double)v.i;
		break;
	default:
		x = v.f;
	}
	if (!isfinite(x)) {
		pr->p->count.not_a_number++;
		return 0;
	}
	pr->matched |= feed_candidates(pr->p, pr->candidates, pr->name, l, n, x, pr->now_ns);
	return 0;
}

static int probe_ignore_hist(struct bs_emitter *em, const struct bs_label *l, size_t n,
			     const struct bs_histogram *h)
{
	(void)em, (void)l, (void)n, (void)h;
	return 0;
}

static int probe_ignore_summary(struct bs_emitter *em, const struct bs_label *l, size_t n,
				const struct bs_summary *s)
{
	(void)em, (void)l, (void)n, (void)s;
	return 0;
}

static int probe_ignore_states(struct bs_emitter *em, const struct bs_label *l, size_t n,
			       const char *const *st, const bool *a, size_t ns)
{
	(void)em, (void)l, (void)n, (void)st, (void)a, (void)ns;
	return 0;
}

static void probe_drop(struct bs_emitter *em, const char *reason, uint64_t n)
{
	(void)em, (void)reason, (void)n; /* the scrapes count the collectors' drops */
}

static bool probe_expired(struct bs_emitter *em)
{
	(void)em;
	return false;
}

/* No prefix and no fork: the probe sees every series' whole label set,
 * on the sampler's thread (the ABI's fallback for both). */
static const struct bs_emitter_ops probe_ops = {
    .family = probe_family,
    .sample = probe_sample,
    .histogram = probe_ignore_hist,
    .summary = probe_ignore_summary,
    .stateset = probe_ignore_states,
    .drop = probe_drop,
    .expired = probe_expired,
};

/* ---- the sampler ---- */

static void expire_sources(struct proc *p, uint64_t now_ns)
{
	uint64_t ttl = (uint64_t)(p->conf->source_ttl_s * 1e9);
	size_t kept = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->srcs.n; i++) {
		if (now_ns - p->src[i]->seen_ns > ttl) {
			source_free(p, p->src[i]);
			p->count.expired_sources++;
		} else {
			p->src[kept++] = p->src[i];
		}
	}
	if (kept != p->srcs.n) {
		p->srcs.n = kept;
		index_rebuild(p, p->index_cap); /* same size: cannot grow the table */
	}
	pthread_mutex_unlock(&p->lock);
}

static void sample_collector(struct proc *p, size_t i, uint64_t now_ns, bool discovery)
{
	struct probe pr = {.pub = {&probe_ops}, .p = p, .now_ns = now_ns};
	uint64_t wait_ns = (uint64_t)(p->conf->interval_s * 1e9);

	discovery |= p->undiscovered[i];
	if (!discovery && !p->relevant[i])
		return;
	if (p->in.collect(p->in.ctx, i, &pr.pub, wait_ns) == -EBUSY) {
		/* A scrape has it: sample it next time, and if this was its
		 * discovery, look again then rather than in 30 s. */
		p->count.busy++;
		p->undiscovered[i] = discovery;
		return;
	}
	p->undiscovered[i] = false;
	if (discovery)
		p->relevant[i] = pr.matched;
	else
		p->relevant[i] |= pr.matched;
}

void proc_tick(struct proc *p, uint64_t now_ns)
{
	bool discovery = now_ns >= p->next_discovery_ns;

	for (size_t i = 0; i < p->in.n; i++)
		sample_collector(p, i, now_ns, discovery);
	if (discovery)
		p->next_discovery_ns = now_ns + DISCOVERY_NS;
	if (now_ns >= p->next_expiry_ns) { /* a walk over every source: once a second */
		expire_sources(p, now_ns);
		p->next_expiry_ns = now_ns + 1000000000u;
	}
	p->count.ticks++;
	p->count.tick_ns_total += monoclock_ns() - now_ns;
}

/* Passes at a fixed rate: the next one is due one interval after the last
 * was due, so a slow pass does not shift the ones after it. */
static void *sampler_main(void *arg)
{
	struct proc *p = arg;
	uint64_t interval = (uint64_t)(p->conf->interval_s * 1e9), due = monoclock_ns();
	struct epoll_event ev;

	for (;;) {
		uint64_t now = monoclock_ns();
		if (now >= due) {
			proc_tick(p, now);
			due += interval;
			if (due < monoclock_ns()) /* far behind: skip, do not catch up */
				due = monoclock_ns() + interval;
			continue;
		}
		int ms = (int)((due - now + 999999) / 1000000);
		if (epoll_wait(p->epfd, &ev, 1, ms) == 1 && ev.data.u32 == TAG_STOP)
			return NULL;
	}
}

int proc_new(const struct proc_conf *conf, struct proc **out)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->conf = conf;
	p->epfd = -1;
	/* max_sources caps what is kept; the array never needs more. */
	growarr_init(&p->srcs, sizeof(struct proc_source *), conf->max_sources);
	worker_init(&p->sampler);
	pthread_mutex_init(&p->lock, NULL);
	*out = p;
	return 0;
}

int proc_start(struct proc *p, const struct proc_input *in)
{
	int rc;

	if (in->n > PROC_INPUT_MAX)
		return -E2BIG;
	p->in = *in;
	if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	if ((rc = worker_open(&p->sampler, p->epfd, (epoll_data_t){.u32 = TAG_STOP})) < 0)
		return rc;
	return worker_start(&p->sampler, sampler_main, p);
}

void proc_free(struct proc *p)
{
	if (!p)
		return;
	worker_stop(&p->sampler);
	if (p->epfd >= 0)
		close(p->epfd);
	for (size_t i = 0; i < p->srcs.n; i++)
		source_free(p, p->src[i]);
	growarr_free(&p->srcs);
	free(p->index);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void proc_release(void *p)
{
	proc_free(p);
}
