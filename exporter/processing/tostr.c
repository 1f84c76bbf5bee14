/* FreeBSD stats(3)'s stats_blob_tostr (SB_STRFMT_FREEFORM and
 * SB_STRFMT_JSON, with or without SB_TOSTR_META) and
 * stats_voistatdata_tostr, written from the format strings of
 * sys/kern/subr_stats.c (stats_v1_itercb_tostr_freeform, _json,
 * stats_voistatdata_hist_tostr, _tdgst_tostr), so the text is the one
 * FreeBSD's libstats writes for the same blob. docs/processing.md lists
 * where it cannot be (the blob's address, the double dtype). With
 * SB_TOSTR_OBJDUMP the blob is encoded (vstats_sbv1.c) and its bytes are
 * walked (vstats_sbv1_walk.c), so the text shows what format=blob serves.
 * The interface verb at the end renders one statistic of a source's blob. */
#include "tostr.h"
#include "fetch.h"
#include "reply.h"
#include "stage_priv.h"
#include "vstats_sbv1.h"
#include "vstats_sbv1_walk.h"

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

/* ---- SB_TOSTR_OBJDUMP: the encoded blob's bytes ---- */

/* stats_v1_blob_iter's ctx flags. */
enum { IT_FIRST_CB = 1, IT_LAST_CB = 2, IT_FIRST_VOISTAT = 4, IT_LAST_VOISTAT = 8 };

/* enum vsd_dtype numbers the dump reads. */
enum { VSD_VOISTATE = 0, VSD_Q_U64 = 10, VSD_CRHIST32 = 11, VSD_DVHIST64 = 16, VSD_TDGST64 = 18 };

/* One walk: the blob's bytes and header, what names its VOIs, and
 * whether a field was found inconsistent (bad: the text is not given). */
struct dump {
	struct textbuf *t;
	const struct tostr_blob *b;
	const uint8_t *blob;
	struct vstats_sbv1_hdr h;
	bool json, meta, bad;
};

/* The VOI's dtype as vstats names it: the base from the blob's vsd
 * dtype, the Q precision from the template's VOI (the 3 control bits of
 * a Q number do not hold every precision). */
static enum vstats_dtype dump_dtype(struct dump *d, const struct vstats_sbv1_voi *v)
{
	static const enum vstats_dtype base[] = {
	    VSTATS_S32,	  VSTATS_U32,	VSTATS_INT,   VSTATS_UINT,  VSTATS_LONG,
	    VSTATS_ULONG, VSTATS_Q_S32, VSTATS_Q_U32, VSTATS_Q_S64, VSTATS_Q_U64};
	unsigned prec = v->id >= 0 && (uint32_t)v->id < d->b->n
			    ? VSTATS_DTYPE_PREC(d->b->vois[v->id].dtype)
			    : 0;

	if (v->dtype < 1 || v->dtype > VSD_Q_U64) {
		d->bad = true;
		return VSTATS_INT;
	}
	return (enum vstats_dtype)((unsigned)base[v->dtype - 1] | prec << 8);
}

static bool is_32bit(enum vstats_dtype dt)
{
	enum vstats_dtype b = VSTATS_DTYPE_BASE(dt);

	return b == VSTATS_S32 || b == VSTATS_U32 || b == VSTATS_Q_S32 || b == VSTATS_Q_U32;
}

/* A value of dtype dt at p (room bytes): an integer as stored, a Q number
 * from its sign and magnitude (Q_GIFVAL: above the 3 control bits). */
static struct vstats_value dump_value(struct dump *d, const uint8_t *p, size_t room,
				      enum vstats_dtype dt)
{
	struct vstats_value v = {.dtype = dt};
	bool four = is_32bit(dt);
	uint64_t bits, sign = four ? 1ull << 31 : 1ull << 63;

