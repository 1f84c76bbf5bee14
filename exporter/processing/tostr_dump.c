/* FreeBSD stats(3)'s stats_v1_blob_tostr with SB_TOSTR_OBJDUMP: the
 * source's blob encoded as format=blob serves it (vstats_sbv1.c), then
 * its bytes walked (vstats_sbv1_walk.c) as stats_v1_blob_iter walks them
 * with SB_IT_NULLVOI | SB_IT_NULLVOISTAT, each field written with the
 * format strings of sys/kern/subr_stats.c's stats_v1_itercb_tostr_freeform
 * and _json and stats_voistatdata_tostr with objdump set. So every
 * offset, size, flag and data type shown is the served blob's. */
#include "tostr.h"
#include "vstats_sbv1.h"
#include "vstats_sbv1_walk.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* struct voistatdata_tdgstclust64 on amd64: smplcnt, compcnt, the ARB16
 * head's curnodes and maxnodes at 16, nodes from 32 of 24 bytes (the
 * ARB16 entry, the Q_S64 mu, the s64 cnt); a tdgstclust32's: u32
 * smplcnt, the head at 8, nodes from 20 of 16 bytes (the entry, the
 * Q_S32 mu, the s32 cnt). */
struct tdgst_layout {
	size_t head, nodes, node_size, width;
};
static const struct tdgst_layout tdgst64 = {16, 32, 24, 8};
static const struct tdgst_layout tdgst32 = {8, 20, 16, 4};

/* stats_v1_blob_iter's ctx flags. */
enum { IT_FIRST_CB = 1, IT_LAST_CB = 2, IT_FIRST_VOISTAT = 4, IT_LAST_VOISTAT = 8 };

/* enum vsd_dtype numbers the dump reads. */
enum {
	VSD_VOISTATE = 0,
	VSD_Q_U64 = 10,
	VSD_CRHIST32 = 11,
	VSD_DVHIST64 = 16,
	VSD_TDGST32 = 17,
	VSD_TDGST64 = 18
};

/* One walk: the blob's bytes and header, what names its VOIs, and
 * whether a field was found inconsistent (bad: the text is not given). */
struct dump {
	struct textbuf *t;
	const struct tostr_blob *b;
	const uint8_t *blob;
	struct vstats_sbv1_hdr h;
	enum tostr_fmt fmt;
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
	tostr_value(d->t, dump_value(d, p, room, dt), d->fmt);
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
			tostr_value(d->t, vstats_highest(dt), d->fmt);
		bk += bsz - 8;
		textbuf_printf(d->t, d->json ? ",\"cnt\":%" PRIu64 "}" : ",cnt=%" PRIu64 "}",
			       is32 ? vstats_sbv1_get32(bk) : vstats_sbv1_get64(bk));
		if (d->json && i + 1 < n)
			textbuf_printf(d->t, ",");
	}
	if (d->json)
		textbuf_printf(d->t, "]");
}

/* A Q_S64 or Q_S32 centroid mean: its magnitude above the 3 control
 * bits over 2^Q_NFBITS (the control value's precision, at most the 60 or
 * 28 bits there are). */
static double dump_mu(uint64_t q, size_t width)
{
	static const int nfbits[] = {2, 4, 6, 8, 16, 32, 48, 60};
	unsigned sign = (unsigned)width * 8 - 1;
	int nf = nfbits[q & 7];
	double mag;

	if (width == 4 && nf > 28)
		nf = 28;
	mag = ldexp((double)((q & ~(1ull << sign)) >> 3), -nf);
	return q >> sign & 1 ? -mag : mag;
}

static uint64_t get_width(const uint8_t *p, size_t width)
{
	return width == 4 ? vstats_sbv1_get32(p) : vstats_sbv1_get64(p);
}

/* stats_voistatdata_tdgst_tostr with objdump: smplcnt, compcnt, the
 * ARB16 head's curnodes and maxnodes, then every node of the array in
 * its order (ARB_CNODE 0 to maxnodes - 1), free ones too. A centroid's
 * cnt is signed (int32_t, int64_t). */
static void dump_tdgst(struct dump *d, const struct vstats_sbv1_voistat *vs)
{
	const struct tdgst_layout *l = vs->dtype == VSD_TDGST32 ? &tdgst32 : &tdgst64;
	const uint8_t *p = vs->data;
	unsigned max, cur;

	if ((vs->dtype != VSD_TDGST64 && vs->dtype != VSD_TDGST32) || vs->dsz < l->nodes) {
		d->bad = true;
		return;
	}
	cur = vstats_sbv1_get16(p + l->head);
	max = vstats_sbv1_get16(p + l->head + 2);
	if (l->nodes + (size_t)max * l->node_size > vs->dsz) {
		d->bad = true;
		return;
	}
	textbuf_printf(d->t,
		       d->json ? "\"smplcnt\":%" PRIu64 ",\"compcnt\":%" PRIu32
				 ",\"maxctds\":%u,\"nctds\":%u,\"ctds\":["
			       : "smplcnt=%" PRIu64 ", compcnt=%" PRIu32 ", maxctds=%u, nctds=%u",
		       get_width(p, l->width), vstats_sbv1_get32(p + l->width), max, cur);
	for (unsigned i = 0; i < max; i++) {
		const uint8_t *node = p + l->nodes + (size_t)i * l->node_size;
		uint64_t cnt = get_width(node + 8 + l->width, l->width);
		textbuf_printf(d->t, d->json ? "{\"ctd\":%u,\"mu\":" : "\n\t\t\t\tctd[%u].{mu=", i);
		tostr_value(
		    d->t,
		    (struct vstats_value){VSTATS_FLOAT,
					  {.f = dump_mu(get_width(node + 8, l->width), l->width)}},
		    d->fmt);
		textbuf_printf(d->t, d->json ? ",\"cnt\":%" PRId64 "}" : ",cnt=%" PRId64 "}",
			       l->width == 4 ? (int64_t)(int32_t)(uint32_t)cnt : (int64_t)cnt);
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
int tostr_objdump(struct textbuf *t, const struct tostr_blob *b, enum tostr_fmt fmt, uint32_t flags,
		  const char **why)
{
	struct vstats_sbv1_blob sb = {b->vois, b->n, b->hash, b->created, b->lastrst};
	struct textbuf out = {.max = t->max};
	struct dump d = {
	    .t = &out, .b = b, .fmt = fmt, .json = fmt == TOSTR_JSON, .meta = flags & TOSTR_META};
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
