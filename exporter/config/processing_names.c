/* The names the processing's families claim, as the emitter's family
 * registry (exporter/model/famreg.c) claims them in a scrape, kept with
 * their owner so that a clash is found before a scrape drops a family. */
#include "processing_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "names.h"

#define NAME_BUF (NAMES_METRIC_MAX + 64)

void processing_names_init(struct processing_names *n)
{
	memset(n, 0, sizeof(*n));
}

_Static_assert(sizeof(((struct processing_names *)0)->refused) > NAMES_METRIC_MAX,
	       "a reserved name fits");

void processing_names_free(struct processing_names *n)
{
	for (size_t i = 0; i < n->cap; i++)
		free(n->slot[i].name);
	free(n->slot);
	n->slot = NULL;
	n->cap = n->used = 0;
}

static size_t slot_of(const struct processing_names *n, const char *name)
{
	size_t i = (size_t)hash_bytes(name, strlen(name), 0x70726f636e616d65ull) & (n->cap - 1);

	while (n->slot[i].name && strcmp(n->slot[i].name, name) != 0)
		i = (i + 1) & (n->cap - 1);
	return i;
}

static int grow(struct processing_names *n)
{
	struct processing_names big = {.cap = n->cap ? 2 * n->cap : 64};

	if (!(big.slot = calloc(big.cap, sizeof(*big.slot))))
		return -ENOMEM;
	for (size_t i = 0; i < n->cap; i++)
		if (n->slot[i].name)
			big.slot[slot_of(&big, n->slot[i].name)] = n->slot[i];
	free(n->slot);
	n->slot = big.slot;
	n->cap = big.cap;
	return 0;
}

bool processing_names_find(const struct processing_names *n, const char *name, uint32_t *owner)
{
	size_t i;

	if (!n->cap)
		return false;
	i = slot_of(n, name);
	if (n->slot[i].name && owner)
		*owner = n->slot[i].owner;
	return n->slot[i].name != NULL;
}

bool processing_names_reserved(const char *name)
{
	static const char *const prefix[] = {"scrape_", "process_", "binstat_"};

	if (strcmp(name, "up") == 0)
		return true;
	for (size_t k = 0; k < sizeof(prefix) / sizeof(prefix[0]); k++)
		if (strncmp(name, prefix[k], strlen(prefix[k])) == 0)
			return true;
	return false;
}

/* One name for owner: its own already is no clash; one the exporter or
 * Prometheus keeps is nobody's. */
static int claim(struct processing_names *n, const char *name, uint32_t owner, const char **clash,
		 uint32_t *other)
{
	size_t i;
	int rc;

	if (n->reserve && processing_names_reserved(name)) {
		snprintf(n->refused, sizeof(n->refused), "%s", name);
		*clash = n->refused;
		return -EPERM;
	}
	if ((n->used + 1) * 2 > n->cap && (rc = grow(n)) < 0)
		return rc;
	i = slot_of(n, name);
	if (n->slot[i].name) {
		if (n->slot[i].owner == owner)
			return 0;
		*clash = n->slot[i].name;
		*other = n->slot[i].owner;
		return -EEXIST;
	}
	if (!(n->slot[i].name = strdup(name)))
		return -ENOMEM;
	n->slot[i].owner = owner;
	n->used++;
	return 0;
}

/* Family a b (its name a then b) of that type, as the emitter claims it
 * (emitter_family_base_len): a counter's _total is stripped first, so a
 * counter a_total claims a, a_total and a_created, not a_total_total
 *. */
static int claim_family(struct processing_names *n, const char *a, const char *b,
			enum bs_metric_type type, uint32_t owner, const char **clash,
			uint32_t *other)
{
	char base[NAME_BUF], name[NAME_BUF];
	int rc;

	if ((unsigned)type > BS_UNKNOWN)
		return 0;
	size_t len = (size_t)snprintf(base, sizeof(base), "%s%s", a, b);
	if (len > NAMES_METRIC_MAX)
		return 0; /* longer than any metric name: the emitter refuses it anyway */
	if (type == BS_COUNTER && names_has_suffix(base, len, "_total"))
		base[len - 6] = '\0';
	else if (type == BS_INFO && names_has_suffix(base, len, "_info"))
		base[len - 5] = '\0';
	const char *const *sfx = names_type_suffixes(type);
	for (size_t k = 0; k < NAMES_SUFFIXES_MAX && sfx[k]; k++) {
		snprintf(name, sizeof(name), "%s%s", base, sfx[k]);
		if ((rc = claim(n, name, owner, clash, other)) < 0)
			return rc;
	}
	return 0;
}