	if (room < (four ? 4u : 8u)) {
		d->bad = true;
		return v;
	}
	bits = four ? vstats_sbv1_get32(p) : vstats_sbv1_get64(p);
	if (vstats_dtype_q(dt) && vstats_dtype_signed(dt))
		v.i = (bits & sign ? -1 : 1) * (int64_t)((bits & ~sign) >> 3);
	else if (vstats_dtype_q(dt))
		v.u = bits >> 3;
	else if (four && vstats_dtype_signed(dt))
		v.i = (int32_t)(uint32_t)bits;
	else
		v.u = bits;
	return v;
}

static void dump_put_value(struct dump *d, const uint8_t *p, size_t room, enum vstats_dtype dt)
{
	tostr_value(d->t, dump_value(d, p, room, dt), d->json ? TOSTR_JSON : TOSTR_FREEFORM);
}

/* stats_voistatdata_hist_tostr with objdump: CR, DR, DV by (dtype - 11)
 * % 3, 32-bit counts below DVHIST32; HIST_VSDSZ2NBKTS buckets of 16 bytes
 * (24 for DR's two bounds) after the 8 of oob. */
static void dump_hist(struct dump *d, const struct vstats_sbv1_voistat *vs, enum vstats_dtype dt)
{
	int kind = (vs->dtype - VSD_CRHIST32) % 3; /* 0 CR, 1 DR, 2 DV */
	bool is32 = vs->dtype < VSD_CRHIST32 + 3;
	size_t bsz = kind == 1 ? 24 : 16, n = vs->dsz >= 8 ? (vs->dsz - 8) / bsz : 0;
	const uint8_t *p = vs->data;

	if (vs->dsz < 8) {
		d->bad = true;
		return;
	}
	textbuf_printf(d->t, d->json ? "\"nbkts\":%zu," : "nbkts=%zu, ", n);
	textbuf_printf(d->t, d->json ? "\"oob\":%" PRIu64 ",\"bkts\":[" : "oob=%" PRIu64,
		       is32 ? vstats_sbv1_get32(p) : vstats_sbv1_get64(p));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *bk = p + 8 + i * bsz;
		textbuf_printf(d->t,
			       d->json ? "{\"bkt\":%zu,\"lb\":" : "\n\t\t\t\tbkt[%zu].{lb=", i);
		dump_put_value(d, bk, 8, dt);
		textbuf_printf(d->t, d->json ? ",\"ub\":" : ",ub=");
		if (kind == 1)
			dump_put_value(d, bk + 8, 8, dt);
		else if (kind == 2)
			dump_put_value(d, bk, 8, dt);
		else if (i + 1 < n)
			dump_put_value(d, bk + bsz, 8, dt);
		else /* numeric_limits[LIM_MAX]: the last CR bucket is open */
			tostr_value(d->t, vstats_highest(dt),
				    d->json ? TOSTR_JSON : TOSTR_FREEFORM);
		bk += bsz - 8;
		textbuf_printf(d->t, d->json ? ",\"cnt\":%" PRIu64 "}" : ",cnt=%" PRIu64 "}",
			       is32 ? vstats_sbv1_get32(bk) : vstats_sbv1_get64(bk));
		if (d->json && i + 1 < n)
			textbuf_printf(d->t, ",");
	}
	if (d->json)
		textbuf_printf(d->t, "]");
}

/* A Q_S64 centroid mean: its magnitude above the 3 control bits over
 * 2^Q_NFBITS (the control value's precision, 60 bits at most). */
static double dump_mu(uint64_t q)
{
	static const int nfbits[] = {2, 4, 6, 8, 16, 32, 48, 60};
	double mag = ldexp((double)((q & ~(1ull << 63)) >> 3), -nfbits[q & 7]);

	return q >> 63 ? -mag : mag;
}

/* stats_voistatdata_tdgst_tostr with objdump: smplcnt, compcnt, the
 * ARB16 head's curnodes and maxnodes, then every node of the array in
 * its order (ARB_CNODE 0 to maxnodes - 1), free ones too. */
