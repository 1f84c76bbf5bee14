/* The built-in collector "processing": every source's statistics as
 * Prometheus families, under the sources' lock (memory only, no I/O).
 * Seed 001: value a counter; range _samples, _min, _avg, _max; array and
 * list histograms; history its last complete period; raw only on the
 * /statistics/ interface. Seed 004: _sum, _max, _min, the CR/DR/DV
 * histograms, the t-digest a summary. Each statistic's out-of-range or
 * out-of-band count is a counter of its own. The source's labels are kept
 * and `source_metric` names the series sampled. */
#include "proc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#define LABELS_MAX 65
#define NAME_BUF (NAMES_METRIC_MAX + 1)

/* Calls fn for every source of group g with its labels and source_metric. */
typedef void source_fn(struct bs_emitter *em, const struct proc_source *s, struct bs_label *l,
		       size_t n, const void *arg);

static void each_source(struct proc *p, uint32_t g, struct bs_emitter *em, source_fn *fn,
			const void *arg)
{
	struct bs_label l[LABELS_MAX];

	for (size_t i = 0; i < p->srcs.n; i++) {
		const struct proc_source *s = p->src[i];
		if (s->group != g || s->nlabels + 1 > LABELS_MAX)
			continue;
		memcpy(l, s->labels, s->nlabels * sizeof(*l));
		l[s->nlabels] = (struct bs_label){"source_metric", s->name};
		fn(em, s, l, s->nlabels + 1, arg);
	}
}

static bool family(struct bs_emitter *em, const char *a, const char *b, enum bs_metric_type t,
		   const char *help)
{
	char name[NAME_BUF];

	if ((size_t)snprintf(name, sizeof(name), "%s%s", a, b) >= sizeof(name))
		return false;
	return bs_family(em, name, t, NULL, help) == 0;
}

/* ---- seed 001 ---- */

struct stat_arg {
	uint32_t k; /* the statistic's index in the group */
	int field;  /* which figure of a range */
};

enum { F_SAMPLES, F_MIN, F_AVG, F_MAX, F_OOR, F_MISSED, F_TOTAL };

static void range_field(struct bs_emitter *em, const struct statproc_range *r, int field,
			struct bs_label *l, size_t n)
{
	if (field == F_SAMPLES)
		bs_sample_u64(em, l, n, r->num);
	else if (r->num == 0)
		return; /* no min, average or max of nothing */
	else if (field == F_MIN)
		bs_sample_i64(em, l, n, r->min);
	else if (field == F_MAX)
		bs_sample_i64(em, l, n, r->max);
	else
		bs_sample_f64(em, l, n, (double)r->acc / (double)r->num);
}

static void array_hist(struct bs_emitter *em, const struct statproc_stat *st, struct bs_label *l,
		       size_t n)
{
	double upper[STATPROC_ARRAY_MAX];
	uint32_t k = st->data.array.n;
	int64_t b;

	for (uint32_t i = 0; i + 1 < k; i++) {
		b = st->def.range_min;
		statproc_array_bound(&st->def, i, &b); /* the bounds the data file prints */
		upper[i] = (double)b;
	}
	upper[k - 1] = INFINITY;
	struct bs_histogram h = {k, upper, st->data.array.hits, false, {0}};
	em->ops->histogram(em, l, n, &h);
}

static int cmp_entry_x(const void *a, const void *b)
{
	int64_t x = ((const struct statproc_list_entry *)a)->x,
		y = ((const struct statproc_list_entry *)b)->x;
	return (x > y) - (x < y);
}

