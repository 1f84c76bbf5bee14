/* FreeBSD stats(3)'s stats_blob_tostr (SB_STRFMT_FREEFORM and
 * SB_STRFMT_JSON, with or without SB_TOSTR_META) and
 * stats_voistatdata_tostr, written from the format strings of
 * sys/kern/subr_stats.c (stats_v1_itercb_tostr_freeform, _json,
 * stats_voistatdata_hist_tostr, _tdgst_tostr), so the text is the one
 * FreeBSD's libstats writes for the same blob. docs/processing.md lists
 * where it cannot be (the blob's address, the double dtype). SB_TOSTR_OBJDUMP
 * is tostr_dump.c's.
 * The interface verb at the end renders one statistic of a source's blob. */
#include "tostr.h"
#include "fetch.h"
#include "reply.h"
#include "stage_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* stats(3)'s voistat errs: 8 bits that stop at 255 (VS_EBITS). */
#define TOSTR_ERRS_MAX 255u

/* vs_stype2name's numbers: a blob's voistat slot is its stype. */
enum { SLOT_SUM = 1, SLOT_MAX, SLOT_MIN, SLOT_HIST, SLOT_TDGST };

static void json_double(struct textbuf *t, double f)
{
	if (isnan(f))
		textbuf_printf(t, "\"NaN\"");
	else if (isinf(f))
		textbuf_printf(t, f > 0 ? "\"+Inf\"" : "\"-Inf\"");
	else
		textbuf_printf(t, "%.17g", f);
}

/* A double as the reply's format takes it: JSON has no NaN or
 * infinities (written as Prometheus' HTTP API writes them), freeform
 * text takes C's, a NaN without the sign glibc would print (FreeBSD's
 * printf drops it). */
static void put_double(struct textbuf *t, double f, enum tostr_fmt fmt)
{
	if (fmt == TOSTR_JSON)
		json_double(t, f);
	else if (isnan(f))
		textbuf_printf(t, "nan");
	else
		textbuf_printf(t, "%.17g", f);
}

void tostr_value(struct textbuf *t, struct vstats_value v, enum tostr_fmt fmt)
{
	char buf[VSTATS_VALUE_STR_MAX];

	if (v.dtype == VSTATS_FLOAT) { /* this project's double: stats(3) has none */
		put_double(t, v.f, fmt);
		return;
	}
	vstats_value_tostr(v, buf, sizeof(buf)); /* as stats_voistatdata_tostr its dtype */
	textbuf_printf(t, "%s", buf);
}

static bool is_hist(enum vstats_stype st)
{
	return st >= VSTATS_CRHIST && st <= VSTATS_DVHIST;
}

/* stats_voistatdata_hist_tostr. */
static void hist_tostr(struct textbuf *t, const struct vstats_hist *h, enum tostr_fmt fmt)
{
	bool json = fmt == TOSTR_JSON;

	textbuf_printf(t, json ? "\"nbkts\":%" PRIu32 "," : "nbkts=%" PRIu32 ", ", h->n);
	textbuf_printf(t, json ? "\"oob\":%" PRIu64 ",\"bkts\":[" : "oob=%" PRIu64, h->oob);
	for (uint32_t i = 0; i < h->n; i++) {
		textbuf_printf(t, json ? "{\"lb\":" : "\n\t\t\t\t{lb=");
		tostr_value(t, h->bkt[i].lb, fmt);
		textbuf_printf(t, json ? ",\"ub\":" : ",ub=");
		tostr_value(t, h->bkt[i].ub, fmt);
		textbuf_printf(t, json ? ",\"cnt\":%" PRIu64 "}" : ",cnt=%" PRIu64 "}",
			       h->count[i]);
		if (json && i + 1 < h->n)
			textbuf_printf(t, ",");
	}
	if (json)
		textbuf_printf(t, "]");
}

/* stats_voistatdata_tdgst_tostr: the centroids in increasing mu. */
static void tdgst_tostr(struct textbuf *t, struct tdigest *td, enum tostr_fmt fmt)
{
	bool json = fmt == TOSTR_JSON;
	size_t n = tdigest_centroids(td);
	double mu, cnt;

	textbuf_printf(t,
		       json ? "\"smplcnt\":%" PRIu64 ",\"compcnt\":%" PRIu64
			      ",\"maxctds\":%zu,\"nctds\":%zu,\"ctds\":["
			    : "smplcnt=%" PRIu64 ", compcnt=%" PRIu64 ", maxctds=%zu, nctds=%zu",
		       (uint64_t)tdigest_count(td), tdigest_merges(td), tdigest_centroids_max(td),
		       n);
	for (size_t i = 0; i < n; i++) {
		tdigest_centroid(td, i, &mu, &cnt);
		textbuf_printf(t, json ? "{\"mu\":" : "\n\t\t\t\t{mu=");
		put_double(t, mu, fmt);
		textbuf_printf(t, json ? ",\"cnt\":%" PRIu64 "}" : ",cnt=%" PRIu64 "}",
			       (uint64_t)cnt);
		if (json && i + 1 < n)
			textbuf_printf(t, ",");
	}
	if (json)
		textbuf_printf(t, "]");
}

