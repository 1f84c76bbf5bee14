/* lib/vstats' stats(3) statsblob V1 encoder: every offset and size as an
 * amd64 FreeBSD kernel lays a blob out (computed here by hand from
 * sys/kern/subr_stats.c's rules, not by the encoder's own arithmetic),
 * the blobs V1 cannot hold refused with their reason, the 65535-byte
 * limit, and stats_blob_clone's EOVERFLOW. The encoder reads no outside
 * input (a blob is made from the exporter's own VOIs): no fuzz target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "vstats.h"
#include "vstats_sbv1.h"

#define I(x) ((struct vstats_value){VSTATS_INT, {.i = (x)}})
#define U(x) ((struct vstats_value){VSTATS_UINT, {.u = (x)}})
#define S32(x) ((struct vstats_value){VSTATS_S32, {.i = (x)}})
/* Q values by their Q_GIFVAL: the number times 2^precision. */
#define QS32P8(x) ((struct vstats_value){VSTATS_Q(VSTATS_Q_S32, 8), {.i = (x)}})
#define QS64P48(x) ((struct vstats_value){VSTATS_Q(VSTATS_Q_S64, 48), {.i = (x)}})

static uint64_t get(const uint8_t *b, size_t off, size_t n)
{
	uint64_t v = 0;

	for (size_t i = n; i-- > 0;)
		v = v << 8 | b[off + i];
	return v;
}

/* A voistat at off: stype, dtype, data_off, dsz, errs, flags. */
static void assert_voistat(const uint8_t *b, size_t off, int stype, int dtype, size_t data_off,
			   size_t dsz, unsigned errs, unsigned flags)
{
	assert_int_equal((int8_t)b[off], stype);
	assert_int_equal(b[off + 1], dtype);
	assert_int_equal(get(b, off + 2, 2), data_off);
	assert_int_equal(get(b, off + 4, 2), dsz);
	assert_int_equal(b[off + 6], errs);
	assert_int_equal(b[off + 7], flags);
}

/* Two VOIs: 0 an s64 with relative updates (SUM, MAX), 1 a u64 with a
 * CRHIST64 of two buckets and MIN. Header 32 bytes, vois[] 2 x 8 at 32,
 * the voistats at 48: VOI 1's five slots (its largest stype, HIST, is 4)
 * before VOI 0's three, as stats_v1_blob_expand puts each VOI added
 * before the earlier ones; the data at 112 in the same order: VOI 1's
 * CRHIST (8 + 2 x 16) and MIN, then VOI 0's VOISTATE, SUM and MAX. */
