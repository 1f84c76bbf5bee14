/* FreeBSD stats(3)'s statistics of a variable of interest: SUM,
 * MAX, MIN, the CRHIST, DRHIST and DVHIST histograms with their
 * out-of-band count, and a t-digest; absolute and relative updates,
 * snapshots with reset, and the template sample-rate dice. Pure: the
 * caller serialises calls on one VOI. */
#ifndef VSTATS_H
#define VSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tdigest.h"

#define VSTATS_BUCKETS_MAX 4096
#define VSTATS_STATS_MAX 8 /* statistics of one VOI */

/* The histograms follow FreeBSD's sys/kern/subr_stats.c (the man page
 * leaves their edges out): a CRHIST bucket has a lower bound only and
 * holds up to the next one's, the last is open above; a DRHIST bucket is
 * lb <= x < ub; a DVHIST bucket one value. docs/processing.md lists every
 * edge rule. */
enum vstats_stype {
	VSTATS_SUM,
	VSTATS_MAX,
	VSTATS_MIN,
	VSTATS_CRHIST, /* continuous ranges: [lb, the next lb), the last open */
	VSTATS_DRHIST, /* discrete ranges [lb, ub) */
	VSTATS_DVHIST, /* discrete values */
	VSTATS_TDGST,
};

/* A VOI's values: stats(3)'s VSD_DTYPE_INT_*, its fixed-point Q types and
 * a double (for x: rate). Integers are summed, compared and bucketed
 * exactly, each within its dtype's limits; VSTATS_UINT (u64) is for
 * counters (KVM's are u64) whose values pass 2^63. long is the platform's
 * (64 bits on amd64 and arm64 Linux). A signed dtype's value is held in
 * i, an unsigned one's in u.
 *
 * A Q type (sys/sys/qmath.h) carries its precision, the bits after the
 * binary point, in its dtype: VSTATS_Q(VSTATS_Q_S64, 16). Its value is
 * held as FreeBSD's Q_GIFVAL, the number times 2^precision, an integer;
 * its limits are qmath's Q_IFMINVAL and Q_IFMAXVAL: FreeBSD's Q numbers
 * keep 3 control bits and a sign-magnitude sign in their storage, so an
 * s64 one holds +-(2^60 - 1) / 2^precision, an s32 one +-(2^28 - 1) /
 * 2^precision (u64: 2^61 - 1, u32: 2^29 - 1). */
enum vstats_dtype {
	VSTATS_INT,   /* s64, VSD_DTYPE_INT_S64 */
	VSTATS_FLOAT, /* double */
	VSTATS_UINT,  /* u64, VSD_DTYPE_INT_U64 */
	VSTATS_S32,   /* VSD_DTYPE_INT_S32 */
	VSTATS_U32,   /* VSD_DTYPE_INT_U32 */
	VSTATS_LONG,  /* VSD_DTYPE_INT_SLONG */
	VSTATS_ULONG, /* VSD_DTYPE_INT_ULONG */
	VSTATS_Q_S32, /* VSD_DTYPE_Q_S32, with VSTATS_Q's precision */
	VSTATS_Q_U32,
	VSTATS_Q_S64,
	VSTATS_Q_U64,
};
#define VSTATS_S64 VSTATS_INT
#define VSTATS_U64 VSTATS_UINT
#define VSTATS_DTYPES 11
/* A Q type with prec bits after the binary point (vstats_q_prec_ok). */
#define VSTATS_Q(d, prec) ((enum vstats_dtype)((unsigned)(d) | (unsigned)(prec) << 8))
/* A dtype without its precision, and the precision (0 but for Q types). */
#define VSTATS_DTYPE_BASE(d) ((enum vstats_dtype)((unsigned)(d)&0xffu))
#define VSTATS_DTYPE_PREC(d) ((unsigned)(d) >> 8)

struct vstats_value {
	enum vstats_dtype dtype;
	union {
		int64_t i;
		double f;
		uint64_t u;
	};
};