int processing_names_family(struct processing_names *n, const char *family,
			    enum bs_metric_type type, uint32_t owner, const char **clash,
			    uint32_t *other)
{
	return claim_family(n, family, "", type, owner, clash, other);
}

bool processing_names_clashes(const struct processing_names *n, const char *family,
			      enum bs_metric_type type)
{
	char name[NAME_BUF];
	size_t len = strlen(family);

	if ((unsigned)type > BS_UNKNOWN || len > NAMES_METRIC_MAX || !n->used)
		return false;
	if (type == BS_COUNTER && names_has_suffix(family, len, "_total"))
		len -= 6;
	else if (type == BS_INFO && names_has_suffix(family, len, "_info"))
		len -= 5;
	const char *const *sfx = names_type_suffixes(type);
	for (size_t k = 0; k < NAMES_SUFFIXES_MAX && sfx[k]; k++) {
		snprintf(name, sizeof(name), "%.*s%s", (int)len, family, sfx[k]);
		if (processing_names_find(n, name, NULL))
			return true;
	}
	return false;
}

/* The families of each Linux statistics infrastructure type (processing_emit.c writes them), the
 * out-of-range count of every one aside. */
static const struct {
	const char *suffix;
	enum bs_metric_type type;
} stat_fams[7][5] = {
    [STATPROC_VALUE] = {{"", BS_COUNTER}}, /* a gauge's name is a counter's too */
    [STATPROC_RANGE] = {{"_samples", BS_COUNTER},
			{"_min", BS_GAUGE},
			{"_avg", BS_GAUGE},
			{"_max", BS_GAUGE}},
    [STATPROC_ARRAY] = {{"", BS_HISTOGRAM}},
    [STATPROC_LIST] = {{"", BS_HISTOGRAM}, {"_missed", BS_COUNTER}},
    [STATPROC_RAW] = {{NULL, BS_GAUGE}},
    [STATPROC_HISTORY] = {{"_last_period", BS_GAUGE}},
    [6] = {{"_last_period_samples", BS_GAUGE},
	   {"_last_period_min", BS_GAUGE},
	   {"_last_period_avg", BS_GAUGE},
	   {"_last_period_max", BS_GAUGE}}, /* a history of mode range */
};

int processing_names_stat(struct processing_names *n, const char *name, unsigned shapes,
			  uint32_t owner, const char **clash, uint32_t *other)
{
	int rc;

	for (unsigned s = 0; s < 7; s++)
		for (size_t k = 0; (shapes >> s & 1) && k < 5 && stat_fams[s][k].suffix; k++)
			if ((rc = claim_family(n, name, stat_fams[s][k].suffix,
					       stat_fams[s][k].type, owner, clash, other)) < 0)
				return rc;
	return shapes ? claim_family(n, name, "_out_of_range", BS_COUNTER, owner, clash, other) : 0;
}

int processing_names_template(struct processing_names *n, const char *name,
			      const struct vstats_spec *spec, uint32_t nspec, uint32_t owner,
			      const char **clash, uint32_t *other)
{
	static const char *const suffix[] = {"_sum_of_values", "_max",	  "_min",    "_crhist",
					     "_drhist",	       "_dvhist", "_tdigest"};
	static const enum bs_metric_type type[] = {
	    BS_COUNTER, BS_GAUGE, BS_GAUGE, BS_HISTOGRAM, BS_HISTOGRAM, BS_HISTOGRAM, BS_SUMMARY};
	char oob[40];
	int rc;

	for (uint32_t k = 0; k < nspec; k++) {
		enum vstats_stype st = spec[k].stype;
		if ((rc = claim_family(n, name, suffix[st], type[st], owner, clash, other)) < 0)
			return rc;
		if (st < VSTATS_CRHIST || st > VSTATS_DVHIST)
			continue;
		snprintf(oob, sizeof(oob), "%s_out_of_band", suffix[st]);
		if ((rc = claim_family(n, name, oob, BS_COUNTER, owner, clash, other)) < 0)
			return rc;
	}
	return 0;
}
