/* Processing between scrapes: a sampler thread reads the series the
 * `processing:` groups select, from the running collectors, at its own
 * rate, and feeds each value to that source's statistics (the Linux statistics infrastructure) and
 * template VOI (FreeBSD's stats(3)). Scrapes write what they hold (proc_emit.c);
 * the /statistics/ interface reads and changes them (proc_iface.c). */
#ifndef BS_PROC_H
#define BS_PROC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "proc_conf.h"
#include "proc_names.h"
#include "statproc.h"
#include "vstats.h"
#include "growarr.h"
#include "worker.h"

/* How the sampler reaches the collectors, which it never sees: n of them,
 * collector i collected into e by collect(ctx, i, e, wait_ns), which
 * returns 1 when a scrape held it past wait_ns (PROC_INPUT_BUSY), -ENODEV
 * when it does not run, else what the collector's collect returned. */
#define PROC_INPUT_MAX 64
#define PROC_INPUT_BUSY 1
struct proc_input {
	size_t n;
	int (*collect)(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns);
	void *ctx;
};

/* One selected series and what is kept of it. */
struct proc_source {
	uint32_t group;
	uint32_t id; /* the interface is <group>/<id> */
	uint64_t seen_ns;
	/* The source of the same group fed after this one in the last pass
	 * of its collector: a collector that writes its series in the same
	 * order each pass finds each one here, by comparing the labels,
	 * without building its key or reading the index. NULL: none known. */
	struct proc_source *next_fed;
	bool expired; /* being freed: no next_fed may point here */
	/* The collector pass (proc's pass) that last fed it: written again
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
	bool histogram; /* prev_count's most, PROC_HIST_BUCKETS_MAX, is in bytes */
	/* What it holds (proc_source_bytes), its part of proc's mem_bytes:
	 * set when it is made, and when a write or a sample rate changes it. */
	size_t bytes;
	struct statproc_stat *stat; /* the group's statistics */
	bool sampled;		    /* chosen by the template's sample_pct */
	bool voi_stopped;	    /* on=0 stopped the template's VOI */
	struct vstats_voi voi;
	/* labels[nlabels], then the name, the labels' strings and the key:
	 * one allocation with the source, read together on each sample. */
	struct bs_label mem[];
};

/* An index slot: the hash beside the source, so a probe that misses reads
 * no source. */
struct proc_slot {
	uint64_t hash;
	struct proc_source *s; /* NULL: empty */
};

/* Room for one histogram's buckets while a scrape writes it (under the
 * sources' lock): too large for a stack. */
struct proc_scratch {
	struct vstats_region region[VSTATS_REGIONS_MAX];
	double le[VSTATS_REGIONS_MAX];
	uint64_t count[VSTATS_REGIONS_MAX];
	struct statproc_list_entry entry[STATPROC_LIST_MAX];
};

