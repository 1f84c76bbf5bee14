/* Feeding the sources: a counter's or gauge's value as one X (the Linux
 * statistics infrastructure's (X, 1)), a histogram's buckets as (X, Y)
 * pairs, X a bucket's value and Y its increase, each to the statistics
 * and template VOI of every source whose group selects the series. The
 * sources' lock is taken per value, never across a collector's I/O. */
#include "feed.h"
#include "srctab.h"
#include "stage_priv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "serieskey.h"

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
static bool x_of(const struct processing_group_conf *g, bool *have_prev, struct bs_value *last,
		 uint64_t *last_ns, struct bs_value v, uint64_t now_ns, struct xval *x)
{
	bool had = *have_prev;
	struct bs_value prev = *last;
	uint64_t prev_ns = *last_ns;

	*have_prev = true;
	*last = v;
	*last_ns = now_ns;
	*x = xval_of(v);
	switch (g->x) {
	case PROCESSING_X_VALUE:
		break;
	case PROCESSING_X_DELTA:
	case PROCESSING_X_RATE:
		if (!had || now_ns <= prev_ns)
			return false;
		*x = x_delta(prev, v);
		if (g->x == PROCESSING_X_RATE)
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

/* The VOI's value of X in its dtype: an exact X exactly, a double
 * rounded to the dtype's resolution (whole, or a Q type's 2^-precision),
 * halves away from zero; false for an X the dtype cannot hold (outside
 * its limits: below 0 or past 2^64 - 1 in a u64 VOI, past 2^31 - 1 in an
 * s32 one), which is not taken. */
static bool voi_value(enum vstats_dtype dtype, const struct xval *x, struct vstats_value *out)
{
	if (dtype == VSTATS_FLOAT) {
		*out = (struct vstats_value){VSTATS_FLOAT, {.f = xval_f(x)}};
		return true;
	}
	return (x->exact ? vstats_value_of_int(dtype, x->i, out)
			 : vstats_value_of_double(dtype, x->f, out)) == 0;
}

/* Y updates of X to a VOI of c (a single sampled value, `single`, may be
 * a relative one): 0; -ERANGE for an X its dtype cannot hold, -EOVERFLOW
 * for Y that would take the VOI's count of values past 2^64 - 1 (a
 * hostile source's bucket counts); neither is taken. */
static int voi_feed(const struct processing_voi_conf *c, struct vstats_voi *voi,
		    const struct xval *x, uint64_t y, bool single)
{
	struct vstats_value val;
	int rc;

	if (!voi_value(c->dtype, x, &val))
		return -ERANGE;
	if (c->relative && single)
		rc = vstats_update_rel(voi, val);
	else
		rc = vstats_update_n(voi, val, y);
	return rc == -ERANGE || rc == -EOVERFLOW ? rc : 0;
}

/* A VOI's refusal counted by what it was. */
static void voi_refused(struct processing *p, int rc)
{
	p->count.out_of_range += rc == -ERANGE;
	p->count.saturated += rc == -EOVERFLOW;
}

/* One (X, Y) pair to the source's statistics, taken at due_ns (so a
 * history's periods count whole passes however late each ran), and Y
 * updates of X to its VOI. A single sampled value (`single`) may be a
 * relative update. An X a statistic's s64 or the VOI's dtype cannot hold
 * is not given to it, and counted as out_of_range: the Linux statistics infrastructure's exploiters
 * pass s64s, and stats(3) takes a value of the VOI's dtype only. */
static void feed_pair(struct processing *p, struct source *s, const struct xval *x, uint64_t y,
		      bool single, uint64_t due_ns)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	bool refused = false;
	int64_t xi;

	if (g->nstats && !x_s64(x, &xi))
		refused = true;
	for (uint32_t i = 0; !refused && i < g->nstats; i++)
		p->count.saturated += statproc_add(&s->stat[i], xi, y, due_ns);
	if (s->sampled && !s->voi_stopped) {
		int rc = voi_feed(&g->tpl.voi[0], &s->voi, x, y, single);
		refused |= rc == -ERANGE;
		p->count.saturated += rc == -EOVERFLOW;
	}
	p->count.out_of_range += refused;
}

/* X comes from the value read at now_ns. */
static void feed_source(struct processing *p, struct source *s, struct bs_value v, uint64_t due_ns,
			uint64_t now_ns)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	struct xval x;

	s->seen_ns = now_ns;
	if (!x_of(g, &s->have_prev, &s->prev, &s->prev_ns, v, now_ns, &x)) {
		p->count.not_a_number += !x.exact && !isfinite(x.f); /* scaled past a double */
		return;
	}
	feed_pair(p, s, &x, 1, true, due_ns);
	p->count.values++;
}

/* The source's bucket counts become the base: its first sample, or one
 * whose bounds changed. 0; -ENOMEM; -EFBIG for a source made by a value
 * that now is a histogram, when its counts' most does not fit
 * max_memory_bytes. */
