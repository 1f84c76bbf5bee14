/* The suppliers the DCI collector knows: one per socket in the supplier
 * directory, each with its connection, its description and its values,
 * kept across scrapes. */
#ifndef DCI_SET_H
#define DCI_SET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dci4_dir.h"
#include "dci4_wire.h"
#include "dci_layout.h"
#include "dci_link.h"
#include "statmap.h"

#define DCI_DIR_ENTRIES_MAX 65536 /* directory entries looked at per scrape */

struct dci_config {
	const char *dir;
	double timeout_s;	    /* all of a scrape's exchanges */
	double describe_interval_s; /* 0: only on reset or reconnect */
	uint64_t max_suppliers, max_stats, max_stats_total, max_label_len;
	uint64_t max_buffer_mib; /* reply buffers and values, all suppliers */
	struct statmap map;
};

enum dci_state {
	DCI_IDLE,
	DCI_BUSY,   /* requests in flight */
	DCI_DONE,   /* every value of this scrape read */
	DCI_FAILED, /* counted by reason; left out of this scrape */
	DCI_GONE,   /* its socket refuses: a stale file, not a supplier */
};

struct dci_sup {
	char name[DCI4_NAME_MAX + 1]; /* the `supplier` label */
	char *path;
	ino_t ino; /* a new socket under the same name is a new supplier */
	struct dci_link link;
	struct dci4_info info; /* the last SP_INFO */
	bool have_info;
	struct dci_layout *layout; /* the description in use; NULL until described */
	uint8_t *values;	   /* layout->value_bytes */
	struct dci_layout *building;
	size_t building_extra; /* statistics it claims past what layout holds */
	uint32_t gen;	       /* bumped when layout changes: older reads are ignored */
	bool statics_read, must_describe, retried, want_out;
	uint64_t describes;
	uint64_t described_ns;
	enum dci_state state;
};

struct dci_set {
	struct dci_sup **sup; /* sorted by name */
	size_t n, cap;
	int epfd;
	uint64_t epoch;	       /* bumped whenever a layout or the set changes */
	size_t stats_total;    /* statistics described, all suppliers */
	size_t stats_building; /* and claimed by descriptions being built */
	struct dci_budget budget;
};

int dci_set_init(struct dci_set *set);
void dci_set_free(struct dci_set *set);
/* Makes the set the sockets now in cfg->dir (at most max_suppliers, the
 * first by name). A missing directory is an empty set. -errno when it
 * cannot be read. */
int dci_set_sync(struct dci_set *set, const struct dci_config *cfg, struct bs_emitter *em);
/* Forgets a supplier's description (its statistics leave the budget). */
void dci_sup_forget(struct dci_set *set, struct dci_sup *s);
/* Starts a new description of statistics 0..max_stat (s->building),
 * claiming them at once: every description being built counts against
 * `cap` with those adopted, so suppliers described in one exchange cannot
 * pass it together. -EDQUOT past the cap (nothing allocated), -ENOMEM. */
int dci_sup_build(struct dci_set *set, struct dci_sup *s, uint32_t max_stat, size_t cap);
/* Drops the description being built, and its claim. */
void dci_sup_unbuild(struct dci_set *set, struct dci_sup *s);
/* Takes the finished description out of s->building (its claim becomes
 * the caller's to add as adopted). */
struct dci_layout *dci_sup_built(struct dci_set *set, struct dci_sup *s);

#endif
