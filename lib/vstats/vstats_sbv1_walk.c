/* Reads a stats(3) statsblob V1 from its bytes, field by field, each
 * offset and size bounded by the blob's cursz (vstats_sbv1_walk.h). The
 * encoder is vstats_sbv1.c; this reader shares none of its code, so a
 * walk shows what the bytes say, not what the encoder meant. */
#include "vstats_sbv1_walk.h"
#include "vstats_sbv1.h"

#include <errno.h>

#define VOI_SIZE 8     /* struct voi */
#define VOISTAT_SIZE 8 /* struct voistat */

uint16_t vstats_sbv1_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t vstats_sbv1_get32(const uint8_t *p)
{
	return vstats_sbv1_get16(p) | (uint32_t)vstats_sbv1_get16(p + 2) << 16;
}

uint64_t vstats_sbv1_get64(const uint8_t *p)
{
	return vstats_sbv1_get32(p) | (uint64_t)vstats_sbv1_get32(p + 4) << 32;
}

int vstats_sbv1_walk_hdr(const uint8_t *b, size_t len, struct vstats_sbv1_hdr *h)
{
	if (len < VSTATS_SBV1_HDR_SIZE)
		return -EINVAL;
	*h = (struct vstats_sbv1_hdr){
	    .abi = b[0],
	    .endian = b[1],
	    .flags = vstats_sbv1_get16(b + 2),
	    .maxsz = vstats_sbv1_get16(b + 4),
	    .cursz = vstats_sbv1_get16(b + 6),
	    .tplhash = vstats_sbv1_get32(b + 8),
	    .stats_off = vstats_sbv1_get16(b + 12),
	    .statsdata_off = vstats_sbv1_get16(b + 14),
	    .created = (int64_t)vstats_sbv1_get64(b + 16),
	    .lastrst = (int64_t)vstats_sbv1_get64(b + 24),
	};
	if (h->abi != VSTATS_SBV1_ABI || h->endian != VSTATS_SBV1_LE || h->cursz > len ||
	    h->stats_off < VSTATS_SBV1_HDR_SIZE ||
	    (h->stats_off - VSTATS_SBV1_HDR_SIZE) % VOI_SIZE || h->statsdata_off < h->stats_off ||
	    h->statsdata_off > h->cursz)
		return -EINVAL;
	h->nvois = (h->stats_off - VSTATS_SBV1_HDR_SIZE) / VOI_SIZE; /* NVOIS */
	return 0;
}

int vstats_sbv1_walk_voi(const uint8_t *b, const struct vstats_sbv1_hdr *h, int32_t i,
			 struct vstats_sbv1_voi *v)
{
	const uint8_t *p = b + VSTATS_SBV1_HDR_SIZE + (size_t)i * VOI_SIZE;

	if (i < 0 || i >= h->nvois)
		return -EINVAL;
	*v = (struct vstats_sbv1_voi){
	    .id = (int16_t)vstats_sbv1_get16(p),
	    .dtype = p[2],
	    .voistatmaxid = (int8_t)p[3],
	    .stats_off = vstats_sbv1_get16(p + 4),
	    .flags = vstats_sbv1_get16(p + 6),
	};
	if (v->voistatmaxid >= 0 &&
	    (v->stats_off < h->stats_off ||
	     v->stats_off + ((size_t)v->voistatmaxid + 1) * VOISTAT_SIZE > h->statsdata_off))
		return -EINVAL;
	return 0;
}

int vstats_sbv1_walk_voistat(const uint8_t *b, const struct vstats_sbv1_hdr *h,
			     const struct vstats_sbv1_voi *v, int j, struct vstats_sbv1_voistat *vs)
{
	const uint8_t *p = b + v->stats_off + (size_t)j * VOISTAT_SIZE;

	if (j < 0 || j > v->voistatmaxid)
		return -EINVAL;
	*vs = (struct vstats_sbv1_voistat){
	    .stype = (int8_t)p[0],
	    .dtype = p[1],
	    .data_off = vstats_sbv1_get16(p + 2),
	    .dsz = vstats_sbv1_get16(p + 4),
	    .errs = p[6], /* errs : VS_EBITS, the low byte on amd64 */
	    .flags = p[7],
	};
	if (vs->stype < 0)
		return 0;
	if (vs->data_off < h->statsdata_off || (size_t)vs->data_off + vs->dsz > h->cursz)
		return -EINVAL;
	vs->data = b + vs->data_off;
	return 0;
}

const char *vstats_sbv1_stype_name(int stype)
{
	static const char *const names[] = {"VOISTATE", "SUM", "MAX", "MIN", "HIST", "TDGST"};

	return stype >= 0 && stype < (int)(sizeof(names) / sizeof(names[0])) ? names[stype] : "?";
}

const char *vstats_sbv1_dtype_name(unsigned dtype)
{
	static const char *const names[] = {"VOISTATE", "INT_S32",	"INT_U32",     "INT_S64",
					    "INT_U64",	"INT_SLONG",	"INT_ULONG",   "Q_S32",
					    "Q_U32",	"Q_S64",	"Q_U64",       "CRHIST32",
					    "DRHIST32", "DVHIST32",	"CRHIST64",    "DRHIST64",
					    "DVHIST64", "TDGSTCLUST32", "TDGSTCLUST64"};

	return dtype < sizeof(names) / sizeof(names[0]) ? names[dtype] : "?";
}
