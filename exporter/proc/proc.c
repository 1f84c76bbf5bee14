/* The sampler and the sources it feeds. Each pass runs the collectors
 * that produce selected series with a probe emitter, which formats
 * nothing: it only matches series against the groups' selectors and
 * feeds the values: a counter's or gauge's value as one X (the Linux statistics infrastructure's
 * (X, 1)), a histogram's buckets as (X, Y) pairs, X a bucket's value and
 * Y its increase. The sources' lock is taken per value, never across a
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

#include "emitter.h"
#include "famreg.h"
#include "hash.h"
#include "log.h"
#include "monoclock.h"
#include "names.h"
#include "serieskey.h"
#include "seriesset.h"

#define TAG_STOP 1
#define DISCOVERY_NS 30000000000ull /* every collector is looked at this often */

/* ---- the source table ---- */

/* A key split as a scrape's duplicate check reads a series: its name
 * (with the brace) and its labels, each `name="value"` as written. */
struct key_parts {
	size_t name_len; /* up to and with the '{' */
	size_t n;
	struct seriesset_label l[EMITTER_MAX_LABELS];
};

static void key_split(const char *key, size_t len, struct key_parts *kp)
{
	const char *brace = memchr(key, '{', len); /* a metric name has none */

	kp->name_len = (size_t)(brace - key) + 1;
	kp->n = seriesset_split(brace + 1, len - kp->name_len - 1, kp->l, EMITTER_MAX_LABELS);
}

/* The name's hash plus each label's: the same labels in any order are
 * one series to a scrape (seriesset), so they are one source here. The
 * per-process seed keeps label values from being chosen to collide. */
static uint64_t source_hash(uint32_t group, const char *key, const struct key_parts *kp)
{
	uint64_t seed = hash_seed() ^ (0x9e3779b97f4a7c15ull * (group + 1));
	uint64_t h = hash_bytes(key, kp->name_len, seed);

	for (size_t i = 0; i < kp->n; i++)
		h += hash_bytes(kp->l[i].text, kp->l[i].len, ~seed);
	return h;
}

static void source_free(struct proc *p, struct proc_source *s)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; s->stat && i < g->nstats; i++)
		statproc_free(&s->stat[i]);
	free(s->stat);
	if (s->sampled)
		vstats_voi_free(&s->voi);
	free(s->prev_count);
	p->mem_bytes -= s->bytes; /* 0 until it was made whole */
	free(s);		  /* with its key, name and labels */
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

/* The source of group whose key names the same series: the same name
 * and the same labels, in any order. */
static struct proc_source *source_find(struct proc *p, uint32_t group, const char *key,
				       const struct key_parts *kp, uint64_t h)
{
	if (!p->index_cap)
		return NULL;
	for (size_t k = h & (p->index_cap - 1); p->index[k].s; k = (k + 1) & (p->index_cap - 1)) {
		struct proc_source *s = p->index[k].s;
		if (p->index[k].hash == h && s->group == group && s->nlabels == kp->n &&
		    s->keylen > kp->name_len && memcmp(s->key, key, kp->name_len) == 0 &&
		    seriesset_block_holds(s->key + kp->name_len, s->keylen - kp->name_len - 1,
					  s->nlabels, kp->l, kp->n))
			return s;
	}
	return NULL;
}

/* Whether a new source of key is chosen by its group's template's dice
 * (the rate in force). */
static bool source_chosen(const struct proc *p, uint32_t group, const char *key, size_t len)
{
	uint32_t pct = p->sample_pct[group];

	return p->conf->group[group].has_template && vstats_rollthedice(&pct, 1, key, len) == 0;
}

static int source_stats(struct proc *p, struct proc_source *s, bool sampled, uint64_t now_ns)
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
	if (sampled) {
		if (vstats_voi_init(&s->voi, g->tpl.dtype, g->tpl.relative, g->tpl.spec,
				    g->tpl.nspec, &why) < 0)
			return -ENOMEM;
		s->sampled = true;
	}
	return 0;
}

static char *copy_str(char **to, const char *str, size_t len)
{
	char *at = *to;

	memcpy(at, str, len + 1);
	*to += len + 1;
	return at;
}

/* The bytes of a source's own allocation: the record, then its labels,
 * name, the labels' strings and the key. */
