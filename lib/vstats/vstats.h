/* FreeBSD stats(3)'s statistics of a variable of interest (seed 004): SUM,
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

enum vstats_stype {
	VSTATS_SUM,
	VSTATS_MAX,
	VSTATS_MIN,
	VSTATS_CRHIST, /* continuous ranges [lb, ub) */
	VSTATS_DRHIST, /* discrete ranges [lb, ub] */
	VSTATS_DVHIST, /* discrete values */
	VSTATS_TDGST,
};

/* A VOI's values: integers are summed, compared and bucketed exactly. */
enum vstats_dtype { VSTATS_INT, VSTATS_FLOAT };

struct vstats_value {
	enum vstats_dtype dtype;
	union {
		int64_t i;
		double f;
	};
};

struct vstats_bucket {
	struct vstats_value lb, ub; /* DVHIST: lb == ub, the value */
};

/* How a histogram's buckets are made; CRHIST has the four schemes of
 * STATS_VSS_CRHIST*_{LIN,EXP,LINEXP,USR}, DRHIST and DVHIST only USR. */
enum vstats_scheme { VSTATS_LIN, VSTATS_EXP, VSTATS_LINEXP, VSTATS_USR };

/* The VSD_HIST_LBOUND_INF and VSD_HIST_UBOUND_INF flags: the first (last)
 * CRHIST bucket also takes everything below (above) it. */
#define VSTATS_LBOUND_INF 1u
#define VSTATS_UBOUND_INF 2u

struct vstats_hist_spec {
	enum vstats_scheme scheme;
	struct vstats_value lb, ub;	 /* LIN, EXP, LINEXP: the range cut into buckets */
	double stepinc;			 /* LIN */
	double stepbase, stepexp;	 /* EXP: bucket i is stepbase^(stepexp + i) wide */
	uint32_t nlinsteps;		 /* LINEXP: steps per power of stepbase */
	const struct vstats_bucket *usr; /* USR: CR uses lb only (ub: the next lb) */
	uint32_t nusr;
	uint32_t flags; /* VSTATS_*BOUND_INF */
};

/* One statistic of a VOI, as a template names it. */
struct vstats_spec {
	enum vstats_stype stype;
	struct vstats_hist_spec hist; /* the histograms */
	double compression;	      /* TDGST */
};

struct vstats_hist {
	struct vstats_bucket *bkt;
	uint64_t *count;
	uint32_t n;
	uint32_t flags;
	uint64_t oob; /* values in no bucket */
};

struct vstats_stat {
	enum vstats_stype stype;
	union {
		struct vstats_value v; /* SUM, MAX, MIN */
		struct vstats_hist hist;
		struct tdigest *td;
	};
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

/* Builds the buckets a spec makes, checked: strictly increasing, at most
 * VSTATS_BUCKETS_MAX, steps that move. -EINVAL with *why. */
int vstats_hist_buckets(enum vstats_stype stype, enum vstats_dtype dtype,
			const struct vstats_hist_spec *spec, struct vstats_bucket **out,
			uint32_t *n, const char **why);

/* A VOI with the statistics of specs[0..n); -EINVAL with *why, -ENOMEM. */
int vstats_voi_init(struct vstats_voi *v, enum vstats_dtype dtype, bool relupdate,
		    const struct vstats_spec *specs, uint32_t n, const char **why);
void vstats_voi_free(struct vstats_voi *v);

/* stats_voi_update_abs / _rel. A relative update of a VOI without
 * relupdate, or a value of the other dtype, is -EINVAL and changes nothing. */
int vstats_update_abs(struct vstats_voi *v, struct vstats_value x);
int vstats_update_rel(struct vstats_voi *v, struct vstats_value dx);

/* Every statistic back to empty (SUM 0, MAX the dtype's lowest, MIN its
 * highest, histograms and digest empty); the relative-update base stays. */
void vstats_voi_reset(struct vstats_voi *v);
/* stats_blob_snapshot: a deep copy into dst (which must be unused or
 * freed), and with `reset` the source reset after. -ENOMEM. */
int vstats_voi_snapshot(struct vstats_voi *dst, struct vstats_voi *src, bool reset);

double vstats_value_f(struct vstats_value v);

/* stats_tpl_sample_rollthedice: the index of the rate chosen for the
 * given seed bytes (percentages summing to at most 100), or -1 for none;
 * the same seed always chooses the same. */
int vstats_rollthedice(const uint32_t *pct, size_t n, const void *seed, size_t len);

#endif