static void dump_tdgst(struct dump *d, const struct vstats_sbv1_voistat *vs)
{
	const uint8_t *p = vs->data;
	unsigned max, cur;

	if (vs->dsz < 32 || vs->dtype != VSD_TDGST64) {
		d->bad = true;
		return;
	}
	cur = vstats_sbv1_get16(p + 16);
	max = vstats_sbv1_get16(p + 18);
	if (32 + (size_t)max * 24 > vs->dsz) {
		d->bad = true;
		return;
	}
	textbuf_printf(d->t,
		       d->json ? "\"smplcnt\":%" PRIu64 ",\"compcnt\":%" PRIu32
				 ",\"maxctds\":%u,\"nctds\":%u,\"ctds\":["
			       : "smplcnt=%" PRIu64 ", compcnt=%" PRIu32 ", maxctds=%u, nctds=%u",
		       vstats_sbv1_get64(p), vstats_sbv1_get32(p + 8), max, cur);
	for (unsigned i = 0; i < max; i++) {
		const uint8_t *node = p + 32 + (size_t)i * 24;
		textbuf_printf(d->t, d->json ? "{\"ctd\":%u,\"mu\":" : "\n\t\t\t\tctd[%u].{mu=", i);
		put_double(d->t, dump_mu(vstats_sbv1_get64(node + 8)),
			   d->json ? TOSTR_JSON : TOSTR_FREEFORM);
		textbuf_printf(d->t, d->json ? ",\"cnt\":%" PRIu64 "}" : ",cnt=%" PRIu64 "}",
			       vstats_sbv1_get64(node + 16));
		if (d->json && i + 1 < max)
			textbuf_printf(d->t, ",");
	}
	if (d->json)
		textbuf_printf(d->t, "]");
}

/* stats_voistatdata_tostr of a voistat's data, by its dtype. */
static void dump_data(struct dump *d, const struct vstats_sbv1_voi *v,
		      const struct vstats_sbv1_voistat *vs)
{
	enum vstats_dtype dt = dump_dtype(d, v);

	if (vs->dtype == VSD_VOISTATE) {
		textbuf_printf(d->t, d->json ? "\"prev\":" : "prev=");
		dump_put_value(d, vs->data, vs->dsz, dt);
	} else if (vs->dtype <= VSD_Q_U64) {
		dump_put_value(d, vs->data, vs->dsz, dt);
	} else if (vs->dtype <= VSD_DVHIST64) {
		dump_hist(d, vs, dt);
	} else {
		dump_tdgst(d, vs);
	}
}

static const char *dump_name(const struct dump *d, int id)
{
	return d->meta && (uint32_t)id < d->b->n ? d->b->tpl->voi[id].name : "";
}

/* stats_v1_itercb_tostr_freeform with SB_TOSTR_OBJDUMP. */
static void dump_freeform(struct dump *d, int slot, const struct vstats_sbv1_voi *v,
			  const struct vstats_sbv1_voistat *vs, int j, unsigned it)
{
	const struct vstats_sbv1_hdr *h = &d->h;

	if (it & IT_FIRST_CB)
		textbuf_printf(d->t,
			       "struct statsblobv1@0x0, abi=%u, endian=%u, maxsz=%u, cursz=%u, "
			       "created=%" PRId64 ", lastrst=%" PRId64 ", flags=0x%04x, "
			       "stats_off=%u, statsdata_off=%u, tplhash=%" PRIu32,
			       h->abi, h->endian, h->maxsz, h->cursz, h->created, h->lastrst,
			       h->flags, h->stats_off, h->statsdata_off, h->tplhash);
	if (it & IT_FIRST_VOISTAT) {
		textbuf_printf(d->t, "\n\tvois[%d]: id=%d", slot, v->id);
		if (v->id < 0)
			return;
		textbuf_printf(d->t,
			       ", name=\"%s\", flags=0x%04x, dtype=%s, voistatmaxid=%d, "
			       "stats_off=%u",
			       dump_name(d, v->id), v->flags, vstats_sbv1_dtype_name(v->dtype),
			       v->voistatmaxid, v->stats_off);
	}
	textbuf_printf(d->t, "\n\t\tvois[%d]stat[%d]: stype=", v->id, j);
	if (vs->stype < 0) {
		textbuf_printf(d->t, "%d", vs->stype);
		return;
	}
	textbuf_printf(d->t, "%s, errs=%u, flags=0x%04x, dtype=%s, dsz=%u, data_off=%u",
		       vstats_sbv1_stype_name(vs->stype), vs->errs, vs->flags,
		       vstats_sbv1_dtype_name(vs->dtype), vs->dsz, vs->data_off);
	textbuf_printf(d->t, "\n\t\t\tvoistatdata: ");
	dump_data(d, v, vs);
}

