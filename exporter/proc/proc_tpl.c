/* stats(3)'s operations as verbs of the /statistics/ interface (FreeBSD's
 * stats(3)): the template list with slot ids and hashes (kern.stats.templates,
 * stats_tpl_fetch_allocid, stats_tpl_id2name), the sample rates read and
 * changed at run time (stats_tpl_sample_rates), and a source's blob as
 * stats_blob_tostr's JSON, written by a stats_blob_visit. Each template
 * has one VOI, named after its group. Callers hold the processing's lock. */
#include "proc.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void proc_tpl_init(struct proc *p)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		const struct proc_group_conf *c = &p->conf->group[g];
		p->sample_pct[g] = c->tpl.sample_pct;
		if (c->has_template)
			p->tpl[p->ntpl++] = (struct proc_tpl){
			    g, vstats_tpl_hash(c->tpl.name, c->name, c->tpl.dtype, c->tpl.relative,
					       c->tpl.spec, c->tpl.nspec)};
	}
}

const char *proc_errname(int rc)
{
	switch (-rc) {
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case EFBIG:
		return "EFBIG";
	case EEXIST:
		return "EEXIST";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOMEM:
		return "ENOMEM";
	}
	return "EIO";
}

void proc_fail(struct proc_reply *r, int status, int rc, const char *why)
{
	r->status = status;
	statproc_text_printf(&r->text, "%s: %s\n", proc_errname(rc), why);
}

static const char *tpl_name(const struct proc *p, uint32_t id)
{
	return p->conf->group[p->tpl[id].group].tpl.name;
}

/* The template list's line: the slot id and stats(3)'s normative spec. */
static void tpl_line(const struct proc *p, uint32_t id, struct proc_reply *r)
{
	statproc_text_printf(&r->text, "%" PRIu32 " \"%s\":%" PRIu32 "\n", id, tpl_name(p, id),
			     p->tpl[id].hash);
}

/* stats_tpl_fetch_allocid: the last template matching the name (and the
 * hash, when given), or the hash alone; -ESRCH for none. */
static int fetch_allocid(const struct proc *p, const struct vstats_tplspec *spec)
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
void proc_tpl_get(struct proc *p, const char *what, struct proc_reply *r)
{
	struct vstats_tplspec spec;
	const char *why;
	int id;

	if (!*what) {
		for (uint32_t i = 0; i < p->ntpl; i++)
			tpl_line(p, i, r);
		return;
	}
	if (*what >= '0' && *what <= '9' && !all_digits(what)) {
		proc_fail(r, 400, -EINVAL, "a slot id is a decimal number without leading zeros");
		return;
	}
	if (all_digits(what)) {
		unsigned long v = strlen(what) < 10 ? strtoul(what, NULL, 10) : ULONG_MAX;
		if (v >= p->ntpl)
			proc_fail(r, 404, -ENOENT, "no template has that id");
		else
			tpl_line(p, (uint32_t)v, r);
		return;
	}
	if (vstats_tplspec_parse(what, strlen(what), &spec, &why) < 0) {
		proc_fail(r, 400, -EINVAL, why);
		return;
	}
	if ((id = fetch_allocid(p, &spec)) < 0) {
		proc_fail(r, 404, id, "no template matches");
		return;
	}
	tpl_line(p, (uint32_t)id, r);
}

/* GET sample_rates: stats_tpl_sample_rates' "name":hash=pct list. */
void proc_rates_get(struct proc *p, struct proc_reply *r)
{
	for (uint32_t i = 0; i < p->ntpl; i++)
		statproc_text_printf(&r->text, "%s\"%s\":%" PRIu32 "=%" PRIu32, i ? "," : "",
				     tpl_name(p, i), p->tpl[i].hash,
				     p->sample_pct[p->tpl[i].group]);
	statproc_text_printf(&r->text, "\n");
}

/* A source's VOI as a new rate would leave it: made now for a source the
 * dice newly choose, so that nothing can fail once the change begins. */
struct resample {
	struct proc_source *s;
	bool sampled;
	struct vstats_voi voi; /* newly chosen: its new VOI */
};

static bool chosen(uint32_t pct, const struct proc_source *s)
{
	return vstats_rollthedice(&pct, 1, s->key, strlen(s->key)) == 0;
}

/* Every source whose choice the rates change, with the VOIs it will
 * need: 0; -EFBIG, before any VOI is made, when the VOIs gained would pass
 * max_memory_bytes (*more: the bytes they would add); -ENOMEM; nothing
 * kept on failure. */