static size_t source_alloc_size(size_t keylen, const char *name, const struct bs_label *labels,
				size_t n)
{
	size_t size = sizeof(struct proc_source) + n * sizeof(struct bs_label);

	size += keylen + 1 + strlen(name) + 1;
	for (size_t i = 0; i < n; i++)
		size += strlen(labels[i].name) + 1 + strlen(labels[i].value) + 1;
	return size;
}

#define HIST_PREV_BYTES (PROC_HIST_BUCKETS_MAX * sizeof(uint64_t)) /* prev_count's most */

/* A source's bytes beside its statistics' data (see proc_source_bytes). */
static size_t source_fixed_bytes(const struct proc_group_conf *g, size_t alloc, bool histogram,
				 bool sampled)
{
	return alloc + (histogram ? HIST_PREV_BYTES : 0) +
	       g->nstats * sizeof(struct statproc_stat) +
	       (g->has_template && sampled ? g->tpl.voi_bytes : 0);
}

size_t proc_source_bytes(const struct proc *p, const struct proc_source *s)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	size_t bytes =
	    source_fixed_bytes(g, source_alloc_size(s->keylen, s->name, s->labels, s->nlabels),
			       s->histogram, s->sampled);

	for (uint32_t k = 0; s->stat && k < g->nstats; k++)
		bytes += statproc_data_bytes(&s->stat[k].def);
	return bytes;
}

bool proc_mem_fits(const struct proc *p, uint64_t more)
{
	return more <= p->conf->max_memory_bytes - p->mem_bytes;
}

/* The source with copies of its name, labels and key in its own
 * allocation (size: source_alloc_size), in the order a sample reads them. */
static struct proc_source *source_alloc(size_t size, const char *key, size_t len, const char *name,
					const struct bs_label *labels, size_t n)
{
	size_t nl = strlen(name);
	struct proc_source *s;
	char *at;

	if (!(s = calloc(1, size)))
		return NULL;
	s->labels = s->mem;
	s->nlabels = n;
	at = (char *)(s->mem + n);
	s->name = copy_str(&at, name, nl);
	for (size_t i = 0; i < n; i++) {
		s->labels[i].name = copy_str(&at, labels[i].name, strlen(labels[i].name));
		s->labels[i].value = copy_str(&at, labels[i].value, strlen(labels[i].value));
	}
	s->key = copy_str(&at, key, len); /* last: only a new source and the interface read it */
	s->keylen = len;
	return s;
}

/* A new source, if what it would hold fits max_memory_bytes (computed
 * from its group's configured definitions before anything is allocated):
 * 0, -EFBIG past the limit, -ENOMEM. histogram: made by a histogram. */
static int source_new(struct proc *p, uint32_t group, const char *key, size_t len, uint64_t h,
		      const char *name, const struct bs_label *labels, size_t n, bool histogram,
		      uint64_t now_ns, struct proc_source **out)
{
	const struct proc_group_conf *g = &p->conf->group[group];
	size_t alloc = source_alloc_size(len, name, labels, n);
	bool sampled = source_chosen(p, group, key, len);
	size_t bytes = source_fixed_bytes(g, alloc, histogram, sampled);
	struct proc_source *s;

	for (uint32_t k = 0; k < g->nstats; k++)
		bytes += statproc_data_bytes(&g->stat[k].def);
	if (!proc_mem_fits(p, bytes))
		return -EFBIG;
	if (!(s = source_alloc(alloc, key, len, name, labels, n)))
		return -ENOMEM;
	s->group = group;
	s->hash = h;
	s->seen_ns = now_ns;
	s->histogram = histogram;
	if (source_stats(p, s, sampled, now_ns) < 0)
		goto err_free;
	if (growarr_push(&p->srcs, &s) < 0)
		goto err_free;
	if (growarr_push(&p->grp[group].srcs, &s) < 0) {
		p->srcs.n--;
		goto err_free;
	}
	if (p->srcs.n * 2 > p->index_cap) {
		if (index_rebuild(p, p->index_cap ? 2 * p->index_cap : 128) < 0) {
			p->srcs.n--;
			p->grp[group].srcs.n--;
			goto err_free;
		}
	} else {
		index_insert(p, p->srcs.n - 1);
	}
	s->id = p->next_id[group]++;
	s->bytes = bytes;
	p->mem_bytes += bytes;
	*out = s;
	return 0;
err_free:
	source_free(p, s);
	return -ENOMEM;
}

/* ---- feeding ---- */