/* stats_v1_itercb_tostr_json with SB_TOSTR_OBJDUMP: every statistic's
 * data, set or not; without SB_TOSTR_META the names are null. */
static void dump_json(struct dump *d, int slot, const struct vstats_sbv1_voi *v,
		      const struct vstats_sbv1_voistat *vs, int j, unsigned it)
{
	const struct vstats_sbv1_hdr *h = &d->h;

	if (it & IT_FIRST_CB) {
		textbuf_printf(
		    d->t,
		    "{\"abi\":%u,\"endian\":%u,\"maxsz\":%u,\"cursz\":%u,\"created\":%" PRId64
		    ",\"lastrst\":%" PRId64 ",\"flags\":%u,\"stats_off\":%u,"
		    "\"statsdata_off\":%u,",
		    h->abi, h->endian, h->maxsz, h->cursz, h->created, h->lastrst, h->flags,
		    h->stats_off, h->statsdata_off);
		if (d->meta)
			textbuf_printf(d->t, "\"tplname\":\"%s\",", d->b->tpl->name);
		else
			textbuf_printf(d->t, "\"tplname\":null,");
		textbuf_printf(d->t, "\"tplhash\":%" PRIu32 ",\"vois\":{", h->tplhash);
	}
	if (it & IT_FIRST_VOISTAT) {
		textbuf_printf(d->t, "\"[%d]\":{\"id\":%d", slot, v->id);
		if (v->id < 0) {
			textbuf_printf(d->t, "},");
			return;
		}
		if (d->meta)
			textbuf_printf(d->t, ",\"name\":\"%s\",", dump_name(d, v->id));
		else
			textbuf_printf(d->t, ",\"name\":null,");
		textbuf_printf(d->t,
			       "\"flags\":%u,\"dtype\":\"%s\",\"voistatmaxid\":%d,\"stats_off\":%u,"
			       "\"stats\":{",
			       v->flags, vstats_sbv1_dtype_name(v->dtype), v->voistatmaxid,
			       v->stats_off);
	}
	textbuf_printf(d->t, "\"[%d]\":", j);
	if (vs->stype < 0) {
		textbuf_printf(d->t, "{\"stype\":-1},");
		return;
	}
	textbuf_printf(
	    d->t,
	    "{\"stype\":\"%s\",\"errs\":%u,\"flags\":%u,\"dtype\":\"%s\",\"data_off\":%u,"
	    "\"voistatdata\":{",
	    vstats_sbv1_stype_name(vs->stype), vs->errs, vs->flags,
	    vstats_sbv1_dtype_name(vs->dtype), vs->data_off);
	if (vs->dtype > VSD_VOISTATE && vs->dtype <= VSD_Q_U64) /* not vsd_compoundtype */
		textbuf_printf(d->t, "\"val\":");
	dump_data(d, v, vs);
	textbuf_printf(d->t, "}}");
	if (it & IT_LAST_VOISTAT)
		textbuf_printf(d->t, "}}");
	textbuf_printf(d->t, it & IT_LAST_CB ? "}}" : ",");
}

static void dump_cb(struct dump *d, int slot, const struct vstats_sbv1_voi *v,
		    const struct vstats_sbv1_voistat *vs, int j, unsigned it)
{
	if (d->json)
		dump_json(d, slot, v, vs, j, it);
	else
		dump_freeform(d, slot, v, vs, j, it);
}