void tostr_voistatdata(struct textbuf *t, const struct vstats_voi *voi,
		       const struct vstats_stat *st, enum tostr_fmt fmt)
{
	(void)voi; /* a histogram's bounds carry the VOI's dtype already */
	switch (st->stype) {
	case VSTATS_SUM:
	case VSTATS_MAX:
	case VSTATS_MIN:
		tostr_value(t, st->v, fmt);
		break;
	case VSTATS_CRHIST:
	case VSTATS_DRHIST:
	case VSTATS_DVHIST:
		hist_tostr(t, &st->hist, fmt);
		break;
	case VSTATS_TDGST:
		tdgst_tostr(t, st->td, fmt);
		break;
	}
}

/* ---- the blob ---- */

/* A statistic's voistat slot: its stype's number (stats(3) keeps a
 * VOI's voistats by stype). The VOI's first histogram is HIST, the one
 * fetch's and data/'s HIST name; a second and third, which stats(3) has
 * no room for, take the slots past TDGST, in the template's order. */
static int slot_of(const struct vstats_voi *voi, uint32_t k)
{
	static const int slot[] = {SLOT_SUM,  SLOT_MAX,	 SLOT_MIN,  SLOT_HIST,
				   SLOT_HIST, SLOT_HIST, SLOT_TDGST};
	int before = 0;

	if (!is_hist(voi->stat[k].stype))
		return slot[voi->stat[k].stype];
	for (uint32_t i = 0; i < k; i++)
		before += is_hist(voi->stat[i].stype);
	return before ? SLOT_TDGST + before : SLOT_HIST;
}

/* The VOI's statistics in slot order: order[i] the index of the i-th,
 * slots[i] its slot. */
static void slot_order(const struct vstats_voi *voi, uint32_t *order, int *slots)
{
	for (uint32_t k = 0; k < voi->nstats; k++) {
		uint32_t j = k;
		int s = slot_of(voi, k);
		for (; j > 0 && slots[j - 1] > s; j--) {
			order[j] = order[j - 1];
			slots[j] = slots[j - 1];
		}
		order[j] = k;
		slots[j] = s;
	}
}

/* vs_stype2name; with SB_TOSTR_META the JSON names a VOI's several
 * histograms (more than stats(3) allows) by their vsd_dtype2name, so
 * that its keys stay apart. */
static const char *stype_name(const struct vstats_voi *voi, const struct vstats_stat *s, bool apart)
{
	static const char *const names[] = {"SUM", "MAX", "MIN", "HIST", "HIST", "HIST", "TDGST"};
	static const char *const dtypes[] = {"CRHIST64", "DRHIST64", "DVHIST64"};
	static const char *const dtypes32[] = {"CRHIST32", "DRHIST32", "DVHIST32"};
	enum vstats_stype st = s->stype;
	uint32_t hists = 0;

	for (uint32_t k = 0; apart && is_hist(st) && k < voi->nstats; k++)
		hists += is_hist(voi->stat[k].stype);
	if (hists <= 1)
		return names[st];
	return (s->hist.counts32 ? dtypes32 : dtypes)[st - VSTATS_CRHIST];
}

/* What the callbacks of stats_v1_blob_iter are told of one statistic. */
struct tostr_at {
	const struct tostr_blob *b;
	uint32_t flags; /* TOSTR_* */
	int16_t id;	/* the VOI's */
	int slot;
	const struct vstats_stat *st;
	bool first_cb, last_cb, first_stat, last_stat;
};

static uint64_t errs_of(const struct vstats_stat *st)
{
	return st->errs < TOSTR_ERRS_MAX ? st->errs : TOSTR_ERRS_MAX;
}

/* stats_v1_itercb_tostr_freeform without SB_TOSTR_OBJDUMP: the data of
 * a statistic not yet set is printed as held, as FreeBSD's. FreeBSD
 * prints the blob's address, which here is no one's business: 0x0. */
static void freeform_at(struct textbuf *t, const struct tostr_at *a)
{
	const struct vstats_voi *voi = &a->b->vois[a->id];
	bool meta = a->flags & TOSTR_META;

	if (a->first_cb)
		textbuf_printf(t, "struct statsblobv1@0x0, tplhash=%" PRIu32, a->b->hash);
	if (a->first_stat)
		textbuf_printf(t, "\n\tvois[%d]: id=%d, name=\"%s\"", a->id, a->id,
			       meta ? a->b->tpl->voi[a->id].name : "");
	textbuf_printf(t, "\n\t\tvois[%d]stat[%d]: stype=%s, errs=%" PRIu64, a->id, a->slot,
		       stype_name(voi, a->st, false), errs_of(a->st));
	textbuf_printf(t, "\n\t\t\tvoistatdata: ");
	tostr_voistatdata(t, voi, a->st, TOSTR_FREEFORM);
}

