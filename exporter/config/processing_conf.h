/* The `processing:` section: which series are sampled between scrapes and
 * how each is processed (the Linux statistics infrastructure's statistics and a stats(3) template
 * of FreeBSD), checked with file, line and column. */
#ifndef BS_PROCESSING_CONF_H
#define BS_PROCESSING_CONF_H

#include <stdbool.h>
#include <stdint.h>

#include "conftree.h"
#include "processing_names.h"
#include "selector.h"
#include "statproc.h"
#include "vstats.h"

#define PROCESSING_GROUPS_MAX 64
#define PROCESSING_STATS_MAX 16	    /* statistics per group */
#define PROCESSING_QUANTILES_MAX 16 /* of a t-digest */
#define PROCESSING_ALLOW_MAX 16
#define PROCESSING_MEMORY_DEFAULT (256ull << 20) /* max_memory_bytes */

/* What a sampled value becomes as the X of (X, Y = 1). */
enum processing_x { PROCESSING_X_VALUE, PROCESSING_X_DELTA, PROCESSING_X_RATE };

struct processing_stat_conf {
	const char *name; /* a metric name: the families it writes start with it */
	const char *units;
	struct statproc_def def;
	bool on;
};

/* One VOI of a template: its name (its id's, in the JSON and on
 * /metrics), data type and statistics. */
struct processing_voi_conf {
	const char *name;
	/* VOIs past the first: the metric name (as Prometheus shows it) of
	 * the series that feeds it, the one with the source's labels. The
	 * first VOI takes the source's own series. */
	const char *series;
	bool relative;
	enum vstats_dtype dtype; /* dtype: s32 ... ulong (s64 unless told); x: rate, double */
	struct vstats_spec spec[VSTATS_STATS_MAX];
	uint32_t nspec;
	struct vstats_bucket *usr[VSTATS_STATS_MAX]; /* the user's buckets, owned */
	double quantile[PROCESSING_QUANTILES_MAX];
	uint32_t nquantile;
	size_t voi_bytes; /* the most one VOI of it allocates (vstats_voi_bytes) */
};

#define PROCESSING_VOIS_MAX 8 /* VOIs of one template */
/* What a sampled source holds for each VOI past the first besides its
 * statistics' data: the VOI and the state of its series, with a
 * histogram's counts at their most (the stage checks that it fits). */
#define PROCESSING_VOI_STATE_BYTES 4096

/* stats(3)'s template: one VOI named after the group (the `stats:`
 * form), or the VOIs `vois:` lists, one blob of them per source. */
struct processing_template_conf {
	const char *name; /* the families' prefix */
	uint32_t sample_pct;
	struct processing_voi_conf voi[PROCESSING_VOIS_MAX];
	uint32_t nvoi;
	bool listed; /* vois: each VOI's families and lines are <name>_<voi> */
	/* listed with more than one VOI: the metric name the group's select
	 * names, whose series are the sources a sibling series joins */
	const char *anchor;
	/* every VOI's voi_bytes, and PROCESSING_VOI_STATE_BYTES for each
	 * past the first: what a sampled source's blob holds at its most */
	size_t voi_bytes;
};

struct processing_group_conf {
	const char *name;
	const char *select_text;
	struct selector select;
	enum processing_x x;
	double x_scale; /* the Linux statistics infrastructure's X is the integer nearest x *
			   x_scale */
	struct processing_stat_conf stat[PROCESSING_STATS_MAX];
	uint32_t nstats;
	bool has_template;
	struct processing_template_conf tpl;
};

struct processing_allow {
	unsigned char addr[16]; /* IPv4 as ::ffff:a.b.c.d */
	unsigned prefix;	/* bits of addr that must match */
};

struct processing_conf {
	double interval_s; /* sampling period */
	uint64_t max_sources;
	/* What every source's statistics may hold together (their structs,
	 * data and VOIs, by statproc_data_bytes and voi_bytes): a new source
	 * or a write past it is refused. */
	uint64_t max_memory_bytes;
	double source_ttl_s;
	bool write; /* POST to the interfaces' definitions */
	struct processing_allow allow[PROCESSING_ALLOW_MAX]; /* clients POST is open to */
	uint32_t nallow;
	const char *users[PROCESSING_ALLOW_MAX]; /* write_users: basic-auth users POST is open to */
	uint32_t nusers;
	struct processing_group_conf group[PROCESSING_GROUPS_MAX];
	uint32_t ngroups;
};

/* The bytes one source of g holds in its statistics as configured: their
 * structs, statproc_data_bytes of each definition, and its template's
 * voi_bytes when sampled. */
uint64_t processing_conf_stats_bytes(const struct processing_group_conf *g, bool sampled);

/* The prefix of VOI v's families and data lines: the template's name, or
 * <template>_<voi> for a template that lists its VOIs. */
#define PROCESSING_VOI_PREFIX_MAX 256
void processing_conf_voi_prefix(const struct processing_template_conf *t, uint32_t v, char *out,
				size_t size);
/* Claims every family of every VOI of t for owner
 * (processing_names_template's results). */
int processing_conf_template_names(struct processing_names *names,
				   const struct processing_template_conf *t, uint32_t owner,
				   const char **clash, uint32_t *other);

/* Reads the section at node into a new processing_conf; -EINVAL with the error
 * on the document, -ENOMEM. */
int processing_conf_load(const struct conf_node *node, struct processing_conf **out);
void processing_conf_free(struct processing_conf *pc);
/* Whether a client may write: its address (IPv6 or IPv4-mapped) must be
 * in write_allow and the user it authenticated as (NULL: none) in
 * write_users, each when given. */
bool processing_conf_may_write(const struct processing_conf *pc, const unsigned char addr[16],
			       const char *user);

#endif
