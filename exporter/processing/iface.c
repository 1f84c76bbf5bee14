/* The /statistics/ interface of the Linux statistics infrastructure, one
 * interface per group and source: `GET /statistics/` lists them; `<group>/<id>/definition` prints
 * and (POST, for allowed clients) takes definition lines, all or nothing;
 * `data` prints the data file (?format=json|freeform: the template's blob
 * as stats(3) writes it; data/<voi id>/<stat>: one statistic's data, tostr.c;
 * ?format=blob: its V1 bytes, blobreply.c); POST `snapshot` prints the
 * template's statistics and resets them (stats(3)'s snapshot with
 * SB_CLONE_RSTSRC). stats(3)'s
 * verbs are tpl.c's (`templates`, the blob) and rates.c's (`sample_rates`). */
#include "iface.h"
#include "blobreply.h"
#include "rates.h"
#include "fetch.h"
#include "reply.h"
#include "srctab.h"
#include "stage_priv.h"
#include "tostr.h"
#include "tpl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN 4096 /* of a definition line written */

static void list(struct processing *p, struct stage_reply *r)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++)
		for (size_t i = 0; i < p->grp[g].srcs.n; i++)
			textbuf_printf(&r->text, "%s/%" PRIu32 " %s\n", p->conf->group[g].name,
				       p->grp[g].src[i]->id, p->grp[g].src[i]->key);
}

static struct source *find(struct processing *p, const char *path, const char **rest)
{
	for (uint32_t g = 0; g < p->conf->ngroups; g++) {
		size_t n = strlen(p->conf->group[g].name);
		char *end;
		if (strncmp(path, p->conf->group[g].name, n) != 0 || path[n] != '/')
			continue;
		if (path[n + 1] < '0' || path[n + 1] > '9' ||
		    (path[n + 1] == '0' && path[n + 2] != '/')) /* strict: no leading 0 */
			return NULL;
		unsigned long id = strtoul(path + n + 1, &end, 10);
		if (*end != '/')
			return NULL;
		*rest = end + 1;
		for (size_t i = 0; i < p->grp[g].srcs.n; i++)
			if (p->grp[g].src[i]->id == id)
				return p->grp[g].src[i];
		return NULL;
	}
	return NULL;
}

/* A comment line, so that the file written back as a whole applies none
 * of it (no on= here: a line without name= would start everything). */
static void template_line(struct processing *p, const struct source *s, struct stage_reply *r)
{
	const struct processing_template_conf *t = &p->conf->group[s->group].tpl;

	textbuf_printf(&r->text,
		       "# template=%s state=%s sampled=%d relative=%d updates=%" PRIu64 "\n",
		       t->name, s->voi_stopped ? "off" : "on", s->sampled, t->voi[0].relative,
		       s->sampled ? s->voi.updates : 0);
}

static void say_value(struct stage_reply *r, const char *name, const char *what,
		      struct vstats_value v)
{
	char buf[VSTATS_VALUE_STR_MAX];

	vstats_value_tostr(v, buf, sizeof(buf));
	textbuf_printf(&r->text, "%s%s %s\n", name, what, buf);
}

static void say_bound(char *out, size_t size, struct vstats_value v)
{
	vstats_value_tostr(v, out, size);
}

static void hist_lines(struct stage_reply *r, const char *name, const char *kind,
		       const struct vstats_stat *st)
{
	char lb[VSTATS_VALUE_STR_MAX], ub[VSTATS_VALUE_STR_MAX];

	for (uint32_t i = 0; i < st->hist.n; i++) {
		say_bound(lb, sizeof(lb), st->hist.bkt[i].lb);
		say_bound(ub, sizeof(ub), st->hist.bkt[i].ub);
		textbuf_printf(&r->text, "%s%s [%s,%s%s %" PRIu64 "\n", name, kind, lb, ub,
			       st->stype == VSTATS_DVHIST ? "]" : ")", st->hist.count[i]);
	}
	textbuf_printf(&r->text, "%s%s oob %" PRIu64 "\n", name, kind, st->hist.oob);
}

/* A VOI's statistics, a line per figure: `<prefix>_<stat> ...`. MAX and
 * MIN of nothing, and quantiles of an empty digest, have no value: their
 * lines are left out rather than show a sentinel or NaN. */
