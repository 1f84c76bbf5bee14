/* Reads and checks the `processing:` section. Every limit is a
 * configuration error with its position, so what runs is bounded: groups,
 * statistics, buckets, sources, quantiles, and what one source of each
 * group holds against max_memory_bytes. */
#include "processing_conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "processing_names.h"

static int get_i64(const struct conf_node *n, const char *key, int64_t *out)
{
	return conf_get_i64(n, key, INT64_MIN, INT64_MAX, out);
}

static int pick(const struct conf_node *n, const char *key, const char *const *names, size_t nn,
		int *out)
{
	const char *v;
	int rc = conf_get_str(n, key, &v);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nn; i++)
		if (strcmp(v, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	return conf_errorf(conf_child(n, key), "'%s' cannot be '%s'", key, v);
}

/* ---- Linux statistics infrastructure statistics ---- */

static int stat_type_attrs(const struct conf_node *n, struct processing_stat_conf *s)
{
	static const char *const modes[] = {"increments", "products", "range"};
	static const char *const scales[] = {"lin", "log2"};
	struct statproc_def *d = &s->def;
	uint64_t u;
	double period;
	int k = 0, rc;

	d->entries_max = 256;
	d->base_interval = 1;
	if ((rc = pick(n, "mode", modes, 3, &k)) == -EINVAL)
		return rc;
	d->mode = rc == 0 ? (enum statproc_mode)k : STATPROC_INCREMENTS;
	if ((rc = pick(n, "scale", scales, 2, &k)) == -EINVAL)
		return rc;
	d->scale = rc == 0 ? (enum statproc_scale)k : STATPROC_LIN;
	if ((rc = conf_get_u64(n, "entries_max", 1, STATPROC_RING_MAX, &u)) == -EINVAL)
		return rc;
	if (rc == 0)
		d->entries_max = (uint32_t)u;
	if ((rc = conf_get_u64(n, "base_interval", 1, UINT32_MAX, &u)) == -EINVAL)
		return rc;
	if (rc == 0)
		d->base_interval = (uint32_t)u;
	d->period_us = 1000000;
	if ((rc = conf_get_duration(n, "period", 1e-6, 86400, &period)) == -EINVAL)
		return rc;
	if (rc == 0)
		d->period_us = (uint64_t)llround(period * 1e6);
	return 0;
}

static int load_stat(const struct conf_node *n, struct processing_stat_conf *s)
{
	static const char *const types[] = {"value", "range", "array", "list", "raw", "history"};
	const char *why;
	int k = 0, rc;

	if (n->kind != BS_CONF_MAP)
		return conf_errorf(n, "a statistic is a mapping (name, type, ...)");
	s->units = "x/samples";
	s->on = true;
	s->def.range_min = INT64_MIN;
	s->def.range_max = INT64_MAX;
	if ((rc = conf_get_str(n, "name", &s->name)) < 0)
		return rc == -ENOENT ? conf_errorf(n, "a statistic needs a name") : rc;
	if (!names_metric_valid(s->name, strlen(s->name)) || strlen(s->name) > STATPROC_NAME_MAX)
		return conf_errorf(conf_child(n, "name"),
				   "name must be a metric name of at most %d "
				   "bytes",
				   STATPROC_NAME_MAX);
	if ((rc = pick(n, "type", types, 6, &k)) < 0)
		return rc == -ENOENT ? conf_errorf(n, "a statistic needs a type") : rc;
	s->def.type = (enum statproc_type)k;
	if (conf_get_str(n, "units", &s->units) == -EINVAL ||
	    conf_get_bool(n, "on", &s->on) == -EINVAL ||
	    get_i64(n, "range_min", &s->def.range_min) == -EINVAL ||
	    get_i64(n, "range_max", &s->def.range_max) == -EINVAL || stat_type_attrs(n, s) < 0)
		return -EINVAL;
	if (strchr(s->units, ' ') || strlen(s->units) > STATPROC_NAME_MAX)
		return conf_errorf(conf_child(n, "units"), "units: no blanks, at most %d bytes",
				   STATPROC_NAME_MAX);
	if (statproc_check(&s->def, &why) < 0)
		return conf_errorf(n, "statistic '%s': %s", s->name, why);
	return conf_check_unused(n);
}

/* ---- FreeBSD stats(3) templates ---- */

static int scalar_value(const struct conf_node *n, enum vstats_dtype d, struct vstats_value *out);

static int get_value(const struct conf_node *n, const char *key, enum vstats_dtype d,
		     struct vstats_value *out)
{
	const struct conf_node *v = conf_child(n, key);

	if (!v)
		return -ENOENT;
	conf_mark_used(n, key);
	return scalar_value(v, d, out);
}

/* A Q type's number, rounded exactly to its precision, or a
 * configuration error that names its limits. */
static int q_value(const struct conf_node *n, enum vstats_dtype d, struct vstats_value *out)
{
	char lo[VSTATS_VALUE_STR_MAX], hi[VSTATS_VALUE_STR_MAX];

	if (vstats_value_parse(d, n->scalar, out) == 0)
		return 0;
	vstats_value_tostr(vstats_lowest(d), lo, sizeof(lo));
	vstats_value_tostr(vstats_highest(d), hi, sizeof(hi));
	return conf_errorf(n,
			   "a number from %s to %s, at most 19 decimals, expected (dtype %s, "
			   "precision %u)",
			   lo, hi, vstats_dtype_name(d), VSTATS_DTYPE_PREC(d));
}

/* A whole number within d's limits (exact past 2^53, where a double
 * rounds), or a configuration error that names them. */
static int int_value(const struct conf_node *n, enum vstats_dtype d, struct vstats_value *out)
{
	bool sig = vstats_dtype_signed(d);
	int rc = sig ? conf_parse_i64(n->scalar, &out->i) : conf_parse_u64(n->scalar, &out->u);
	int bits = d == VSTATS_S32 || d == VSTATS_U32	   ? 32
		   : d == VSTATS_LONG || d == VSTATS_ULONG ? (int)(8 * sizeof(long))
							   : 64;

	if (rc == 0 && vstats_value_fits(*out))
		return 0;
	if (sig)
		return conf_errorf(n, "a whole number from -2^%d to 2^%d-1 expected (dtype %s)",
				   bits - 1, bits - 1, vstats_dtype_name(d));
	return conf_errorf(n, "a whole number from 0 to 2^%d-1 expected (dtype %s)", bits,
			   vstats_dtype_name(d));
}

static int scalar_value(const struct conf_node *n, enum vstats_dtype d, struct vstats_value *out)
{
	char *end;

	if (n->kind != BS_CONF_SCALAR)
		return conf_errorf(n, "a number expected");
	*out = (struct vstats_value){.dtype = d};
	if (vstats_dtype_q(d))
		return q_value(n, d, out);
	if (d != VSTATS_FLOAT)
		return int_value(n, d, out);
	double v = strtod(n->scalar, &end);
	if (end == n->scalar || *end || !isfinite(v))
		return conf_errorf(n, "a number expected");
	out->f = v;
	return 0;
}

/* The user's buckets: `bounds` (CRHIST lower bounds), `buckets` (DRHIST
 * [lb, ub) pairs) or `values` (DVHIST). */
static int usr_buckets(const struct conf_node *n, const char *key, enum vstats_stype t,
		       enum vstats_dtype d, struct vstats_bucket **out, uint32_t *nout)
{
	const struct conf_node *list = conf_child(n, key);

	if (!list)
		return conf_errorf(n, "'%s' is needed", key);
	if (list->kind != BS_CONF_SEQ || list->n == 0 || list->n > VSTATS_BUCKETS_MAX)
		return conf_errorf(list, "'%s' must be a list of 1 to %d", key, VSTATS_BUCKETS_MAX);
	struct vstats_bucket *b = calloc(list->n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < list->n; i++) {
		const struct conf_node *it = list->val[i];
		int rc;
		if (t == VSTATS_DRHIST) {
			if (it->kind != BS_CONF_SEQ || it->n != 2) {
				free(b);
				return conf_errorf(
				    it, "a bucket is a pair [lb, ub] (it holds lb <= x < ub)");
			}
			rc = scalar_value(it->val[0], d, &b[i].lb);
			rc = rc < 0 ? rc : scalar_value(it->val[1], d, &b[i].ub);
		} else {
			rc = scalar_value(it, d, &b[i].lb);
			b[i].ub = b[i].lb;
		}
		if (rc < 0) {
			free(b);
			return rc;
		}
	}
	*out = b;
	*nout = (uint32_t)list->n;
	return 0;
}

/* FreeBSD's rules for the histogram, refused where they are broken: a
 * flag the kind does not take at that flag, anything else at the
 * histogram's settings. */
static int hist_check(const struct conf_node *n, enum vstats_stype t, enum vstats_dtype d,
		      const struct vstats_spec *spec)
{
	static const char *const keys[] = {"lbound_inf", "ubound_inf"};
	const char *why = vstats_flags_refused(t, spec->hist.scheme, spec->hist.flags);
	struct vstats_bucket *b;
	uint32_t nb;
	int rc;

	for (int i = 0; why && i < 2; i++)
		if (vstats_flags_refused(t, spec->hist.scheme, spec->hist.flags & (1u << i)))
			return conf_errorf(conf_child(n, keys[i]), "%s", why);
	if ((rc = vstats_hist_buckets(t, d, &spec->hist, &b, &nb, &why)) == -EINVAL)
		return conf_errorf(n, "%s", why);
	if (rc < 0)
		return rc;
	free(b);
	return conf_check_unused(n);
}

/* An integer or Q VOI's step (key, read as the double v) as written:
 * FreeBSD's steps are whole numbers of the VOI's units (2^-prec), and a
 * double rounds one past 2^53 (or a decimal that is none) silently, so
 * the decimal must be exactly v. A v that is not a whole number of units
 * is left to the histogram's checks, which refuse it. */
static int exact_step(const struct conf_node *n, const char *key, enum vstats_dtype d,
		      unsigned prec, double v)
{
	const struct conf_node *s = conf_child(n, key);
	double w = ldexp(v, (int)prec);
	unsigned __int128 u;

	if (!s || d == VSTATS_FLOAT || !(w == floor(w) && w < 0x1p64))
		return 0;
	if (vstats_decimal_units(s->scalar, prec, &u) == 0 && u == (unsigned __int128)w)
		return 0;
	if (prec == 0)
		return conf_errorf(s,
				   "'%s' of a %s VOI: a whole number, written as a decimal, that a "
				   "double holds exactly (each below 2^53 does)",
				   key, vstats_dtype_name(d));
	return conf_errorf(s,
			   "'%s' of a %s VOI: a multiple of 2^-%u, written as a decimal, that a "
			   "double holds exactly (each below 2^%u does)",
			   key, vstats_dtype_name(d), prec, 53 - prec);
}

static int hist_spec(const struct conf_node *n, enum vstats_stype t, enum vstats_dtype d,
		     struct vstats_spec *spec, struct vstats_bucket **owned)
{
	static const char *const schemes[] = {"lin", "exp", "linexp", "usr"};
	struct vstats_hist_spec *h = &spec->hist;
	bool lo_inf = false, hi_inf = false;
	uint64_t steps = 1;
	int k = VSTATS_USR, rc;

	if (n->kind != BS_CONF_MAP)
		return conf_errorf(n, "a histogram's settings are a mapping");
	if (t == VSTATS_CRHIST && (rc = pick(n, "scheme", schemes, 4, &k)) < 0)
		return rc == -ENOENT ? conf_errorf(n, "a crhist needs a scheme") : rc;
	h->scheme = (enum vstats_scheme)k;
	if (h->scheme == VSTATS_USR) {
		const char *key = t == VSTATS_CRHIST   ? "bounds"
				  : t == VSTATS_DRHIST ? "buckets"
						       : "values";
		if ((rc = usr_buckets(n, key, t, d, owned, &h->nusr)) < 0)
			return rc;
		h->usr = *owned;
	} else if (get_value(n, "lb", d, &h->lb) < 0 || get_value(n, "ub", d, &h->ub) < 0 ||
		   conf_get_f64(n, "stepinc", 1e-300, 1e300, &h->stepinc) == -EINVAL ||
		   conf_get_f64(n, "stepbase", 1, 1e300, &h->stepbase) == -EINVAL ||
		   conf_get_f64(n, "stepexp", -1000, 1000, &h->stepexp) == -EINVAL ||
		   conf_get_u64(n, "nlinsteps", 1, 1000000, &steps) == -EINVAL) {
		return conf_child(n, "lb") && conf_child(n, "ub")
			   ? -EINVAL
			   : conf_errorf(n, "lb and ub are needed");
	}
	if (h->scheme != VSTATS_USR &&
	    (exact_step(n, "stepinc", d, VSTATS_DTYPE_PREC(d), h->stepinc) < 0 ||
	     exact_step(n, "stepbase", d, 0, h->stepbase) < 0))
		return -EINVAL;
	h->nlinsteps = (uint32_t)steps;
	if ((rc = conf_get_u64(n, "counts", 0, UINT64_MAX, &steps)) == -EINVAL)
		return rc;
	if (rc == 0 && steps != 32 && steps != 64)
		return conf_errorf(conf_child(n, "counts"), "counts: 32 or 64 (bits of a count)");
	h->counts32 = rc == 0 && steps == 32;
	if (conf_get_bool(n, "lbound_inf", &lo_inf) == -EINVAL ||
	    conf_get_bool(n, "ubound_inf", &hi_inf) == -EINVAL)
		return -EINVAL;
	h->flags = (lo_inf ? VSTATS_LBOUND_INF : 0) | (hi_inf ? VSTATS_UBOUND_INF : 0);
	return hist_check(n, t, d, spec);
}

static int tdigest_spec(const struct conf_node *n, struct processing_voi_conf *t,
			struct vstats_spec *spec)
{
	const struct conf_node *q;
	uint64_t bits;
	int rc;

	spec->compression = 100;
	t->quantile[0] = 0.5, t->quantile[1] = 0.9, t->quantile[2] = 0.99;
	t->nquantile = 3;
	if (n->kind != BS_CONF_MAP)
		return conf_errorf(n, "a tdigest's settings are a mapping");
	if (conf_get_f64(n, "compression", TDIGEST_COMPRESSION_MIN, TDIGEST_COMPRESSION_MAX,
			 &spec->compression) == -EINVAL)
		return -EINVAL;
	if ((rc = conf_get_u64(n, "counts", 0, UINT64_MAX, &bits)) == -EINVAL)
		return rc;
	if (rc == 0 && bits != 32 && bits != 64)
		return conf_errorf(conf_child(n, "counts"),
				   "counts: 32 or 64 (stats(3)'s TDGSTCLUST32 or TDGSTCLUST64)");
	spec->tdgst_counts32 = rc == 0 && bits == 32;
	if ((q = conf_child(n, "quantiles"))) {
		if (q->kind != BS_CONF_SEQ || q->n == 0 || q->n > PROCESSING_QUANTILES_MAX)
			return conf_errorf(q, "quantiles: a list of 1 to %d",
					   PROCESSING_QUANTILES_MAX);
		for (size_t i = 0; i < q->n; i++) {
			struct vstats_value v;
			if (scalar_value(q->val[i], VSTATS_FLOAT, &v) < 0)
				return -EINVAL;
			if (!(v.f >= 0 && v.f <= 1) || (i > 0 && v.f <= t->quantile[i - 1]))
				return conf_errorf(q->val[i],
						   "quantiles are increasing, from 0 to 1");
			t->quantile[i] = v.f;
		}
		t->nquantile = (uint32_t)q->n;
	}
	return conf_check_unused(n);
}

static int template_stat(const struct conf_node *it, struct processing_voi_conf *t,
			 enum vstats_dtype d)
{
	static const char *const kinds[] = {"sum",    "max",	"min",	  "crhist",
					    "drhist", "dvhist", "tdigest"};
	struct vstats_spec *spec = &t->spec[t->nspec];
	const char *kind = it->kind == BS_CONF_SCALAR		   ? it->scalar
			   : it->kind == BS_CONF_MAP && it->n == 1 ? it->key[0]
								   : NULL;
	size_t k = 0;

	while (kind && k < 7 && strcmp(kind, kinds[k]) != 0)
		k++;
	if (!kind || k == 7)
		return conf_errorf(it, "a statistic is sum, max, min, or one of crhist, drhist, "
				       "dvhist, tdigest with its settings");
	spec->stype = (enum vstats_stype)k;
	if (it->kind == BS_CONF_MAP) {
		const struct conf_node *settings = conf_child(it, kind);
		int rc = spec->stype == VSTATS_TDGST ? tdigest_spec(settings, t, spec)
			 : spec->stype >= VSTATS_CRHIST
			     ? hist_spec(settings, spec->stype, d, spec, &t->usr[t->nspec])
			     : conf_errorf(it, "%s takes no settings", kind);
		if (rc < 0)
			return rc;
	} else if (spec->stype >= VSTATS_CRHIST) {
		return conf_errorf(it, "%s needs its settings", kind);
	}
	t->nspec++;
	return 0;
}

/* A Q type's precision: one qmath encodes that leaves an integer bit. */
static int q_precision(const struct conf_node *n, enum vstats_dtype *d)
{
	uint64_t prec;
	int rc = conf_get_u64(n, "precision", 0, 64, &prec);

	if (rc == -EINVAL)
		return rc;
	if (!vstats_dtype_q(*d))
		return rc == 0 ? conf_errorf(conf_child(n, "precision"),
					     "precision belongs to a Q dtype (q_s32, q_u32, "
					     "q_s64, q_u64)")
			       : 0;
	if (rc == -ENOENT)
		return conf_errorf(conf_child(n, "dtype"),
				   "a Q dtype needs precision: its bits after the binary point");
	if (!vstats_q_prec_ok(*d, (unsigned)prec))
		return conf_errorf(conf_child(n, "precision"),
				   "precision of %s: 2, 4, 6, 8, 16%s (qmath's encodings that "
				   "leave an integer bit)",
				   vstats_dtype_name(*d),
				   vstats_q_prec_ok(*d, 32) ? ", 32 or 48" : "");
	*d = VSTATS_Q(*d, prec);
	return 0;
}

/* The VOI's data type: stats(3)'s integers, s64 unless told (u64 for
 * counters that pass 2^63: KVM's are u64; long and ulong the platform's,
 * slong stats(3)'s name of long), or a Q type with its precision; the VOI
 * of a rate is a double. */
static int template_dtype(const struct conf_node *n, const struct processing_group_conf *g,
			  enum vstats_dtype *d)
{
	static const char *const names[] = {"s64",   "u64",   "s32",   "u32",	"long", "ulong",
					    "slong", "q_s32", "q_u32", "q_s64", "q_u64"};
	static const enum vstats_dtype dtypes[] = {
	    VSTATS_S64,	 VSTATS_U64,   VSTATS_S32,   VSTATS_U32,   VSTATS_LONG, VSTATS_ULONG,
	    VSTATS_LONG, VSTATS_Q_S32, VSTATS_Q_U32, VSTATS_Q_S64, VSTATS_Q_U64};
	int k = 0, rc;

	*d = g->x == PROCESSING_X_RATE ? VSTATS_FLOAT : VSTATS_INT;
	if ((rc = pick(n, "dtype", names, 11, &k)) == -ENOENT)
		return q_precision(n, d);
	if (rc < 0)
		return rc;
	if (g->x == PROCESSING_X_RATE)
		return conf_errorf(conf_child(n, "dtype"),
				   "x: rate makes the VOI a double: no dtype");
	*d = dtypes[k];
	return q_precision(n, d);
}

/* One VOI's relative, dtype and stats, read from n (the template's
 * mapping, or an entry of its vois). */
static int load_voi(const struct conf_node *n, const struct processing_group_conf *g,
		    const char *tplname, struct processing_voi_conf *v)
{
	const struct conf_node *stats;
	const char *why;
	int rc;

	if (conf_get_bool(n, "relative", &v->relative) == -EINVAL ||
	    template_dtype(n, g, &v->dtype) < 0)
		return -EINVAL;
	if (!(stats = conf_child(n, "stats")) || stats->kind != BS_CONF_SEQ || stats->n == 0 ||
	    stats->n > VSTATS_STATS_MAX)
		return conf_errorf(stats ? stats : n, "stats: a list of 1 to %d statistics",
				   VSTATS_STATS_MAX);
	for (size_t i = 0; i < stats->n; i++)
		if ((rc = template_stat(stats->val[i], v, v->dtype)) < 0)
			return rc;
	/* The same checks the VOIs will meet, now, with a position. */
	struct vstats_voi probe;
	if ((rc = vstats_voi_init(&probe, v->dtype, v->relative, v->spec, v->nspec, &why)) < 0)
		return rc == -EINVAL ? conf_errorf(stats, "template '%s': %s", tplname, why) : rc;
	vstats_voi_free(&probe);
	if ((rc = vstats_voi_bytes(v->dtype, v->spec, v->nspec, &v->voi_bytes, &why)) < 0)
		return rc == -EINVAL ? conf_errorf(stats, "template '%s': %s", tplname, why) : rc;
	return 0;
}

/* The metric name a group's select names exactly (name{...} or
 * __name__="..."), or NULL. */
static const char *select_name(const struct selector *sel)
{
	for (size_t i = 0; i < sel->n; i++)
		if (strcmp(sel->m[i].label, "__name__") == 0 && sel->m[i].op == SEL_EQ)
			return sel->m[i].value;
	return NULL;
}

/* An entry of vois: {name, series (past the first), relative, dtype,
 * stats}; names unique in the template, series a metric name that is not
 * the source's own. */
static int load_listed_voi(const struct conf_node *it, struct processing_group_conf *g, size_t i)
{
	struct processing_template_conf *t = &g->tpl;
	struct processing_voi_conf *v = &t->voi[i];
	int rc;

	if (it->kind != BS_CONF_MAP)
		return conf_errorf(it, "a VOI is a mapping (name, series, relative, dtype, stats)");
	if ((rc = conf_get_str(it, "name", &v->name)) < 0)
		return rc == -ENOENT ? conf_errorf(it, "a VOI needs a name") : rc;
	if (!names_snake_valid(v->name, strlen(v->name), 48))
		return conf_errorf(conf_child(it, "name"),
				   "a VOI's name is 1 to 48 of a-z, 0-9, _");
	for (size_t j = 0; j < i; j++)
		if (strcmp(t->voi[j].name, v->name) == 0)
			return conf_errorf(conf_child(it, "name"), "VOI '%s' twice", v->name);
	rc = conf_get_str(it, "series", &v->series);
	if (rc == -EINVAL)
		return rc;
	if (i == 0 && rc == 0)
		return conf_errorf(conf_child(it, "series"),
				   "the first VOI takes the source's own series: no series");
	if (i > 0 && rc == -ENOENT)
		return conf_errorf(it, "a VOI past the first needs series: the metric whose "
				       "series with the source's labels feeds it");
	if (i > 0 && (!names_metric_valid(v->series, strlen(v->series)) ||
		      strcmp(v->series, t->anchor) == 0))
		return conf_errorf(conf_child(it, "series"),
				   "series: a metric name other than the source's own");
	if ((rc = load_voi(it, g, t->name, v)) < 0)
		return rc;
	return conf_check_unused(it);
}

/* vois: the template's VOIs, each with its own name, dtype and statistics;
 * more than one needs a select that names one metric, whose series are
 * the sources (one blob each) the others join by their labels. */
static int load_vois(const struct conf_node *vois, struct processing_group_conf *g)
{
	struct processing_template_conf *t = &g->tpl;
	int rc;

	if (vois->kind != BS_CONF_SEQ || vois->n == 0 || vois->n > PROCESSING_VOIS_MAX)
		return conf_errorf(vois, "vois: a list of 1 to %d VOIs", PROCESSING_VOIS_MAX);
	t->anchor = select_name(&g->select);
	if (vois->n > 1 && !t->anchor)
		return conf_errorf(vois, "a template of several VOIs needs a select that names "
					 "one metric (name{...}): its series are the blobs");
	t->listed = true;
	for (size_t i = 0; i < vois->n; i++) {
		if ((rc = load_listed_voi(vois->val[i], g, i)) < 0)
			return rc;
		t->nvoi = (uint32_t)i + 1;
		t->voi_bytes += t->voi[i].voi_bytes + (i ? PROCESSING_VOI_STATE_BYTES : 0);
	}
	return 0;
}

static int load_template(const struct conf_node *n, struct processing_group_conf *g)
{
	struct processing_template_conf *t = &g->tpl;
	const struct conf_node *vois;
	uint64_t pct = 100;
	int rc;

	if (n->kind != BS_CONF_MAP)
		return conf_errorf(n, "a template is a mapping (name, sample_pct, stats or vois)");
	t->name = g->name;
	if (conf_get_str(n, "name", &t->name) == -EINVAL ||
	    conf_get_u64(n, "sample_pct", 0, 100, &pct) == -EINVAL)
		return -EINVAL;
	t->sample_pct = (uint32_t)pct;
	if (!names_metric_valid(t->name, strlen(t->name)))
		return conf_errorf(n, "the template's name must be a metric name");
	if ((vois = conf_child(n, "vois"))) {
		const char *both = conf_child(n, "stats")      ? "stats"
				   : conf_child(n, "relative") ? "relative"
				   : conf_child(n, "dtype")    ? "dtype"
							       : NULL;
		if (both)
			return conf_errorf(conf_child(n, both),
					   "%s belongs to each VOI of vois, not the template",
					   both);
		rc = load_vois(vois, g);
	} else {
		/* The one-VOI form: a template of one VOI named after its group. */
		t->voi[0].name = g->name;
		t->nvoi = 1;
		rc = load_voi(n, g, t->name, &t->voi[0]);
		t->voi_bytes = t->voi[0].voi_bytes;
	}
	if (rc < 0)
		return rc;
	g->has_template = true;
	return conf_check_unused(n);
}

/* ---- groups and the section ---- */

/* stats_tpl_alloc's EEXIST: a name names one template, so the interface's
 * template list, specs and sample rates are unambiguous. */
static int template_unique(const struct processing_conf *pc, size_t i, const struct conf_node *n)
{
	const struct processing_group_conf *g = &pc->group[i];

	for (size_t j = 0; g->has_template && j < i; j++)
		if (pc->group[j].has_template && strcmp(pc->group[j].tpl.name, g->tpl.name) == 0)
			return conf_errorf(conf_child(n, "template"),
					   "EEXIST: template '%s' is group '%s''s already",
					   g->tpl.name, pc->group[j].name);
	return 0;
}

/* What owns a name, for a message: "statistic 'a' of group 'g'". */
static void owner_text(const struct processing_conf *pc, uint32_t owner, char *out, size_t size)
{
	const struct processing_group_conf *g = &pc->group[owner >> 8];
	uint32_t k = owner & 0xff;

	if (k == PROCESSING_NAMES_TEMPLATE)
		snprintf(out, size, "template '%s' of group '%s'", g->tpl.name, g->name);
	else
		snprintf(out, size, "statistic '%s' of group '%s'", g->stat[k].name, g->name);
}

/* Every name a family of group i claims, as configured, must be its
 * own: two groups' statistics of one name, a statistic a_max beside a
 * range a, a template's t_min beside a statistic t_min, a value a_total
 * (a counter: a, a_total, a_created) beside an array a all clash, and a
 * scrape would serve only one of them. Refused at the later one; so is
 * a name the exporter or Prometheus keeps (processing_names_reserved). */
static int families_unique(const struct processing_conf *pc, uint32_t i, const struct conf_node *n,
			   struct processing_names *names)
{
	const struct processing_group_conf *g = &pc->group[i];
	const struct conf_node *stats = conf_child(n, "statistics");
	char mine[200], theirs[200];
	const char *clash = NULL;
	uint32_t other = 0;
	int rc = 0;
	uint32_t k;

	for (k = 0; rc == 0 && k < g->nstats; k++)
		rc = processing_names_stat(names, g->stat[k].name,
					   PROCESSING_SHAPE_OF(&g->stat[k].def),
					   PROCESSING_NAMES_OWNER(i, k), &clash, &other);
	if (rc == 0 && g->has_template)
		rc = processing_conf_template_names(
		    names, &g->tpl, PROCESSING_NAMES_OWNER(i, PROCESSING_NAMES_TEMPLATE), &clash,
		    &other);
	else if (rc < 0)
		k--;
	if (rc != -EEXIST && rc != -EPERM)
		return rc;
	owner_text(pc, PROCESSING_NAMES_OWNER(i, k < g->nstats ? k : PROCESSING_NAMES_TEMPLATE),
		   mine, sizeof(mine));
	const struct conf_node *at = k < g->nstats ? stats->val[k] : conf_child(n, "template");
	if (rc == -EPERM)
		return conf_errorf(at,
				   "EINVAL: %s would serve '%s', a name the exporter serves itself "
				   "(process_*, binstat_*) or Prometheus adds to a scrape (up, "
				   "scrape_*): rename it",
				   mine, clash);
	owner_text(pc, other, theirs, sizeof(theirs));
	return conf_errorf(at,
			   "EEXIST: %s serves '%s', as %s does: a family name is one family's "
			   "across the processing (rename one)",
			   mine, clash, theirs);
}

static int load_group(const struct conf_node *n, struct processing_group_conf *g)
{
	static const char *const xs[] = {"value", "delta", "rate"};
	const struct conf_node *stats, *tpl;
	char err[256];
	int k = PROCESSING_X_VALUE, rc;

	if (n->kind != BS_CONF_MAP)
		return conf_errorf(n,
				   "a group is a mapping (name, select, x, statistics, template)");
	g->x_scale = 1;
	if ((rc = conf_get_str(n, "name", &g->name)) < 0)
		return rc == -ENOENT ? conf_errorf(n, "a group needs a name") : rc;
	if (!names_snake_valid(g->name, strlen(g->name), 48))
		return conf_errorf(conf_child(n, "name"),
				   "a group's name is 1 to 48 of a-z, 0-9, _");
	if ((rc = conf_get_str(n, "select", &g->select_text)) < 0)
		return rc == -ENOENT ? conf_errorf(n, "a group needs select") : rc;
	if (selector_parse(&g->select, g->select_text, err, sizeof(err)) < 0)
		return conf_errorf(conf_child(n, "select"), "select: %s", err);
	if (pick(n, "x", xs, 3, &k) == -EINVAL ||
	    conf_get_f64(n, "x_scale", 1e-18, 1e18, &g->x_scale) == -EINVAL)
		return -EINVAL;
	g->x = (enum processing_x)k;
	if ((stats = conf_child(n, "statistics"))) {
		if (stats->kind != BS_CONF_SEQ || stats->n > PROCESSING_STATS_MAX)
			return conf_errorf(stats, "statistics: a list of at most %d",
					   PROCESSING_STATS_MAX);
		for (size_t i = 0; i < stats->n; i++) {
			if ((rc = load_stat(stats->val[i], &g->stat[i])) < 0)
				return rc;
			for (size_t j = 0; j < i; j++)
				if (strcmp(g->stat[j].name, g->stat[i].name) == 0)
					return conf_errorf(stats->val[i], "statistic '%s' twice",
							   g->stat[i].name);
			g->nstats = (uint32_t)i + 1;
		}
	}
	if ((tpl = conf_child(n, "template")) && (rc = load_template(tpl, g)) < 0)
		return rc;
	if (g->nstats == 0 && !g->has_template)
		return conf_errorf(n, "group '%s' has neither statistics nor a template", g->name);
	return conf_check_unused(n);
}

void processing_conf_voi_prefix(const struct processing_template_conf *t, uint32_t v, char *out,
				size_t size)
{
	if (t->listed)
		snprintf(out, size, "%s_%s", t->name, t->voi[v].name);
	else
		snprintf(out, size, "%s", t->name);
}

int processing_conf_template_names(struct processing_names *names,
				   const struct processing_template_conf *t, uint32_t owner,
				   const char **clash, uint32_t *other)
{
	char prefix[PROCESSING_VOI_PREFIX_MAX];
	int rc = 0;

	for (uint32_t v = 0; rc == 0 && v < t->nvoi; v++) {
		processing_conf_voi_prefix(t, v, prefix, sizeof(prefix));
		rc = processing_names_template(names, prefix, t->voi[v].spec, t->voi[v].nspec,
					       owner, clash, other);
	}
	return rc;
}

uint64_t processing_conf_stats_bytes(const struct processing_group_conf *g, bool sampled)
{
	uint64_t bytes = (uint64_t)g->nstats * sizeof(struct statproc_stat);

	for (uint32_t k = 0; k < g->nstats; k++)
		bytes += statproc_data_bytes(&g->stat[k].def);
	return bytes + (g->has_template && sampled ? g->tpl.voi_bytes : 0);
}

/* Sources are not known at load, but the first of each group must fit
 * max_memory_bytes, or the processing could keep nothing: refused at
 * the group that passes it. */
static int memory_fits(const struct processing_conf *pc, const struct conf_node *groups)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < pc->ngroups; i++) {
		total += processing_conf_stats_bytes(&pc->group[i], true);
		if (total > pc->max_memory_bytes)
			return conf_errorf(groups->val[i],
					   "one source of each group up to '%s' holds %" PRIu64
					   " bytes of statistics, past max_memory_bytes (%" PRIu64
					   "): raise it, or lower entries_max, array intervals, "
					   "buckets or compression",
					   pc->group[i].name, total, pc->max_memory_bytes);
	}
	return 0;
}