static int plan_resample(struct proc *p, const uint32_t *pct, struct resample *plan, size_t *n,
			 uint64_t *more)
{
	uint64_t gained = 0, lost = 0;
	const char *why;
	size_t k;

	*n = 0;
	for (size_t i = 0; i < p->srcs.n; i++) {
		struct proc_source *s = p->src[i];
		const struct proc_group_conf *g = &p->conf->group[s->group];
		bool now = g->has_template && chosen(pct[s->group], s);
		if (now == s->sampled)
			continue;
		*(now ? &gained : &lost) += g->tpl.voi_bytes;
		plan[(*n)++] = (struct resample){s, now, {0}};
	}
	*more = gained > lost ? gained - lost : 0;
	if (!proc_mem_fits(p, *more))
		return -EFBIG;
	for (k = 0; k < *n; k++) {
		const struct proc_group_conf *g = &p->conf->group[plan[k].s->group];
		if (plan[k].sampled && vstats_voi_init(&plan[k].voi, g->tpl.dtype, g->tpl.relative,
						       g->tpl.spec, g->tpl.nspec, &why) < 0)
			goto err_free_vois;
	}
	return 0;
err_free_vois:
	while (k-- > 0)
		if (plan[k].sampled)
			vstats_voi_free(&plan[k].voi);
	return -ENOMEM;
}

/* The rates' templates, each found as stats_tpl_fetch_allocid finds it.
 * A template named by two pairs (in any of its spec forms) is -EINVAL, as
 * a definition's attribute named twice is: which one should win is the
 * writer's mistake, not ours to guess. -ESRCH naming none. */
static int resolve_rates(struct proc *p, const struct vstats_rate *rates, size_t n, uint32_t *pct,
			 struct proc_reply *r)
{
	size_t named[PROC_GROUPS_MAX] = {0}; /* by group: the pair naming it, from 1 */
	int id, rc = 0;

	memcpy(pct, p->sample_pct, sizeof(p->sample_pct));
	for (size_t i = 0; i < n; i++) {
		if ((id = fetch_allocid(p, &rates[i].spec)) < 0) {
			statproc_text_printf(&r->text, "ESRCH: pair %zu: no template matches\n",
					     i + 1);
			rc = id;
			continue;
		}
		uint32_t g = p->tpl[id].group;
		if (named[g]) {
			statproc_text_printf(
			    &r->text, "EINVAL: pair %zu: template \"%s\" named twice (pair %zu)\n",
			    i + 1, p->conf->group[g].tpl.name, named[g]);
			rc = -EINVAL;
			continue;
		}
		named[g] = i + 1;
		pct[g] = rates[i].pct;
	}
	return rc;
}

/* POST sample_rates: every template named gets its new rate, and every
 * source of its group is chosen again by the same dice (a raised rate
 * keeps the sources it had, a lowered one drops VOIs); all or nothing. */
void proc_rates_post(struct proc *p, const char *body, struct proc_reply *r)
{
	struct vstats_rate rates[PROC_GROUPS_MAX];
	uint32_t pct[PROC_GROUPS_MAX];
	struct resample *plan;
	const char *why;
	uint64_t more;
	size_t n, np;
	int rc;

	if ((rc = vstats_rates_parse(body, rates, PROC_GROUPS_MAX, &n, &why)) < 0) {
		proc_fail(r, 400, rc, why);
		return;
	}
	if (resolve_rates(p, rates, n, pct, r) < 0) {
		r->status = 400;
		return;
	}
	plan = calloc(p->srcs.n ? p->srcs.n : 1, sizeof(*plan));
	if ((rc = plan ? plan_resample(p, pct, plan, &np, &more) : -ENOMEM) < 0) {
		free(plan);
		if (rc == -EFBIG) {
			r->status = 400;
			statproc_text_printf(&r->text,
					     "EFBIG: the VOIs these rates give would add %" PRIu64
					     " bytes to the processing's %" PRIu64
					     ", past max_memory_bytes (%" PRIu64
					     "): nothing changed\n",
					     more, p->mem_bytes, p->conf->max_memory_bytes);
		} else {
			proc_fail(r, 500, -ENOMEM, "out of memory: nothing changed");
		}
		return;
	}
	for (size_t i = 0; i < np; i++) {
		struct proc_source *s = plan[i].s;
		size_t voi = p->conf->group[s->group].tpl.voi_bytes;
		if (s->sampled)
			vstats_voi_free(&s->voi);
		s->voi = plan[i].voi;
		s->sampled = plan[i].sampled;
		s->bytes = s->sampled ? s->bytes + voi : s->bytes - voi;
		p->mem_bytes = s->sampled ? p->mem_bytes + voi : p->mem_bytes - voi;
	}
	free(plan);
	memcpy(p->sample_pct, pct, sizeof(pct));
	statproc_text_printf(&r->text, "ok\n");
}

/* ---- stats_blob_tostr(SB_STRFMT_JSON, SB_TOSTR_META) ---- */

struct json {
	struct statproc_text *t;
	const char *tplname, *voiname;
	bool one_hist; /* the VOI's only histogram is "HIST", as in stats(3) */
};

/* A value as stats_voistatdata_tostr prints its dtype; a double's
 * infinities (no JSON number) as the largest finite, as stats(3)'s
 * numeric limits stand for the ends. */
