/* stats(3)'s statsblob V1 as an amd64 FreeBSD kernel lays it out, from
 * sys/sys/stats.h and sys/kern/subr_stats.c: the header, the vois[]
 * array indexed by VOI id, each VOI's voistat array indexed by statistic
 * type, and the statistics' data, all little-endian and packed the way
 * stats_v1_blob_expand packs them. */
#include "vstats_sbv1.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* enum voi_stype and enum vsd_dtype, FreeBSD's numbers. */
enum {
	VS_VOISTATE,
	VS_SUM,
	VS_MAX,
	VS_MIN,
	VS_HIST,
	VS_TDGST,
	VS_NSLOTS,
};
enum {
	VSD_VOISTATE = 0,
	VSD_INT_S32 = 1,
	VSD_INT_U32 = 2,
	VSD_INT_S64 = 3,
	VSD_INT_U64 = 4,
	VSD_INT_SLONG = 5,
	VSD_INT_ULONG = 6,
	VSD_Q_S32 = 7,
	VSD_Q_U32 = 8,
	VSD_Q_S64 = 9,
	VSD_Q_U64 = 10,
	VSD_CRHIST32 = 11,
	VSD_DRHIST32 = 12,
	VSD_DVHIST32 = 13,
	VSD_CRHIST64 = 14,
	VSD_DRHIST64 = 15,
	VSD_DVHIST64 = 16,
	VSD_TDGSTCLUST32 = 17,
	VSD_TDGSTCLUST64 = 18,
};

/* Sizes and alignment, from sys/sys/stats.h's structs on amd64 (LP64):
 * - A SUM, MAX or MIN is its VOI's own dtype, vsd_dtype2size bytes
 *   (stats_vss_numeric_hlpr): voistatdata_int32 and _q32 are 4 bytes,
 *   _int64, _q64 and _intlong (long is 64-bit) 8.
 * - voistatdata_numeric, a histogram's bound and the VOISTATE's previous
 *   value, is a union of 8-byte members: 8 bytes, 8-aligned, a 32-bit
 *   value in its low 4 bytes (little-endian: the member before the pad).
 * - A histogram's buckets start 8-aligned: a ...HIST32's u32 oob is
 *   followed by 4 bytes of padding, and its bucket ({numeric lb[, ub];
 *   u32 cnt}) is padded to a multiple of 8, so CR and DV buckets are 16
 *   bytes and DR ones 24, as the ...HIST64's; HIST_NBKTS2VSDSZ is 8 + n
 *   buckets for both. Only the count fields' width differs.
 * - The statistics' data are packed one after another by dsz
 *   (stats_v1_tpl_add_voistats adds each vsdsz to newstatdataidx), with
 *   no padding between: after a 4-byte SUM the next statistic starts
 *   4 bytes on, unaligned, as in FreeBSD's blob. Padding bytes are 0, as
 *   the helpers' M_ZERO allocations leave them. */
#define VOI_SIZE 8	     /* struct voi */
#define VOISTAT_SIZE 8	     /* struct voistat */
#define NUMERIC_SIZE 8	     /* struct voistatdata_numeric */
#define VOI_REQSTATE 0x0001u /* the VOI keeps its previous value (SB_VOI_RELUPDATE) */
#define VS_VSDVALID 0x0001u  /* the statistic took a value since its reset */
#define VS_ERRS_MAX 255u     /* errs is an 8-bit field that stops there */
#define PLANS_MAX 16	     /* VOIs of a blob encoded here (a template has at most 8) */