static int load_allow(const struct conf_node *list, struct processing_conf *pc)
{
	if (list->kind != BS_CONF_SEQ || list->n > PROCESSING_ALLOW_MAX)
		return conf_errorf(list, "write_allow: a list of at most %d addresses",
				   PROCESSING_ALLOW_MAX);
	for (size_t i = 0; i < list->n; i++) {
		const struct conf_node *it = list->val[i];
		struct processing_allow *a = &pc->allow[i];
		char text[64], *slash;
		unsigned char v4[4];
		long prefix = -1;

		if (it->kind != BS_CONF_SCALAR || strlen(it->scalar) >= sizeof(text))
			return conf_errorf(it, "an address or address/prefix expected");
		memcpy(text, it->scalar, strlen(it->scalar) + 1);
		if ((slash = strchr(text, '/'))) {
			char *end;
			*slash = '\0';
			prefix = strtol(slash + 1, &end, 10);
			/* Digits alone: strtol would take "-8", "+8" and " 8". */
			if (*end || end == slash + 1 || slash[1] < '0' || slash[1] > '9')
				prefix = 999;
		}
		if (inet_pton(AF_INET, text, v4) == 1) {
			memset(a->addr, 0, 10);
			a->addr[10] = a->addr[11] = 0xff;
			memcpy(a->addr + 12, v4, 4);
			a->prefix = prefix < 0 ? 128 : (unsigned)prefix + 96;
			if (prefix > 32)
				return conf_errorf(it, "an IPv4 prefix is 0 to 32");
		} else if (inet_pton(AF_INET6, text, a->addr) == 1) {
			a->prefix = prefix < 0 ? 128 : (unsigned)prefix;
			if (prefix > 128)
				return conf_errorf(it, "an IPv6 prefix is 0 to 128");
		} else {
			return conf_errorf(it, "'%s' is not an address", it->scalar);
		}
		pc->nallow++;
	}
	return 0;
}