static int hist_base(struct processing *p, struct source *s, const struct bs_histogram *h,
		     uint64_t bounds)
{
	int rc = srctab_take_histogram(p, s);

	if (rc < 0)
		return rc;
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
static void feed_hist_source(struct processing *p, struct source *s, const struct bs_histogram *h,
			     uint64_t due_ns, uint64_t now_ns)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
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

/* The groups whose selectors the metric name alone allows, as a mask. */
uint64_t feed_groups(const struct processing *p, const char *name)
{
	uint64_t mask = 0;

	for (uint32_t g = 0; g < p->conf->ngroups; g++)
		if (selector_match_name(&p->conf->group[g].select, name))
			mask |= 1ull << g;
	return mask;
}

/* Whether s is the series name{labels} exactly as the collector gives it
 * (so its key is s's key, and valid). */
static bool source_is(const struct source *s, const char *name, const struct bs_label *labels,
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
static struct source *source_next(struct source *const *last, uint32_t g, const char *name,
				  const struct bs_label *labels, size_t n)
{
	struct source *s = last && last[g] ? last[g]->next_fed : NULL;

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
static void source_prefetch(const struct processing *p, const struct source *s)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	const struct source *n1 = s->next_fed, *n2;

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
	prefetch_range(n2, &n2->voi.stat[g->has_template ? g->tpl.voi[0].nspec : 0]);
	prefetch_range(&n2->voi.nstats, (const char *)n2->mem + 128);
}

/* Feeds the series to each candidate group whose label matchers it meets;
 * the name matchers were applied once for its family. last (NULL: none)
 * holds per group the source the collector's pass fed before: the series
 * is looked for after it first, then by its key in the index. */
bool feed_series(struct processing *p, uint64_t mask, const char *name,
		 const struct bs_label *labels, size_t n, const struct feed_sample *v,
		 struct source **last, uint64_t due_ns, uint64_t now_ns)
{
	char key[SERIESKEY_MAX];
	struct srctab_key kp; /* split with the key, on a miss */
	bool matched = false, duplicate = false, nan_counted = false, split = false;
	ssize_t written = 0;
	size_t len = 0;

	/* Bit by bit, lowest first: mask >> 64 is undefined, and a 64th group's
	 * bit is bit 63. */
	for (uint64_t rest = mask; rest; rest &= rest - 1) {
		uint32_t g = (uint32_t)__builtin_ctzll(rest);
		if (!selector_match_labels(&p->conf->group[g].select, labels, n))
			continue;
		pthread_mutex_lock(&p->lock);
		struct source *s = source_next(last, g, name, labels, n);
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
				srctab_key_split(key, len, &kp);
			split = true;
			uint64_t h = srctab_hash(g, key, &kp);
			s = srctab_find(p, g, key, &kp, h);
			int rc = 0;
			if (!s && p->srcs.n >= p->conf->max_sources)
				p->count.too_many_sources++;
			else if (!s && (rc = srctab_add(p, g, key, len, h, name, labels, n, v->h,
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

/* ---- a blob's VOIs past the first, fed by their own series ---- */

uint64_t feed_voi_groups(const struct processing *p, const char *name)
{
	uint64_t mask = 0;

	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		const struct processing_template_conf *t = &p->conf->group[g].tpl;
		for (uint32_t v = 1; p->conf->group[g].has_template && v < t->nvoi; v++)
			if (strcmp(t->voi[v].series, name) == 0)
				mask |= 1ull << g;
	}
	return mask;
}

/* A sampled value of VOI c's series: X as the group makes it, from the
 * VOI's own previous value. */
static void more_value(struct processing *p, const struct processing_group_conf *g,
		       const struct processing_voi_conf *c, struct source_more *m,
		       struct bs_value v, uint64_t now_ns)
{
	struct xval x;

	if (!x_of(g, &m->have_prev, &m->prev, &m->prev_ns, v, now_ns, &x)) {
		p->count.not_a_number += !x.exact && !isfinite(x.f); /* scaled past a double */
		return;
	}
	voi_refused(p, voi_feed(c, &m->voi, &x, 1, true));
	p->count.values++;
}

/* A histogram series of VOI c: each bucket's increase Y with its value X,
 * as a source's own histogram; its counts' room was counted with the
 * source's bytes. */
static void more_hist(struct processing *p, const struct processing_group_conf *g,
		      const struct processing_voi_conf *c, struct source_more *m,
		      const struct bs_histogram *h)
{
	uint64_t bounds = hash_bytes(h->upper, h->nbuckets * sizeof(*h->upper), h->nbuckets);

	if (!m->prev_count || m->prev_n != h->nbuckets || m->prev_bounds != bounds) {
		uint64_t *cnt = realloc(m->prev_count, h->nbuckets * sizeof(*cnt));
		if (!cnt) {
			p->count.too_many_sources++; /* no memory: counted as not kept */
			return;
		}
		m->prev_count = cnt;
		m->prev_n = (uint32_t)h->nbuckets;
		m->prev_bounds = bounds;
		memcpy(cnt, h->count, h->nbuckets * sizeof(*cnt));
		return;
	}
	for (size_t i = 0; i < h->nbuckets; i++) {
		uint64_t n = h->count[i], y = n >= m->prev_count[i] ? n - m->prev_count[i] : n;
		double le = isinf(h->upper[i]) ? (i > 0 ? h->upper[i - 1] : NAN) : h->upper[i];
		struct xval x = {false, 0, le * g->x_scale};
		m->prev_count[i] = n;
		if (y && isfinite(x.f))
			voi_refused(p, voi_feed(c, &m->voi, &x, y, false));
		else if (y)
			p->count.not_a_number++;
	}
	p->count.values++;
}

/* The series to VOIs v of s whose series it is; in a sampler's pass
 * (in_pass), a second write of it is a duplicate, as for a source. */
static void more_feed(struct processing *p, struct source *s, const char *name,
		      const struct feed_sample *v, bool in_pass, uint64_t now_ns)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];

	for (uint32_t k = 1; k < g->tpl.nvoi; k++) {
		struct source_more *m = &s->more[k - 1];
		if (strcmp(g->tpl.voi[k].series, name) != 0)
			continue;
		if (in_pass && m->fed_pass == p->pass) {
			p->count.duplicate_series++;
			continue;
		}
		m->fed_pass = in_pass ? p->pass : m->fed_pass;
		if (v->h)
			more_hist(p, g, &g->tpl.voi[k], m, v->h);
		else if (!isfinite(value_f(v->value)))
			p->count.not_a_number++;
		else
			more_value(p, g, &g->tpl.voi[k], m, v->value, now_ns);
	}
}

bool feed_voi_series(struct processing *p, uint64_t mask, const char *name,
		     const struct bs_label *labels, size_t n, const struct feed_sample *v,
		     bool in_pass, uint64_t now_ns)
{
	char key[SERIESKEY_MAX];
	struct srctab_key kp;
	bool matched = false;

	for (uint64_t rest = mask; rest; rest &= rest - 1) {
		uint32_t g = (uint32_t)__builtin_ctzll(rest);
		/* The blob is the source of the group's own metric with these labels. */
		ssize_t len =
		    serieskey_write(key, sizeof(key), p->conf->group[g].tpl.anchor, labels, n);
		if (len < 0) {
			pthread_mutex_lock(&p->lock);
			p->count.key_too_long += len == -E2BIG;
			pthread_mutex_unlock(&p->lock);
			return matched;
		}
		srctab_key_split(key, (size_t)len, &kp);
		pthread_mutex_lock(&p->lock);
		struct source *s = srctab_find(p, g, key, &kp, srctab_hash(g, key, &kp));
		if (s) {
			matched = true;
			s->seen_ns = now_ns;
			if (s->sampled && !s->voi_stopped)
				more_feed(p, s, name, v, in_pass, now_ns);
		}
		pthread_mutex_unlock(&p->lock);
	}
	return matched;
}

bool feed_value(struct processing *p, const char *name, const struct bs_label *labels, size_t n,
		double value, uint64_t now_ns)
{
	struct feed_sample v = {{.kind = BS_VAL_F64, .f = value}, NULL};
	bool fed = feed_series(p, feed_groups(p, name), name, labels, n, &v, NULL, now_ns, now_ns);

	return feed_voi_series(p, feed_voi_groups(p, name), name, labels, n, &v, false, now_ns) ||
	       fed;
}

/* The emitter's checks of a histogram, and the cap on what a source
 * keeps of one. */
bool feed_hist_valid(struct processing *p, const struct bs_histogram *h)
{
	bool ok =
	    h && h->nbuckets > 0 && h->nbuckets <= STAGE_HIST_BUCKETS_MAX && h->upper && h->count;

	for (size_t i = 0; ok && i < h->nbuckets; i++)
		ok = !isnan(h->upper[i]) && (i == 0 || h->upper[i] > h->upper[i - 1]);
	if (!ok) {
		pthread_mutex_lock(&p->lock);
		p->count.invalid_histogram++;
		pthread_mutex_unlock(&p->lock);
	}
	return ok;
}

bool feed_hist_series(struct processing *p, uint64_t mask, const char *name,
		      const struct bs_label *labels, size_t n, const struct bs_histogram *h,
		      struct source **last, uint64_t due_ns, uint64_t now_ns)
{
	struct feed_sample v = {{.kind = BS_VAL_F64}, h};

	return mask && feed_hist_valid(p, h) &&
	       feed_series(p, mask, name, labels, n, &v, last, due_ns, now_ns);
}

bool feed_histogram(struct processing *p, const char *name, const struct bs_label *labels, size_t n,
		    const struct bs_histogram *h, uint64_t now_ns)
{
	struct feed_sample v = {{.kind = BS_VAL_F64}, h};
	uint64_t more = feed_voi_groups(p, name);
	bool fed =
	    feed_hist_series(p, feed_groups(p, name), name, labels, n, h, NULL, now_ns, now_ns);

	return (more && feed_hist_valid(p, h) &&
		feed_voi_series(p, more, name, labels, n, &v, false, now_ns)) ||
	       fed;
}