static void json_value(struct statproc_text *t, struct vstats_value v)
{
	if (v.dtype == VSTATS_INT)
		statproc_text_printf(t, "%" PRId64, v.i);
	else if (v.dtype == VSTATS_UINT)
		statproc_text_printf(t, "%" PRIu64, v.u);
	else
		statproc_text_printf(t, "%.17g", isinf(v.f) ? copysign(DBL_MAX, v.f) : v.f);
}

static void json_hist(struct statproc_text *t, const struct vstats_hist *h)
{
	statproc_text_printf(t, "\"nbkts\":%" PRIu32 ",\"oob\":%" PRIu64 ",\"bkts\":[", h->n,
			     h->oob);
	for (uint32_t i = 0; i < h->n; i++) {
		statproc_text_printf(t, "%s{\"lb\":", i ? "," : "");
		json_value(t, h->bkt[i].lb);
		statproc_text_printf(t, ",\"ub\":");
		json_value(t, h->bkt[i].ub);
		statproc_text_printf(t, ",\"cnt\":%" PRIu64 "}", h->count[i]);
	}
	statproc_text_printf(t, "]");
}

static void json_tdigest(struct statproc_text *t, struct tdigest *td)
{
	size_t n = tdigest_centroids(td);
	double mu, cnt;

	statproc_text_printf(t,
			     "\"smplcnt\":%" PRIu64 ",\"compcnt\":%" PRIu64
			     ",\"maxctds\":%zu,\"nctds\":%zu,\"ctds\":[",
			     (uint64_t)tdigest_count(td), tdigest_merges(td),
			     tdigest_centroids_max(td), n);
	for (size_t i = 0; i < n; i++) {
		tdigest_centroid(td, i, &mu, &cnt);
		statproc_text_printf(t, "%s{\"mu\":%.17g,\"cnt\":%" PRIu64 "}", i ? "," : "", mu,
				     (uint64_t)cnt);
	}
	statproc_text_printf(t, "]");
}

static bool is_hist(enum vstats_stype st)
{
	return st >= VSTATS_CRHIST && st <= VSTATS_DVHIST;
}

/* vs_stype2name; several histograms on one VOI (more than stats(3)
 * allows) are told apart by their vsd_dtype2name. */
static const char *stat_key(const struct json *j, enum vstats_stype st)
{
	static const char *const names[] = {"SUM",	"MAX",	    "MIN",  "CRHIST64",
					    "DRHIST64", "DVHIST64", "TDGST"};

	if (is_hist(st) && j->one_hist)
		return "HIST";
	return names[st];
}

static void json_stat_data(const struct vstats_stat *st, struct statproc_text *t)
{
	switch (st->stype) {
	case VSTATS_SUM:
	case VSTATS_MAX:
	case VSTATS_MIN:
		statproc_text_printf(t, "\"val\":");
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
	struct statproc_text *t = j->t;

	if (v->flags & VSTATS_IT_FIRST_CB)
		statproc_text_printf(t, "{\"tplname\":\"%s\",\"tplhash\":%" PRIu32 ",\"vois\":{",
				     j->tplname, v->tplhash);
	if (v->flags & VSTATS_IT_FIRST_VOISTAT)
		statproc_text_printf(t, "\"%s\":{\"stats\":{", j->voiname);
	statproc_text_printf(t, "\"%s\":", stat_key(j, v->stat->stype));
	if (v->valid) {
		statproc_text_printf(t, "{\"errs\":%" PRIu64 ",", v->stat->errs);
		json_stat_data(v->stat, t);
		statproc_text_printf(t, "}");
	} else {
		statproc_text_printf(t, "null");
	}
	if (v->flags & VSTATS_IT_LAST_VOISTAT)
		statproc_text_printf(t, "}}");
	statproc_text_printf(t, v->flags & VSTATS_IT_LAST_CB ? "}}\n" : ",");
	return 0;
}

/* GET data?format=json (and POST snapshot?format=json): the source's
 * blob as stats_blob_tostr writes it with SB_TOSTR_META. */
void proc_tpl_json(struct proc *p, struct proc_source *s, struct proc_reply *r)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	struct json j = {&r->text, g->tpl.name, g->name, true};
	uint32_t hists = 0, hash = 0;

	if (!g->has_template) {
		proc_fail(r, 404, -EINVAL, "this interface has no template: no blob");
		return;
	}
	if (!s->sampled) {
		proc_fail(r, 404, -EINVAL, "this source was not sampled (sample_pct)");
		return;
	}
	for (uint32_t i = 0; i < p->ntpl; i++)
		if (p->tpl[i].group == s->group)
			hash = p->tpl[i].hash;
	for (uint32_t k = 0; k < s->voi.nstats; k++)
		hists += is_hist(s->voi.stat[k].stype);
	j.one_hist = hists <= 1;
	vstats_blob_visit(&s->voi, 1, hash, json_visit, &j);
}