/* stats_v1_itercb_tostr_json without SB_TOSTR_OBJDUMP: a statistic not
 * yet set is null. Without SB_TOSTR_META the template is null, a VOI
 * "[id]" and a statistic "[stype]". */
static void json_at(struct textbuf *t, const struct tostr_at *a)
{
	const struct vstats_voi *voi = &a->b->vois[a->id];
	bool meta = a->flags & TOSTR_META;

	if (a->first_cb && meta)
		textbuf_printf(t, "{\"tplname\":\"%s\",\"tplhash\":%" PRIu32 ",\"vois\":{",
			       a->b->tpl->name, a->b->hash);
	else if (a->first_cb)
		textbuf_printf(t, "{\"tplname\":null,\"tplhash\":%" PRIu32 ",\"vois\":{",
			       a->b->hash);
	if (a->first_stat && meta)
		textbuf_printf(t, "\"%s\":{\"stats\":{", a->b->tpl->voi[a->id].name);
	else if (a->first_stat)
		textbuf_printf(t, "\"[%d]\":{\"stats\":{", a->id);
	if (meta)
		textbuf_printf(t, "\"%s\":", stype_name(voi, a->st, true));
	else
		textbuf_printf(t, "\"[%d]\":", a->slot);
	if (voi->updates > 0) { /* VS_VSDVALID */
		textbuf_printf(t, "{\"errs\":%" PRIu64 ",", errs_of(a->st));
		if (!is_hist(a->st->stype) && a->st->stype != VSTATS_TDGST)
			textbuf_printf(t, "\"val\":"); /* a simple dtype needs a key */
		tostr_voistatdata(t, voi, a->st, TOSTR_JSON);
		textbuf_printf(t, "}");
	} else {
		textbuf_printf(t, "null");
	}
	if (a->last_stat)
		textbuf_printf(t, "}}");
	textbuf_printf(t, a->last_cb ? "}}" : ",");
}

int tostr_blob(struct textbuf *t, const struct tostr_blob *b, enum tostr_fmt fmt, uint32_t flags,
	       const char **why)
{
	struct tostr_at a = {.b = b, .flags = flags, .first_cb = true};

	if (flags & TOSTR_OBJDUMP)
		return tostr_objdump(t, b, fmt, flags, why);
	for (uint32_t v = 0; v < b->n; v++) {
		const struct vstats_voi *voi = &b->vois[v];
		uint32_t order[VSTATS_STATS_MAX];
		int slots[VSTATS_STATS_MAX];

		slot_order(voi, order, slots);
		a.id = (int16_t)v;
		for (uint32_t k = 0; k < voi->nstats; k++) {
			a.st = &voi->stat[order[k]];
			a.slot = slots[k];
			a.first_stat = k == 0;
			a.last_stat = k + 1 == voi->nstats;
			a.last_cb = a.last_stat && v + 1 == b->n;
			if (fmt == TOSTR_JSON)
				json_at(t, &a);
			else
				freeform_at(t, &a);
			a.first_cb = false;
		}
	}
	textbuf_printf(t, "\n");
	return 0;
}

/* ---- GET <group>/<id>/data/<voi id>/<stat> ---- */

/* <voi id>/<stat>, the id a decimal without a leading 0 (as fetch/'s):
 * the parts, or false. */
static bool split(const char *what, unsigned long *voi, char *stat, size_t ssize)
{
	const char *a = strchr(what, '/');
	char *end;

	if (!a || what[0] < '0' || what[0] > '9' || (what[0] == '0' && a != what + 1) ||
	    a - what > 5 || strchr(a + 1, '/') || strlen(a + 1) >= ssize)
		return false;
	*voi = strtoul(what, &end, 10);
	if (end != a)
		return false;
	memcpy(stat, a + 1, strlen(a + 1) + 1); /* checked above: it fits */
	return true;
}

void tostr_get(struct processing *p, struct source *s, const char *what, enum tostr_fmt fmt,
	       struct stage_reply *r)
{
	const struct vstats_stat *st;
	unsigned long v;
	char stat[8];
	(void)p;

	if (!split(what, &v, stat, sizeof(stat))) {
		reply_fail(r, 400, -EINVAL, "data/<voi id>/<SUM|MAX|MIN|HIST|TDGST>");
	} else if ((st = fetch_locate(s, v, stat, r)) != NULL) {
		tostr_voistatdata(&r->text, source_voi(s, (uint32_t)v), st, fmt);
		textbuf_printf(&r->text, "\n");
	}
}