/* struct voistatdata_tdgstclust64 (without DIAGNOSTIC, as GENERIC): u64
 * smplcnt, u32 compcnt, then the ARB16_HEAD, six int16 indexes whose
 * arb_nodes[] of 8-aligned centroids put the head at 16 and the nodes at
 * 32. A centroid (voistatdata_tdgstctd64) is its ARB16_ENTRY (three
 * int16 indexes and an int8 colour, 8 bytes), the Q_S64 mu and the s64
 * cnt: 24 bytes.
 * struct voistatdata_tdgstclust32: u32 smplcnt, u32 compcnt, the head at
 * 8 and, its centroids (voistatdata_tdgstctd32: the ARB16_ENTRY, the
 * Q_S32 mu at 8, the s32 cnt at 12, 16 bytes) being 4-aligned, the nodes
 * at 20 (TDGST_NCTRS2VSDSZ: 20 + 16 per centroid). */
struct tdgst_layout {
	size_t head, nodes, node_size, width; /* width: of smplcnt, mu and cnt */
};
static const struct tdgst_layout tdgst64 = {16, 32, 24, 8};
static const struct tdgst_layout tdgst32 = {8, 20, 16, 4};
#define ARB_NULLIDX 0xffffu /* -1 as an int16 */
#define ARB_BLACK 0
#define ARB_RED 1
#define ARB_FREE 0xff /* ARB_NULLCOL */

/* One VOI's plan: which statistic sits in each voistat slot (-1: none),
 * its voistat slots (voistatmaxid + 1) and its data bytes. */
struct voi_plan {
	int stat[VS_NSLOTS];
	size_t nslots, data;
};

static int slot_of(enum vstats_stype t)
{
	static const int slot[] = {
	    [VSTATS_SUM] = VS_SUM,     [VSTATS_MAX] = VS_MAX,	  [VSTATS_MIN] = VS_MIN,
	    [VSTATS_CRHIST] = VS_HIST, [VSTATS_DRHIST] = VS_HIST, [VSTATS_DVHIST] = VS_HIST,
	    [VSTATS_TDGST] = VS_TDGST};
	return (size_t)t < sizeof(slot) / sizeof(slot[0]) && slot[t] ? slot[t] : -1;
}

/* A histogram's data: its oob, then per bucket the bounds it keeps (CR
 * the lower, DR both, DV the value) and a count: 8 bytes, a 64-bit one
 * or a 32-bit one and its padding. */
static size_t hist_bucket_size(enum vstats_stype t)
{
	return (t == VSTATS_DRHIST ? 2 : 1) * NUMERIC_SIZE + 8;
}

/* vsd_dtype2size of a VOI's dtype: 4 for the 32-bit ones, else 8. */
static size_t value_size(enum vstats_dtype d)
{
	enum vstats_dtype b = VSTATS_DTYPE_BASE(d);

	return b == VSTATS_S32 || b == VSTATS_U32 || b == VSTATS_Q_S32 || b == VSTATS_Q_U32 ? 4 : 8;
}

static size_t stat_size(const struct vstats_voi *v, const struct vstats_stat *st)
{
	if (st->stype >= VSTATS_CRHIST && st->stype <= VSTATS_DVHIST)
		return 8 + (size_t)st->hist.n * hist_bucket_size(st->stype);
	if (st->stype == VSTATS_TDGST) { /* TDGST_NCTRS2VSDSZ */
		const struct tdgst_layout *l = st->tdgst_counts32 ? &tdgst32 : &tdgst64;
		return l->nodes + tdigest_centroids_max(st->td) * l->node_size;
	}
	return value_size(v->dtype);
}

/* The largest |mean| of a digest's centroids. */
static double tdgst_maxabs(struct tdigest *td)
{
	double mu, w, maxabs = 0;

	for (size_t i = 0; i < tdigest_centroids(td); i++) {
		tdigest_centroid(td, i, &mu, &w);
		maxabs = fmax(maxabs, fabs(mu));
	}
	return maxabs;
}

/* A Q_S32 keeps 28 bits of magnitude, at least 2 of them fractional. */
#define TDGST32_MU_LIMIT 67108864.0 /* 2^26 */

