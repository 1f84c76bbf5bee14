/* Families made of many sources' statistics (DCI suppliers, Xen sets): the
 * members sharing a metric name are written as one family, in a stable
 * order, with the shape most of them agree on. */
#ifndef FAMGROUP_H
#define FAMGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <binstat/collector.h>

#define FAMGROUP_HELP_MAX 400
#define FAMGROUP_SHAPES_MAX 8 /* distinct shapes counted per family; more lose outright */

/* One statistic of one source; famgroup_commit fills `metric` and `shape`. */
struct famgroup_member {
	const void *src;
	uint32_t stat;
	const char *metric;	  /* ops->metric's answer, kept for the sort and the walk */
	enum bs_metric_type type; /* ops->head's answer, kept for every scrape's vote */
	const char *unit;
};

/* What the collector knows of its members. */
struct famgroup_ops {
	/* The member's family name; asked once per rebuild. */
	const char *(*metric)(const struct famgroup_member *m);
	/* Order after the metric name: source, then statistic. */
	int (*cmp)(const struct famgroup_member *a, const struct famgroup_member *b);
	/* The source answered this scrape: only those are written and vote. */
	bool (*live)(const struct famgroup_member *m);
	/* The family this member would define, help left NULL: members whose
	 * type or unit differ from the family's are dropped (family_conflict).
	 * Asked once per rebuild for the type and unit, which must hold (and
	 * unit's string live) until the next; then for the family's definer. */
	void (*head)(const struct famgroup_member *m, struct bs_family *fam);
	void (*help)(const struct famgroup_member *m, void *ctx, char *out, size_t cap);
	void (*write)(const struct famgroup_member *m, void *ctx, struct bs_emitter *em);
};

/* The ops of a collector that names its callbacks <prefix>_metric,
 * <prefix>_cmp, <prefix>_live, <prefix>_head, <prefix>_help and
 * <prefix>_write: `static const struct famgroup_ops ops =
 * FAMGROUP_OPS(member);`, so every collector fills the table the same way. */
#define FAMGROUP_OPS(prefix)                                                                       \
	{                                                                                          \
		.metric = prefix##_metric, .cmp = prefix##_cmp, .live = prefix##_live,             \
		.head = prefix##_head, .help = prefix##_help, .write = prefix##_write,             \
	}

/* Members sorted by family, rebuilt only when the collector's epoch moves. */
struct famgroup {
	uint64_t epoch;
	bool built;
	struct famgroup_member *m;
	size_t n;
};

void famgroup_free(struct famgroup *g);
bool famgroup_stale(const struct famgroup *g, uint64_t epoch);
/* Room for `max` members, for the collector to fill before famgroup_commit;
 * NULL when out of memory (the old members stay). */
struct famgroup_member *famgroup_begin(size_t max);
/* Sorts the `n` members filled in `m` (from famgroup_begin) and makes them
 * the group's for `epoch`. */
void famgroup_commit(struct famgroup *g, struct famgroup_member *m, size_t n, uint64_t epoch,
		     const struct famgroup_ops *ops);
/* Writes every family. Its type and unit are those most of its live
 * members share (a tie: the first in order); a member that disagrees is
 * dropped and counted as family_conflict, so one hostile source claiming
 * another's statistic loses alone. */
void famgroup_emit(const struct famgroup *g, const struct famgroup_ops *ops, void *ctx,
		   struct bs_emitter *em);

/* An integer statistic: exact, unless a mapping rule scales it. `raw` holds
 * the bits, two's complement when `is_signed`. */
int famgroup_sample_int(struct bs_emitter *em, const struct bs_label *l, size_t n, bool is_signed,
			uint64_t raw, double scale);

#endif
