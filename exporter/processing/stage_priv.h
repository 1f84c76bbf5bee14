/* The processing stage's insides, for exporter/processing/ only
 * (tools/checksrc refuses this header elsewhere; tests may read it): the
 * sources, the source table with its memory budget, the sampler's state
 * and the names the stage's families claim. The lock guards the sources
 * and everything in them. */
#ifndef BS_STAGE_PRIV_H
#define BS_STAGE_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "stage.h"
#include "processing_conf.h"
#include "processing_names.h"
#include "statproc.h"
#include "vstats.h"
#include "growarr.h"
#include "worker.h"

/* A VOI of a source's blob past its first (a template of several VOIs),
 * and what is kept of the series that feeds it: the series of the
 * VOI's metric with the source's labels. */
struct source_more {
	struct vstats_voi voi;
	bool have_prev;
	struct bs_value prev;
	uint64_t prev_ns;
	uint64_t *prev_count; /* a histogram's counts at the last sample */
	uint32_t prev_n;
	uint64_t prev_bounds;
	uint64_t fed_pass; /* written twice in a pass: a duplicate */
};

/* One selected series and what is kept of it. */
struct source {
	uint32_t group;
	uint32_t id; /* the interface is <group>/<id> */
	uint64_t seen_ns;
	/* The source of the same group fed after this one in the last pass
	 * of its collector: a collector that writes its series in the same
	 * order each pass finds each one here, by comparing the labels,
	 * without building its key or reading the index. NULL: none known. */
	struct source *next_fed;
	bool expired; /* leaving the table: no next_fed may point here */
	/* The collector pass (the sampler's pass) that last fed it: written again
	 * in the same pass, it is a duplicate a scrape refuses. */
	uint64_t fed_pass;
	char *key; /* name{labels}: the series, as the interface lists it */
	size_t keylen;
	char *name;		 /* its metric name, as the collector gave it */
	struct bs_label *labels; /* copies as the collector gave them, for the families written */
	size_t nlabels;
	uint64_t hash;
	bool have_prev;
	struct bs_value prev; /* as read: a delta of integers is taken in integers */
	uint64_t prev_ns;
	/* A histogram source: its buckets' counts at the last sample, and a
	 * hash of its bounds (other bounds start a new base). */
	uint64_t *prev_count;
	uint32_t prev_n;
	uint64_t prev_bounds;
	bool histogram; /* prev_count's most, STAGE_HIST_BUCKETS_MAX, is in bytes */
	/* What it holds (srctab_bytes), its part of the processing's mem_bytes:
	 * set when it is made, and when a write or a sample rate changes it. */
	size_t bytes;
	struct statproc_stat *stat; /* the group's statistics */
	bool sampled;		    /* chosen by the template's sample_pct */
	bool voi_stopped;	    /* on=0 stopped the template's VOI */
	struct vstats_voi voi;	    /* the blob's first VOI, fed by this series */
	struct source_more *more;   /* its other VOIs (nmore), while sampled */
	uint32_t nmore;
	/* When it was made and its blob last reset (monotonic): the blob's
	 * created and lastrst. */
	uint64_t created_ns, lastrst_ns;
	/* labels[nlabels], then the name, the labels' strings and the key:
	 * one allocation with the source, read together on each sample. */
	struct bs_label mem[];
};

/* VOI v of s's blob (s sampled, v below 1 + nmore). */
static inline struct vstats_voi *source_voi(struct source *s, uint32_t v)
{
	return v ? &s->more[v - 1].voi : &s->voi;
}

static inline const struct vstats_voi *source_voi_c(const struct source *s, uint32_t v)
{
	return v ? &s->more[v - 1].voi : &s->voi;
}

/* Every VOI of s's blob back to empty (data=reset, a snapshot). */
static inline void source_vois_reset(struct source *s)
{
	for (uint32_t v = 0; s->sampled && v <= s->nmore; v++)
		vstats_voi_reset(source_voi(s, v));
}

/* An index slot: the hash beside the source, so a probe that misses reads
 * no source. */
struct srctab_slot {
	uint64_t hash;
	struct source *s; /* NULL: empty */
};