static int load_users(const struct conf_node *list, struct processing_conf *pc)
{
	if (list->kind != BS_CONF_SEQ || list->n > PROCESSING_ALLOW_MAX)
		return conf_errorf(list, "write_users: a list of at most %d user names",
				   PROCESSING_ALLOW_MAX);
	for (size_t i = 0; i < list->n; i++) {
		if (list->val[i]->kind != BS_CONF_SCALAR || !list->val[i]->scalar[0])
			return conf_errorf(list->val[i], "a user name expected");
		pc->users[pc->nusers++] = list->val[i]->scalar;
	}
	return 0;
}

int processing_conf_load(const struct conf_node *n, struct processing_conf **out)
{
	struct processing_conf *pc = calloc(1, sizeof(*pc));
	const struct conf_node *groups, *allow, *users;
	struct processing_names names;
	int rc = -EINVAL;

	if (!pc)
		return -ENOMEM;
	processing_names_init(&names);
	names.reserve = true;
	pc->interval_s = 0.25;
	pc->max_sources = 10000;
	pc->max_memory_bytes = PROCESSING_MEMORY_DEFAULT;
	pc->source_ttl_s = 300;
	if (n->kind != BS_CONF_MAP) {
		conf_errorf(n, "'processing' must be a mapping");
		goto err_free;
	}
	if (conf_get_duration(n, "sample_interval", 0.05, 60, &pc->interval_s) == -EINVAL ||
	    conf_get_u64(n, "max_sources", 1, 1000000, &pc->max_sources) == -EINVAL ||
	    conf_get_bytes(n, "max_memory_bytes", 64 << 10, 1ull << 40, &pc->max_memory_bytes) ==
		-EINVAL ||
	    conf_get_duration(n, "source_ttl", 1, 86400, &pc->source_ttl_s) == -EINVAL ||
	    conf_get_bool(n, "write", &pc->write) == -EINVAL)
		goto err_free;
	if (((allow = conf_child(n, "write_allow")) && load_allow(allow, pc) < 0) ||
	    ((users = conf_child(n, "write_users")) && load_users(users, pc) < 0))
		goto err_free;
	if (pc->write && pc->nallow == 0 && pc->nusers == 0) {
		conf_errorf(n, "write: true needs write_allow or write_users (the clients that "
			       "may change definitions)");
		goto err_free;
	}
	if (!(groups = conf_child(n, "groups")) || groups->kind != BS_CONF_SEQ || groups->n == 0 ||
	    groups->n > PROCESSING_GROUPS_MAX) {
		conf_errorf(groups ? groups : n, "groups: a list of 1 to %d groups",
			    PROCESSING_GROUPS_MAX);
		goto err_free;
	}
	for (size_t i = 0; i < groups->n; i++) {
		pc->ngroups = (uint32_t)i + 1; /* so a failure frees what this one made */
		if ((rc = load_group(groups->val[i], &pc->group[i])) < 0)
			goto err_free;
		for (size_t j = 0; j < i; j++)
			if (strcmp(pc->group[j].name, pc->group[i].name) == 0) {
				rc = conf_errorf(groups->val[i], "group '%s' twice",
						 pc->group[i].name);
				goto err_free;
			}
		if ((rc = template_unique(pc, i, groups->val[i])) < 0 ||
		    (rc = families_unique(pc, (uint32_t)i, groups->val[i], &names)) < 0)
			goto err_free;
	}
	processing_names_free(&names);
	if ((rc = memory_fits(pc, groups)) < 0 || (rc = conf_check_unused(n)) < 0)
		goto err_free;
	*out = pc;
	return 0;
err_free:
	processing_names_free(&names);
	processing_conf_free(pc);
	return rc;
}

