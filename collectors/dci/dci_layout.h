/* What one supplier's description becomes: each statistic's place in the
 * values, its metric (name, type, unit, from the mapping rules), and the
 * ranges a scrape reads. Pure: built from decoded describe records. */
#ifndef DCI_LAYOUT_H
#define DCI_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "dci4_wire.h"
#include "statmap.h"

#define DCI_VALUES_MAX DCI4_BUFFER_MAX /* value bytes of one supplier */
#define DCI_RUNS_MAX 16		       /* ranges read per scrape, after merging */

enum dci_kind {
	DCI_SKIP, /* ST_UNUSED, unknown types, dropped by a rule */
	DCI_INT,
	DCI_BOOL,
	DCI_TIME,
	DCI_TEXT, /* strings and addresses: an info metric */
};

struct dci_stat {
	uint32_t type, format, presentation, size, volatility;
	uint32_t offset; /* of its value in the supplier's values */
	enum dci_kind kind;
	enum bs_metric_type mtype;
	const struct statmap_rule *rule;
	const char *unit; /* the rule's, "seconds" for times, or NULL */
	char *name;	  /* the supplier's, raw (owned) */
	char *metric;	  /* the family name (owned) */
};

struct dci_run {
	uint32_t first, last, bytes;
};

struct dci_layout {
	uint8_t reset[8];
	uint32_t i_version; /* the supplier's interface version, 100 for 1.00 */
	uint32_t nstats;
	struct dci_stat *stat;
	size_t value_bytes;
	struct dci_run run[DCI_RUNS_MAX]; /* what every scrape reads */
	unsigned nrun;
};

/* The first interface version with address and time statistics (1.01). */
#define DCI_IVERSION_ADDRESS_TIME 101

/* Room for statistics 0..max_stat, all DCI_SKIP until described, of a
 * supplier of interface version i_version. */
struct dci_layout *dci_layout_new(uint32_t max_stat, const uint8_t reset[8], uint32_t i_version);
void dci_layout_free(struct dci_layout *l);
/* Stores statistic i's description (i < nstats). */
int dci_layout_set(struct dci_layout *l, uint32_t i, const struct dci4_desc *d);

typedef void dci_drop_fn(void *ctx, const char *reason);

/* After every statistic is set: offsets, kinds, metric names (rules, the
 * default template dci_{module}_{stat}, collisions resolved) and the
 * ranges to read. -E2BIG when the values exceed DCI_VALUES_MAX. Statistics
 * skipped for what they are count a drop each (unknown_type, invalid_name,
 * type_needs_interface_1_01). */
int dci_layout_finish(struct dci_layout *l, const struct statmap *map, const char *module,
		      const char *title, const char *supplier, dci_drop_fn *drop, void *ctx);

/* True when two layouts describe the same statistics. */
bool dci_layout_same(const struct dci_layout *a, const struct dci_layout *b);

/* A statistic's description as the wire decoders take it (name left out). */
void dci_layout_desc(const struct dci_stat *s, struct dci4_desc *d);

#endif