/* An X: an integer while every step keeps it exact (a sampled integer,
 * two integer samples' difference, times a whole x_scale), else a double.
 * 128 bits hold any difference of two u64 or s64 samples and its product
 * with an x_scale of at most 1e18, so a u64 counter past 2^53 or 2^63 is
 * processed exactly, and each statistic converts only what it takes. */
struct xval {
	bool exact;
	__int128 i;
	double f;
};

static struct xval xval_of(struct bs_value v)
{
	if (v.kind == BS_VAL_U64)
		return (struct xval){true, v.u, 0};
	if (v.kind == BS_VAL_I64)
		return (struct xval){true, v.i, 0};
	return (struct xval){false, 0, v.f};
}

static double xval_f(const struct xval *x)
{
	return x->exact ? (double)x->i : x->f;
}

/* The increase from prev to v; a counter that went back was reset, and
 * the increase is its new value. */
static struct xval x_delta(struct bs_value prev, struct bs_value v)
{
	struct xval a = xval_of(prev), b = xval_of(v);

	if (a.exact && b.exact)
		return b.i >= a.i ? (struct xval){true, b.i - a.i, 0} : b;
	double fa = xval_f(&a), fb = xval_f(&b);
	return (struct xval){false, 0, fb >= fa ? fb - fa : fb};
}

/* The X of the Linux statistics infrastructure's (X, 1) and the VOI's value, from the sampled
 * value; false when there is none yet (a delta's first sample) or it is not a number. */
static bool x_of(const struct proc_group_conf *g, struct proc_source *s, struct bs_value v,
		 uint64_t now_ns, struct xval *x)
{
	bool had = s->have_prev;
	struct bs_value prev = s->prev;
	uint64_t prev_ns = s->prev_ns;

	s->have_prev = true;
	s->prev = v;
	s->prev_ns = now_ns;
	*x = xval_of(v);
	switch (g->x) {
	case PROC_X_VALUE:
		break;
	case PROC_X_DELTA:
	case PROC_X_RATE:
		if (!had || now_ns <= prev_ns)
			return false;
		*x = x_delta(prev, v);
		if (g->x == PROC_X_RATE)
			*x =
			    (struct xval){false, 0, xval_f(x) / ((double)(now_ns - prev_ns) / 1e9)};
		break;
	}
	if (x->exact && g->x_scale == floor(g->x_scale) && g->x_scale <= 1e18)
		x->i *= (int64_t)g->x_scale; /* |i| < 2^65, x_scale < 2^60: no overflow */
	else if (x->exact && g->x_scale != 1)
		*x = (struct xval){false, 0, (double)x->i * g->x_scale};
	else if (!x->exact)
		x->f *= g->x_scale;
	return x->exact || isfinite(x->f);
}

/* x as an integer of [lo, hi] (a double rounded to the nearest); false
 * when it lies outside: never clamped. */
static bool x_within(const struct xval *x, __int128 lo, __int128 hi, __int128 *out)
{
	if (x->exact) {
		*out = x->i;
		return x->i >= lo && x->i <= hi;
	}
	double r = round(x->f);
	/* -2^63 and 2^64 are doubles exactly; hi + 1 is one of them. */
	if (!(r >= (double)lo && r < (double)hi + 1.0))
		return false;
	*out = (__int128)r;
	return *out >= lo && *out <= hi;
}

/* The Linux statistics infrastructure's X, an s64. */
static bool x_s64(const struct xval *x, int64_t *out)
{
	__int128 v;

	if (!x_within(x, INT64_MIN, INT64_MAX, &v))
		return false;
	*out = (int64_t)v;
	return true;
}

static double value_f(struct bs_value v)
{
	return v.kind == BS_VAL_U64 ? (double)v.u : v.kind == BS_VAL_I64 ? (double)v.i : v.f;
}

/* The VOI's value of X in its dtype; false for an X the dtype cannot
 * hold (below 0 or past 2^64 - 1 in a u64 VOI, outside the s64 range in
 * an s64 one), which is not taken. */
static bool voi_value(const struct proc_group_conf *g, const struct xval *x,
		      struct vstats_value *out)
{
	__int128 v;

	out->dtype = g->tpl.dtype;
	if (out->dtype == VSTATS_FLOAT) {
		out->f = xval_f(x);
		return true;
	}
	if (out->dtype == VSTATS_INT) {
		if (!x_within(x, INT64_MIN, INT64_MAX, &v))
			return false;
		out->i = (int64_t)v;
		return true;
	}
	if (!x_within(x, 0, UINT64_MAX, &v))
		return false;
	out->u = (uint64_t)v;
	return true;
}

