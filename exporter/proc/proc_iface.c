/* The /statistics/ interface of seed 001, one interface per group and
 * source: `GET /statistics/` lists them; `<group>/<id>/definition` prints
 * and (POST, for allowed clients) takes definition lines; `data` prints
 * the data file; POST `snapshot` prints the template's statistics and
 * resets them (stats(3)'s snapshot with SB_CLONE_RSTSRC). */
#include "proc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096 /* of a definition line written */

static void list(struct proc *p, struct proc_reply *r)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++)
		for (size_t i = 0; i < p->srcs.n; i++)
			if (p->src[i]->group == g)
				statproc_text_printf(&r->text, "%s/%" PRIu32 " %s\n",
						     p->conf->group[g].name, p->src[i]->id,
						     p->src[i]->key);
}

static struct proc_source *find(struct proc *p, const char *path, const char **rest)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		size_t n = strlen(p->conf->group[g].name);
		char *end;
		if (strncmp(path, p->conf->group[g].name, n) != 0 || path[n] != '/')
			continue;
		if (path[n + 1] < '0' || path[n + 1] > '9')
			return NULL;
		unsigned long id = strtoul(path + n + 1, &end, 10);
		if (*end != '/')
			return NULL;
		*rest = end + 1;
		for (size_t i = 0; i < p->srcs.n; i++)
			if (p->src[i]->group == g && p->src[i]->id == id)
				return p->src[i];
		return NULL;
	}
	return NULL;
}

static void template_line(struct proc *p, const struct proc_source *s, struct proc_reply *r)
{
	const struct proc_template_conf *t = &p->conf->group[s->group].tpl;

	statproc_text_printf(&r->text, "# template=%s sampled=%d relative=%d updates=%" PRIu64 "\n",
			     t->name, s->sampled, t->relative, s->sampled ? s->voi.updates : 0);
}

static void say_value(struct proc_reply *r, const char *name, const char *what,
		      struct vstats_value v)
{
	if (v.dtype == VSTATS_INT)
		statproc_text_printf(&r->text, "%s%s %" PRId64 "\n", name, what, v.i);
	else
		statproc_text_printf(&r->text, "%s%s %.17g\n", name, what, v.f);
}

/* The VOI's statistics, a line per figure: `<template>_<stat> ...`. */
static void template_data(struct proc *p, struct proc_source *s, struct proc_reply *r)
{
	const struct proc_template_conf *t = &p->conf->group[s->group].tpl;
	static const char *const names[] = {"_sum",    "_max",	  "_min",    "_crhist",
					    "_drhist", "_dvhist", "_tdigest"};

	for (uint32_t k = 0; s->sampled && k < s->voi.nstats; k++) {
		struct vstats_stat *st = &s->voi.stat[k];
		const char *kind = names[st->stype];
		switch (st->stype) {
		case VSTATS_SUM:
		case VSTATS_MAX:
		case VSTATS_MIN:
			say_value(r, t->name, kind, st->v);
			break;
		case VSTATS_CRHIST:
		case VSTATS_DRHIST:
		case VSTATS_DVHIST:
			for (uint32_t i = 0; i < st->hist.n; i++) {
				char lb[32], ub[32];
				struct vstats_value a = st->hist.bkt[i].lb, b = st->hist.bkt[i].ub;
				if (a.dtype == VSTATS_INT) {
					snprintf(lb, sizeof(lb), "%" PRId64, a.i);
					snprintf(ub, sizeof(ub), "%" PRId64, b.i);
				} else {
					snprintf(lb, sizeof(lb), "%.17g", a.f);
					snprintf(ub, sizeof(ub), "%.17g", b.f);
				}
				statproc_text_printf(
				    &r->text, "%s%s %s%s,%s%s %" PRIu64 "\n", t->name, kind,
				    st->stype == VSTATS_CRHIST ? "[" : "[", lb, ub,
				    st->stype == VSTATS_DVHIST ? "]" : ")", st->hist.count[i]);
			}
			statproc_text_printf(&r->text, "%s%s oob %" PRIu64 "\n", t->name, kind,
					     st->hist.oob);
			break;
		case VSTATS_TDGST:
			for (uint32_t i = 0; i < t->nquantile; i++)
				statproc_text_printf(&r->text, "%s%s %g %.17g\n", t->name, kind,
						     t->quantile[i],
						     tdigest_quantile(st->td, t->quantile[i]));
			statproc_text_printf(&r->text, "%s%s count %.17g\n", t->name, kind,
					     tdigest_count(st->td));
			statproc_text_printf(&r->text, "%s%s sum %.17g\n", t->name, kind,
					     tdigest_sum(st->td));
			break;
		}
	}
}

