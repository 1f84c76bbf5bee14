/* stats(3)'s operations as verbs of the /statistics/ interface (FreeBSD's
 * stats(3)): the template list with slot ids and hashes (kern.stats.templates,
 * stats_tpl_fetch_allocid, stats_tpl_id2name), and a source's blob as
 * stats_blob_tostr writes it (tostr.c). Each template
 * has one VOI, named after its group. Callers hold the processing's lock. */
#include "tpl.h"
#include "reply.h"
#include "srctab.h"
#include "stage_priv.h"
#include "tostr.h"
#include "vstats_sbv1.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
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
static void tpl_schema(struct processing *p, uint32_t id, const struct tpl_query *q,
		       struct stage_reply *r);

/* The list as kern.stats.templates has it: "name":hash, comma separated. */
static void tpl_sysctl(const struct processing *p, struct stage_reply *r)
{
	for (uint32_t i = 0; i < p->ntpl; i++)
		textbuf_printf(&r->text, "%s\"%s\":%" PRIu32, i ? "," : "", tpl_name(p, i),
			       p->tpl[i].hash);
	textbuf_printf(&r->text, "\n");
}

/* Template id as the format asks: its line, or its schema. */
static void tpl_one(struct processing *p, uint32_t id, const struct tpl_query *q,
		    struct stage_reply *r)
{
	if (tpl_is_tostr(q->f))
		tpl_schema(p, id, q, r);
	else
		tpl_line(p, id, r);
}

void tpl_get(struct processing *p, const char *what, const struct tpl_query *q,
	     struct stage_reply *r)
{
	enum tpl_format f = q->f;
	struct vstats_tplspec spec;
	const char *why;
	int id;

	if (!*what) {
		if (f == TPL_SYSCTL)
			tpl_sysctl(p, r);
		else if (tpl_is_tostr(f))
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
			tpl_one(p, (uint32_t)v, q, r);
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
	tpl_one(p, (uint32_t)id, q, r);
}

/* stats_blob_tostr into the reply: an objdump the encoder refuses is 409,
 * as format=blob's (the template's, not the request's); JSON is served
 * as application/json. */
static void tostr_reply(struct stage_reply *r, const struct tostr_blob *b,
			const struct tpl_query *q)
{
	const char *why = "";
	int rc = tostr_blob(&r->text, b, tpl_tostr_fmt(q->f), q->flags, &why);

	if (rc == -ENOMEM)
		r->text.failed = true;
	else if (rc < 0)
		reply_fail(r, rc == -EIO ? 500 : 409, rc, why);
	else if (q->f == TPL_JSON) /* a whole document, unlike one statistic's */
		r->type = "application/json";
}

/* stats_tpl_fetch: template id's schema, as FreeBSD keeps a template: a
 * blob made from it and not yet updated, written as a source's is. */
static void tpl_schema(struct processing *p, uint32_t id, const struct tpl_query *q,
		       struct stage_reply *r)
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
	tostr_reply(r, &(struct tostr_blob){tpl, vois, nmore + 1, p->tpl[id].hash, 0, 0}, q);
	srctab_vois_free(&vois[0], more, nmore);
}

/* GET data?format=json|freeform (and POST snapshot): the source's blob
 * as stats_blob_tostr writes it. */
void tpl_tostr(struct processing *p, struct source *s, const struct tpl_query *q,
	       struct stage_reply *r)
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
	tostr_reply(r,
		    &(struct tostr_blob){&g->tpl, vois, s->nmore + 1, hash,
					 vstats_sbv1_sbintime(s->created_ns),
					 vstats_sbv1_sbintime(s->lastrst_ns)},
		    q);
}
