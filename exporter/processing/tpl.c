/* stats(3)'s operations as verbs of the /statistics/ interface (FreeBSD's
 * stats(3)): the template list with slot ids and hashes (kern.stats.templates,
 * stats_tpl_fetch_allocid, stats_tpl_id2name), and a source's blob as
 * stats_blob_tostr's JSON, written by a stats_blob_visit. Each template
 * has one VOI, named after its group. Callers hold the processing's lock. */
#include "tpl.h"
#include "reply.h"
#include "srctab.h"
#include "stage_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* stats_tpl_update_hash over every VOI: the first's hash (a template of
 * one VOI hashes as before), each next one's folded in by hash32's step,
 * so a change to any VOI, or to their order, changes it. */
static uint32_t tpl_hash(const struct processing_template_conf *t)
{
	uint32_t hash = 0;

	for (uint32_t v = 0; v < t->nvoi; v++) {
		const struct processing_voi_conf *c = &t->voi[v];
		uint32_t h =
		    vstats_tpl_hash(t->name, c->name, c->dtype, c->relative, c->spec, c->nspec);
		hash = v ? hash * 33 + h : h;
	}
	return hash;
}

void tpl_init(struct processing *p)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		const struct processing_group_conf *c = &p->conf->group[g];
		p->sample_pct[g] = c->tpl.sample_pct;
		if (c->has_template)
			p->tpl[p->ntpl++] = (struct tpl_slot){g, tpl_hash(&c->tpl)};
	}
}

const char *tpl_name(const struct processing *p, uint32_t id)
{
	return p->conf->group[p->tpl[id].group].tpl.name;
}

/* The template list's line: the slot id and stats(3)'s normative spec. */
static void tpl_line(const struct processing *p, uint32_t id, struct stage_reply *r)
{
	textbuf_printf(&r->text, "%" PRIu32 " \"%s\":%" PRIu32 "\n", id, tpl_name(p, id),
		       p->tpl[id].hash);
}

/* stats_tpl_fetch_allocid: the last template matching the name (and the
 * hash, when given), or the hash alone; -ESRCH for none. */
int tpl_find(const struct processing *p, const struct vstats_tplspec *spec)
{
	for (uint32_t i = p->ntpl; i-- > 0;) {
		bool hash_ok = !spec->hash || spec->hash == p->tpl[i].hash;
		if (spec->name[0] ? strcmp(spec->name, tpl_name(p, i)) == 0 && hash_ok
				  : spec->hash == p->tpl[i].hash)
			return (int)i;
	}
	return -ESRCH;
}

/* A slot id as written strictly: "0", or digits without a leading 0
 * (so "00" is no id, and no spec either: names never start with one). */