static void definition(struct proc *p, struct proc_source *s, struct proc_reply *r)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; i < g->nstats; i++)
		statproc_format_def(&s->stat[i], &r->text);
	if (g->has_template)
		template_line(p, s, r);
}

static void data(struct proc *p, struct proc_source *s, uint64_t now_ns, struct proc_reply *r)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; i < g->nstats; i++)
		statproc_format_data(&s->stat[i], now_ns, &r->text);
	template_data(p, s, r);
}

static bool has_token(const char *line, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *q = line; (q = strstr(q, tok)); q += n)
		if ((q == line || q[-1] == ' ' || q[-1] == '\t') &&
		    (q[n] == '\0' || q[n] == ' ' || q[n] == '\t' || q[n] == '\r' || q[n] == '='))
			return true;
	return false;
}

/* Each line with the seed's rules; a line without name= that resets the
 * interface resets the template's statistics too. */
static void write_definitions(struct proc *p, struct proc_source *s, const char *body,
			      uint64_t now_ns, struct proc_reply *r)
{
	const struct proc_group_conf *g = &p->conf->group[s->group];
	char line[LINE_MAX_LEN];
	int lineno = 0, failed = 0;

	while (*body) {
		size_t n = strcspn(body, "\n");
		lineno++;
		if (n >= sizeof(line)) {
			statproc_text_printf(&r->text, "line %d: longer than %d bytes\n", lineno,
					     LINE_MAX_LEN - 1);
			failed++;
		} else {
			memcpy(line, body, n);
			line[n] = '\0';
			const char *why = NULL;
			int rc = statproc_write(s->stat, g->nstats, line, now_ns, &why);
			if (rc < 0) {
				statproc_text_printf(&r->text, "line %d: %s\n", lineno,
						     why ? why : "refused");
				failed++;
			} else if (s->sampled && !has_token(line, "name") &&
				   strstr(line, "data=reset")) {
				vstats_voi_reset(&s->voi);
			}
		}
		body += n + (body[n] == '\n');
	}
	r->status = failed ? 400 : 200;
	if (!failed)
		statproc_text_printf(&r->text, "ok\n");
}

void proc_iface(struct proc *p, const char *method, const char *path, const char *body,
		bool may_write, uint64_t now_ns, struct proc_reply *r)
{
	bool post = strcmp(method, "POST") == 0;
	struct proc_source *s;
	const char *what = NULL;

	r->status = 200;
	r->text = (struct statproc_text){.max = 64u << 20};
	pthread_mutex_lock(&p->lock);
	if (*path == '\0') {
		if (post)
			r->status = 405;
		else
			list(p, r);
	} else if (!(s = find(p, path, &what))) {
		r->status = 404;
		statproc_text_printf(&r->text, "no such interface (GET /statistics/ lists them)\n");
	} else if (post && !may_write) {
		r->status = 403;
		statproc_text_printf(&r->text,
				     "changing statistics is not enabled for this client\n");
	} else if (strcmp(what, "definition") == 0) {
		if (post)
			write_definitions(p, s, body ? body : "", now_ns, r);
		else
			definition(p, s, r);
	} else if (strcmp(what, "data") == 0 && !post) {
		data(p, s, now_ns, r);
	} else if (strcmp(what, "snapshot") == 0 && post) {
		template_data(p, s, r);
		if (s->sampled)
			vstats_voi_reset(&s->voi);
	} else {
		r->status = strcmp(what, "data") == 0 || strcmp(what, "snapshot") == 0 ? 405 : 404;
		statproc_text_printf(&r->text, "%s\n",
				     r->status == 405 ? "method not allowed" : "not found");
	}
	pthread_mutex_unlock(&p->lock);
	if (r->text.failed) {
		r->status = 500;
		r->text.len = 0;
		r->text.failed = false; /* the room already held takes the reason */
		statproc_text_printf(&r->text, "out of memory\n");
	}
}
