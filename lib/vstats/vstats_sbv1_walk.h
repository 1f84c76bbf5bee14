/* A reader of FreeBSD stats(3)'s statsblob V1 bytes (vstats_sbv1.h's
 * layout): the header, struct voi i and its voistat j, each field as the
 * blob holds it, every offset and size checked against the blob's cursz
 * and the bytes given, so that a blob is walked as stats_v1_blob_iter
 * walks it without a read past its end. Pure: no I/O, no allocation. */
#ifndef VSTATS_SBV1_WALK_H
#define VSTATS_SBV1_WALK_H

#include <stddef.h>
#include <stdint.h>

/* struct statsblobv1's fields, and NVOIS (the vois[] entries). */
struct vstats_sbv1_hdr {
	uint8_t abi, endian;
	uint16_t flags, maxsz, cursz;
	uint32_t tplhash;
	uint16_t stats_off, statsdata_off;
	int64_t created, lastrst;
	int32_t nvois;
};

/* struct voi. */
struct vstats_sbv1_voi {
	int16_t id;
	uint8_t dtype; /* enum vsd_dtype */
	int8_t voistatmaxid;
	uint16_t stats_off, flags;
};

/* struct voistat, and its data: dsz bytes at data (NULL for stype < 0,
 * whose offsets nothing reads). */
struct vstats_sbv1_voistat {
	int8_t stype;
	uint8_t dtype;
	uint16_t data_off, dsz;
	uint8_t errs, flags;
	const uint8_t *data;
};

/* The header of blob b (len bytes): 0, or -EINVAL for bytes that are no
 * V1 blob (too short, another abi or endianness, a cursz past len,
 * offsets out of order or out of the blob). */
int vstats_sbv1_walk_hdr(const uint8_t *b, size_t len, struct vstats_sbv1_hdr *h);

/* vois[i], 0 <= i < h->nvois: 0, or -EINVAL for its voistat array past
 * the voistat region. */
int vstats_sbv1_walk_voi(const uint8_t *b, const struct vstats_sbv1_hdr *h, int32_t i,
			 struct vstats_sbv1_voi *v);

/* Voistat slot j (0 <= j <= v->voistatmaxid) of v: 0, or -EINVAL for
 * data outside the blob. */
int vstats_sbv1_walk_voistat(const uint8_t *b, const struct vstats_sbv1_hdr *h,
			     const struct vstats_sbv1_voi *v, int j,
			     struct vstats_sbv1_voistat *vs);

/* Little-endian fields at p (the caller has checked the bytes exist). */
uint16_t vstats_sbv1_get16(const uint8_t *p);
uint32_t vstats_sbv1_get32(const uint8_t *p);
uint64_t vstats_sbv1_get64(const uint8_t *p);

/* vs_stype2name and vsd_dtype2name; "?" for a number they do not name. */
const char *vstats_sbv1_stype_name(int stype);
const char *vstats_sbv1_dtype_name(unsigned dtype);

#endif
