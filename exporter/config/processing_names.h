/* The metric names the processing's families claim on /metrics, by the
 * emitter's rules (a counter x claims x, x_total and x_created; a
 * histogram x_bucket, x_count and x_sum ...), each with the statistic or
 * template that claims it: a name claimed by two is a clash, refused at
 * load and at a definition write, never left to a scrape to drop. */
#ifndef BS_PROCESSING_NAMES_H
#define BS_PROCESSING_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "statproc.h"
#include "vstats.h"

/* An owner: group g's statistic k, or (k = PROCESSING_NAMES_TEMPLATE) its
 * template. */
#define PROCESSING_NAMES_TEMPLATE 255u
#define PROCESSING_NAMES_OWNER(g, k) ((uint32_t)(g) << 8 | (uint32_t)(k))

struct processing_names {
	struct processing_name_slot {
		char *name; /* NULL: empty */
		uint32_t owner;
	} * slot;
	size_t cap, used;
	/* Whether the exporter's and Prometheus' own names
	 * (processing_names_reserved) are refused: set for the sets a load or a
	 * write checks, not for the ones a scrape keeps. */
	bool reserve;
	char refused[320]; /* the reserved name an -EPERM's *clash points to */
};

/* What a Linux statistics infrastructure statistic's names depend on: its type and, for a
 * history, whether its mode is range (PROCESSING_SHAPE_OF). A mask of shapes
 * is what the sources of one statistic have among them. */
#define PROCESSING_SHAPE_OF(d)                                                                     \
	(1u << ((d)->type == STATPROC_HISTORY && (d)->mode == STATPROC_MODE_RANGE                  \
		    ? 6u                                                                           \
		    : (unsigned)(d)->type))

void processing_names_init(struct processing_names *n);
/* Whether name is one the exporter serves itself or Prometheus adds to
 * a scrape: up, scrape_*, process_* and binstat_*. */
bool processing_names_reserved(const char *name);
void processing_names_free(struct processing_names *n);
/* Claims the names of statistic `name` in each shape of the mask (a
 * value as a counter, which claims a gauge's name and more). 0; -EEXIST
 * with *clash (the name) and *other (its owner) when another owner has
 * one; -EPERM with *clash (the name) when n->reserve and it is
 * processing_names_reserved; -ENOMEM. */
int processing_names_stat(struct processing_names *n, const char *name, unsigned shapes,
			  uint32_t owner, const char **clash, uint32_t *other);
/* The same for the statistics of template `name`. */
int processing_names_template(struct processing_names *n, const char *name,
			      const struct vstats_spec *spec, uint32_t nspec, uint32_t owner,
			      const char **clash, uint32_t *other);
/* Claims one family of that type for owner (a counter named with _total
 * as the emitter takes it);
 * the same results. */
int processing_names_family(struct processing_names *n, const char *family,
			    enum bs_metric_type type, uint32_t owner, const char **clash,
			    uint32_t *other);
/* Whether any name the family claims (as processing_names_family) is in n. */
bool processing_names_clashes(const struct processing_names *n, const char *family,
			      enum bs_metric_type type);
/* Whether name is claimed; its owner in *owner. */
bool processing_names_find(const struct processing_names *n, const char *name, uint32_t *owner);

#endif
