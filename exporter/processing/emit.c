/* The built-in collector "processing": every source's statistics as
 * Prometheus families, under the sources' lock (memory only, no I/O),
 * each as it is defined now. Linux statistics infrastructure: value a counter (a gauge where X
 * can be negative); range _samples, _min, _avg, _max; array and list
 * histograms; history its last complete period; raw only on the
 * /statistics/ interface. stats(3): _sum, _max, _min, the CR/DR/DV
 * histograms, the t-digest a summary. Every histogram counts every value
 * it was given: le=x all at most x, +Inf and _count all, _sum their sum.
 * Each statistic's out-of-range or out-of-band count is a counter of its
 * own. The source's labels are kept and `source_metric` names the series
 * sampled. */
#include "emit.h"
#include "stage_priv.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "names.h"

#define LABELS_MAX 65
#define NAME_BUF (NAMES_METRIC_MAX + 1)

/* Calls fn for every source of group g with its labels and source_metric. */
typedef void source_fn(struct bs_emitter *em, const struct source *s, struct bs_label *l, size_t n,
		       const void *arg);

static void each_source(struct processing *p, uint32_t g, struct bs_emitter *em, source_fn *fn,
			const void *arg)
{
	struct bs_label l[LABELS_MAX];

	const struct stage_group_srcs *gs = &p->grp[g];

	for (size_t i = 0; i < gs->srcs.n; i++) {
		const struct source *s = gs->src[i];
		if (s->nlabels + 1 > LABELS_MAX)
			continue;
		memcpy(l, s->labels, s->nlabels * sizeof(*l));
		l[s->nlabels] = (struct bs_label){"source_metric", s->name};
		fn(em, s, l, s->nlabels + 1, arg);
	}
}

/* A family of the processing, unless a collector's claims one of its
 * names: then the collector's is served, each scrape (never one then
 * the other), the processing's counted as duplicate_family and logged
 * once. Only a collector's family puts a name in
 * the sticky lost set: one of the processing's own families claiming
 * it first this scrape (which a load and a write refuse, so should not
 * be) is a drop of this scrape alone. Under the
 * lock. */
static bool family(struct processing *p, struct bs_emitter *em, const char *a, const char *b,
		   enum bs_metric_type t, const char *help)
{
	char name[NAME_BUF];
	const char *clash;
	uint32_t other;
	int rc;

	if ((size_t)snprintf(name, sizeof(name), "%s%s", a, b) >= sizeof(name))
		return false;
	bool lost = processing_names_clashes(&p->lost, name, t);
	if (!lost && (rc = bs_family(em, name, t, NULL, help)) != -EEXIST) {
		if (rc == 0 &&
		    processing_names_family(&p->served, name, t, 0, &clash, &other) == -ENOMEM)
			p->served_partial = true;
		return rc == 0;
	}
	bool ours = !lost && (p->served_partial || processing_names_clashes(&p->served, name, t));
	if (lost)
		bs_drop(em, "duplicate_family", 1); /* bs_family's EEXIST counts its own */
	else if (!ours)
		processing_names_family(&p->lost, name, t, 0, &clash, &other);
	if (!processing_names_find(&p->warned, name, NULL) &&
	    processing_names_family(&p->warned, name, BS_GAUGE, 0, &clash, &other) == 0) {
		if (ours)
			log_warn("two of the processing's families take one name: the later is "
				 "not served (rename the statistic or template)",
				 "family", name);
		else
			log_warn("a collector's family takes a name of the processing's: the "
				 "processing's is not served until a reload (rename the statistic "
				 "or template)",
				 "family", name);
	}
	return false;
}

/* A histogram's regions as the emitter takes them, with the sum of what
 * it observed. */
static void emit_regions(struct bs_emitter *em, struct emit_scratch *sc, size_t k, double sum,
			 struct bs_label *l, size_t n)
{
	for (size_t i = 0; i < k; i++) {
		sc->le[i] = sc->region[i].le;
		sc->count[i] = sc->region[i].count;
	}
	/* A double VOI given +inf and -inf sums to NaN: the histogram is
	 * served without its _sum (which the emitter refuses NaN), not
	 * dropped whole. */
	struct bs_histogram h = {k, sc->le, sc->count, !isnan(sum), {.kind = BS_VAL_F64, .f = sum}};
	em->ops->histogram(em, l, n, &h);
}

/* ---- the Linux statistics infrastructure ---- */