static void test_layout(void **state)
{
	const struct vstats_spec s0[] = {{.stype = VSTATS_SUM}, {.stype = VSTATS_MAX}};
	const struct vstats_bucket usr[] = {{U(10), U(0)}, {U(1ull << 63), U(0)}};
	const struct vstats_spec s1[] = {
	    {.stype = VSTATS_CRHIST, .hist = {.scheme = VSTATS_USR, .usr = usr, .nusr = 2}},
	    {.stype = VSTATS_MIN}};
	struct vstats_voi v[2];
	uint8_t b[512];
	size_t len, size;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v[0], VSTATS_INT, true, s0, 2, &why), 0);
	assert_int_equal(vstats_voi_init(&v[1], VSTATS_UINT, false, s1, 2, &why), 0);
	assert_int_equal(vstats_update_abs(&v[0], I(5)), 0);
	assert_int_equal(vstats_update_rel(&v[0], I(-7)), 0); /* -2 */
	assert_int_equal(vstats_update_abs(&v[1], U(3)), 0);  /* below the first bucket */
	assert_int_equal(vstats_update_abs(&v[1], U(20)), 0);
	assert_int_equal(vstats_update_abs(&v[1], U((1ull << 63) + 1)), 0);
	v[1].stat[0].errs = 300; /* an 8-bit field that stops at 255 */
	struct vstats_sbv1_blob blob = {v, 2, 0xdeadbeef, 7ll << 32, 9ll << 32};
	memset(b, 0xaa, sizeof(b));
	assert_int_equal(vstats_sbv1_size(&blob, &size, &why), 0);
	assert_int_equal(size, 184);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, 184);
	assert_int_equal(b[184], 0xaa); /* nothing past cursz */
	/* the header */
	assert_int_equal(b[0], 1);		    /* STATS_ABI_V1 */
	assert_int_equal(b[1], 1);		    /* SB_LE */
	assert_int_equal(get(b, 2, 2), 0);	    /* flags */
	assert_int_equal(get(b, 4, 2), 184);	    /* maxsz */
	assert_int_equal(get(b, 6, 2), 184);	    /* cursz */
	assert_int_equal(get(b, 8, 4), 0xdeadbeef); /* tplhash */
	assert_int_equal(get(b, 12, 2), 48);	    /* stats_off */
	assert_int_equal(get(b, 14, 2), 112);	    /* statsdata_off */
	assert_int_equal(get(b, 16, 8), 7ull << 32);
	assert_int_equal(get(b, 24, 8), 9ull << 32);
	/* vois[]: id, dtype, voistatmaxid, stats_off, flags (VOI_REQSTATE) */
	assert_int_equal(get(b, 32, 2), 0);
	assert_int_equal(b[34], 3); /* VSD_DTYPE_INT_S64 */
	assert_int_equal(b[35], 2);
	assert_int_equal(get(b, 36, 2), 88);
	assert_int_equal(get(b, 38, 2), 1);
	assert_int_equal(get(b, 40, 2), 1);
	assert_int_equal(b[42], 4); /* VSD_DTYPE_INT_U64 */
	assert_int_equal(b[43], 4);
	assert_int_equal(get(b, 44, 2), 48);
	assert_int_equal(get(b, 46, 2), 0);
	/* VOI 1: slots 0 to 2 unused (stype -1), MIN in 3, HIST in 4 */
	for (size_t i = 0; i < 3; i++)
		assert_voistat(b, 48 + 8 * i, -1, 0, 0, 0, 0, 0);
	assert_voistat(b, 72, 3, 4, 152, 8, 0, 1);
	assert_voistat(b, 80, 4, 14, 112, 40, 255, 1); /* VSD_DTYPE_CRHIST64 */
	/* VOI 0: its VOISTATE in slot 0, SUM, MAX */
	assert_voistat(b, 88, 0, 0, 160, 8, 0, 0);
	assert_voistat(b, 96, 1, 3, 168, 8, 0, 1);
	assert_voistat(b, 104, 2, 3, 176, 8, 0, 1);
	/* the data: CRHIST64 oob, then {lb, cnt} per bucket */
	assert_int_equal(get(b, 112, 8), 1);
	assert_int_equal(get(b, 120, 8), 10);
	assert_int_equal(get(b, 128, 8), 1);
	assert_true(get(b, 136, 8) == 1ull << 63);
	assert_int_equal(get(b, 144, 8), 1);
	assert_int_equal(get(b, 152, 8), 3);	    /* MIN */
	assert_true((int64_t)get(b, 160, 8) == -2); /* the previous value */
	assert_true((int64_t)get(b, 168, 8) == 3);  /* SUM: 5 + -2 */
	assert_true((int64_t)get(b, 176, 8) == 5);  /* MAX */
	vstats_voi_free(&v[0]);
	vstats_voi_free(&v[1]);
}

/* An s32 VOI with relative updates, SUM, a DRHIST32 of two buckets and
 * MIN. Header 32, vois[] at 32, five voistats at 40, data at 80: the
 * VOISTATE (a voistatdata_numeric, 8 bytes, the value in its low 4), the
 * SUM as voistatdata_int32 (4 bytes, so what follows is only 4-aligned),
 * the DRHIST32 at 92: u32 oob and 4 bytes of padding, then buckets of
 * {numeric lb, numeric ub, u32 cnt, 4 bytes of padding} (24), then the
 * MIN's 4 bytes at 148: 152 in all. */
