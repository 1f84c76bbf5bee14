/* The source table and the memory budget (srctab.c): every change to
 * what the sources hold goes through srctab_resize, so the memory in use
 * is always the sum of every source's bytes and never above
 * max_memory_bytes. Under the processing's lock. */
#ifndef BS_SRCTAB_H
#define BS_SRCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "seriesset.h"
#include "emitter.h"

struct processing_template_conf;
struct processing_group_conf;
struct vstats_voi;
struct source_more;

struct processing;
struct source;

/* A key split as a scrape's duplicate check reads a series: its name
 * (with the brace) and its labels, each `name="value"` as written. */
struct srctab_key {
	size_t name_len; /* up to and with the '{' */
	size_t n;
	struct seriesset_label l[EMITTER_MAX_LABELS];
};

void srctab_init(struct processing *p);
/* Frees every source and the table. */
void srctab_free(struct processing *p);
void srctab_key_split(const char *key, size_t len, struct srctab_key *kp);
uint64_t srctab_hash(uint32_t group, const char *key, const struct srctab_key *kp);
struct source *srctab_find(struct processing *p, uint32_t group, const char *key,
			   const struct srctab_key *kp, uint64_t h);
/* A new source, if what it would hold fits max_memory_bytes (computed
 * from its group's configured definitions before anything is allocated):
 * 0, -EFBIG past the limit, -ENOMEM. histogram: made by a histogram. */
int srctab_add(struct processing *p, uint32_t group, const char *key, size_t len, uint64_t h,
	       const char *name, const struct bs_label *labels, size_t n, bool histogram,
	       uint64_t now_ns, struct source **out);
/* Puts s, a source another table gave up (srctab_take_marked), into p's
 * under its id, its bytes counted anew from p's definitions: 0; -E2BIG
 * past max_sources, -EFBIG past max_memory_bytes, -ENOMEM, s then the
 * caller's to discard. */
int srctab_adopt(struct processing *p, struct source *s);
/* Frees a source that is in no table, its statistics those of p's group. */
void srctab_discard(struct processing *p, struct source *s);
/* Takes the sources marked `expired` out of the table unfreed, their
 * share given back: the caller owns them. The count taken. */
size_t srctab_take_marked(struct processing *p);
/* Frees every source of group. */
void srctab_drop_group(struct processing *p, uint32_t group);
/* Sources not seen for the ttl are freed, and every next_fed that
 * pointed at one forgotten. Takes the lock. */
void srctab_expire(struct processing *p, uint64_t now_ns);

/* What source s holds, from its definitions as they are now (not
 * measured): its record with its name, labels and key, a histogram
 * source's previous counts at their most, its statistics' structs and
 * data (statproc_data_bytes) and, when sampled, its template's VOI at its
 * most (voi_bytes). The sum over the sources is mem_bytes. */
size_t srctab_bytes(const struct processing *p, const struct source *s);
/* Whether `more` bytes fit beside mem_bytes under max_memory_bytes. */
bool srctab_fits(const struct processing *p, uint64_t more);
/* The one way a source's share changes: s now holds bytes (checked with
 * srctab_fits before anything was allocated for more). */
void srctab_resize(struct processing *p, struct source *s, size_t bytes);
/* Room in s's share for a histogram's previous counts at their most, for
 * a source made by a value that now is a histogram: 0, -EFBIG past
 * max_memory_bytes. */
int srctab_take_histogram(struct processing *p, struct source *s);

/* The VOIs of a blob of template t: voi made, and *more (NULL for one
 * VOI) with the others. 0, or -ENOMEM with nothing made. */
int srctab_vois_make(const struct processing_template_conf *t, struct vstats_voi *voi,
		     struct source_more **more, uint32_t *nmore);
void srctab_vois_free(struct vstats_voi *voi, struct source_more *more, uint32_t nmore);
/* The bytes a sampled source of g holds in its blob at most: every VOI's
 * data and, past the first, each VOI's state with its histogram's counts
 * at their most (the configuration's voi_bytes). */
size_t srctab_voi_bytes(const struct processing_group_conf *g);

#endif