static bool all_digits(const char *s)
{
	if (!*s || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* GET templates (every template) and templates/<id or spec>: a number is
 * a slot id (stats_tpl_id2name; names never start with a digit), anything
 * else a spec (stats_tpl_fetch_allocid). */
static void tpl_schema(struct processing *p, uint32_t id, struct stage_reply *r);

/* The list as kern.stats.templates has it: "name":hash, comma separated. */
static void tpl_sysctl(const struct processing *p, struct stage_reply *r)
{
	for (uint32_t i = 0; i < p->ntpl; i++)
		textbuf_printf(&r->text, "%s\"%s\":%" PRIu32, i ? "," : "", tpl_name(p, i),
			       p->tpl[i].hash);
	textbuf_printf(&r->text, "\n");
}

/* Template id as the format asks: its line, or its schema. */
static void tpl_one(struct processing *p, uint32_t id, enum tpl_format f, struct stage_reply *r)
{
	if (f == TPL_JSON)
		tpl_schema(p, id, r);
	else
		tpl_line(p, id, r);
}

void tpl_get(struct processing *p, const char *what, enum tpl_format f, struct stage_reply *r)
{
	struct vstats_tplspec spec;
	const char *why;
	int id;

	if (!*what) {
		if (f == TPL_SYSCTL)
			tpl_sysctl(p, r);
		else if (f == TPL_JSON)
			reply_fail(r, 400, -EINVAL,
				   "a schema is one template's: templates/<id or spec>");
		else
			for (uint32_t i = 0; i < p->ntpl; i++)
				tpl_line(p, i, r);
		return;
	}
	if (f == TPL_SYSCTL) {
		reply_fail(r, 400, -EINVAL, "format=sysctl is the whole list's");
		return;
	}
	if (*what >= '0' && *what <= '9' && !all_digits(what)) {
		reply_fail(r, 400, -EINVAL, "a slot id is a decimal number without leading zeros");
		return;
	}
	if (all_digits(what)) {
		unsigned long v = strlen(what) < 10 ? strtoul(what, NULL, 10) : ULONG_MAX;
		if (v >= p->ntpl)
			reply_fail(r, 404, -ENOENT, "no template has that id");
		else
			tpl_one(p, (uint32_t)v, f, r);
		return;
	}
	if (vstats_tplspec_parse(what, strlen(what), &spec, &why) < 0) {
		reply_fail(r, 400, -EINVAL, why);
		return;
	}
	if ((id = tpl_find(p, &spec)) < 0) {
		reply_fail(r, 404, id, "no template matches");
		return;
	}
	tpl_one(p, (uint32_t)id, f, r);
}

/* ---- stats_blob_tostr(SB_STRFMT_JSON, SB_TOSTR_META) ---- */

struct json {
	struct textbuf *t;
	const struct processing_template_conf *tpl;
	bool one_hist[PROCESSING_VOIS_MAX]; /* a VOI's only histogram is "HIST", as in stats(3) */
};

/* A double as a JSON number; JSON has none for NaN and the infinities,
 * which are written as Prometheus' HTTP API writes every value, the
 * strings "NaN", "+Inf" and "-Inf", so the text stays JSON and the
 * figure stays what it is (a largest finite value would pass for one). */
static void json_double(struct textbuf *t, double f)
{
	if (isnan(f))
		textbuf_printf(t, "\"NaN\"");
	else if (isinf(f))
		textbuf_printf(t, f > 0 ? "\"+Inf\"" : "\"-Inf\"");
	else
		textbuf_printf(t, "%.17g", f);
}

/* A value as stats_voistatdata_tostr prints its dtype. */
static void json_value(struct textbuf *t, struct vstats_value v)
{
	char buf[VSTATS_VALUE_STR_MAX];

	if (v.dtype == VSTATS_FLOAT) {
		json_double(t, v.f);
		return;
	}
	vstats_value_tostr(v, buf, sizeof(buf));
	textbuf_printf(t, "%s", buf);
}

static void json_hist(struct textbuf *t, const struct vstats_hist *h)
{
	textbuf_printf(t, "\"nbkts\":%" PRIu32 ",\"oob\":%" PRIu64 ",\"bkts\":[", h->n, h->oob);
	for (uint32_t i = 0; i < h->n; i++) {
		textbuf_printf(t, "%s{\"lb\":", i ? "," : "");
		json_value(t, h->bkt[i].lb);
		textbuf_printf(t, ",\"ub\":");
		json_value(t, h->bkt[i].ub);
		textbuf_printf(t, ",\"cnt\":%" PRIu64 "}", h->count[i]);
	}
	textbuf_printf(t, "]");
}

static void json_tdigest(struct textbuf *t, struct tdigest *td)
{
	size_t n = tdigest_centroids(td);
	double mu, cnt;

	textbuf_printf(t,
		       "\"smplcnt\":%" PRIu64 ",\"compcnt\":%" PRIu64
		       ",\"maxctds\":%zu,\"nctds\":%zu,\"ctds\":[",
		       (uint64_t)tdigest_count(td), tdigest_merges(td), tdigest_centroids_max(td),
		       n);
	for (size_t i = 0; i < n; i++) {
		tdigest_centroid(td, i, &mu, &cnt);
		textbuf_printf(t, "%s{\"mu\":", i ? "," : "");
		json_double(t, mu);
		textbuf_printf(t, ",\"cnt\":%" PRIu64 "}", (uint64_t)cnt);
	}
	textbuf_printf(t, "]");
}

static bool is_hist(enum vstats_stype st)
{
	return st >= VSTATS_CRHIST && st <= VSTATS_DVHIST;
}

/* vs_stype2name; several histograms on one VOI (more than stats(3)
 * allows) are told apart by their vsd_dtype2name. */
static const char *stat_key(const struct json *j, int16_t voi, const struct vstats_stat *st)
{
	static const char *const names[] = {"SUM",	"MAX",	    "MIN",  "CRHIST64",
					    "DRHIST64", "DVHIST64", "TDGST"};
	static const char *const names32[] = {"CRHIST32", "DRHIST32", "DVHIST32"};

	if (is_hist(st->stype) && j->one_hist[voi])
		return "HIST";
	if (is_hist(st->stype) && st->hist.counts32)
		return names32[st->stype - VSTATS_CRHIST];
	return names[st->stype];
}

static void json_stat_data(const struct vstats_stat *st, struct textbuf *t)
{
	switch (st->stype) {
	case VSTATS_SUM:
	case VSTATS_MAX:
	case VSTATS_MIN:
		textbuf_printf(t, "\"val\":");
		json_value(t, st->v);
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		json_hist(t, &st->hist);
		break;
	case VSTATS_TDGST:
		json_tdigest(t, st->td);
		break;
	}
}

/* stats_v1_itercb_tostr_json, without the object dump: a statistic that
 * took no value since its reset is null. */
static int json_visit(const struct vstats_visit *v, void *ctx)
{
	struct json *j = ctx;
	struct textbuf *t = j->t;

	if (v->flags & VSTATS_IT_FIRST_CB)
		textbuf_printf(t, "{\"tplname\":\"%s\",\"tplhash\":%" PRIu32 ",\"vois\":{",
			       j->tpl->name, v->tplhash);
	if (v->flags & VSTATS_IT_FIRST_VOISTAT)
		textbuf_printf(t, "\"%s\":{\"stats\":{", j->tpl->voi[v->voi_id].name);
	textbuf_printf(t, "\"%s\":", stat_key(j, v->voi_id, v->stat));
	if (v->valid) {
		textbuf_printf(t, "{\"errs\":%" PRIu64 ",", v->stat->errs);
		json_stat_data(v->stat, t);
		textbuf_printf(t, "}");
	} else {
		textbuf_printf(t, "null");
	}
	if (v->flags & VSTATS_IT_LAST_VOISTAT)
		textbuf_printf(t, "}}");
	textbuf_printf(t, v->flags & VSTATS_IT_LAST_CB ? "}}\n" : ",");
	return 0;
}

/* vois[0..n) of a blob of template t as stats_blob_tostr writes them
 * with SB_TOSTR_META. */
static void json_blob(struct textbuf *t, const struct processing_template_conf *tpl,
		      const struct vstats_voi *vois, uint32_t n, uint32_t hash)
{
	struct json j = {t, tpl, {false}};

	for (uint32_t v = 0; v < n; v++) {
		uint32_t hists = 0;
		for (uint32_t k = 0; k < vois[v].nstats; k++)
			hists += is_hist(vois[v].stat[k].stype);
		j.one_hist[v] = hists <= 1;
	}
	vstats_blob_visit(vois, n, hash, json_visit, &j);
}

/* stats_tpl_fetch: template id's schema, as FreeBSD keeps a template: a
 * blob made from it and not yet updated, written as a source's is. */
static void tpl_schema(struct processing *p, uint32_t id, struct stage_reply *r)
{
	const struct processing_template_conf *tpl = &p->conf->group[p->tpl[id].group].tpl;
	struct vstats_voi vois[PROCESSING_VOIS_MAX];
	struct source_more *more;
	uint32_t nmore;

	if (srctab_vois_make(tpl, &vois[0], &more, &nmore) < 0) {
		r->text.failed = true;
		return;
	}
	for (uint32_t v = 0; v < nmore; v++)
		vois[v + 1] = more[v].voi; /* shallow copies, read only */
	json_blob(&r->text, tpl, vois, nmore + 1, p->tpl[id].hash);
	srctab_vois_free(&vois[0], more, nmore);
}

/* GET data?format=json (and POST snapshot?format=json): the source's
 * blob as stats_blob_tostr writes it with SB_TOSTR_META. */
void tpl_json(struct processing *p, struct source *s, struct stage_reply *r)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	struct vstats_voi vois[PROCESSING_VOIS_MAX]; /* shallow copies, read only */
	uint32_t hash = 0;

	if (!g->has_template) {
		reply_fail(r, 404, -EINVAL, "this interface has no template: no blob");
		return;
	}
	if (!s->sampled) {
		reply_fail(r, 404, -EINVAL, "this source was not sampled (sample_pct)");
		return;
	}
	for (uint32_t i = 0; i < p->ntpl; i++)
		if (p->tpl[i].group == s->group)
			hash = p->tpl[i].hash;
	for (uint32_t v = 0; v <= s->nmore; v++)
		vois[v] = *source_voi(s, v);
	json_blob(&r->text, &g->tpl, vois, s->nmore + 1, hash);
}