/* The families a Linux statistics infrastructure statistic writes, by its current definition:
 * a value's total (a counter, or a gauge where X can be negative), an
 * array's or a list's histogram, a range's four figures, a history's last
 * complete period, a list's missed and everyone's out-of-range count. */
enum fam {
	FAM_COUNTER,
	FAM_GAUGE,
	FAM_HIST,
	FAM_SAMPLES,
	FAM_MIN,
	FAM_AVG,
	FAM_MAX,
	FAM_LAST,
	FAM_LAST_SAMPLES,
	FAM_LAST_MIN,
	FAM_LAST_AVG,
	FAM_LAST_MAX,
	FAM_MISSED,
	FAM_OOR,
	FAM_N
};
#define BIT(f) (1u << (f))
/* The three that are named <name> alone: one of them per scrape. */
#define FAM_NAMED (BIT(FAM_COUNTER) | BIT(FAM_GAUGE) | BIT(FAM_HIST))
#define RANGE_HELP                                                                                 \
	"Linux statistics infrastructure range statistic: samples, minimum, average and maximum "  \
	"of X."
#define LAST_HELP "Linux statistics infrastructure history statistic: its last complete period."

static const struct {
	const char *suffix;
	enum bs_metric_type type;
	const char *help;
} famdef[FAM_N] = {
    [FAM_COUNTER] = {"", BS_COUNTER,
		     "Linux statistics infrastructure value statistic: total of Y, or of X*Y "
		     "(mode products), since its reset."},
    [FAM_GAUGE] = {"", BS_GAUGE,
		   "Linux statistics infrastructure value statistic: total of X*Y since its "
		   "reset, X as low as range_min < 0."},
    [FAM_HIST] = {"", BS_HISTOGRAM,
		  "Linux statistics infrastructure array or list statistic: Y by X."},
    [FAM_SAMPLES] = {"_samples", BS_COUNTER, RANGE_HELP},
    [FAM_MIN] = {"_min", BS_GAUGE, RANGE_HELP},
    [FAM_AVG] = {"_avg", BS_GAUGE, RANGE_HELP},
    [FAM_MAX] = {"_max", BS_GAUGE, RANGE_HELP},
    [FAM_LAST] = {"_last_period", BS_GAUGE, LAST_HELP},
    [FAM_LAST_SAMPLES] = {"_last_period_samples", BS_GAUGE, LAST_HELP},
    [FAM_LAST_MIN] = {"_last_period_min", BS_GAUGE, LAST_HELP},
    [FAM_LAST_AVG] = {"_last_period_avg", BS_GAUGE, LAST_HELP},
    [FAM_LAST_MAX] = {"_last_period_max", BS_GAUGE, LAST_HELP},
    [FAM_MISSED] = {"_missed", BS_COUNTER, "X values the list had no room for (entries_max)."},
    [FAM_OOR] = {"_out_of_range", BS_COUNTER, "X values outside range_min..range_max."},
};

#define RANGE_FAMS(first) (BIT(first) | BIT(first + 1) | BIT(first + 2) | BIT(first + 3))

/* A products total goes down with a negative X: a gauge where X can be
 * one, whatever x is (a delta that went back is the new value, a
 * histogram source's X its bucket's le, x_scale may be negative); the
 * total takes only X in range, so range_min decides: the configured one,
 * which holds for every source, so a family has one type for all of them,
 * and a write that would let a counter go down is refused (iface_request.c). */
static bool value_is_gauge(const struct statproc_def *d, const struct statproc_def *conf,
			   enum processing_x x)
{
	(void)x;
	return d->mode == STATPROC_PRODUCTS && conf->range_min < 0;
}

static uint32_t fams_of(const struct statproc_def *d, const struct statproc_def *conf,
			enum processing_x x)
{
	switch (d->type) {
	case STATPROC_VALUE:
		return BIT(value_is_gauge(d, conf, x) ? FAM_GAUGE : FAM_COUNTER) | BIT(FAM_OOR);
	case STATPROC_RANGE:
		return RANGE_FAMS(FAM_SAMPLES) | BIT(FAM_OOR);
	case STATPROC_ARRAY:
		return BIT(FAM_HIST) | BIT(FAM_OOR);
	case STATPROC_LIST:
		return BIT(FAM_HIST) | BIT(FAM_MISSED) | BIT(FAM_OOR);
	case STATPROC_HISTORY:
		return (d->mode == STATPROC_MODE_RANGE ? RANGE_FAMS(FAM_LAST_SAMPLES)
						       : BIT(FAM_LAST)) |
		       BIT(FAM_OOR);
	case STATPROC_RAW:
		break;
	}
	return BIT(FAM_OOR);
}