static void voi_data(const struct processing_voi_conf *t, const char *name,
		     const struct vstats_voi *voi, struct stage_reply *r)
{
	static const char *const names[] = {"_sum",    "_max",	  "_min",    "_crhist",
					    "_drhist", "_dvhist", "_tdigest"};

	for (uint32_t k = 0; k < voi->nstats; k++) {
		const struct vstats_stat *st = &voi->stat[k];
		const char *kind = names[st->stype];
		switch (st->stype) {
		case VSTATS_MAX:
		case VSTATS_MIN:
			if (voi->updates == 0)
				break;
			/* fall through */
		case VSTATS_SUM:
			say_value(r, name, kind, st->v);
			break;
		case VSTATS_CRHIST:
		case VSTATS_DRHIST:
		case VSTATS_DVHIST:
			hist_lines(r, name, kind, st);
			break;
		case VSTATS_TDGST:
			for (uint32_t i = 0; tdigest_count(st->td) > 0 && i < t->nquantile; i++)
				textbuf_printf(&r->text, "%s%s %g %.17g\n", name, kind,
					       t->quantile[i],
					       tdigest_quantile(st->td, t->quantile[i]));
			textbuf_printf(&r->text, "%s%s count %.17g\n", name, kind,
				       tdigest_count(st->td));
			textbuf_printf(&r->text, "%s%s sum %.17g\n", name, kind,
				       tdigest_sum(st->td));
			break;
		}
	}
}

/* The blob's VOIs in order, each named as its families are. */
static void template_data(struct processing *p, struct source *s, struct stage_reply *r)
{
	const struct processing_template_conf *t = &p->conf->group[s->group].tpl;
	char name[PROCESSING_VOI_PREFIX_MAX];

	for (uint32_t v = 0; s->sampled && v <= s->nmore; v++) {
		processing_conf_voi_prefix(t, v, name, sizeof(name));
		voi_data(&t->voi[v], name, source_voi_c(s, v), r);
	}
}

static void definition(struct processing *p, struct source *s, struct stage_reply *r)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; i < g->nstats; i++)
		statproc_format_def(&s->stat[i], &r->text);
	if (g->has_template)
		template_line(p, s, r);
}

static void data(struct processing *p, struct source *s, uint64_t now_ns, struct stage_reply *r)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; i < g->nstats; i++)
		statproc_format_data(&s->stat[i], now_ns, &r->text);
	template_data(p, s, r);
}

/* ---- writing definitions ---- */

/* What a write does to the source's template: on= and data=reset of the
 * lines without name= (the whole interface) or with its name. */
struct tpl_pending {
	bool on, reset;
};

static bool names_stat(const struct processing_group_conf *g, const char *name)
{
	for (uint32_t i = 0; i < g->nstats; i++)
		if (strcmp(g->stat[i].name, name) == 0)
			return true;
	return false;
}

static void tpl_take(struct tpl_pending *t, const struct statproc_request *rq)
{
	if (rq->on >= 0)
		t->on = rq->on == 1;
	t->reset |= rq->reset;
}

/* One line into the batch (the statistics) or the template's pending
 * state; 0, or the error with *why and nothing taken. */
static int take_line(const struct processing_group_conf *g, struct statproc_batch *b,
		     struct tpl_pending *t, const char *line, const char **why)
{
	struct statproc_request rq;
	int rc;

	if ((rc = statproc_parse(line, &rq, why)) < 0)
		return rc;
	if (rq.got_name && g->has_template && strcmp(rq.name, g->tpl.name) == 0 &&
	    !names_stat(g, rq.name)) {
		if (rq.got) { /* stats_tpl_add_voistats on a configured VOI */
			*why = "a template's statistics are fixed: only on= and data=reset";
			return -EOPNOTSUPP;
		}
		tpl_take(t, &rq);
		return 0;
	}
	if ((rc = statproc_batch_add(b, &rq, why)) < 0)
		return rc;
	if (!rq.got_name) /* off is off for everything of the interface */
		tpl_take(t, &rq);
	return 0;
}

/* Every line checked; the refused ones listed. The count refused. */
static int take_lines(const struct processing_group_conf *g, struct statproc_batch *b,
		      struct tpl_pending *t, const char *body, struct stage_reply *r)
{
	char line[LINE_MAX_LEN];
	int lineno = 0, refused = 0, rc;
	const char *why;