struct proc_counters {
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
struct proc_tpl {
	uint32_t group;
	uint32_t hash; /* vstats_tpl_hash */
};

/* Buckets of a histogram source kept at most (KVM's have 32). */
#define PROC_HIST_BUCKETS_MAX 256

struct proc {
	const struct proc_conf *conf;		     /* the configuration's, which outlives it */
	struct proc_input in;			     /* the collectors sampled */
	pthread_mutex_t lock;			     /* the sources and everything in them */
	GROWARR_OF(struct proc_source *, src, srcs); /* in order of arrival */
	/* Per group, its sources in order of arrival: a scrape writes each
	 * family of a group from its own list, not from every source. */
	struct proc_group_srcs {
		GROWARR_OF(struct proc_source *, src, srcs);
	} grp[PROC_GROUPS_MAX];
	struct proc_slot *index; /* open addressing over src, by (group, key) hash */
	size_t index_cap;
	uint32_t next_id[PROC_GROUPS_MAX];
	/* What every source holds, the sum of their bytes, never past the
	 * configuration's max_memory_bytes: a source or a write that would
	 * pass it is refused before anything is allocated. */
	uint64_t mem_bytes;
	struct proc_counters count;
	bool relevant[PROC_INPUT_MAX];	   /* per collector: it produced a selected series */
	bool undiscovered[PROC_INPUT_MAX]; /* busy at its discovery: tried again next pass */
	uint64_t next_discovery_ns, next_expiry_ns;
	uint64_t pass; /* collects the sampler ran, numbering each (fed_pass) */
	int epfd;
	struct worker sampler;
	struct proc_tpl tpl[PROC_GROUPS_MAX]; /* the groups' templates, in order */
	uint32_t ntpl;
	uint32_t sample_pct[PROC_GROUPS_MAX]; /* per group: its template's rate in force */
	struct proc_scratch *scratch;
	/* The clock a scrape brings the histories up to: the one the
	 * /statistics/ interface is given (monoclock_ns); tests set theirs. */
	uint64_t (*clock_ns)(void);
	/* Family names and a collector's: every name
	 * the processing's families could claim (read-only once built); the
	 * names collectors were seen to claim among them, whose families of
	 * the processing are not served from then on, so the collector's
	 * wins each scrape; and those of the processing's families already
	 * logged as lost (under lock). */
	struct proc_names ours, lost, warned;
	/* The names the processing's own families claimed in the scrape
	 * under way (partial: one could not be kept), so that an own clash
	 * is told from a collector's. Under lock. */
	struct proc_names served;
	bool served_partial;
};

/* What source s holds, from its definitions as they are now (not
 * measured): its record with its name, labels and key, a histogram
 * source's previous counts at their most, its statistics' structs and
 * data (statproc_data_bytes) and, when sampled, its template's VOI at its
 * most (voi_bytes). Under p->lock; the sum over the sources is mem_bytes. */
size_t proc_source_bytes(const struct proc *p, const struct proc_source *s);
/* Whether `more` bytes fit beside mem_bytes under max_memory_bytes. */
bool proc_mem_fits(const struct proc *p, uint64_t more);

/* Built stopped; proc_start starts the sampler over in's collectors. */
int proc_new(const struct proc_conf *conf, struct proc **out);
int proc_start(struct proc *p, const struct proc_input *in);
/* Stops the sampler (joined) and frees everything. */
void proc_free(struct proc *p);

/* One sampling pass due at due_ns, run at now_ns (the sampler's; tests
 * call it directly): values are read at now, and the Linux statistics infrastructure takes them at
 * the time they were due. proc_tick: due when it runs. */
void proc_tick_at(struct proc *p, uint64_t due_ns, uint64_t now_ns);
void proc_tick(struct proc *p, uint64_t now_ns);
/* Feeds one value of a series; the probe emitter's path, and tests'.
 * True when a group selected it. */
bool proc_feed(struct proc *p, const char *name, const struct bs_label *labels, size_t n,
	       double value, uint64_t now_ns);
/* Feeds one sample of a histogram series (the Linux statistics infrastructure's own (X, Y)): from
 * the second on, each bucket's increase Y with its value X (its le; the
 * open last bucket's, the last finite le), times x_scale. A histogram
 * the emitter would refuse, or with more than PROC_HIST_BUCKETS_MAX
 * buckets, is counted as invalid_histogram. */
bool proc_feed_histogram(struct proc *p, const char *name, const struct bs_label *labels, size_t n,
			 const struct bs_histogram *h, uint64_t now_ns);

/* A collector's family f (seen by the sampler, or refused to the
 * processing in a scrape): when it claims a name a family of the
 * processing could claim, that family is no longer served. Takes the
 * lock. */
void proc_family_lost(struct proc *p, const char *family, enum bs_metric_type type);

/* The scrape's built-in source "processing": writes every statistic; its
 * state is the struct proc (collect and describe only, no init). */
extern const struct bs_collector proc_source;
/* proc_free for a void * owner (the collector set). */
void proc_release(void *p);

/* ---- proc_iface.c: the /statistics/ interface ---- */

struct proc_reply {
	int status; /* HTTP status */
	struct statproc_text text;
};

/* GET or POST on path (below /statistics/, with ?format=json where the
 * interface takes it); body for POST. may_write: the client is one the
 * configuration lets write. */
void proc_iface(struct proc *p, const char *method, const char *path, const char *body,
		bool may_write, uint64_t now_ns, struct proc_reply *r);

/* ---- proc_tpl.c: stats(3)'s operations as interface verbs ---- */

/* The template list (slot ids, hashes) and the rates in force, from conf. */
void proc_tpl_init(struct proc *p);
/* GET templates[/<id or spec>], GET and POST sample_rates, and a source's
 * blob as stats_blob_tostr's JSON; under p->lock, answers in r. */
void proc_tpl_get(struct proc *p, const char *what, struct proc_reply *r);
void proc_rates_get(struct proc *p, struct proc_reply *r);
void proc_rates_post(struct proc *p, const char *body, struct proc_reply *r);
void proc_tpl_json(struct proc *p, struct proc_source *s, struct proc_reply *r);
/* The errno's name as stats(3) documents it ("EINVAL"), for -rc. */
const char *proc_errname(int rc);
/* Sets the status and appends "ENAME: why". */
void proc_fail(struct proc_reply *r, int status, int rc, const char *why);

#endif