struct stat_arg {
	uint32_t k;			 /* the statistic's index in the group */
	const struct statproc_def *conf; /* its configured definition */
	enum fam fam;
	enum processing_x x;
	struct emit_scratch *sc;
};

/* field: 0 samples, 1 min, 2 avg, 3 max. */
static void range_field(struct bs_emitter *em, const struct statproc_range *r, int field,
			struct bs_label *l, size_t n)
{
	if (field == 0)
		bs_sample_u64(em, l, n, r->num);
	else if (r->num == 0)
		return; /* no min, average or max of nothing */
	else if (field == 1)
		bs_sample_i64(em, l, n, r->min);
	else if (field == 3)
		bs_sample_i64(em, l, n, r->max);
	else
		/* acc / num: the whole part (inside the s64 range) exactly,
		 * and the remainder's fraction, never a rounded 128-bit total */
		bs_sample_f64(em, l, n,
			      (double)(int64_t)(r->acc / r->num) +
				  (double)(int64_t)(r->acc % r->num) / (double)r->num);
}

/* A bucket of count up to bound b: served when a double holds b, else
 * carried into the next bucket served (vstats_region_bound, the rule of
 * the stats(3) histograms). */
static void bound_add(struct emit_scratch *sc, size_t *r, uint64_t *carry, int64_t b,
		      uint64_t count)
{
	vstats_region_bound(sc->region, r, carry, (struct vstats_value){VSTATS_INT, {.i = b}},
			    count);
}

/* An array's intervals are its buckets: the first holds what is below
 * range_min too, the last what is above range_max. An interval whose
 * bound a double cannot hold joins the next one (the data file still
 * tells them apart), so every le served counts exactly the X up to it. */
static void array_hist(struct bs_emitter *em, const struct statproc_stat *st,
		       struct emit_scratch *sc, struct bs_label *l, size_t n)
{
	uint32_t k = st->data.array.n;
	uint64_t carry = 0;
	size_t r = 0;
	int64_t b;

	for (uint32_t i = 0; i + 1 < k; i++) {
		statproc_array_bound(&st->def, i, &b); /* the bounds the data file prints */
		bound_add(sc, &r, &carry, b, st->data.array.hits[i]);
	}
	vstats_region_add(sc->region, &r, INFINITY, carry + st->data.array.hits[k - 1]);
	emit_regions(em, sc, r, st->data.array.sum, l, n);
}

static int cmp_entry_x(const void *a, const void *b)
{
	int64_t x = ((const struct statproc_list_entry *)a)->x,
		y = ((const struct statproc_list_entry *)b)->x;
	return (x > y) - (x < y);
}

/* A bucket at each X kept; below each, when the list was full, the X it
 * missed there; below the first, the X under range_min; above the last,
 * the X it missed there and those over range_max. By the array's rule:
 * a bound a double cannot hold (past 2^53) joins the next one, so every
 * le counts exactly the X up to it. Nothing is below INT64_MIN. */
static void list_hist(struct bs_emitter *em, const struct statproc_stat *st,
		      struct emit_scratch *sc, struct bs_label *l, size_t n)
{
	const uint64_t *missed = st->data.list.missed_y; /* all 0 until the list was full */
	struct statproc_list_entry *e = sc->entry;
	uint32_t k = st->data.list.n;
	uint64_t carry = st->data.list.below_y + missed[0];
	int64_t first;
	size_t r = 0;

	memcpy(e, st->data.list.e, k * sizeof(*e));
	qsort(e, k, sizeof(*e), cmp_entry_x);
	first = k ? e[0].x : st->def.range_min;
	if (carry && first > INT64_MIN)
		bound_add(sc, &r, &carry, first - 1, 0);
	for (uint32_t i = 0; i < k; i++) {
		if (i > 0 && missed[i]) /* e[i].x > e[i - 1].x: no overflow */
			bound_add(sc, &r, &carry, e[i].x - 1, missed[i]);
		bound_add(sc, &r, &carry, e[i].x, e[i].hits);
	}
	vstats_region_add(sc->region, &r, INFINITY, carry + st->data.list.above_y + missed[k]);
	emit_regions(em, sc, r, st->data.list.sum, l, n);
}