static void test_int32_layout(void **state)
{
	const struct vstats_bucket dr[] = {{S32(-5), S32(0)}, {S32(0), S32(10)}};
	const struct vstats_spec sp[] = {
	    {.stype = VSTATS_SUM},
	    {.stype = VSTATS_DRHIST,
	     .hist = {.scheme = VSTATS_USR, .usr = dr, .nusr = 2, .counts32 = true}},
	    {.stype = VSTATS_MIN}};
	struct vstats_voi v;
	uint8_t b[256];
	size_t len;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_S32, true, sp, 3, &why), 0);
	assert_int_equal(vstats_update_abs(&v, S32(-3)), 0);
	assert_int_equal(vstats_update_rel(&v, S32(7)), 0);  /* 4 */
	assert_int_equal(vstats_update_abs(&v, S32(20)), 0); /* out of band */
	struct vstats_sbv1_blob blob = {&v, 1, 1, 0, 0};
	memset(b, 0xaa, sizeof(b));
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, 152);
	assert_int_equal(get(b, 12, 2), 40); /* stats_off */
	assert_int_equal(get(b, 14, 2), 80); /* statsdata_off */
	assert_int_equal(b[34], 1);	     /* VSD_DTYPE_INT_S32 */
	assert_int_equal(b[35], 4);
	assert_voistat(b, 40, 0, 0, 80, 8, 0, 0);
	assert_voistat(b, 48, 1, 1, 88, 4, 0, 1);
	assert_voistat(b, 56, -1, 0, 0, 0, 0, 0);
	assert_voistat(b, 64, 3, 1, 148, 4, 0, 1);
	assert_voistat(b, 72, 4, 12, 92, 56, 0, 1);    /* VSD_DTYPE_DRHIST32 */
	assert_int_equal(get(b, 80, 8), 20);	       /* the previous value, pad 0 */
	assert_int_equal(get(b, 88, 4), 21);	       /* SUM: -3 + 4 + 20 */
	assert_int_equal(get(b, 92, 8), 1);	       /* oob, pad 0 */
	assert_int_equal(get(b, 100, 8), 0xfffffffbu); /* lb -5: 4 bytes, pad 0 */
	assert_int_equal(get(b, 108, 8), 0);
	assert_int_equal(get(b, 116, 8), 1); /* cnt, pad 0 */
	assert_int_equal(get(b, 124, 8), 0);
	assert_int_equal(get(b, 132, 8), 10);
	assert_int_equal(get(b, 140, 8), 1);
	assert_int_equal(get(b, 148, 4), 0xfffffffdu); /* MIN -3 */
	assert_int_equal(b[152], 0xaa);
	vstats_voi_free(&v);
}

/* Q numbers as sys/qmath.h stores them: Q_SIFVAL of the number times
 * 2^precision above the 3 control bits of Q_CTRLINI(precision), the sign
 * in the top bit. VOI 0 a q_s32 of precision 8 (control 3) with MAX and
 * a CRHIST32 of bounds -1.5 and 2.25; VOI 1 a q_s64 of precision 48
 * (control 6) with SUM. vois[] at 32 and 40, VOI 1's two voistats at 48,
 * VOI 0's five at 64, data at 104: VOI 1's SUM (8), VOI 0's MAX (4) at
 * 112 and CRHIST32 (8 + 2 x 16) at 116: 156. */
static void test_q_layout(void **state)
{
	const struct vstats_bucket cr[] = {{QS32P8(-384), QS32P8(0)}, {QS32P8(576), QS32P8(0)}};
	const struct vstats_spec s0[] = {
	    {.stype = VSTATS_MAX},
	    {.stype = VSTATS_CRHIST,
	     .hist = {.scheme = VSTATS_USR, .usr = cr, .nusr = 2, .counts32 = true}}};
	const struct vstats_spec s1[] = {{.stype = VSTATS_SUM}};
	struct vstats_voi v[2];
	uint8_t b[256];
	size_t len;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v[0], VSTATS_Q(VSTATS_Q_S32, 8), false, s0, 2, &why), 0);
	assert_int_equal(vstats_voi_init(&v[1], VSTATS_Q(VSTATS_Q_S64, 48), false, s1, 1, &why), 0);
	assert_int_equal(vstats_update_abs(&v[0], QS32P8(-192)), 0);	      /* -0.75 */
	assert_int_equal(vstats_update_abs(&v[0], QS32P8(768)), 0);	      /* 3.0 */
	assert_int_equal(vstats_update_abs(&v[1], QS64P48(-(3ll << 47))), 0); /* -1.5 */
	struct vstats_sbv1_blob blob = {v, 2, 1, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, 156);
	assert_int_equal(b[34], 7); /* VSD_DTYPE_Q_S32 */
	assert_int_equal(b[42], 9); /* VSD_DTYPE_Q_S64 */
	assert_voistat(b, 56, 1, 9, 104, 8, 0, 1);
	assert_voistat(b, 80, 2, 7, 112, 4, 0, 1);
	assert_voistat(b, 96, 4, 11, 116, 40, 0, 1); /* VSD_DTYPE_CRHIST32 */
	/* -1.5: the sign, 3 * 2^47 << 3 (3 * 2^50), control 6 */
	assert_true(get(b, 104, 8) == 0x800c000000000006ull);
	assert_int_equal(get(b, 112, 4), 768 << 3 | 3);		     /* MAX 3.0 */
	assert_int_equal(get(b, 116, 8), 0);			     /* oob */
	assert_true(get(b, 124, 8) == (0x80000000u | 384 << 3 | 3)); /* lb -1.5 */
	assert_int_equal(get(b, 132, 8), 1);			     /* -0.75 */
	assert_int_equal(get(b, 140, 8), 576 << 3 | 3);		     /* lb 2.25 */
	assert_int_equal(get(b, 148, 8), 1);			     /* 3.0 */
	vstats_voi_free(&v[0]);
	vstats_voi_free(&v[1]);
}