/* Whether d's values are held in i (s32, s64, long, q_s32, q_s64). */
bool vstats_dtype_signed(enum vstats_dtype d);
/* Whether d is a Q type. */
bool vstats_dtype_q(enum vstats_dtype d);
/* Whether a Q type of base q takes prec: one of the precisions qmath's 3
 * control bits encode (2, 4, 6, 8, 16, 32, 48, 64) that leaves the type
 * an integer bit (q_s32 and q_u32: up to 16; q_s64 and q_u64: up to 48). */
bool vstats_q_prec_ok(enum vstats_dtype q, unsigned prec);
/* x as a value of d, exactly (a Q type's x * 2^precision): 0, or -ERANGE
 * when d cannot hold it. */
int vstats_value_of_int(enum vstats_dtype d, __int128 x, struct vstats_value *out);
/* x as a value of d, rounded to d's resolution (a whole number; a Q
 * type's 2^-precision) to the nearest, halves away from zero: 0, -ERANGE
 * when d cannot hold it, -EINVAL for a NaN. A double takes x itself. */
int vstats_value_of_double(enum vstats_dtype d, double x, struct vstats_value *out);
/* A decimal as a value of d, exactly: a Q type's [-]digits[.digits] (at
 * most 19 after the point) rounded to 2^-precision as
 * vstats_value_of_double does, without a double between; an integer's
 * whole number. 0, -EINVAL (not such a number) or -ERANGE. */
int vstats_value_parse(enum vstats_dtype d, const char *s, struct vstats_value *out);
/* A decimal digits[.digits] (at most 20 and 19 of them) that is a whole
 * number of 2^-prec, exactly, as that number in *units: 0, or -EINVAL
 * (not such a decimal, or not a multiple of 2^-prec). */
int vstats_decimal_units(const char *s, unsigned prec, unsigned __int128 *units);
/* stats(3)'s name of d as its fetch functions' suffix (stats_voistat_fetch_
 * s32 ... _ulong): s32, u32, s64, u64, slong, ulong; "double" for a double. */
const char *vstats_dtype_name(enum vstats_dtype d);
/* The dtype's lowest and highest values (-inf and +inf for a double). */
struct vstats_value vstats_lowest(enum vstats_dtype d);
struct vstats_value vstats_highest(enum vstats_dtype d);
/* Whether v is within its dtype's limits (a double: not NaN). */
bool vstats_value_fits(struct vstats_value v);
/* v as stats_voistatdata_tostr prints its dtype (%d, %u, %jd, %ju, %ld,
 * %lu; a Q type as Q_TOSTR(q, -1, 10): the integer part, a point and as
 * many decimals as it has bits after the binary point, exact), a double
 * as %.17g with NaN, +Inf and -Inf (which a JSON writer must quote);
 * snprintf's return. The one place values become text. */
int vstats_value_tostr(struct vstats_value v, char *buf, size_t size);
/* Room for any value's text: a q_u64 of precision 48 is 4 + 1 + 48
 * characters, an s64 20, a double 24. */
#define VSTATS_VALUE_STR_MAX 72

/* CRHIST: ub is the next bucket's lb (the last's, the dtype's largest:
 * it is open); DRHIST: lb <= x < ub; DVHIST: lb == ub, the value. */
struct vstats_bucket {
	struct vstats_value lb, ub;
};

/* How a histogram's buckets are made; CRHIST has the four schemes of
 * STATS_VSS_CRHIST*_{LIN,EXP,LINEXP,USR}, DRHIST and DVHIST only USR. */
enum vstats_scheme { VSTATS_LIN, VSTATS_EXP, VSTATS_LINEXP, VSTATS_USR };

/* The VSD_HIST_LBOUND_INF and VSD_HIST_UBOUND_INF flags, as FreeBSD
 * makes them: LBOUND_INF adds a bucket below the first, from the dtype's
 * lowest to lb; UBOUND_INF adds one after the last (CRHIST: at the next
 * step; DRHIST: from the last ub to the dtype's largest, which it does not
 * hold). Neither widens a bucket; on a DVHIST either is EINVAL. */