static void stat_figure(struct bs_emitter *em, const struct statproc_stat *st,
			const struct stat_arg *a, struct bs_label *l, size_t n)
{
	const void *last = statproc_history_last(st);

	switch (a->fam) {
	case FAM_COUNTER:
	case FAM_GAUGE:
		bs_sample_i64(em, l, n, st->data.total);
		break;
	case FAM_HIST:
		if (st->def.type == STATPROC_ARRAY)
			array_hist(em, st, a->sc, l, n);
		else
			list_hist(em, st, a->sc, l, n);
		break;
	case FAM_SAMPLES:
	case FAM_MIN:
	case FAM_AVG:
	case FAM_MAX:
		range_field(em, &st->data.range, a->fam - FAM_SAMPLES, l, n);
		break;
	case FAM_LAST:
		if (last)
			bs_sample_i64(em, l, n, *(const int64_t *)last);
		break;
	case FAM_LAST_SAMPLES:
	case FAM_LAST_MIN:
	case FAM_LAST_AVG:
	case FAM_LAST_MAX:
		if (last)
			range_field(em, last, a->fam - FAM_LAST_SAMPLES, l, n);
		break;
	case FAM_MISSED:
		bs_sample_u64(em, l, n, st->data.list.hits_missed);
		break;
	case FAM_OOR:
	case FAM_N:
		bs_sample_u64(em, l, n, st->hits_out_of_range);
		break;
	}
}

/* A source's figure for the family, from its statistic as it is defined
 * now; one whose <name> family is another type than the one served is
 * counted, not written. */
static void stat_series(struct bs_emitter *em, const struct source *s, struct bs_label *l, size_t n,
			const void *arg)
{
	const struct stat_arg *a = arg;
	const struct statproc_stat *st = &s->stat[a->k];
	uint32_t mine = fams_of(&st->def, a->conf, a->x);

	if (mine & BIT(a->fam))
		stat_figure(em, st, a, l, n);
	else if ((mine & FAM_NAMED) && (BIT(a->fam) & FAM_NAMED))
		bs_drop(em, "type_conflict", 1);
}

/* The families of statistic k of group g, declared from what its sources'
 * definitions are now (a POST may have changed any of them). Prometheus
 * takes one type per name: when sources disagree on <name>'s, the
 * configured type keeps it while a source has it, else the first
 * source's type does. */
static void emit_stat(struct processing *p, uint32_t g, uint32_t k, struct bs_emitter *em)
{
	const struct processing_group_conf *gc = &p->conf->group[g];
	const struct processing_stat_conf *c = &gc->stat[k];
	uint32_t need = 0, named = 0, conf_named = fams_of(&c->def, &c->def, gc->x) & FAM_NAMED;
	struct stat_arg a = {k, &c->def, FAM_COUNTER, gc->x, p->scratch};

	for (size_t i = 0; i < p->grp[g].srcs.n; i++) {
		uint32_t m = fams_of(&p->grp[g].src[i]->stat[k].def, &c->def, gc->x);
		need |= m;
		named = named ? named : m & FAM_NAMED;
	}
	if (need & conf_named)
		named = conf_named;
	need = (need & ~FAM_NAMED) | named;
	for (a.fam = 0; a.fam < FAM_N; a.fam++)
		if ((need & BIT(a.fam)) && family(p, em, c->name, famdef[a.fam].suffix,
						  famdef[a.fam].type, famdef[a.fam].help))
			each_source(p, g, em, stat_series, &a);
}

/* ---- FreeBSD's stats(3) ---- */

struct voi_arg {
	uint32_t v; /* the VOI's index in the blob */
	uint32_t k; /* the statistic's index in the VOI */
	bool oob;
	bool errs; /* a 32-bit histogram's updates not counted whole */
	const struct processing_voi_conf *voi;
	struct emit_scratch *sc;
};

static void value_sample(struct bs_emitter *em, struct bs_label *l, size_t n, struct vstats_value v)
{
	if (v.dtype == VSTATS_FLOAT || vstats_dtype_q(v.dtype))
		bs_sample_f64(em, l, n, vstats_value_f(v));
	else if (vstats_dtype_signed(v.dtype))
		bs_sample_i64(em, l, n, v.i);
	else
		bs_sample_u64(em, l, n, v.u);
}

/* An empty digest is a summary of nothing: _count 0, and no quantile
 * (the emitter, as OpenMetrics, takes no NaN). */
static void tdigest_summary(struct bs_emitter *em, const struct voi_arg *a, struct tdigest *td,
			    struct bs_label *l, size_t n)
{
	double q[PROCESSING_QUANTILES_MAX];
	bool empty = tdigest_count(td) == 0;