/* Room for one histogram's buckets while a scrape writes it (under the
 * sources' lock): too large for a stack. */
struct emit_scratch {
	struct vstats_region region[VSTATS_REGIONS_MAX];
	double le[VSTATS_REGIONS_MAX];
	uint64_t count[VSTATS_REGIONS_MAX];
	struct statproc_list_entry entry[STATPROC_LIST_MAX];
};

struct stage_counters {
	uint64_t ticks, tick_ns_total; /* sampling passes, and their time */
	uint64_t values;	       /* values fed */
	uint64_t busy;		       /* a collector held by a scrape past the tick */
	uint64_t too_many_sources, not_a_number, expired_sources, key_too_long;
	uint64_t invalid_histogram; /* a source's own histogram, malformed or over the cap */
	uint64_t out_of_range;	    /* an X a statistic's or VOI's type cannot hold: not taken */
	/* A series written twice in one collect, a family claimed twice: a
	 * scrape serves the first only, and so does the processing. */
	uint64_t duplicate_series, duplicate_family;
	/* Pairs a Linux statistics infrastructure total could not take whole (hits_saturated). */
	uint64_t saturated;
	uint64_t memory_limit; /* a new source max_memory_bytes has no room for */
};

/* A template as the interface lists it (stats(3)'s template list): its
 * slot id is its index, its group's conf holds its name and schema. */
struct tpl_slot {
	uint32_t group;
	uint32_t hash; /* vstats_tpl_hash */
};

/* Buckets of a histogram source kept at most (KVM's have 32). */
#define STAGE_HIST_BUCKETS_MAX 256

struct processing {
	const struct processing_conf *conf;	/* the configuration's, which outlives it */
	struct stage_input in;			/* the collectors sampled */
	pthread_mutex_t lock;			/* the sources and everything in them */
	GROWARR_OF(struct source *, src, srcs); /* in order of arrival */
	/* Per group, its sources in order of arrival: a scrape writes each
	 * family of a group from its own list, not from every source. */
	struct stage_group_srcs {
		GROWARR_OF(struct source *, src, srcs);
	} grp[PROCESSING_GROUPS_MAX];
	struct srctab_slot *index; /* open addressing over src, by (group, key) hash */
	size_t index_cap;
	uint32_t next_id[PROCESSING_GROUPS_MAX];
	/* What every source holds, the sum of their bytes, never past the
	 * configuration's max_memory_bytes: a source or a write that would
	 * pass it is refused before anything is allocated. */
	uint64_t mem_bytes; /* written by srctab.c alone */
	struct stage_counters count;
	/* per collector: it produced a selected series; when it is run next
	 * whatever that says, and the gap before (sampler.c) */
	bool relevant[STAGE_INPUT_MAX];
	uint64_t next_discovery_ns[STAGE_INPUT_MAX], discovery_gap_ns[STAGE_INPUT_MAX];
	uint64_t next_expiry_ns;
	uint64_t pass; /* collects the sampler ran, numbering each (fed_pass) */
	int epfd;
	struct worker sampler;
	struct tpl_slot tpl[PROCESSING_GROUPS_MAX]; /* the groups' templates, in order */
	uint32_t ntpl;
	uint32_t sample_pct[PROCESSING_GROUPS_MAX]; /* per group: its template's rate in force */
	struct emit_scratch *scratch;
	/* The clock a scrape brings the histories up to: the one the
	 * /statistics/ interface is given (monoclock_ns); tests set theirs. */
	uint64_t (*clock_ns)(void);
	/* Family names and a collector's: every name
	 * the processing's families could claim (read-only once built); the
	 * names collectors were seen to claim among them, whose families of
	 * the processing are not served from then on, so the collector's
	 * wins each scrape; and those of the processing's families already
	 * logged as lost (under lock). */
	struct processing_names ours, lost, warned;
	/* The names the processing's own families claimed in the scrape
	 * under way (partial: one could not be kept), so that an own clash
	 * is told from a collector's. Under lock. */
	struct processing_names served;
	bool served_partial;
};

#endif