/* stats_v1_blob_iter with SB_IT_NULLVOI | SB_IT_NULLVOISTAT over the
 * bytes, its flags as it sets them (a VOI of id -1 is called once, with
 * no voistat; a slot of stype -1 is called too). */
static int dump_walk(struct dump *d)
{
	unsigned it = IT_FIRST_CB;
	bool firstvoi = true;

	for (int32_t i = 0; i < d->h.nvois; i++) {
		struct vstats_sbv1_voi v;
		bool last = i == d->h.nvois - 1;
		if (vstats_sbv1_walk_voi(d->blob, &d->h, i, &v) < 0)
			return -EINVAL;
		it |= IT_FIRST_VOISTAT;
		if (!firstvoi && last)
			it |= IT_LAST_CB;
		if (v.id < 0) {
			dump_cb(d, i, &v, NULL, -1, it);
			firstvoi = false;
			it &= ~(unsigned)IT_FIRST_CB;
		}
		for (int j = 0; j <= v.voistatmaxid; j++) {
			struct vstats_sbv1_voistat vs;
			if (vstats_sbv1_walk_voistat(d->blob, &d->h, &v, j, &vs) < 0)
				return -EINVAL;
			if (j == v.voistatmaxid)
				it |= IT_LAST_VOISTAT | (last ? IT_LAST_CB : 0);
			else
				it &= ~(unsigned)IT_LAST_CB;
			dump_cb(d, i, &v, &vs, j, it);
			it &= ~(unsigned)(IT_FIRST_CB | IT_FIRST_VOISTAT | IT_LAST_VOISTAT);
		}
	}
	return d->bad ? -EINVAL : 0;
}

/* The blob encoded as format=blob serves it, then its bytes walked into
 * a text of its own, appended to t only when whole. */
static int tostr_objdump(struct textbuf *t, const struct tostr_blob *b, enum tostr_fmt fmt,
			 uint32_t flags, const char **why)
{
	struct vstats_sbv1_blob sb = {b->vois, b->n, b->hash, b->created, b->lastrst};
	struct textbuf out = {.max = t->max};
	struct dump d = {.t = &out, .b = b, .json = fmt == TOSTR_JSON, .meta = flags & TOSTR_META};
	uint8_t *blob = malloc(VSTATS_SBV1_MAXSZ);
	size_t len;
	int rc;

	if (!blob) {
		*why = "no memory for the blob";
		return -ENOMEM;
	}
	d.blob = blob;
	if ((rc = vstats_sbv1_encode(&sb, blob, VSTATS_SBV1_MAXSZ, &len, why)) < 0)
		goto out_free;
	if ((rc = vstats_sbv1_walk_hdr(blob, len, &d.h)) < 0 || (rc = dump_walk(&d)) < 0) {
		*why = "the encoded blob's bytes do not walk as a V1 blob";
		rc = -EIO;
		goto out_free;
	}
	textbuf_printf(t, "%.*s\n", (int)out.len, out.p ? out.p : "");
	if (out.failed)
		t->failed = true;
out_free:
	textbuf_free(&out);
	free(blob);
	return rc;
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
	unsigned long v;
	char stat[8];
	int i;
	(void)p;

	if (!split(what, &v, stat, sizeof(stat))) {
		reply_fail(r, 400, -EINVAL, "data/<voi id>/<SUM|MAX|MIN|HIST|TDGST>");
	} else if (!s->sampled) {
		reply_fail(r, 404, -EINVAL, "this source has no blob (no template, or sample_pct)");
	} else if (v > s->nmore) {
		reply_fail(r, 400, -EINVAL, "no VOI of that id in the blob");
	} else if ((i = fetch_stat_of(source_voi(s, (uint32_t)v), stat)) < 0) {
		reply_fail(r, 400, -EINVAL, "the VOI has no statistic of that type");
	} else {
		const struct vstats_voi *voi = source_voi(s, (uint32_t)v);
		tostr_voistatdata(&r->text, voi, &voi->stat[i], fmt);
		textbuf_printf(&r->text, "\n");
	}
}