#define VSTATS_LBOUND_INF 1u
#define VSTATS_UBOUND_INF 2u

struct vstats_hist_spec {
	enum vstats_scheme scheme;
	struct vstats_value lb, ub; /* LIN, EXP, LINEXP: the range cut into buckets */
	double stepinc; /* LIN: whole for an integer VOI (FreeBSD's u64), a Q one's 2^-prec */
	double stepbase, stepexp;	 /* EXP: bucket i is stepbase^(stepexp + i) wide */
	uint32_t nlinsteps;		 /* LINEXP: steps per power of stepbase */
	const struct vstats_bucket *usr; /* USR: CR and DV use lb only */
	uint32_t nusr;
	uint32_t flags; /* VSTATS_*BOUND_INF */
	/* stats(3)'s CRHIST32, DRHIST32, DVHIST32: counts (and the out-of-band
	 * count) of 32 bits. FreeBSD's wrap at 2^32; here they stay at
	 * UINT32_MAX, each update not counted whole counted in errs. */
	bool counts32;
};

/* One statistic of a VOI, as a template names it. */
struct vstats_spec {
	enum vstats_stype stype;
	struct vstats_hist_spec hist; /* the histograms */
	double compression;	      /* TDGST */
	/* TDGST: stats(3)'s TDGSTCLUST32 in the blob (Q_S32 means, s32
	 * centroid counts, a u32 sample count) rather than TDGSTCLUST64. Its
	 * samples stop at VSTATS_TDGST32_COUNT_MAX, each update not counted
	 * whole counted in errs. */
	bool tdgst_counts32;
};

/* The samples a TDGSTCLUST32 digest counts: its centroids' counts are
 * int32_t, so neither they nor the u32 smplcnt can pass it. */
#define VSTATS_TDGST32_COUNT_MAX 2147483647.0

/* The buckets, their counts and stats(3)'s out-of-band count; and what
 * stats(3) does not keep but Prometheus needs for counts that stay
 * cumulative: where each out-of-band value fell (between[0] below the
 * first bucket, between[i] in the gap before bucket i, between[n] above
 * the last), and the sum of every value observed. */
struct vstats_hist {
	struct vstats_bucket *bkt;
	uint64_t *count;
	uint32_t n;
	uint64_t oob;	   /* values in no bucket: the sum of between[] */
	uint64_t *between; /* n + 1 */
	double sum;	   /* of the values counted; a float, as Prometheus' _sum */
	bool counts32;	   /* each count stops at UINT32_MAX (vstats_hist_spec) */
};

/* A histogram as Prometheus serves it: every value in exactly one region,
 * regions in increasing order (below the first bucket when a value fell
 * there, each bucket, each gap that can hold a value, above the last); le
 * is the largest value a region holds (INFINITY for the last). */
struct vstats_region {
	double le;
	uint64_t count;
};

/* Prometheus buckets a histogram may be served as (a scrape's limit). */
#define VSTATS_REGIONS_MAX 4096

struct vstats_stat {
	enum vstats_stype stype;
	union {
		struct vstats_value v; /* SUM, MAX, MIN */
		struct vstats_hist hist;
		struct tdigest *td;
	};
	/* stats(3)'s voistat errs: updates the statistic could not take
	 * whole. An integer SUM that would pass its dtype's limits stays at
	 * the limit (saturates, where FreeBSD's wraps) and counts one; so
	 * does a 32-bit histogram count at UINT32_MAX; a t-digest counts
	 * each infinity, which it does not hold, and a TDGSTCLUST32 one each
	 * update past VSTATS_TDGST32_COUNT_MAX. */
	uint64_t errs;
	bool tdgst_counts32; /* TDGST: vstats_spec's */
};