static int plan_voi(const struct vstats_voi *v, struct voi_plan *pl, const char **why)
{
	memset(pl, 0, sizeof(*pl));
	for (int i = 0; i < VS_NSLOTS; i++)
		pl->stat[i] = -1;
	if (VSTATS_DTYPE_BASE(v->dtype) == VSTATS_FLOAT) {
		*why = "a double VOI has no stats(3) data type: its blob cannot be laid out";
		return -EOPNOTSUPP;
	}
	pl->nslots = 1;
	pl->data = v->relupdate ? NUMERIC_SIZE : 0; /* the VOISTATE's previous value */
	for (uint32_t k = 0; k < v->nstats; k++) {
		int slot = slot_of(v->stat[k].stype);
		if (slot < 0) {
			*why = "a statistic of a type the blob does not lay out yet";
			return -EOPNOTSUPP;
		}
		if (slot == VS_TDGST && tdigest_centroids_max(v->stat[k].td) > INT16_MAX) {
			*why = "a t-digest of more centroids than an ARB16 tree indexes (32767)";
			return -EFBIG;
		}
		if (slot == VS_TDGST && v->stat[k].tdgst_counts32 &&
		    !(tdgst_maxabs(v->stat[k].td) < TDGST32_MU_LIMIT)) {
			*why =
			    "a t-digest mean of 2^26 or more in magnitude: no Q_S32 holds it, so "
			    "its TDGSTCLUST32 cannot be laid out";
			return -ERANGE;
		}
		if (pl->stat[slot] >= 0) {
			*why = "stats(3) keeps one statistic of each type per VOI: a second "
			       "histogram has no voistat slot in the blob";
			return -EOPNOTSUPP;
		}
		pl->stat[slot] = (int)k;
		if ((size_t)slot + 1 > pl->nslots)
			pl->nslots = (size_t)slot + 1;
		pl->data += stat_size(v, &v->stat[k]);
	}
	return 0;
}

int64_t vstats_sbv1_sbintime(uint64_t ns)
{
	uint64_t s = ns / 1000000000u, frac = ns % 1000000000u;

	return (int64_t)((s << 32) + (frac << 32) / 1000000000u);
}

/* The plans of every VOI and the blob's size, bounded at every step. */
static int plan_blob(const struct vstats_sbv1_blob *b, struct voi_plan *plans, size_t *size,
		     const char **why)
{
	size_t total = VSTATS_SBV1_HDR_SIZE + b->nvoi * VOI_SIZE;
	int rc;

	if (b->nvoi > PLANS_MAX) {
		*why = "more VOIs than a blob is encoded with here (16)";
		return -EFBIG;
	}
	for (size_t v = 0; v < b->nvoi && total <= VSTATS_SBV1_MAXSZ; v++) {
		if ((rc = plan_voi(&b->vois[v], &plans[v], why)) < 0)
			return rc;
		total += plans[v].nslots * VOISTAT_SIZE + plans[v].data;
	}
	if (total > VSTATS_SBV1_MAXSZ) {
		*why = "the blob would pass 65535 bytes, the most stats(3)'s V1 layout can "
		       "size (maxsz and cursz are 16-bit)";
		return -EFBIG;
	}
	*size = total;
	return 0;
}