/* Each dtype's enum vsd_dtype and its SUM's vsd_dtype2size, and 2.5 (2
 * for the integers) as its bits: a VOI of one SUM is the header, one
 * voi, two voistats (48) and the SUM at 56. A Q type's 2.5 is 2.5 *
 * 2^precision above its Q_CTRLINI control bits, unsigned ones with no
 * sign bit. */
static void test_dtype_numbers(void **state)
{
	static const struct {
		enum vstats_dtype d;
		int vsd;
		size_t dsz;
		uint64_t bits;
	} t[] = {
	    {VSTATS_S32, 1, 4, 2},
	    {VSTATS_U32, 2, 4, 2},
	    {VSTATS_INT, 3, 8, 2},
	    {VSTATS_UINT, 4, 8, 2},
	    {VSTATS_LONG, 5, 8, 2},
	    {VSTATS_ULONG, 6, 8, 2},
	    {VSTATS_Q(VSTATS_Q_S32, 2), 7, 4, 10 << 3 | 0},	 /* 2.5 * 4, control 0 */
	    {VSTATS_Q(VSTATS_Q_U32, 4), 8, 4, 40 << 3 | 1},	 /* 2.5 * 16, control 1 */
	    {VSTATS_Q(VSTATS_Q_S64, 32), 9, 8, 5ull << 34 | 5},	 /* 2.5 * 2^32 << 3, control 5 */
	    {VSTATS_Q(VSTATS_Q_U64, 16), 10, 8, 5ull << 18 | 4}, /* 2.5 * 2^16 << 3, control 4 */
	};
	const struct vstats_spec sum[] = {{.stype = VSTATS_SUM}};
	struct vstats_value x;
	struct vstats_voi v;
	uint8_t b[128];
	size_t len;
	const char *why;
	(void)state;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(vstats_voi_init(&v, t[i].d, false, sum, 1, &why), 0);
		assert_int_equal(
		    vstats_value_of_double(t[i].d, vstats_dtype_q(t[i].d) ? 2.5 : 2, &x), 0);
		assert_int_equal(vstats_update_abs(&v, x), 0);
		struct vstats_sbv1_blob blob = {&v, 1, 1, 0, 0};
		assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
		assert_int_equal(len, 56 + t[i].dsz);
		assert_int_equal(b[34], t[i].vsd);
		assert_voistat(b, 48, 1, t[i].vsd, 56, t[i].dsz, 0, 1);
		assert_true(get(b, 56, t[i].dsz) == t[i].bits);
		vstats_voi_free(&v);
	}
}

/* DRHIST64 buckets are {lb, ub, cnt} (24 bytes), DVHIST64 {val, cnt};
 * a statistic not updated since its reset is not VS_VSDVALID. */