	while (*body) {
		size_t n = strcspn(body, "\n");
		lineno++;
		if (n >= sizeof(line)) {
			rc = -EFBIG;
			why = "a line is longer than 4095 bytes";
		} else {
			memcpy(line, body, n);
			line[n] = '\0';
			rc = take_line(g, b, t, line, &why);
		}
		if (rc < 0) {
			textbuf_printf(&r->text, "line %d: %s: %s\n", lineno, reply_errname(rc),
				       why ? why : "refused");
			refused++;
		}
		body += n + (body[n] == '\n');
	}
	return refused;
}

/* What the batch as a whole would leave, checked before it applies: the
 * count of refusals, each listed. A value's products total keeps the
 * type its configuration gives it (one type per family, whatever a
 * write does to one source's range_min): a counter is refused an X that
 * could make it go down. */
static int check_batch(const struct processing_group_conf *g, const struct statproc_batch *b,
		       struct stage_reply *r)
{
	int refused = 0;

	for (uint32_t i = 0; i < g->nstats; i++) {
		const struct statproc_def *d = statproc_batch_def(b, i);
		if (d->type == STATPROC_VALUE && d->mode == STATPROC_PRODUCTS && d->range_min < 0 &&
		    g->stat[i].def.range_min >= 0) {
			textbuf_printf(&r->text,
				       "%s: %s: range_min below 0 would let its total, a "
				       "counter on /metrics as configured (range_min %" PRId64
				       "), go down; configure range_min below 0 to make it "
				       "a gauge\n",
				       reply_errname(-EINVAL), g->stat[i].name,
				       g->stat[i].def.range_min);
			refused++;
		}
	}
	return refused;
}

/* The shapes of statistic k of group g among its sources, s's as the
 * batch leaves it (b: NULL, s's as it is), and the configured one, which
 * a new source takes. */
static unsigned stat_shapes(const struct processing *p, uint32_t g, uint32_t k,
			    const struct source *s, const struct statproc_batch *b)
{
	unsigned shapes = PROCESSING_SHAPE_OF(&p->conf->group[g].stat[k].def);

	for (size_t i = 0; i < p->grp[g].srcs.n; i++) {
		const struct source *o = p->grp[g].src[i];
		shapes |=
		    PROCESSING_SHAPE_OF(o == s && b ? statproc_batch_def(b, k) : &o->stat[k].def);
	}
	return shapes;
}

/* Whether the batch would make a family of s's group claim a name that
 * another statistic or template serves (a scrape would serve only one
 * of them): the count refused (1), each listed, -ENOMEM. Every name the
 * others serve is taken first, then those of s's group as the batch
 * leaves them. */
static int check_names(const struct processing *p, const struct source *s,
		       const struct statproc_batch *b, struct stage_reply *r)
{
	const struct processing_group_conf *gc = &p->conf->group[s->group];
	struct processing_names names;
	const char *clash = NULL;
	uint32_t other = 0, k;
	int rc = 0;

	processing_names_init(&names);
	names.reserve = true;
	for (uint32_t g = 0; rc != -ENOMEM && g < p->conf->ngroups; g++) {
		const struct processing_group_conf *c = &p->conf->group[g];
		for (k = 0; g != s->group && rc != -ENOMEM && k < c->nstats; k++)
			rc = processing_names_stat(&names, c->stat[k].name,
						   stat_shapes(p, g, k, NULL, NULL),
						   PROCESSING_NAMES_OWNER(g, k), &clash, &other);
		if (c->has_template && rc != -ENOMEM) /* an old clash is not this write's */
			rc = processing_conf_template_names(
			    &names, &c->tpl, PROCESSING_NAMES_OWNER(g, PROCESSING_NAMES_TEMPLATE),
			    &clash, &other);
	}
	/* the statistics the batch leaves as they were, then those it changes */
	rc = rc == -ENOMEM ? rc : 0;
	for (int pass = 0; rc == 0 && pass < 2; pass++)
		for (k = 0; rc == 0 && k < gc->nstats; k++) {
			unsigned now = stat_shapes(p, s->group, k, NULL, NULL),
				 then = stat_shapes(p, s->group, k, s, b);
			if ((now != then) == pass)
				rc = processing_names_stat(&names, gc->stat[k].name, then,
							   PROCESSING_NAMES_OWNER(s->group, k),
							   &clash, &other);
		}
	if (rc == -EPERM)
		textbuf_printf(&r->text,
			       "EINVAL: %s would serve '%s', a name the exporter serves itself "
			       "(process_*, binstat_*) or Prometheus adds to a scrape (up, "
			       "scrape_*)\n",
			       gc->stat[k - 1].name, clash);
	if (rc == -EEXIST) {
		const struct processing_group_conf *og = &p->conf->group[other >> 8];
		bool tpl = (other & 0xff) == PROCESSING_NAMES_TEMPLATE;
		textbuf_printf(&r->text,
			       "%s: %s would serve '%s', which %s '%s' of group '%s' serves: "
			       "a family name is one family's across the processing\n",
			       reply_errname(rc), gc->stat[k - 1].name, clash,
			       tpl ? "template" : "statistic",
			       tpl ? og->tpl.name : og->stat[other & 0xff].name, og->name);
	}
	processing_names_free(&names);
	return rc == -EEXIST || rc == -EPERM ? 1 : rc;
}