/* One (X, Y) pair to the source's statistics, taken at due_ns (so a
 * history's periods count whole passes however late each ran), and Y
 * updates of X to its VOI. A single sampled value (`single`) may be a
 * relative update. An X a statistic's s64 or the VOI's dtype cannot hold
 * is not given to it, and counted as out_of_range: the Linux statistics infrastructure's exploiters
 * pass s64s, and stats(3) takes a value of the VOI's dtype only. */
static void feed_pair(struct proc *p, struct proc_source *s, const struct xval *x, uint64_t y,
		      bool single, uint64_t due_ns)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	struct vstats_value val;
	bool refused = false;
	int64_t xi;

	if (g->nstats && !x_s64(x, &xi))
		refused = true;
	for (uint32_t i = 0; !refused && i < g->nstats; i++)
		p->count.saturated += statproc_add(&s->stat[i], xi, y, due_ns);
	if (s->sampled && !s->voi_stopped) {
		if (!voi_value(g, x, &val))
			refused = true;
		else if (g->tpl.relative && single)
			refused |= vstats_update_rel(&s->voi, val) == -ERANGE;
		else
			vstats_update_n(&s->voi, val, y);
	}
	p->count.out_of_range += refused;
}

/* X comes from the value read at now_ns. */
static void feed_source(struct proc *p, struct proc_source *s, struct bs_value v, uint64_t due_ns,
			uint64_t now_ns)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	struct xval x;

	s->seen_ns = now_ns;
	if (!x_of(g, s, v, now_ns, &x))
		return;
	feed_pair(p, s, &x, 1, true, due_ns);
	p->count.values++;
}

/* The source's bucket counts become the base: its first sample, or one
 * whose bounds changed. 0; -ENOMEM; -EFBIG for a source made by a value
 * that now is a histogram, when its counts' most does not fit
 * max_memory_bytes. */
static int hist_base(struct proc *p, struct proc_source *s, const struct bs_histogram *h,
		     uint64_t bounds)
{
	if (!s->histogram) {
		if (!proc_mem_fits(p, HIST_PREV_BYTES))
			return -EFBIG;
		s->histogram = true;
		s->bytes += HIST_PREV_BYTES;
		p->mem_bytes += HIST_PREV_BYTES;
	}
	if (s->prev_n != h->nbuckets) {
		uint64_t *c = realloc(s->prev_count, h->nbuckets * sizeof(*c));
		if (!c)
			return -ENOMEM;
		s->prev_count = c;
		s->prev_n = (uint32_t)h->nbuckets;
	}
	memcpy(s->prev_count, h->count, h->nbuckets * sizeof(*h->count));
	s->prev_bounds = bounds;
	return 0;
}

/* Each bucket's increase since the last sample (a count that went back
 * was reset: Y is its new count), with the bucket's value as X. */
static void feed_hist_source(struct proc *p, struct proc_source *s, const struct bs_histogram *h,
			     uint64_t due_ns, uint64_t now_ns)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	uint64_t bounds = hash_bytes(h->upper, h->nbuckets * sizeof(*h->upper), h->nbuckets);
	bool had = s->prev_count && s->prev_n == h->nbuckets && s->prev_bounds == bounds;

	s->seen_ns = now_ns;
	if (!had) {
		int rc = hist_base(p, s, h, bounds);
		if (rc == -EFBIG)
			p->count.memory_limit++;
		else if (rc < 0)
			p->count.too_many_sources++; /* no memory: counted as not kept */
		return;
	}
	for (size_t i = 0; i < h->nbuckets; i++) {
		uint64_t c = h->count[i], y = c >= s->prev_count[i] ? c - s->prev_count[i] : c;
		double le = isinf(h->upper[i]) ? (i > 0 ? h->upper[i - 1] : NAN) : h->upper[i];
		s->prev_count[i] = c;
		struct xval x = {false, 0, le * g->x_scale};
		if (y && isfinite(x.f))
			feed_pair(p, s, &x, y, false, due_ns);
		else if (y)
			p->count.not_a_number++; /* a histogram of +Inf alone has no value */
	}
	p->count.values++;
}

/* What the probe sampled of a series: a value, or a histogram. */
struct sampled {
	struct bs_value value;
	const struct bs_histogram *h; /* NULL: a value */
};