static void test_dr_dv(void **state)
{
	const struct vstats_bucket dr[] = {{I(0), I(2)}, {I(5), I(9)}};
	const struct vstats_bucket dv[] = {{I(4), I(4)}};
	const struct vstats_spec a[] = {
	    {.stype = VSTATS_DRHIST, .hist = {.scheme = VSTATS_USR, .usr = dr, .nusr = 2}}};
	const struct vstats_spec c[] = {
	    {.stype = VSTATS_DVHIST, .hist = {.scheme = VSTATS_USR, .usr = dv, .nusr = 1}}};
	struct vstats_voi v[2];
	uint8_t b[512];
	size_t len;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v[0], VSTATS_INT, false, a, 1, &why), 0);
	assert_int_equal(vstats_voi_init(&v[1], VSTATS_INT, false, c, 1, &why), 0);
	assert_int_equal(vstats_update_abs(&v[0], I(6)), 0);
	struct vstats_sbv1_blob blob = {v, 2, 1, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	/* 32 + 2 x 8 + 10 voistats x 8 = 128; data 8 + 2 x 24 and 8 + 16 */
	assert_int_equal(len, 128 + 56 + 24);
	assert_int_equal(get(b, 14, 2), 128);
	/* VOI 1 (first in both regions): its DVHIST64 in slot 4 at 48 + 32 */
	assert_voistat(b, 80, 4, 16, 128, 24, 0, 0);
	assert_int_equal(get(b, 136, 8), 4);
	assert_voistat(b, 88 + 32, 4, 15, 152, 56, 0, 1);
	assert_int_equal(get(b, 160, 8), 0);
	assert_int_equal(get(b, 168, 8), 2);
	assert_int_equal(get(b, 176, 8), 0);
	assert_int_equal(get(b, 184, 8), 5);
	assert_int_equal(get(b, 192, 8), 9);
	assert_int_equal(get(b, 200, 8), 1);
	vstats_voi_free(&v[0]);
	vstats_voi_free(&v[1]);
}

/* What V1 cannot lay out is refused with the reason, and nothing is
 * written: a double VOI, a second histogram on a VOI, a t-digest of more
 * centroids than an ARB16 tree indexes. */
static void test_refused(void **state)
{
	const struct vstats_bucket dv[] = {{I(4), I(4)}};
	const struct vstats_bucket dr[] = {{I(0), I(2)}};
	const struct vstats_spec sum[] = {{.stype = VSTATS_SUM}};
	const struct vstats_spec td[] = {{.stype = VSTATS_SUM},
					 {.stype = VSTATS_TDGST, .compression = 10000}};
	const struct vstats_spec two[] = {
	    {.stype = VSTATS_DVHIST, .hist = {.scheme = VSTATS_USR, .usr = dv, .nusr = 1}},
	    {.stype = VSTATS_DRHIST, .hist = {.scheme = VSTATS_USR, .usr = dr, .nusr = 1}}};
	struct vstats_voi v;
	uint8_t b[256];
	size_t len;
	const char *why = NULL;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_FLOAT, false, sum, 1, &why), 0);
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), -EOPNOTSUPP);
	assert_non_null(strstr(why, "double"));
	vstats_voi_free(&v);
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 2, &why), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), -EFBIG);
	assert_non_null(strstr(why, "t-digest"));
	vstats_voi_free(&v);
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, two, 2, &why), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), -EOPNOTSUPP);
	assert_non_null(strstr(why, "histogram"));
	vstats_voi_free(&v);
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, sum, 1, &why), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, 32, &len, &why), -ENOSPC); /* 56 bytes */
	vstats_voi_free(&v);
}

/* A VOI of one CRHIST64 of n buckets is 32 + 8 + 5 x 8 + 8 + 16 n bytes:
 * 4090 buckets make 65528, 4091 would pass 65535 and are refused whole. */
static void test_u16_limit(void **state)
{
	struct vstats_voi v = {.dtype = VSTATS_INT, .nstats = 1};
	size_t size;
	const char *why = NULL;
	(void)state;

	v.stat[0].stype = VSTATS_CRHIST;
	v.stat[0].hist.n = 4090;
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_sbv1_size(&blob, &size, &why), 0);
	assert_int_equal(size, 65528);
	v.stat[0].hist.n = 4091;
	assert_int_equal(vstats_sbv1_size(&blob, &size, &why), -EFBIG);
	assert_non_null(strstr(why, "65535"));
	uint8_t *b = malloc(70000);
	size_t len = 0;
	assert_non_null(b);
	assert_int_equal(vstats_sbv1_encode(&blob, b, 70000, &len, &why), -EFBIG);
	assert_int_equal(len, 0);
	free(b);
}