/* Whether what the batch leaves s holding fits max_memory_bytes beside
 * every other source (entries_max=65536 on every statistic of every
 * source would otherwise have no total bound): computed from the
 * definitions before anything is allocated. *bytes: s's bytes then. The
 * count refused (1), with the reason. */
static int check_memory(const struct processing *p, const struct source *s,
			const struct statproc_batch *b, size_t *bytes, struct stage_reply *r)
{
	size_t now = 0, then = 0;

	for (uint32_t k = 0; k < p->conf->group[s->group].nstats; k++) {
		now += statproc_data_bytes(&s->stat[k].def);
		then += statproc_data_bytes(statproc_batch_def(b, k));
	}
	*bytes = s->bytes - now + then;
	if (then <= now || srctab_fits(p, then - now))
		return 0;
	textbuf_printf(&r->text,
		       "%s: this source's statistics would hold %zu bytes (%zu now), the "
		       "processing's %" PRIu64 " in all, past max_memory_bytes (%" PRIu64 ")\n",
		       reply_errname(-EFBIG), *bytes, s->bytes, p->mem_bytes - s->bytes + *bytes,
		       p->conf->max_memory_bytes);
	return 1;
}

/* A POST to definition: all of it, or with any line refused none of it;
 * the reply lists every refused line. */
static void write_definitions(struct processing *p, struct source *s, const char *body,
			      uint64_t now_ns, struct stage_reply *r)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	struct tpl_pending t = {!s->voi_stopped, false};
	struct statproc_batch b;
	size_t bytes = s->bytes;
	int refused;

	if (statproc_batch_init(&b, s->stat, g->nstats) < 0) {
		reply_fail(r, 500, -ENOMEM, "out of memory: nothing changed");
		return;
	}
	if ((refused = take_lines(g, &b, &t, body, r)) > 0 ||
	    (refused = check_batch(g, &b, r)) > 0 || (refused = check_names(p, s, &b, r)) > 0 ||
	    (refused == 0 && (refused = check_memory(p, s, &b, &bytes, r)) > 0)) {
		r->status = 400;
		textbuf_printf(&r->text, "nothing applied: %d line%s refused\n", refused,
			       refused == 1 ? "" : "s");
	} else if (refused < 0 || statproc_batch_commit(&b, now_ns) < 0) {
		reply_fail(r, 500, -ENOMEM, "out of memory: nothing changed");
	} else {
		srctab_resize(p, s, bytes);
		s->voi_stopped = !t.on;
		if (t.reset) {
			source_vois_reset(s);
			s->lastrst_ns = now_ns;
		}
		textbuf_printf(&r->text, "ok\n");
	}
	statproc_batch_free(&b);
}

/* ---- dispatch ---- */

/* A query parameter: the format, or one of stats_blob_tostr's flags. */
struct query_param {
	const char *text;
	unsigned key;	/* QUERY_*: each at most once */
	uint32_t mask;	/* the flag it sets (0: the format) */
	uint32_t value; /* the format or the flag's value */
};

enum { QUERY_FORMAT = 1, QUERY_META = 2, QUERY_OBJDUMP = 4, QUERY_CLONE = 8, QUERY_DSTMAXSZ = 16 };

static const struct query_param query_params[] = {
    {"format=text", QUERY_FORMAT, 0, TPL_TEXT},
    {"format=json", QUERY_FORMAT, 0, TPL_JSON},
    {"format=sysctl", QUERY_FORMAT, 0, TPL_SYSCTL},
    {"format=freeform", QUERY_FORMAT, 0, TPL_FREEFORM},
    {"format=blob", QUERY_FORMAT, 0, TPL_BLOB},
    {"meta=0", QUERY_META, TOSTR_META, 0},
    {"meta=1", QUERY_META, TOSTR_META, TOSTR_META},
    {"objdump=0", QUERY_OBJDUMP, TOSTR_OBJDUMP, 0},
    {"objdump=1", QUERY_OBJDUMP, TOSTR_OBJDUMP, TOSTR_OBJDUMP},
};