/* The groups whose selectors the metric name alone allows, as a mask. */
static uint64_t name_candidates(const struct proc *p, const char *name)
{
	uint64_t mask = 0;

	for (uint32_t g = 0; g < p->conf->ngroups; g++)
		if (selector_match_name(&p->conf->group[g].select, name))
			mask |= 1ull << g;
	return mask;
}

/* Whether s is the series name{labels} exactly as the collector gives it
 * (so its key is s's key, and valid). */
static bool source_is(const struct proc_source *s, const char *name, const struct bs_label *labels,
		      size_t n)
{
	if (s->nlabels != n || strcmp(s->name, name) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!labels[i].name || !labels[i].value ||
		    strcmp(s->labels[i].name, labels[i].name) != 0 ||
		    strcmp(s->labels[i].value, labels[i].value) != 0)
			return false;
	return true;
}

/* The source of group g that followed *last in the last pass, if it is
 * this series. */
static struct proc_source *source_next(struct proc_source *const *last, uint32_t g,
				       const char *name, const struct bs_label *labels, size_t n)
{
	struct proc_source *s = last && last[g] ? last[g]->next_fed : NULL;

	return s && source_is(s, name, labels, n) ? s : NULL;
}

static void prefetch_range(const void *from, const void *to)
{
	for (const char *at = from; at < (const char *)to; at += 64)
		__builtin_prefetch(at, 1);
}

/* Asks for the memory the pass will read next, while the collector
 * writes the next series: the source expected two series after s (its
 * head, the VOI's statistics its group uses, its name and labels) and,
 * for the one expected next, whose head was asked for a series ago, its
 * statistics and its VOI's data. Sources spread over the heap, and
 * without this each feed waits for several cache misses in turn. The
 * sources that follow s are of its group. */
static void source_prefetch(const struct proc *p, const struct proc_source *s)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	const struct proc_source *n1 = s->next_fed, *n2;

	if (!n1)
		return;
	for (uint32_t i = 0; n1->stat && i < g->nstats; i++)
		prefetch_range(&n1->stat[i].def, &n1->stat[i + 1]);
	for (uint32_t i = 0; n1->sampled && i < n1->voi.nstats; i++) {
		const struct vstats_stat *st = &n1->voi.stat[i];
		if (st->stype == VSTATS_TDGST)
			__builtin_prefetch(st->td, 1);
		else if (st->stype == VSTATS_CRHIST || st->stype == VSTATS_DRHIST ||
			 st->stype == VSTATS_DVHIST)
			__builtin_prefetch(st->hist.bkt, 0), __builtin_prefetch(st->hist.count, 1);
	}
	if (!(n2 = n1->next_fed))
		return;
	prefetch_range(n2, &n2->voi.stat[g->has_template ? g->tpl.nspec : 0]);
	prefetch_range(&n2->voi.nstats, (const char *)n2->mem + 128);
}

/* Feeds the series to each candidate group whose label matchers it meets;
 * the name matchers were applied once for its family. last (NULL: none)
 * holds per group the source the collector's pass fed before: the series
 * is looked for after it first, then by its key in the index. */
static bool feed_candidates(struct proc *p, uint64_t mask, const char *name,
			    const struct bs_label *labels, size_t n, const struct sampled *v,
			    struct proc_source **last, uint64_t due_ns, uint64_t now_ns)
{
	char key[SERIESKEY_MAX];
	struct key_parts kp; /* split with the key, on a miss */
	bool matched = false, duplicate = false, nan_counted = false, split = false;
	ssize_t written = 0;
	size_t len = 0;