/* stats_blob_clone: a destination as large as the blob gets it all with
 * its own maxsz; a smaller one the 8-byte header alone (cursz tells the
 * size to ask for) and EOVERFLOW; one under 8 bytes EINVAL. */
static void test_clone(void **state)
{
	const struct vstats_spec sum[] = {{.stype = VSTATS_SUM}};
	struct vstats_voi v;
	uint8_t src[256], dst[256];
	size_t len, n;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, sum, 1, &why), 0);
	struct vstats_sbv1_blob blob = {&v, 1, 42, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, src, sizeof(src), &len, &why), 0);
	assert_int_equal(len, 32 + 8 + 16 + 8);
	memset(dst, 0xaa, sizeof(dst));
	assert_int_equal(vstats_sbv1_clone(src, dst, 0, VSTATS_SBV1_CLONE_ALLOCDST, &n), 0);
	assert_int_equal(n, len);
	assert_memory_equal(dst, src, len);
	memset(dst, 0xaa, sizeof(dst));
	assert_int_equal(vstats_sbv1_clone(src, dst, 100000, 0, &n), 0);
	assert_int_equal(get(dst, 4, 2), 65535);
	assert_memory_equal(dst + 6, src + 6, len - 6);
	memset(dst, 0xaa, sizeof(dst));
	assert_int_equal(vstats_sbv1_clone(src, dst, len - 1, 0, &n), -EOVERFLOW);
	assert_int_equal(n, 8);
	assert_memory_equal(dst, src, 4);
	assert_int_equal(get(dst, 4, 2), len - 1);
	assert_int_equal(get(dst, 6, 2), len);
	assert_int_equal(dst[8], 0xaa); /* the header alone */
	assert_int_equal(vstats_sbv1_clone(src, dst, 7, 0, &n), -EINVAL);
	vstats_voi_free(&v);
}

/* A TDGSTCLUST64 of compression 10 (40 centroids at most): 32 bytes of
 * smplcnt, compcnt and the ARB16_HEAD, then 40 nodes of 24 bytes. Two
 * centroids, -2 and 3: nodes 0 and 1 in increasing mean, node 1 the
 * black root with node 0 its red left child, nodes 2 to 39 on the free
 * list; each mean a Q_S64 of 48 fractional bits (control value 6), sign
 * and magnitude. */
static void test_tdigest(void **state)
{
	const struct vstats_spec td[] = {{.stype = VSTATS_TDGST, .compression = 10}};
	struct vstats_voi v;
	static uint8_t b[2048];
	size_t len, d = 32 + 8 + 6 * 8; /* the data: header, vois[], 6 voistats */
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 1, &why), 0);
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, d + 32 + 40 * 24);
	assert_voistat(b, 32 + 8 + 5 * 8, 5, 18, d, 32 + 40 * 24, 0, 0); /* TDGSTCLUST64 */
	assert_int_equal(get(b, d + 16, 2), 0);				 /* curnodes */
	assert_int_equal(get(b, d + 20, 2), 0xffff);			 /* no root */
	assert_int_equal(get(b, d + 22, 2), 0);				 /* every node free */
	assert_int_equal(vstats_update_abs(&v, I(3)), 0);
	assert_int_equal(vstats_update_abs(&v, I(-2)), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(get(b, d, 8), 2); /* smplcnt */
	assert_int_equal(get(b, d + 16, 2), 2);
	assert_int_equal(get(b, d + 18, 2), 40);
	assert_int_equal(get(b, d + 20, 2), 1); /* root */
	assert_int_equal(get(b, d + 22, 2), 2); /* the free list */
	assert_int_equal(get(b, d + 24, 2), 0); /* min */
	assert_int_equal(get(b, d + 26, 2), 1); /* max */
	const uint8_t *n0 = b + d + 32, *n1 = n0 + 24, *n2 = n1 + 24;
	assert_int_equal(get(n0, 0, 2), 1);	     /* parent */
	assert_int_equal(get(n0, 2, 4), 0xffffffff); /* no children */
	assert_int_equal(n0[6], 1);		     /* red */
	assert_int_equal(get(n1, 0, 2), 0xffff);
	assert_int_equal(get(n1, 2, 2), 0);
	assert_int_equal(get(n1, 4, 2), 0xffff);
	assert_int_equal(n1[6], 0);				     /* black */
	assert_true(get(n0, 8, 8) == (1ull << 63 | 2ull << 51 | 6)); /* -2: 2 x 2^48, << 3 */
	assert_int_equal(get(n0, 16, 8), 1);
	assert_true(get(n1, 8, 8) == (3ull << 51 | 6));
	assert_int_equal(get(n1, 16, 8), 1);
	assert_int_equal(get(n2, 4, 2), 3); /* the next free node */
	assert_int_equal(n2[6], 0xff);	    /* ARB_NULLCOL */
	vstats_voi_free(&v);
}