/* format=blob's options, whose values blobreply.c reads: their names. */
static const struct query_param blob_params[] = {
    {"clone=", QUERY_CLONE, 0, 0},
    {"dstmaxsz=", QUERY_DSTMAXSZ, 0, 0},
};

static const struct query_param *query_param(const char *at, size_t n)
{
	for (size_t k = 0; k < sizeof(query_params) / sizeof(query_params[0]); k++)
		if (strlen(query_params[k].text) == n && strncmp(at, query_params[k].text, n) == 0)
			return &query_params[k];
	for (size_t k = 0; k < sizeof(blob_params) / sizeof(blob_params[0]); k++)
		if (strlen(blob_params[k].text) < n &&
		    strncmp(at, blob_params[k].text, strlen(blob_params[k].text)) == 0)
			return &blob_params[k];
	return NULL;
}

/* The query of path, parameters apart by '&': format= (text, json,
 * freeform; sysctl for the template list alone), and with json or
 * freeform meta=0|1 (SB_TOSTR_META, on unless given) and objdump=0|1.
 * 0, or -EINVAL with *why. */
static int query_of(const char *query, struct tpl_query *q, const char **why)
{
	unsigned seen = 0;

	*q = (struct tpl_query){TPL_TEXT, TOSTR_META};
	for (const char *at = query; at;) {
		size_t n = strcspn(at, "&");
		const struct query_param *qp = query_param(at, n);
		if (!qp || (seen & qp->key)) {
			*why =
			    qp ? "a query parameter given twice"
			       : "the query takes format=text|json|freeform|sysctl|blob, meta=0|1 "
				 "and objdump=0|1, clone= and dstmaxsz= (format=blob's), apart "
				 "by &";
			return -EINVAL;
		}
		seen |= qp->key;
		if (qp->key == QUERY_FORMAT)
			q->f = (enum tpl_format)qp->value;
		else
			q->flags = (q->flags & ~qp->mask) | qp->value;
		at = at[n] ? at + n + 1 : NULL;
	}
	if ((seen & (QUERY_CLONE | QUERY_DSTMAXSZ)) && q->f != TPL_BLOB) {
		*why = "clone= and dstmaxsz= go with format=blob";
		return -EINVAL;
	}
	if ((seen & (QUERY_META | QUERY_OBJDUMP)) && !tpl_is_tostr(q->f)) {
		*why = "meta= and objdump= go with format=json or format=freeform";
		return -EINVAL;
	}
	return 0;
}

/* Whether q asks for text, the one format of the paths that write no
 * blob (the list, definition, fetch/, sample_rates): else 400, rather
 * than another format silently not given. */
static bool text_only(const struct tpl_query *q, struct stage_reply *r)
{
	if (q->f == TPL_TEXT)
		return true;
	reply_fail(r, 400, -EINVAL, "this path is text alone: format=text or none");
	return false;
}

static void source_verb(struct processing *p, struct source *s, const char *what, bool post,
			const struct tpl_query *q, const char *query, const char *body,
			uint64_t now_ns, struct stage_reply *r)
{
	bool json = q->f != TPL_TEXT, /* json or freeform: the blob's text */
	    data_or_snapshot = !strcmp(what, "data") || !strcmp(what, "snapshot");

	if (q->f == TPL_BLOB && strcmp(what, post ? "snapshot" : "data") == 0) {
		blobreply(p, s, query, post, now_ns, r);
	} else if (q->f == TPL_BLOB && !data_or_snapshot) {
		reply_fail(r, 400, -EINVAL, "format=blob is GET data's and POST snapshot's");
	} else if (strcmp(what, "definition") == 0) {
		if (!text_only(q, r))
			return;
		if (post)
			write_definitions(p, s, body ? body : "", now_ns, r);
		else
			definition(p, s, r);
	} else if (strcmp(what, "data") == 0 && !post) {
		if (json)
			tpl_tostr(p, s, q, r);
		else
			data(p, s, now_ns, r);
	} else if (strncmp(what, "data/", 5) == 0 && !post) {
		if (q->flags & TOSTR_OBJDUMP) /* the offsets are the whole blob's */
			reply_fail(
			    r, 400, -EINVAL,
			    "objdump=1 goes with a whole blob (data, snapshot, templates/<id>)");
		else
			tostr_get(p, s, what + 5, tpl_tostr_fmt(q->f), r);
	} else if (strncmp(what, "fetch/", 6) == 0 && !post) {
		if (text_only(q, r))
			fetch_get(p, s, what + 6, r);
	} else if (strcmp(what, "snapshot") == 0 && post) {
		if (json)
			tpl_tostr(p, s, q, r);
		else
			template_data(p, s, r);
		if (r->status == 200) {
			source_vois_reset(s);
			s->lastrst_ns = now_ns;
		}
	} else {
		r->status = data_or_snapshot ? 405 : 404;
		textbuf_printf(&r->text, "%s\n",
			       r->status == 405 ? "method not allowed" : "not found");
	}
}