	for (uint32_t g = 0; mask >> g; g++) {
		if (!(mask >> g & 1) ||
		    !selector_match_labels(&p->conf->group[g].select, labels, n))
			continue;
		pthread_mutex_lock(&p->lock);
		struct proc_source *s = source_next(last, g, name, labels, n);
		if (!s) { /* the key is built outside the lock */
			pthread_mutex_unlock(&p->lock);
			if (!len &&
			    (written = serieskey_write(key, sizeof(key), name, labels, n)) < 0) {
				p->count.key_too_long +=
				    written == -E2BIG; /* a refused label: a scrape counts it */
				return matched;
			}
			len = (size_t)written;
			pthread_mutex_lock(&p->lock);
			if (!split)
				key_split(key, len, &kp);
			split = true;
			uint64_t h = source_hash(g, key, &kp);
			s = source_find(p, g, key, &kp, h);
			int rc = 0;
			if (!s && p->srcs.n >= p->conf->max_sources)
				p->count.too_many_sources++;
			else if (!s && (rc = source_new(p, g, key, len, h, name, labels, n, v->h,
							now_ns, &s)) == -EFBIG)
				p->count.memory_limit++; /* past max_memory_bytes: not made */
			else if (rc < 0)
				p->count.too_many_sources++; /* no memory: counted as not kept */
			if (s && last && last[g] && s->fed_pass != p->pass)
				last[g]->next_fed = s;
		}
		if (s && last && s->fed_pass == p->pass) {
			/* Fed already in this collect: a scrape serves the
			 * first and refuses this one (duplicate_series). */
			p->count.duplicate_series += !duplicate;
			duplicate = true;
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		if (s && last)
			s->fed_pass = p->pass;
		matched = true;
		if (s && v->h) {
			feed_hist_source(p, s, v->h, due_ns, now_ns);
		} else if (s && !isfinite(value_f(v->value))) {
			/* The series' write this pass, as a scrape serves it:
			 * no X, and any later write of it a duplicate. */
			s->seen_ns = now_ns;
			p->count.not_a_number += !nan_counted;
			nan_counted = true;
		} else if (s) {
			feed_source(p, s, v->value, due_ns, now_ns);
		}
		if (s && last) {
			last[g] = s;
			source_prefetch(p, s);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return matched;
}

bool proc_feed(struct proc *p, const char *name, const struct bs_label *labels, size_t n,
	       double value, uint64_t now_ns)
{
	struct sampled v = {{.kind = BS_VAL_F64, .f = value}, NULL};

	return feed_candidates(p, name_candidates(p, name), name, labels, n, &v, NULL, now_ns,
			       now_ns);
}

/* The emitter's checks of a histogram, and the cap on what a source
 * keeps of one. */
static bool hist_valid(struct proc *p, const struct bs_histogram *h)
{
	bool ok =
	    h && h->nbuckets > 0 && h->nbuckets <= PROC_HIST_BUCKETS_MAX && h->upper && h->count;

	for (size_t i = 0; ok && i < h->nbuckets; i++)
		ok = !isnan(h->upper[i]) && (i == 0 || h->upper[i] > h->upper[i - 1]);
	if (!ok) {
		pthread_mutex_lock(&p->lock);
		p->count.invalid_histogram++;
		pthread_mutex_unlock(&p->lock);
	}
	return ok;
}

static bool feed_histogram(struct proc *p, uint64_t mask, const char *name,
			   const struct bs_label *labels, size_t n, const struct bs_histogram *h,
			   struct proc_source **last, uint64_t due_ns, uint64_t now_ns)
{
	struct sampled v = {{.kind = BS_VAL_F64}, h};

	return mask && hist_valid(p, h) &&
	       feed_candidates(p, mask, name, labels, n, &v, last, due_ns, now_ns);
}

bool proc_feed_histogram(struct proc *p, const char *name, const struct bs_label *labels, size_t n,
			 const struct bs_histogram *h, uint64_t now_ns)
{
	return feed_histogram(p, name_candidates(p, name), name, labels, n, h, NULL, now_ns,
			      now_ns);
}

/* ---- the probe emitter ---- */

struct probe {
	struct bs_emitter pub;
	struct proc *p;
	uint64_t due_ns, now_ns;	 /* when the pass was due, when it runs */
	char name[NAMES_METRIC_MAX + 8]; /* the open family as exposed */
	uint64_t candidates;		 /* groups whose name matchers allow it */
	bool histogram;			 /* the open family is a histogram */
	bool matched;			 /* a series of this collector was selected */
	struct famreg reg;		 /* the families claimed in this collect */
	/* Per group, the source this pass fed last: the next series is
	 * looked for after it (its next_fed) first. */
	struct proc_source *last[PROC_GROUPS_MAX];
};

/* A counter is exposed with _total: that is the name selectors use; a
 * histogram is selected by its family's name. */
static int probe_family(struct bs_emitter *em, const struct bs_family *f)
{
	struct probe *pr = (struct probe *)em;
	size_t n = strnlen(f->name, NAMES_METRIC_MAX + 1);

	pr->candidates = 0;
	if (!serieskey_family_valid(f)) /* what a scrape refuses is not sampled */
		return 0;
	if (proc_names_clashes(&pr->p->ours, f->name, f->type))
		proc_family_lost(pr->p, f->name, f->type);
	/* Claimed as the scrape's emitter claims it: a family the collect
	 * wrote before (or one whose names clash) is refused, its series
	 * with it. Every family is claimed, selected or not. */
	int rc =
	    famreg_claim(&pr->reg, f->name, emitter_family_base_len(f->name, n, f->type), f->type);
	memcpy(pr->name, f->name, n + 1);
	if (f->type == BS_COUNTER && !names_has_suffix(f->name, n, "_total"))
		memcpy(pr->name + n, "_total", 7);
	if (f->type != BS_COUNTER && f->type != BS_GAUGE && f->type != BS_UNKNOWN &&
	    f->type != BS_HISTOGRAM)
		return 0;
	pr->histogram = f->type == BS_HISTOGRAM;
	pr->candidates = name_candidates(pr->p, pr->name);
	if (rc < 0 && pr->candidates) {
		pthread_mutex_lock(&pr->p->lock);
		pr->p->count.duplicate_family += rc == -EEXIST;
		pr->p->count.too_many_sources += rc != -EEXIST; /* no memory */
		pthread_mutex_unlock(&pr->p->lock);
	}
	if (rc < 0)
		pr->candidates = 0;
	return 0;
}

/* Each kind of series only in its kind of family, as a scrape takes it. */
static int probe_sample(struct bs_emitter *em, const struct bs_label *l, size_t n,
			struct bs_value v)
{
	struct probe *pr = (struct probe *)em;
	struct sampled s = {v, NULL};

	if (!pr->candidates || pr->histogram)
		return 0;
	/* A NaN too: it is the series' first write if it comes first, and a
	 * scrape serves it (feed_candidates counts it, feeds nothing). */
	pr->matched |= feed_candidates(pr->p, pr->candidates, pr->name, l, n, &s, pr->last,
				       pr->due_ns, pr->now_ns);
	return 0;
}

static int probe_histogram(struct bs_emitter *em, const struct bs_label *l, size_t n,
			   const struct bs_histogram *h)
{
	struct probe *pr = (struct probe *)em;

	if (pr->candidates && pr->histogram)
		pr->matched |= feed_histogram(pr->p, pr->candidates, pr->name, l, n, h, pr->last,
					      pr->due_ns, pr->now_ns);
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
    .histogram = probe_histogram,
    .summary = probe_ignore_summary,
    .stateset = probe_ignore_states,
    .drop = probe_drop,
    .expired = probe_expired,
};

/* ---- the sampler ---- */

/* Sources not seen for the ttl are freed, and every next_fed that
 * pointed at one forgotten. */
static void expire_sources(struct proc *p, uint64_t now_ns)
{
	uint64_t ttl = (uint64_t)(p->conf->source_ttl_s * 1e9);
	size_t kept = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->srcs.n; i++) {
		if (i + 16 < p->srcs.n) /* a miss each: ask for them ahead */
			__builtin_prefetch(&p->src[i + 16]->seen_ns, 1);
		p->src[i]->expired = now_ns - p->src[i]->seen_ns > ttl;
		kept += !p->src[i]->expired;
	}
	if (kept == p->srcs.n) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	kept = 0;
	for (size_t i = 0; i < p->srcs.n; i++) {
		struct proc_source *s = p->src[i];
		if (s->next_fed && s->next_fed->expired)
			s->next_fed = NULL;
	}
	for (uint32_t g = 0; g < p->conf->ngroups; g++) { /* before any is freed */
		struct proc_group_srcs *gs = &p->grp[g];
		size_t n = 0;
		for (size_t i = 0; i < gs->srcs.n; i++)
			if (!gs->src[i]->expired)
				gs->src[n++] = gs->src[i];
		gs->srcs.n = n;
	}
	for (size_t i = 0; i < p->srcs.n; i++) {
		if (p->src[i]->expired) {
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

static void sample_collector(struct proc *p, size_t i, uint64_t due_ns, uint64_t now_ns,
			     bool discovery)
{
	struct probe pr = {.pub = {&probe_ops}, .p = p, .due_ns = due_ns, .now_ns = now_ns};
	uint64_t wait_ns = (uint64_t)(p->conf->interval_s * 1e9);

	int rc;

	discovery |= p->undiscovered[i];
	if (!discovery && !p->relevant[i])
		return;
	if (famreg_init(&pr.reg) < 0)
		return;
	p->pass++; /* written by this thread alone; read under the lock as fed_pass */
	rc = p->in.collect(p->in.ctx, i, &pr.pub, wait_ns);
	famreg_free(&pr.reg);
	if (rc == PROC_INPUT_BUSY) {
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

void proc_tick_at(struct proc *p, uint64_t due_ns, uint64_t now_ns)
{
	bool discovery = now_ns >= p->next_discovery_ns;

	for (size_t i = 0; i < p->in.n; i++)
		sample_collector(p, i, due_ns, now_ns, discovery);
	if (discovery)
		p->next_discovery_ns = now_ns + DISCOVERY_NS;
	if (now_ns >= p->next_expiry_ns) { /* a walk over every source: once a second */
		expire_sources(p, now_ns);
		p->next_expiry_ns = now_ns + 1000000000u;
	}
	p->count.ticks++;
	p->count.tick_ns_total += monoclock_ns() - now_ns;
}

void proc_tick(struct proc *p, uint64_t now_ns)
{
	proc_tick_at(p, now_ns, now_ns);
}

/* Passes at a fixed rate: the next one is due one interval after the last
 * was due, so a slow pass does not shift the ones after it; far behind, it
 * skips whole intervals, so the times passes are due keep one lattice. */
static void *sampler_main(void *arg)
{
	struct proc *p = arg;
	uint64_t interval = (uint64_t)(p->conf->interval_s * 1e9), due = monoclock_ns();
	struct epoll_event ev;

	for (;;) {
		uint64_t now = monoclock_ns();
		if (now >= due) {
			proc_tick_at(p, due, now);
			due += interval;
			uint64_t after = monoclock_ns();
			if (due < after) /* far behind: skip, do not catch up */
				due += (after - due) / interval * interval + interval;
			continue;
		}
		int ms = (int)((due - now + 999999) / 1000000);
		if (epoll_wait(p->epfd, &ev, 1, ms) == 1 && ev.data.u32 == TAG_STOP)
			return NULL;
	}
}

void proc_family_lost(struct proc *p, const char *family, enum bs_metric_type type)
{
	const char *clash;
	uint32_t other;

	pthread_mutex_lock(&p->lock);
	if (!proc_names_clashes(&p->lost, family, type))
		proc_names_family(&p->lost, family, type, 0, &clash,
				  &other); /* ENOMEM: next time */
	pthread_mutex_unlock(&p->lock);
}

/* Every name the processing's families could claim, whatever the writes
 * make of its statistics' types. */
static int names_build(struct proc *p)
{
	const char *clash;
	uint32_t other;
	int rc = 0;

	for (uint32_t g = 0; rc != -ENOMEM && g < p->conf->ngroups; g++) {
		const struct proc_group_conf *c = &p->conf->group[g];
		for (uint32_t k = 0; rc != -ENOMEM && k < c->nstats; k++)
			rc = proc_names_stat(&p->ours, c->stat[k].name, 0x7f, 0, &clash, &other);
		if (c->has_template && rc != -ENOMEM)
			rc = proc_names_template(&p->ours, c->tpl.name, c->tpl.spec, c->tpl.nspec,
						 0, &clash, &other);
	}
	return rc == -ENOMEM ? rc : 0;
}

int proc_new(const struct proc_conf *conf, struct proc **out)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (!(p->scratch = malloc(sizeof(*p->scratch)))) {
		free(p);
		return -ENOMEM;
	}
	p->conf = conf;
	p->epfd = -1;
	p->clock_ns = monoclock_ns;
	/* max_sources caps what is kept; the array never needs more. */
	growarr_init(&p->srcs, sizeof(struct proc_source *), conf->max_sources);
	for (uint32_t g = 0; g < PROC_GROUPS_MAX; g++)
		growarr_init(&p->grp[g].srcs, sizeof(struct proc_source *), conf->max_sources);
	worker_init(&p->sampler);
	pthread_mutex_init(&p->lock, NULL);
	proc_tpl_init(p);
	proc_names_init(&p->ours);
	proc_names_init(&p->lost);
	proc_names_init(&p->warned);
	proc_names_init(&p->served);
	if (names_build(p) < 0) {
		proc_free(p);
		return -ENOMEM;
	}
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
	for (uint32_t g = 0; g < PROC_GROUPS_MAX; g++)
		growarr_free(&p->grp[g].srcs);
	free(p->index);
	free(p->scratch);
	proc_names_free(&p->ours);
	proc_names_free(&p->lost);
	proc_names_free(&p->warned);
	proc_names_free(&p->served);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void proc_release(void *p)
{
	proc_free(p);
}