/* A VOI's statistics and update state (stats(3)'s voi and voistat). */
struct vstats_voi {
	enum vstats_dtype dtype;
	bool relupdate; /* SB_VOI_RELUPDATE: updates may be relative */
	bool have_prev;
	struct vstats_value prev; /* the last value, for relative updates */
	uint64_t updates;
	struct vstats_stat stat[VSTATS_STATS_MAX];
	uint32_t nstats;
};

/* Builds the buckets a spec makes with FreeBSD's rules, checked: strictly
 * increasing, at most VSTATS_BUCKETS_MAX and VSTATS_REGIONS_MAX regions,
 * steps that move. -EINVAL with *why, -ENOMEM. */
int vstats_hist_buckets(enum vstats_stype stype, enum vstats_dtype dtype,
			const struct vstats_hist_spec *spec, struct vstats_bucket **out,
			uint32_t *n, const char **why);
/* The flags stype takes with scheme: FreeBSD refuses both on a DVHIST
 * (EINVAL), and with the user's buckets its UBOUND_INF reads a bucket past
 * the ones given, so here a CRHIST refuses it there (its last bucket is
 * open already). NULL, or why the flags are refused. */
const char *vstats_flags_refused(enum vstats_stype stype, enum vstats_scheme scheme,
				 uint32_t flags);

/* Whether a double holds integer bound b exactly, as *le: le=b must count
 * every value up to b and none above, and past 2^53 a double in
 * [b, b + 1) is b itself or nothing. The largest value (INT64_MAX,
 * UINT64_MAX) is served as 2^63, 2^64: no value is above it. A float
 * bound is always held. */
bool vstats_exact_le(struct vstats_value b, double *le);
/* h's regions into out (room for VSTATS_REGIONS_MAX); their number. A
 * region is served at the largest value it holds where vstats_exact_le
 * holds it; else it joins the next region served, so every le counts
 * exactly the values up to it. The data file keeps every bucket. */
size_t vstats_hist_regions(const struct vstats_hist *h, enum vstats_stype stype,
			   struct vstats_region *out);
/* Appends a region to out[0..*n) (one at the last's le joins it); the
 * caller has the room. */
void vstats_region_add(struct vstats_region *out, size_t *n, double le, uint64_t count);
/* Appends a region of count whose largest value is b by
 * vstats_hist_regions' rule: served at b with *carry when
 * vstats_exact_le holds b (*carry back to 0), else added to *carry for
 * the next. The caller adds what is left of *carry to its last region. */
void vstats_region_bound(struct vstats_region *out, size_t *n, uint64_t *carry,
			 struct vstats_value b, uint64_t count);

/* A VOI with the statistics of specs[0..n); -EINVAL with *why, -ENOMEM. */
int vstats_voi_init(struct vstats_voi *v, enum vstats_dtype dtype, bool relupdate,
		    const struct vstats_spec *specs, uint32_t n, const char **why);
void vstats_voi_free(struct vstats_voi *v);
/* The most a VOI of specs[0..n) allocates besides its struct, from the
 * specs alone: its histograms' buckets and counts (the buckets are made
 * to count them) and each t-digest full (tdigest_bytes_max), so a caller
 * can bound a total before it makes any VOI. 0, or -EINVAL with *why for
 * specs vstats_voi_init refuses, -ENOMEM. */
int vstats_voi_bytes(enum vstats_dtype dtype, const struct vstats_spec *specs, uint32_t n,
		     size_t *out, const char **why);

/* stats_voi_update_abs / _rel. A relative update of a VOI without
 * relupdate, or a value of another dtype, is -EINVAL and changes nothing;
 * one whose value the dtype cannot hold (past its limits, or a relative
 * update that would take it there) is -ERANGE and changes nothing. */
int vstats_update_abs(struct vstats_voi *v, struct vstats_value x);
int vstats_update_rel(struct vstats_voi *v, struct vstats_value dx);
/* n absolute updates with x at once (a source's own histogram bucket of n
 * values): what n calls of vstats_update_abs would make. n that would
 * take the VOI's count of values past 2^64 - 1 is -EOVERFLOW and changes
 * nothing: every sum of its histograms' counts (a cumulative le, _count)
 * stays within that count, so none wraps. */