static void forbid(struct stage_reply *r)
{
	r->status = 403;
	textbuf_printf(&r->text, "changing statistics is not enabled for this client\n");
}

/* templates, templates/<id or spec> or sample_rates: the paths
 * tpl_verb serves (an interface path has two slashes, so a group may be
 * named templates). */
static bool tpl_path(const char *path)
{
	return strcmp(path, "sample_rates") == 0 || strcmp(path, "templates") == 0 ||
	       (strncmp(path, "templates/", 10) == 0 && !strchr(path + 10, '/'));
}

/* templates[/<id or spec>] and sample_rates; false for another path (an
 * interface path has two slashes, so a group may be named templates). */
static bool tpl_verb(struct processing *p, const char *path, const struct tpl_query *q, bool post,
		     const char *body, bool may_write, struct stage_reply *r)
{
	bool rates = strcmp(path, "sample_rates") == 0;

	if (rates && post && !may_write) {
		forbid(r);
	} else if (rates) {
		if (!text_only(q, r))
			return true;
		if (post)
			rates_post(p, body ? body : "", r);
		else
			rates_get(p, r);
	} else if (tpl_path(path)) {
		if (post) {
			r->status = 405;
			textbuf_printf(&r->text, "method not allowed\n");
		} else if (path[9] && !path[10]) { /* "templates/" or ".../%00": no id */
			reply_fail(r, 400, -EINVAL, "an empty template id or spec");
		} else {
			tpl_get(p, path[9] ? path + 10 : "", q, r);
		}
	} else {
		return false;
	}
	return true;
}

static void route(struct processing *p, const char *method, char *path, const char *body,
		  bool may_write, uint64_t now_ns, struct stage_reply *r)
{
	bool post = strcmp(method, "POST") == 0;
	char *query = strchr(path, '?');
	struct tpl_query q;
	struct source *s;
	const char *what = NULL, *why;

	if (query)
		*query++ = '\0';
	if (query_of(query, &q, &why) < 0) {
		reply_fail(r, 400, -EINVAL, why);
	} else if (*path == '\0') {
		if (post)
			r->status = 405;
		else if (text_only(&q, r))
			list(p, r);
	} else if (q.f == TPL_BLOB && tpl_path(path)) {
		/* those paths exist: the query is what they do not take */
		reply_fail(r, 400, -EINVAL, "format=blob is GET data's and POST snapshot's");
	} else if (tpl_verb(p, path, &q, post, body, may_write, r)) {
		return;
	} else if (q.f == TPL_SYSCTL) {
		reply_fail(r, 400, -EINVAL, "format=sysctl is the template list's alone");
	} else if (!(s = find(p, path, &what))) {
		r->status = 404;
		textbuf_printf(&r->text, "no such interface (GET /statistics/ lists them)\n");
	} else if (post && !may_write) {
		forbid(r);
	} else {
		source_verb(p, s, what, post, &q, query, body, now_ns, r);
	}
}

void iface_request(struct processing *p, const char *method, const char *path, const char *body,
		   bool may_write, uint64_t now_ns, struct stage_reply *r)
{
	char *copy = strdup(path);

	r->status = 200;
	r->text = (struct textbuf){.max = 64u << 20};
	r->type = NULL;
	if (!copy) {
		r->text.failed = true;
	} else {
		pthread_mutex_lock(&p->lock);
		route(p, method, copy, body, may_write, now_ns, r);
		pthread_mutex_unlock(&p->lock);
		free(copy);
	}
	if (r->text.failed) {
		r->status = 500;
		r->type = NULL;
		r->text.len = 0;
		r->text.failed = false; /* the room already held takes the reason */
		textbuf_printf(&r->text, "out of memory\n");
	}
}