int vstats_sbv1_size(const struct vstats_sbv1_blob *b, size_t *size, const char **why)
{
	struct voi_plan plans[PLANS_MAX];

	return plan_blob(b, plans, size, why);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* struct voistat: int8 stype, a dtype in 8 bits, u16 data_off, u16 dsz,
 * then errs and flags sharing a u16 (errs its low 8 bits on amd64). */
static void put_voistat(uint8_t *p, int stype, int dtype, size_t data_off, size_t dsz,
			uint64_t errs, unsigned flags)
{
	p[0] = (uint8_t)(int8_t)stype;
	p[1] = (uint8_t)dtype;
	put16(p + 2, (uint16_t)data_off);
	put16(p + 4, (uint16_t)dsz);
	p[6] = (uint8_t)(errs > VS_ERRS_MAX ? VS_ERRS_MAX : errs);
	p[7] = (uint8_t)flags;
}

/* enum vsd_dtype of a VOI's dtype. */
static int value_dtype(enum vstats_dtype d)
{
	static const int vsd[VSTATS_DTYPES] = {
	    [VSTATS_INT] = VSD_INT_S64,	   [VSTATS_UINT] = VSD_INT_U64,
	    [VSTATS_S32] = VSD_INT_S32,	   [VSTATS_U32] = VSD_INT_U32,
	    [VSTATS_LONG] = VSD_INT_SLONG, [VSTATS_ULONG] = VSD_INT_ULONG,
	    [VSTATS_Q_S32] = VSD_Q_S32,	   [VSTATS_Q_U32] = VSD_Q_U32,
	    [VSTATS_Q_S64] = VSD_Q_S64,	   [VSTATS_Q_U64] = VSD_Q_U64,
	};
	enum vstats_dtype b = VSTATS_DTYPE_BASE(d);

	return b < VSTATS_DTYPES ? vsd[b] : 0;
}

/* qmath's Q_CTRLINI: the 3 control bits of a precision (2, 4, 6, 8: 0
 * to 3; 16, 32, 48, 64: 4 to 7). */
static unsigned q_ctrlini(unsigned prec)
{
	return prec <= 8 ? (prec - 1) >> 1 : 0x4u | (prec - 1) >> 4;
}

/* A value as its dtype's bits (the low value_size bytes are the value):
 * an integer two's complement; a Q number as qmath stores it, Q_SIFVAL
 * of its Q_GIFVAL (the number times 2^precision) above the control bits
 * of Q_CTRLINI(precision), sign and magnitude (the sign in the top bit
 * of its 32 or 64). */
static uint64_t value_bits(struct vstats_value x)
{
	unsigned signbit = value_size(x.dtype) * 8 - 1;
	bool neg;
	uint64_t mag;

	if (!vstats_dtype_q(x.dtype))
		return x.u;
	neg = vstats_dtype_signed(x.dtype) && x.i < 0;
	mag = !vstats_dtype_signed(x.dtype) ? x.u : neg ? -(uint64_t)x.i : (uint64_t)x.i;
	return (neg ? 1ull << signbit : 0) | mag << 3 | q_ctrlini(VSTATS_DTYPE_PREC(x.dtype));
}

/* A value in n bytes: 4 or 8 (a 32-bit value alone), or a
 * voistatdata_numeric's 8 with a 32-bit value in its low 4. */
static void put_value(uint8_t *p, struct vstats_value x, size_t n)
{
	uint64_t bits = value_bits(x);

	if (value_size(x.dtype) == 4) {
		put32(p, (uint32_t)bits);
		if (n == 8)
			put32(p + 4, 0); /* the numeric's pad */
		return;
	}
	put64(p, bits);
}

static int stat_dtype(const struct vstats_voi *v, const struct vstats_stat *st)
{
	switch (st->stype) {
	case VSTATS_TDGST:
		return st->tdgst_counts32 ? VSD_TDGSTCLUST32 : VSD_TDGSTCLUST64;
	case VSTATS_CRHIST:
		return st->hist.counts32 ? VSD_CRHIST32 : VSD_CRHIST64;
	case VSTATS_DRHIST:
		return st->hist.counts32 ? VSD_DRHIST32 : VSD_DRHIST64;
	case VSTATS_DVHIST:
		return st->hist.counts32 ? VSD_DVHIST32 : VSD_DVHIST64;
	default:
		return value_dtype(v->dtype);
	}
}

/* The Q_S64 precisions (fractional bits) its 3 control bits can say,
 * Q_NFBITS of control values 0 to 7 (64 is capped at the 60 there are);
 * a Q_S32's stop at 28 (Q_MAXNFBITS), first said by control value 5. */
static const unsigned q_nfbits[] = {2, 4, 6, 8, 16, 32, 48, 60};
static const unsigned q32_nfbits[] = {2, 4, 6, 8, 16, 28};

/* The finest precision whose integer bits (magbits less the fraction's)
 * hold every |mean| of the digest: the control value. */
static unsigned q_ctrl_for(double maxabs, const unsigned *nfbits, unsigned top, int magbits)
{
	unsigned c = top;

	while (c > 0 && !(maxabs < ldexp(1.0, magbits - (int)nfbits[c])))
		c--;
	return c;
}

/* x as a Q of magbits bits of magnitude and control value c: sign (the
 * top bit of width bytes) and magnitude (Q_SIFVAL), the magnitude rounded
 * to the nearest 2^-nfbits, above the control bits. */
static uint64_t q_signed(double x, unsigned c, const unsigned *nfbits, int magbits)
{
	double mag = nearbyint(ldexp(fabs(x), (int)nfbits[c]));
	uint64_t top = (1ull << magbits) - 1;
	uint64_t m = mag >= ldexp(1.0, magbits) ? top : (uint64_t)mag;

	return (x < 0 && m ? 1ull << (magbits + 3) : 0) | m << 3 | c;
}

/* A u32 or u64 as the layout's width says. */
static void put_width(uint8_t *p, uint64_t v, size_t width)
{
	if (width == 4)
		put32(p, (uint32_t)v);
	else
		put64(p, v);
}

/* Node i's ARB16_ENTRY. */
static void put_arb_entry(uint8_t *node, unsigned parent, unsigned left, unsigned right,
			  unsigned color)
{
	put16(node, (uint16_t)parent);
	put16(node + 2, (uint16_t)left);
	put16(node + 4, (uint16_t)right);
	node[6] = (uint8_t)color;
	node[7] = 0;
}

/* Nodes [lo, hi) (centroids in increasing mean) as a subtree split at
 * its middle, so every level but the deepest is full: the nodes at depth
 * `red` are red, the rest black, a valid red-black tree. Its root. */
static unsigned arb_build(uint8_t *nodes, size_t node_size, unsigned lo, unsigned hi,
			  unsigned parent, unsigned depth, unsigned red)
{
	if (lo >= hi)
		return ARB_NULLIDX;
	unsigned mid = lo + (hi - lo) / 2;
	unsigned l = arb_build(nodes, node_size, lo, mid, mid, depth + 1, red);
	unsigned r = arb_build(nodes, node_size, mid + 1, hi, mid, depth + 1, red);
	put_arb_entry(nodes + (size_t)mid * node_size, parent, l, r,
		      depth == red ? ARB_RED : ARB_BLACK);
	return mid;
}

/* A TDGSTCLUST64 or TDGSTCLUST32: the centroids in nodes 0 to n-1 by
 * increasing mean, in a red-black tree; the nodes past them on the free
 * list (linked by their right index, colour ARB_NULLCOL), as ARB_INIT
 * leaves them. A TDGSTCLUST32's means fit (plan_voi) and its counts too
 * (VSTATS_TDGST32_COUNT_MAX). */
static void put_tdgst(uint8_t *p, struct tdigest *td, const struct tdgst_layout *l)
{
	size_t n = tdigest_centroids(td), max = tdigest_centroids_max(td);
	uint8_t *nodes = p + l->nodes;
	bool q32 = l->width == 4;
	const unsigned *nfbits = q32 ? q32_nfbits : q_nfbits;
	int magbits = q32 ? 28 : 60;
	unsigned depth = 0, c = q_ctrl_for(tdgst_maxabs(td), nfbits, q32 ? 5 : 7, magbits);
	double mu, w;

	memset(p, 0, l->nodes);
	put_width(p, (uint64_t)tdigest_count(td), l->width);
	put32(p + l->width, (uint32_t)tdigest_merges(td));
	while (((size_t)1 << (depth + 1)) - 1 < n) /* levels 0 to depth-1 are full */
		depth++;
	put16(p + l->head, (uint16_t)n);
	put16(p + l->head + 2, (uint16_t)max);
	put16(p + l->head + 4,
	      (uint16_t)arb_build(nodes, l->node_size, 0, (unsigned)n, ARB_NULLIDX, 0,
				  ((size_t)1 << (depth + 1)) - 1 == n ? UINT32_MAX : depth));
	put16(p + l->head + 6, (uint16_t)(n < max ? n : ARB_NULLIDX));
	put16(p + l->head + 8, (uint16_t)(n ? 0 : ARB_NULLIDX));
	put16(p + l->head + 10, (uint16_t)(n ? n - 1 : ARB_NULLIDX));
	for (size_t i = 0; i < max; i++) {
		uint8_t *node = nodes + i * l->node_size;
		if (i >= n) { /* free: what ARB_INIT over zeroed memory leaves */
			put_arb_entry(node, 0, 0, i + 1 < max ? (unsigned)i + 1 : ARB_NULLIDX,
				      ARB_FREE);
			put_width(node + 8, c, l->width);
			put_width(node + 8 + l->width, 0, l->width);
			continue;
		}
		tdigest_centroid(td, i, &mu, &w);
		put_width(node + 8, q_signed(mu, c, nfbits, magbits), l->width);
		put_width(node + 8 + l->width, (uint64_t)w, l->width);
	}
}

/* A histogram count: a ...HIST32's u32 and its 4 bytes of padding (held
 * below 2^32 by vstats), else a u64. */
static void put_count(uint8_t *p, uint64_t c, bool counts32)
{
	if (counts32) {
		put32(p, (uint32_t)c);
		put32(p + 4, 0);
		return;
	}
	put64(p, c);
}

/* A statistic's data at p (stat_size bytes). */
static void put_data(uint8_t *p, const struct vstats_voi *v, const struct vstats_stat *st)
{
	const struct vstats_hist *h = &st->hist;

	if (st->stype == VSTATS_TDGST) {
		put_tdgst(p, st->td, st->tdgst_counts32 ? &tdgst32 : &tdgst64);
		return;
	}
	if (st->stype < VSTATS_CRHIST || st->stype > VSTATS_DVHIST) {
		put_value(p, st->v, value_size(v->dtype));
		return;
	}
	put_count(p, h->oob, h->counts32);
	p += 8;
	for (uint32_t i = 0; i < h->n; i++) {
		put_value(p, h->bkt[i].lb, NUMERIC_SIZE);
		p += NUMERIC_SIZE;
		if (st->stype == VSTATS_DRHIST) {
			put_value(p, h->bkt[i].ub, NUMERIC_SIZE);
			p += NUMERIC_SIZE;
		}
		put_count(p, h->count[i], h->counts32);
		p += 8;
	}
}

/* VOI v's voistats at stats (its slots, unused ones with stype -1 as
 * stats_v1_blob_expand leaves them) and its data at data_off. */
static void put_voi(uint8_t *out, const struct vstats_voi *v, const struct voi_plan *pl,
		    size_t stats_off, size_t data_off)
{
	uint8_t *stats = out + stats_off;

	memset(stats, 0, pl->nslots * VOISTAT_SIZE);
	for (size_t i = 0; i < pl->nslots; i++)
		stats[i * VOISTAT_SIZE] = 0xff; /* stype -1: no statistic */
	if (v->relupdate) {
		put_voistat(stats, VS_VOISTATE, VSD_VOISTATE, data_off, NUMERIC_SIZE, 0, 0);
		if (v->have_prev) /* else zero, as the template's bytes hold it */
			put_value(out + data_off, v->prev, NUMERIC_SIZE);
		else
			put64(out + data_off, 0);
		data_off += NUMERIC_SIZE;
	}
	/* the data in the order the template lists the statistics, as
	 * stats_v1_tpl_add_voistats copies their initial values */
	for (uint32_t k = 0; k < v->nstats; k++) {
		const struct vstats_stat *st = &v->stat[k];
		int slot = slot_of(st->stype);
		size_t dsz = stat_size(v, st);
		put_voistat(stats + (size_t)slot * VOISTAT_SIZE, slot, stat_dtype(v, st), data_off,
			    dsz, st->errs, v->updates > 0 ? VS_VSDVALID : 0);
		put_data(out + data_off, v, st);
		data_off += dsz;
	}
}

/* struct voi: int16 id, a dtype in 8 bits, int8 voistatmaxid, u16
 * stats_off, u16 flags. */
static void put_voi_entry(uint8_t *p, size_t id, const struct vstats_voi *v,
			  const struct voi_plan *pl, size_t stats_off)
{
	put16(p, (uint16_t)id);
	p[2] = (uint8_t)value_dtype(v->dtype);
	p[3] = (uint8_t)(pl->nslots - 1);
	put16(p + 4, (uint16_t)stats_off);
	put16(p + 6, v->relupdate ? VOI_REQSTATE : 0);
}

int vstats_sbv1_encode(const struct vstats_sbv1_blob *b, uint8_t *out, size_t room, size_t *len,
		       const char **why)
{
	struct voi_plan plans[PLANS_MAX];
	size_t size, stats_off, data_off, nslots = 0;
	int rc;

	if ((rc = plan_blob(b, plans, &size, why)) < 0)
		return rc;
	if (room < size) {
		*why = "the buffer is smaller than the blob";
		return -ENOSPC;
	}
	for (size_t v = 0; v < b->nvoi; v++)
		nslots += plans[v].nslots;
	memset(out, 0, VSTATS_SBV1_HDR_SIZE);
	out[0] = VSTATS_SBV1_ABI;
	out[1] = VSTATS_SBV1_LE;
	put16(out + 4, (uint16_t)size); /* maxsz: a blob made from its template is its size */
	put16(out + 6, (uint16_t)size);
	put32(out + 8, b->tplhash);
	stats_off = VSTATS_SBV1_HDR_SIZE + b->nvoi * VOI_SIZE;
	data_off = stats_off + nslots * VOISTAT_SIZE;
	put16(out + 12, (uint16_t)stats_off);
	put16(out + 14, (uint16_t)data_off);
	put64(out + 16, (uint64_t)b->created);
	put64(out + 24, (uint64_t)b->lastrst);
	/* stats_v1_blob_expand puts each VOI added to a template before the
	 * ones already there, in the voistat and the data regions alike: the
	 * last VOI's come first. */
	for (size_t v = b->nvoi; v-- > 0;) {
		put_voi_entry(out + VSTATS_SBV1_HDR_SIZE + v * VOI_SIZE, v, &b->vois[v], &plans[v],
			      stats_off);
		put_voi(out, &b->vois[v], &plans[v], stats_off, data_off);
		stats_off += plans[v].nslots * VOISTAT_SIZE;
		data_off += plans[v].data;
	}
	*len = size;
	return 0;
}

int vstats_sbv1_clone(const uint8_t *src, uint8_t *dst, size_t dstmaxsz, uint32_t flags,
		      size_t *len)
{
	size_t cursz = (size_t)src[6] | (size_t)src[7] << 8;

	if (flags & VSTATS_SBV1_CLONE_ALLOCDST)
		dstmaxsz = cursz;
	if (dstmaxsz < VSTATS_SBV1_PUB_SIZE || cursz < VSTATS_SBV1_PUB_SIZE)
		return -EINVAL;
	memcpy(dst, src, 4); /* abi, endian, flags: what precedes maxsz */
	put16(dst + 4, (uint16_t)(dstmaxsz > VSTATS_SBV1_MAXSZ ? VSTATS_SBV1_MAXSZ : dstmaxsz));
	if (dstmaxsz < cursz) {
		memcpy(dst + 6, src + 6, 2); /* cursz alone: the size to ask for */
		*len = VSTATS_SBV1_PUB_SIZE;
		return -EOVERFLOW;
	}
	memcpy(dst + 6, src + 6, cursz - 6);
	*len = cursz;
	return 0;
}