void processing_conf_free(struct processing_conf *pc)
{
	if (!pc)
		return;
	for (uint32_t i = 0; i < pc->ngroups; i++) {
		selector_free(&pc->group[i].select);
		for (uint32_t v = 0; v < PROCESSING_VOIS_MAX; v++)
			for (uint32_t k = 0; k < VSTATS_STATS_MAX; k++)
				free(pc->group[i].tpl.voi[v].usr[k]);
	}
	free(pc);
}

static bool user_allowed(const struct processing_conf *pc, const char *user)
{
	for (uint32_t i = 0; user && i < pc->nusers; i++)
		if (strcmp(pc->users[i], user) == 0)
			return true;
	return pc->nusers == 0;
}

bool processing_conf_may_write(const struct processing_conf *pc, const unsigned char addr[16],
			       const char *user)
{
	if (!pc->write || !user_allowed(pc, user))
		return false;
	if (pc->nallow == 0)
		return true;
	for (uint32_t i = 0; addr && i < pc->nallow; i++) {
		const struct processing_allow *a = &pc->allow[i];
		unsigned full = a->prefix / 8, rest = a->prefix % 8;
		if (memcmp(addr, a->addr, full) != 0)
			continue;
		if (rest && (addr[full] ^ a->addr[full]) >> (8 - rest))
			continue;
		return true;
	}
	return false;
}