static void list_hist(struct bs_emitter *em, const struct statproc_stat *st, struct bs_label *l,
		      size_t n)
{
	struct statproc_list_entry e[STATPROC_LIST_MAX];
	double upper[STATPROC_LIST_MAX + 1];
	uint64_t count[STATPROC_LIST_MAX + 1];
	uint32_t k = st->data.list.n;

	memcpy(e, st->data.list.e, k * sizeof(*e));
	qsort(e, k, sizeof(*e), cmp_entry_x);
	for (uint32_t i = 0; i < k; i++) {
		upper[i] = (double)e[i].x;
		count[i] = e[i].hits;
	}
	upper[k] = INFINITY;
	count[k] = 0;
	struct bs_histogram h = {k + 1, upper, count, false, {0}};
	em->ops->histogram(em, l, n, &h);
}

static void stat_series(struct bs_emitter *em, const struct proc_source *s, struct bs_label *l,
			size_t n, const void *arg)
{
	const struct stat_arg *a = arg;
	const struct statproc_stat *st = &s->stat[a->k];
	const void *last;

	switch (a->field) {
	case F_OOR:
		bs_sample_u64(em, l, n, st->hits_out_of_range);
		return;
	case F_MISSED:
		bs_sample_u64(em, l, n, st->data.list.hits_missed);
		return;
	}
	switch (st->def.type) {
	case STATPROC_VALUE:
		bs_sample_i64(em, l, n, st->data.total);
		break;
	case STATPROC_RANGE:
		range_field(em, &st->data.range, a->field, l, n);
		break;
	case STATPROC_ARRAY:
		array_hist(em, st, l, n);
		break;
	case STATPROC_LIST:
		list_hist(em, st, l, n);
		break;
	case STATPROC_HISTORY:
		if (!(last = statproc_history_last(st)))
			break;
		if (st->def.mode == STATPROC_MODE_RANGE)
			range_field(em, last, a->field, l, n);
		else
			bs_sample_i64(em, l, n, *(const int64_t *)last);
		break;
	case STATPROC_RAW:
		break;
	}
}

static void emit_stat(struct proc *p, uint32_t g, uint32_t k, struct bs_emitter *em)
{
	static const char *const range_suffix[] = {"_samples", "_min", "_avg", "_max"};
	static const enum bs_metric_type range_type[] = {BS_COUNTER, BS_GAUGE, BS_GAUGE, BS_GAUGE};
	const struct proc_stat_conf *c = &p->conf->group[g].stat[k];
	const char *hist_suffix = c->def.type == STATPROC_HISTORY ? "_last_period" : "";
	struct stat_arg a = {k, F_TOTAL};
	bool range = c->def.type == STATPROC_RANGE ||
		     (c->def.type == STATPROC_HISTORY && c->def.mode == STATPROC_MODE_RANGE);

	if (range) {
		char suffix[64];
		for (a.field = F_SAMPLES; a.field <= F_MAX; a.field++) {
			snprintf(suffix, sizeof(suffix), "%s%s", hist_suffix,
				 range_suffix[a.field]);
			if (family(
				em, c->name, suffix,
				c->def.type == STATPROC_HISTORY ? BS_GAUGE : range_type[a.field],
				"Seed 001 range statistic: samples, minimum, average and maximum "
				"of X."))
				each_source(p, g, em, stat_series, &a);
		}
	} else if (c->def.type == STATPROC_VALUE) {
		if (family(em, c->name, "", BS_COUNTER,
			   c->def.mode == STATPROC_PRODUCTS
			       ? "Seed 001 value statistic: total of |X|*Y since its reset."
			       : "Seed 001 value statistic: total of Y since its reset."))
			each_source(p, g, em, stat_series, &a);
	} else if (c->def.type == STATPROC_HISTORY) {
		if (family(em, c->name, hist_suffix, BS_GAUGE,
			   "Seed 001 history statistic: the total of its last complete period."))
			each_source(p, g, em, stat_series, &a);
	} else if (c->def.type == STATPROC_ARRAY || c->def.type == STATPROC_LIST) {
		if (family(em, c->name, "", BS_HISTOGRAM,
			   c->def.type == STATPROC_ARRAY
			       ? "Seed 001 array statistic: Y per interval of X."
			       : "Seed 001 list statistic: Y per value of X."))
			each_source(p, g, em, stat_series, &a);
	}
	if (c->def.type == STATPROC_LIST) {
		a.field = F_MISSED;
		if (family(em, c->name, "_missed", BS_COUNTER,
			   "X values the list had no room for (entries_max)."))
			each_source(p, g, em, stat_series, &a);
	}
	a.field = F_OOR;
	if (family(em, c->name, "_out_of_range", BS_COUNTER,
		   "X values outside range_min..range_max."))
		each_source(p, g, em, stat_series, &a);
}