/* A TDGSTCLUST32 (counts: 32) of compression 10: struct
 * voistatdata_tdgstclust32 is a u32 smplcnt, a u32 compcnt and the
 * ARB16_HEAD at 8 (six int16); its centroids (the 8-byte ARB16_ENTRY,
 * the Q_S32 mu, the s32 cnt: 16 bytes, 4-aligned) start at 20, so 40
 * nodes make 20 + 40 x 16 = 660 bytes, dtype 17. Means -2 and 3: the
 * finest Q_S32 precision whose integer bits (28 less the fraction's)
 * hold 3 is 16 (control value 4; 28 would leave none). */
static void test_tdigest32(void **state)
{
	const struct vstats_spec td[] = {
	    {.stype = VSTATS_TDGST, .compression = 10, .tdgst_counts32 = true}};
	struct vstats_voi v;
	static uint8_t b[2048];
	size_t len, d = 32 + 8 + 6 * 8;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 1, &why), 0);
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, d + 660);
	assert_voistat(b, 32 + 8 + 5 * 8, 5, 17, d, 660, 0, 0); /* TDGSTCLUST32 */
	assert_int_equal(get(b, d + 8, 2), 0);			/* curnodes */
	assert_int_equal(get(b, d + 10, 2), 40);		/* maxnodes */
	assert_int_equal(get(b, d + 12, 2), 0xffff);		/* no root */
	assert_int_equal(get(b, d + 14, 2), 0);			/* every node free */
	assert_int_equal(get(b, d + 20 + 4, 2), 1);		/* node 0's next free */
	assert_int_equal(b[d + 20 + 6], 0xff);			/* ARB_NULLCOL */
	assert_int_equal(vstats_update_abs(&v, I(3)), 0);
	assert_int_equal(vstats_update_abs(&v, I(-2)), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_int_equal(len, d + 660);
	assert_int_equal(get(b, d, 4), 2); /* smplcnt */
	assert_int_equal(get(b, d + 8, 2), 2);
	assert_int_equal(get(b, d + 10, 2), 40);
	assert_int_equal(get(b, d + 12, 2), 1); /* root */
	assert_int_equal(get(b, d + 14, 2), 2); /* the free list */
	assert_int_equal(get(b, d + 16, 2), 0); /* min */
	assert_int_equal(get(b, d + 18, 2), 1); /* max */
	const uint8_t *n0 = b + d + 20, *n1 = n0 + 16, *n2 = n1 + 16;
	assert_int_equal(get(n0, 0, 2), 1);
	assert_int_equal(n0[6], 1); /* red */
	assert_int_equal(get(n1, 0, 2), 0xffff);
	assert_int_equal(get(n1, 2, 2), 0);
	assert_int_equal(n1[6], 0);				 /* black */
	assert_true(get(n0, 8, 4) == (1u << 31 | 2u << 19 | 4)); /* -2: 2 x 2^16, << 3 */
	assert_int_equal(get(n0, 12, 4), 1);
	assert_true(get(n1, 8, 4) == (3u << 19 | 4));
	assert_int_equal(get(n1, 12, 4), 1);
	assert_int_equal(get(n2, 4, 2), 3); /* the next free node */
	assert_int_equal(n2[6], 0xff);
	vstats_voi_free(&v);
}

/* A TDGSTCLUST32's samples stop at 2^31 - 1 (its centroids' counts are
 * int32_t): an update past it takes what fits and counts one err, so the
 * blob's smplcnt and cnt are what was taken, never a wrapped figure; a
 * TDGSTCLUST64 takes the same updates whole. */
