/* FreeBSD stats(3)'s statsblob in its V1 layout, as bytes: a blob of
 * VOIs encoded exactly as an amd64 FreeBSD kernel keeps it in memory
 * (sys/kern/subr_stats.c, struct statsblobv1), and stats_blob_clone of
 * those bytes into a destination of a given size. Pure: no I/O, no
 * allocation. */
#ifndef VSTATS_SBV1_H
#define VSTATS_SBV1_H

#include <stddef.h>
#include <stdint.h>

#include "vstats.h"

#define VSTATS_SBV1_ABI 1	 /* STATS_ABI_V1 */
#define VSTATS_SBV1_LE 1	 /* SB_LE */
#define VSTATS_SBV1_HDR_SIZE 32	 /* struct statsblobv1 */
#define VSTATS_SBV1_PUB_SIZE 8	 /* struct statsblob: abi to cursz */
#define VSTATS_SBV1_MAXSZ 65535u /* SB_V1_MAXSZ: maxsz and cursz are u16 */

/* stats_blob_clone's flags, FreeBSD's bits. */
#define VSTATS_SBV1_CLONE_RSTSRC 0x0001u   /* the caller resets the source after */
#define VSTATS_SBV1_CLONE_ALLOCDST 0x0002u /* the destination is sized to the blob */

/* A blob to encode: VOI i of vois has id i (ids dense, as a template's
 * vois: list gives them), the template's hash, and the creation and last
 * reset times as sbintime_t (vstats_sbv1_sbintime). */
struct vstats_sbv1_blob {
	const struct vstats_voi *vois;
	size_t nvoi;
	uint32_t tplhash;
	int64_t created, lastrst;
};

/* A monotonic time in ns as FreeBSD's sbintime_t: 32.32 fixed-point
 * seconds (tstosbt). */
int64_t vstats_sbv1_sbintime(uint64_t ns);

/* The blob's bytes (its cursz): 0, or -EOPNOTSUPP with *why for a VOI V1
 * cannot lay out (a double VOI, two histograms or two t-digests on one
 * VOI), -EFBIG with *why past VSTATS_SBV1_MAXSZ. */
int vstats_sbv1_size(const struct vstats_sbv1_blob *b, size_t *size, const char **why);

/* Writes the blob into out (room bytes, at least its size, which *len
 * gets). The errors of vstats_sbv1_size, and -ENOSPC for too little room;
 * nothing is ever cut. */
int vstats_sbv1_encode(const struct vstats_sbv1_blob *b, uint8_t *out, size_t room, size_t *len,
		       const char **why);

/* stats_v1_blob_clone of an encoded blob src into dst, a destination of
 * dstmaxsz bytes (VSTATS_SBV1_CLONE_ALLOCDST: of src's cursz, whatever
 * dstmaxsz says). As FreeBSD copies: abi, endian and flags; maxsz is the
 * destination's (dstmaxsz, at most 65535); then, when the blob fits,
 * everything from cursz on, else cursz alone, so that the 8-byte header
 * tells the caller the size to ask for. *len: the bytes written. 0;
 * -EOVERFLOW with the header alone; -EINVAL for a destination smaller
 * than the header. RSTSRC is the caller's to act on. */
int vstats_sbv1_clone(const uint8_t *src, uint8_t *dst, size_t dstmaxsz, uint32_t flags,
		      size_t *len);

#endif