int vstats_update_n(struct vstats_voi *v, struct vstats_value x, uint64_t n);

/* Every statistic back to empty (SUM 0, MAX the dtype's lowest, MIN its
 * highest, histograms and digest empty; updates 0, so MAX and MIN read
 * as not yet taken); the relative-update base stays. */
void vstats_voi_reset(struct vstats_voi *v);
/* stats_blob_snapshot: a deep copy into dst (which must be unused or
 * freed), and with `reset` the source reset after. -ENOMEM. */
int vstats_voi_snapshot(struct vstats_voi *dst, struct vstats_voi *src, bool reset);

double vstats_value_f(struct vstats_value v);

/* stats_tpl_sample_rollthedice: the index of the rate chosen for the
 * given seed bytes (percentages summing to at most 100), or -1 for none;
 * the same seed always chooses the same. */
int vstats_rollthedice(const uint32_t *pct, size_t n, const void *seed, size_t len);

/* ---- vstats_blob.c: stats(3)'s templates and blobs as text ---- */

#define VSTATS_TPL_NAME_MAX 128 /* bytes of a template's name in a spec */

/* stats_tpl_update_hash: FreeBSD's hash32 (sys/hash.h) over the
 * template's name, its VOI's name and its schema (data type, relative
 * updates, each statistic with its settings), so one template hashes the
 * same on every host and run, and any change to it changes the hash. */
uint32_t vstats_tpl_hash(const char *tplname, const char *voiname, enum vstats_dtype dtype,
			 bool relupdate, const struct vstats_spec *specs, uint32_t n);

/* A template named in text, in any of stats(3)'s three forms:
 * "name":hash (the normative one), "name" and :hash; the quotes are
 * optional. An absent part is "" or 0, which stats_tpl_fetch_allocid
 * reads as any. */
struct vstats_tplspec {
	char name[VSTATS_TPL_NAME_MAX + 1];
	uint32_t hash;
};

/* Parses s[0..len): 0, or -EINVAL with *why. */
int vstats_tplspec_parse(const char *s, size_t len, struct vstats_tplspec *out, const char **why);

/* stats_tpl_sample_rates' input: spec=pct pairs separated by commas,
 * blanks around each pair allowed, pct 0 to 100. The whole text must be
 * pairs: 0 with *n of them; -EINVAL (*why) for anything else, -EFBIG
 * past max pairs. */
struct vstats_rate {
	struct vstats_tplspec spec;
	uint32_t pct;
};

int vstats_rates_parse(const char *s, struct vstats_rate *out, size_t max, size_t *n,
		       const char **why);

/* stats_blob_visit's flags (the same bits as SB_IT_*). */
#define VSTATS_IT_FIRST_CB 0x0001u
#define VSTATS_IT_LAST_CB 0x0002u
#define VSTATS_IT_FIRST_VOI 0x0004u
#define VSTATS_IT_LAST_VOI 0x0008u
#define VSTATS_IT_FIRST_VOISTAT 0x0010u
#define VSTATS_IT_LAST_VOISTAT 0x0020u

/* What a visit shows of one statistic (stats(3)'s struct sb_visit). */
struct vstats_visit {
	uint32_t tplhash;
	uint32_t flags; /* VSTATS_IT_* */
	int16_t voi_id; /* the VOI's index in the blob */
	const struct vstats_voi *voi;
	const struct vstats_stat *stat;
	bool valid; /* taken a value since its reset (stats(3)'s VS_VSDVALID) */
};

typedef int (*vstats_visit_cb)(const struct vstats_visit *v, void *ctx);

/* stats_blob_visit over a blob of nvoi VOIs: cb for every statistic of
 * every VOI, in order, with the flags marking the first and last of each;
 * a non-zero return ends the visit and is returned. */
int vstats_blob_visit(const struct vstats_voi *vois, size_t nvoi, uint32_t tplhash,
		      vstats_visit_cb cb, void *ctx);

#endif