	for (uint32_t i = 0; !empty && i < a->voi->nquantile; i++)
		q[i] = tdigest_quantile(td, a->voi->quantile[i]);
	struct bs_summary sum = {empty ? 0 : a->voi->nquantile,
				 a->voi->quantile,
				 q,
				 (uint64_t)tdigest_count(td),
				 {.kind = BS_VAL_F64, .f = tdigest_sum(td)}};
	em->ops->summary(em, l, n, &sum);
}

static void voi_series(struct bs_emitter *em, const struct source *s, struct bs_label *l, size_t n,
		       const void *arg)
{
	const struct voi_arg *a = arg;
	const struct vstats_voi *voi;
	const struct vstats_stat *st;

	if (!s->sampled)
		return;
	voi = source_voi_c(s, a->v);
	st = &voi->stat[a->k];
	if (a->oob || a->errs) {
		bs_sample_u64(em, l, n, a->oob ? st->hist.oob : st->errs);
		return;
	}
	switch (st->stype) {
	case VSTATS_SUM:
		value_sample(em, l, n, st->v);
		break;
	case VSTATS_MAX:
	case VSTATS_MIN:
		if (voi->updates)
			value_sample(em, l, n, st->v);
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		emit_regions(em, a->sc, vstats_hist_regions(&st->hist, st->stype, a->sc->region),
			     st->hist.sum, l, n);
		break;
	case VSTATS_TDGST:
		tdigest_summary(em, a, st->td, l, n);
		break;
	}
}

/* The sum of values never goes down only where no value is below 0: a
 * u64 VOI (it refuses a negative X) of increases. An s64 or double VOI
 * takes whatever X is, a histogram source's negative le included. */
static bool sum_is_counter(const struct processing_group_conf *gc,
			   const struct processing_voi_conf *v, enum vstats_stype st)
{
	return st == VSTATS_SUM && gc->x == PROCESSING_X_DELTA && v->dtype != VSTATS_FLOAT &&
	       !vstats_dtype_signed(v->dtype);
}

/* VOI v's families, named <template> or, for a template listing its
 * VOIs, <template>_<voi>. */
static void emit_voi(struct processing *p, uint32_t g, uint32_t v, struct bs_emitter *em)
{
	static const char *const suffix[] = {"_sum_of_values", "_max",	  "_min",    "_crhist",
					     "_drhist",	       "_dvhist", "_tdigest"};
	const struct processing_group_conf *gc = &p->conf->group[g];
	const struct processing_voi_conf *c = &gc->tpl.voi[v];
	char prefix[PROCESSING_VOI_PREFIX_MAX];

	processing_conf_voi_prefix(&gc->tpl, v, prefix, sizeof(prefix));
	for (uint32_t k = 0; k < c->nspec; k++) {
		enum vstats_stype st = c->spec[k].stype;
		struct voi_arg a = {v, k, false, false, c, p->scratch};
		enum bs_metric_type type = st >= VSTATS_CRHIST && st <= VSTATS_DVHIST ? BS_HISTOGRAM
					   : st == VSTATS_TDGST			      ? BS_SUMMARY
					   : sum_is_counter(gc, c, st)		      ? BS_COUNTER
										      : BS_GAUGE;
		if (family(p, em, prefix, suffix[st], type,
			   "FreeBSD stats(3) statistic of the variable of interest."))
			each_source(p, g, em, voi_series, &a);
		if (st >= VSTATS_CRHIST && st <= VSTATS_DVHIST) {
			char oob[32];
			a.oob = true;
			snprintf(oob, sizeof(oob), "%s_out_of_band", suffix[st]);
			if (family(p, em, prefix, oob, BS_COUNTER, "Values in no bucket."))
				each_source(p, g, em, voi_series, &a);
		}
		bool td32 = st == VSTATS_TDGST && c->spec[k].tdgst_counts32;
		if ((st >= VSTATS_CRHIST && st <= VSTATS_DVHIST && c->spec[k].hist.counts32) ||
		    td32) {
			char errs[32];
			a.oob = false;
			a.errs = true;
			snprintf(errs, sizeof(errs), "%s_saturated", suffix[st]);
			if (family(
				p, em, prefix, errs, BS_COUNTER,
				td32
				    ? "Updates a 32-bit t-digest could not take whole (past 2^31 - "
				      "1 samples) and infinities: above 0, its _count is short."
				    : "Updates a 32-bit count at its end (2^32 - 1) could not take "
				      "whole: above 0, the histogram's counts are short."))
				each_source(p, g, em, voi_series, &a);
		}
	}
}