/* ---- seed 004 ---- */

struct voi_arg {
	uint32_t k; /* the statistic's index in the VOI */
	bool oob;
	const struct proc_template_conf *tpl;
};

static void value_sample(struct bs_emitter *em, struct bs_label *l, size_t n, struct vstats_value v)
{
	if (v.dtype == VSTATS_INT)
		bs_sample_i64(em, l, n, v.i);
	else if (v.dtype == VSTATS_UINT)
		bs_sample_u64(em, l, n, v.u);
	else
		bs_sample_f64(em, l, n, v.f);
}

/* Bucket upper bounds as Prometheus' le (inclusive): a continuous range
 * [lb, ub) of integers ends at ub - 1, of floats just below ub. */
static void vhist(struct bs_emitter *em, const struct vstats_stat *st, struct bs_label *l, size_t n)
{
	const struct vstats_hist *h = &st->hist;
	double upper[VSTATS_BUCKETS_MAX + 1];
	uint64_t count[VSTATS_BUCKETS_MAX + 1];

	for (uint32_t i = 0; i < h->n; i++) {
		struct vstats_value ub = h->bkt[i].ub;
		if (st->stype != VSTATS_CRHIST)
			upper[i] = vstats_value_f(ub);
		else if (ub.dtype == VSTATS_INT)
			upper[i] = ub.i == INT64_MAX ? INFINITY : (double)(ub.i - 1);
		else if (ub.dtype == VSTATS_UINT)
			upper[i] = ub.u == UINT64_MAX ? INFINITY : (double)(ub.u - 1);
		else
			upper[i] = isinf(ub.f) ? INFINITY : nextafter(ub.f, -INFINITY);
		count[i] = h->count[i];
	}
	uint32_t k = h->n;
	if (k == 0 || !isinf(upper[k - 1])) {
		upper[k] = INFINITY;
		count[k++] = 0;
	}
	struct bs_histogram hist = {k, upper, count, false, {0}};
	em->ops->histogram(em, l, n, &hist);
}

static void voi_series(struct bs_emitter *em, const struct proc_source *s, struct bs_label *l,
		       size_t n, const void *arg)
{
	const struct voi_arg *a = arg;
	const struct vstats_stat *st;
	double q[PROC_QUANTILES_MAX];

	if (!s->sampled)
		return;
	st = &s->voi.stat[a->k];
	if (a->oob) {
		bs_sample_u64(em, l, n, st->hist.oob);
		return;
	}
	switch (st->stype) {
	case VSTATS_SUM:
		value_sample(em, l, n, st->v);
		break;
	case VSTATS_MAX:
	case VSTATS_MIN:
		if (s->voi.updates)
			value_sample(em, l, n, st->v);
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		vhist(em, st, l, n);
		break;
	case VSTATS_TDGST: {
		struct tdigest *td = st->td;
		for (uint32_t i = 0; i < a->tpl->nquantile; i++)
			q[i] = tdigest_quantile(td, a->tpl->quantile[i]);
		struct bs_summary sum = {a->tpl->nquantile,
					 a->tpl->quantile,
					 q,
					 (uint64_t)tdigest_count(td),
					 {.kind = BS_VAL_F64, .f = tdigest_sum(td)}};
		em->ops->summary(em, l, n, &sum);
		break;
	}
	}
}