static void test_tdigest32_counts_stop(void **state)
{
	struct vstats_spec td[] = {{.stype = VSTATS_TDGST, .compression = 10}};
	struct vstats_voi v;
	static uint8_t b[2048];
	size_t len, d = 32 + 8 + 6 * 8;
	const char *why;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 1, &why), 0);
	assert_int_equal(vstats_update_n(&v, I(7), 1ull << 32), 0);
	assert_int_equal(v.stat[0].errs, 0);
	vstats_voi_free(&v);
	td[0].tdgst_counts32 = true;
	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 1, &why), 0);
	assert_int_equal(vstats_update_n(&v, I(7), 2147483646), 0);
	assert_int_equal(v.stat[0].errs, 0);
	assert_int_equal(vstats_update_n(&v, I(7), 1), 0); /* 2^31 - 1: still whole */
	assert_int_equal(v.stat[0].errs, 0);
	assert_int_equal(vstats_update_n(&v, I(7), 1ull << 32), 0);
	assert_int_equal(v.stat[0].errs, 1);
	assert_int_equal(vstats_update_abs(&v, I(8)), 0);
	assert_int_equal(v.stat[0].errs, 2);
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_voistat(b, 32 + 8 + 5 * 8, 5, 17, d, 660, 2, 1);
	assert_int_equal(get(b, d, 4), 0x7fffffff); /* smplcnt */
	uint64_t total = 0;
	for (size_t i = 0; i < get(b, d + 8, 2); i++) { /* curnodes */
		uint64_t cnt = get(b, d + 20 + i * 16 + 12, 4);
		assert_true(cnt > 0 && cnt <= 0x7fffffff); /* a positive int32_t */
		total += cnt;
	}
	assert_int_equal(total, 0x7fffffff);
	vstats_voi_free(&v);
}

/* A mean no Q_S32 holds (2^26 or more in magnitude: 28 bits less the
 * 2 fractional ones of the coarsest precision) refuses the blob with the
 * reason; 2^26 - 1 is held exactly at precision 2 (control value 0). */
static void test_tdigest32_mean_range(void **state)
{
	const struct vstats_spec td[] = {
	    {.stype = VSTATS_TDGST, .compression = 10, .tdgst_counts32 = true}};
	struct vstats_voi v;
	static uint8_t b[2048];
	size_t len = 0, d = 32 + 8 + 6 * 8;
	const char *why = NULL;
	(void)state;

	assert_int_equal(vstats_voi_init(&v, VSTATS_INT, false, td, 1, &why), 0);
	struct vstats_sbv1_blob blob = {&v, 1, 0, 0, 0};
	assert_int_equal(vstats_update_abs(&v, I(-((1 << 26) - 1))), 0);
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), 0);
	assert_true(get(b, d + 20 + 8, 4) == (1u << 31 | (uint32_t)((1 << 26) - 1) << 5 | 0));
	assert_int_equal(vstats_update_abs(&v, I(1 << 26)), 0);
	len = 0;
	assert_int_equal(vstats_sbv1_encode(&blob, b, sizeof(b), &len, &why), -ERANGE);
	assert_non_null(strstr(why, "Q_S32"));
	assert_int_equal(len, 0);
	vstats_voi_free(&v);
}

/* sbintime_t is 32.32 fixed-point seconds. */
static void test_sbintime(void **state)
{
	(void)state;
	assert_true(vstats_sbv1_sbintime(1500000000ull) == (1ll << 32) + (1ll << 31));
	assert_true(vstats_sbv1_sbintime(0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_dr_dv),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_u16_limit),
	    cmocka_unit_test(test_clone),
	    cmocka_unit_test(test_sbintime),
	    cmocka_unit_test(test_tdigest),
	    cmocka_unit_test(test_int32_layout),
	    cmocka_unit_test(test_q_layout),
	    cmocka_unit_test(test_dtype_numbers),
	    cmocka_unit_test(test_tdigest32),
	    cmocka_unit_test(test_tdigest32_counts_stop),
	    cmocka_unit_test(test_tdigest32_mean_range),
	};
	return cmocka_run_group_tests_name("vstats_sbv1", tests, NULL, NULL);
}