static void emit_template(struct processing *p, uint32_t g, struct bs_emitter *em)
{
	for (uint32_t v = 0; v < p->conf->group[g].tpl.nvoi; v++)
		emit_voi(p, g, v, em);
}

/* binstat_processing_dropped_total's reasons, each a counter of
 * struct stage_counters. */
static const struct {
	const char *reason;
	size_t at;
} dropped[] = {
    {"too_many_sources", offsetof(struct stage_counters, too_many_sources)},
    {"not_a_number", offsetof(struct stage_counters, not_a_number)},
    {"collector_busy", offsetof(struct stage_counters, busy)},
    {"source_expired", offsetof(struct stage_counters, expired_sources)},
    {"key_too_long", offsetof(struct stage_counters, key_too_long)},
    {"invalid_histogram", offsetof(struct stage_counters, invalid_histogram)},
    {"out_of_range", offsetof(struct stage_counters, out_of_range)},
    {"duplicate_series", offsetof(struct stage_counters, duplicate_series)},
    {"duplicate_family", offsetof(struct stage_counters, duplicate_family)},
    /* a total kept at its limit, or a range not taking it */
    {"saturated", offsetof(struct stage_counters, saturated)},
    {"memory_limit", offsetof(struct stage_counters, memory_limit)},
};

static void emit_self(struct processing *p, struct bs_emitter *em)
{
	const struct stage_counters *c = &p->count;
	struct bs_label l;

	bs_family(em, "binstat_processing_sources", BS_GAUGE, NULL,
		  "Series the processing groups keep statistics of.");
	bs_sample_u64(em, NULL, 0, p->srcs.n);
	bs_family(em, "binstat_processing_memory_bytes", BS_GAUGE, "bytes",
		  "What the sources' statistics hold, from their definitions: their records, "
		  "data and VOIs.");
	bs_sample_u64(em, NULL, 0, p->mem_bytes);
	bs_family(em, "binstat_processing_memory_limit_bytes", BS_GAUGE, "bytes",
		  "max_memory_bytes: a new source or a write past it is refused.");
	bs_sample_u64(em, NULL, 0, p->conf->max_memory_bytes);
	bs_family(em, "binstat_processing_passes", BS_COUNTER, NULL, "Sampling passes run.");
	bs_sample_u64(em, NULL, 0, c->ticks);
	bs_family(em, "binstat_processing_pass_seconds", BS_COUNTER, "seconds",
		  "Time the sampling passes took.");
	bs_sample_f64(em, NULL, 0, (double)c->tick_ns_total / 1e9);
	bs_family(em, "binstat_processing_values", BS_COUNTER, NULL, "Sampled values processed.");
	bs_sample_u64(em, NULL, 0, c->values);
	bs_family(em, "binstat_processing_dropped", BS_COUNTER, NULL,
		  "Values or sources the processing could not take, by reason.");
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		l = (struct bs_label){"reason", dropped[i].reason};
		bs_sample_u64(em, &l, 1, *(const uint64_t *)((const char *)c + dropped[i].at));
	}
}

/* Every history brought up to now, as a read of its data file would: a
 * scrape serves the last period that is complete now, even when no
 * sample came since (all out of range, or a source not seen lately). */
static void catch_up(struct processing *p, uint64_t now_ns)
{
	for (size_t i = 0; i < p->srcs.n; i++)
		for (uint32_t k = 0; k < p->conf->group[p->src[i]->group].nstats; k++)
			statproc_catch_up(&p->src[i]->stat[k], now_ns);
}

static int emit_collect(void *state, struct bs_emitter *em)
{
	struct processing *p = state;

	pthread_mutex_lock(&p->lock);
	catch_up(p, p->clock_ns());
	processing_names_free(&p->served); /* what this scrape's families claim */
	p->served_partial = false;
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

static void emit_describe(void *state, char *buf, size_t len)
{
	struct processing *p = state;

	pthread_mutex_lock(&p->lock);
	snprintf(buf, len, "%zu series processed in %u groups", p->srcs.n,
		 (unsigned)p->conf->ngroups);
	pthread_mutex_unlock(&p->lock);
}

const struct bs_collector emit_collector = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "processing",
    .description = "statistics processed between scrapes (the Linux statistics infrastructure and "
		   "FreeBSD's stats(3))",
    .collect = emit_collect,
    .describe = emit_describe,
};