static void emit_template(struct proc *p, uint32_t g, struct bs_emitter *em)
{
	static const char *const suffix[] = {"_sum_of_values", "_max",	  "_min",    "_crhist",
					     "_drhist",	       "_dvhist", "_tdigest"};
	const struct proc_group_conf *gc = &p->conf->group[g];
	const struct proc_template_conf *t = &gc->tpl;

	for (uint32_t k = 0; k < t->nspec; k++) {
		enum vstats_stype st = t->spec[k].stype;
		struct voi_arg a = {k, false, t};
		enum bs_metric_type type = st >= VSTATS_CRHIST && st <= VSTATS_DVHIST ? BS_HISTOGRAM
					   : st == VSTATS_TDGST			      ? BS_SUMMARY
					   : st == VSTATS_SUM && gc->x == PROC_X_DELTA ? BS_COUNTER
										       : BS_GAUGE;
		if (family(em, t->name, suffix[st], type,
			   "Seed 004 (stats(3)) statistic of the variable of interest."))
			each_source(p, g, em, voi_series, &a);
		if (st >= VSTATS_CRHIST && st <= VSTATS_DVHIST) {
			char oob[32];
			a.oob = true;
			snprintf(oob, sizeof(oob), "%s_out_of_band", suffix[st]);
			if (family(em, t->name, oob, BS_COUNTER, "Values in no bucket."))
				each_source(p, g, em, voi_series, &a);
		}
	}
}

static void emit_self(struct proc *p, struct bs_emitter *em)
{
	const struct proc_counters *c = &p->count;
	struct bs_label l;

	bs_family(em, "binstat_processing_sources", BS_GAUGE, NULL,
		  "Series the processing groups keep statistics of.");
	bs_sample_u64(em, NULL, 0, p->srcs.n);
	bs_family(em, "binstat_processing_passes", BS_COUNTER, NULL, "Sampling passes run.");
	bs_sample_u64(em, NULL, 0, c->ticks);
	bs_family(em, "binstat_processing_pass_seconds", BS_COUNTER, "seconds",
		  "Time the sampling passes took.");
	bs_sample_f64(em, NULL, 0, (double)c->tick_ns_total / 1e9);
	bs_family(em, "binstat_processing_values", BS_COUNTER, NULL, "Sampled values processed.");
	bs_sample_u64(em, NULL, 0, c->values);
	bs_family(em, "binstat_processing_dropped", BS_COUNTER, NULL,
		  "Values or sources the processing could not take, by reason.");
	l = (struct bs_label){"reason", "too_many_sources"};
	bs_sample_u64(em, &l, 1, c->too_many_sources);
	l.value = "not_a_number";
	bs_sample_u64(em, &l, 1, c->not_a_number);
	l.value = "collector_busy";
	bs_sample_u64(em, &l, 1, c->busy);
	l.value = "source_expired";
	bs_sample_u64(em, &l, 1, c->expired_sources);
	l.value = "key_too_long";
	bs_sample_u64(em, &l, 1, c->key_too_long);
}

static int proc_collect(void *state, struct bs_emitter *em)
{
	struct proc *p = state;

	pthread_mutex_lock(&p->lock);
	emit_self(p, em);
	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		for (uint32_t k = 0; k < p->conf->group[g].nstats; k++)
			emit_stat(p, g, k, em);
		if (p->conf->group[g].has_template)
			emit_template(p, g, em);
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void proc_describe(void *state, char *buf, size_t len)
{
	struct proc *p = state;

	pthread_mutex_lock(&p->lock);
	snprintf(buf, len, "%zu series processed in %u groups", p->srcs.n,
		 (unsigned)p->conf->ngroups);
	pthread_mutex_unlock(&p->lock);
}

const struct bs_collector proc_source = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "processing",
    .description = "statistics processed between scrapes (seeds 001 and 004)",
    .collect = proc_collect,
    .describe = proc_describe,
};
