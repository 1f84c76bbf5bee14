/* A supplier's description turned into what collect needs. Runs once per
 * describe, so it may allocate freely within the caps the caller checked. */
#include "dci_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_TEMPLATE "dci_{module}_{stat}"
#define MERGE_GAP_BYTES 256 /* static values re-read rather than one more request */

struct dci_layout *dci_layout_new(uint32_t max_stat, const uint8_t reset[8], uint32_t i_version)
{
	struct dci_layout *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->nstats = max_stat + 1;
	if (!(l->stat = calloc(l->nstats, sizeof(*l->stat)))) {
		free(l);
		return NULL;
	}
	memcpy(l->reset, reset, 8);
	l->i_version = i_version;
	return l;
}

void dci_layout_free(struct dci_layout *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->nstats; i++) {
		free(l->stat[i].name);
		free(l->stat[i].metric);
	}
	free(l->stat);
	free(l);
}

int dci_layout_set(struct dci_layout *l, uint32_t i, const struct dci4_desc *d)
{
	struct dci_stat *s = &l->stat[i];

	*s = (struct dci_stat){d->type, d->format, d->presentation, d->size, d->volatility};
	if (d->type != ST_UNUSED && !(s->name = strdup(d->name)))
		return -ENOMEM;
	return 0;
}

void dci_layout_desc(const struct dci_stat *s, struct dci4_desc *d)
{
	d->type = s->type;
	d->format = s->format;
	d->presentation = s->presentation;
	d->size = s->size;
	d->volatility = s->volatility;
}

static const unsigned int_width[] = {
    [ST_INTEGER8] = 1, [ST_INTEGER16] = 2, [ST_INTEGER32] = 4, [ST_INTEGER64] = 8};
static const unsigned address_bytes[] = {[SAF_ETHERNET] = 6, [SAF_IP] = 4, [SAF_ECONET] = 2};

/* The kind a statistic maps to, or DCI_SKIP with *why set. Address and
 * time statistics came with interface 1.01: a 1.00 supplier that sends
 * them describes something its interface does not have. */
static enum dci_kind kind_of(const struct dci_stat *s, uint32_t i_version, const char **why)
{
	*why = "unknown_format";
	if ((s->type == ST_ADDRESS || s->type == ST_TIME) &&
	    i_version < DCI_IVERSION_ADDRESS_TIME) {
		*why = "type_needs_interface_1_01";
		return DCI_SKIP;
	}
	switch (s->type) {
	case ST_UNUSED:
		*why = NULL;
		return DCI_SKIP;
	case ST_BOOLEAN:
		return s->format <= SBF_INVERTED && s->size >= 4 ? DCI_BOOL : DCI_SKIP;
	case ST_STRING:
		return s->format == 0 && s->size > 0 ? DCI_TEXT : DCI_SKIP;
	case ST_INTEGER8:
	case ST_INTEGER16:
	case ST_INTEGER32:
	case ST_INTEGER64:
		return !(s->format & ~3u) && s->size >= int_width[s->type] ? DCI_INT : DCI_SKIP;
	case ST_ADDRESS:
		return s->format <= SAF_ECONET && s->size >= address_bytes[s->format] ? DCI_TEXT
										      : DCI_SKIP;
	case ST_TIME:
		if (s->format == STF_MONOTONIC)
			return s->size == 4 || s->size == 8 ? DCI_TIME : DCI_SKIP;
		return s->format <= STF_CTIME && s->size >= 8 ? DCI_TIME : DCI_SKIP;
	}
	*why = "unknown_type";
	return DCI_SKIP;
}

/* The module as the default name shows it: without a leading "dci4" or
 * "dci" word, which the name's own dci_ prefix already says
 * ("dci4-netdev" gives dci_netdev_rx_bytes, not dci_dci4_netdev_rx_bytes). */
static const char *module_for_default(const char *module)
{
	static const char *const prefixes[] = {"dci4", "dci"};
	for (size_t i = 0; i < 2; i++) {
		size_t n = strlen(prefixes[i]);
		if (strncasecmp(module, prefixes[i], n) == 0 &&
		    (module[n] == '-' || module[n] == '_') && module[n + 1])
			return module + n + 1;
	}
	return module;
}

/* Kind, type and (into names[i]) the metric name of every statistic;
 * source is module, title and supplier, the rules' keys before stat. */
static void map_stats(struct dci_layout *l, const struct statmap *map, const char *const *source,
		      char **names, dci_drop_fn *drop, void *ctx)
{
	const char *values[4] = {source[0], source[1], source[2], NULL};

	for (uint32_t i = 0; i < l->nstats; i++) {
		struct dci_stat *s = &l->stat[i];
		const char *why;
		names[i][0] = '\0';
		if ((s->kind = kind_of(s, l->i_version, &why)) == DCI_SKIP) {
			if (why)
				drop(ctx, why);
			continue;
		}
		values[3] = s->name;
		s->rule = statmap_match(map, values);
		if (s->rule->drop) {
			s->kind = DCI_SKIP; /* the operator's choice, not a fault */
			continue;
		}
		const char *unit = s->rule->unit;
		if (s->kind == DCI_TEXT)
			unit = NULL;
		else if (!unit && s->kind == DCI_TIME)
			unit = "seconds";
		s->unit = unit;
		const char *module = values[0];
		if (!s->rule->name)
			values[0] = module_for_default(module);
		int rc = statmap_expand(map, s->rule->name ? s->rule->name : DEFAULT_TEMPLATE,
					values, unit, names[i]);
		values[0] = module;
		if (rc < 0) {
			s->kind = DCI_SKIP;
			drop(ctx, "invalid_name");
			continue;
		}
		if (s->kind == DCI_TEXT && s->rule->typed && s->rule->type != BS_INFO) {
			/* A rule made this name a number: a string under it is an
			 * impostor (or a broken supplier), not a new family shape. */
			s->kind = DCI_SKIP;
			drop(ctx, "rule_type_mismatch");
			continue;
		}
		if (s->kind == DCI_TEXT)
			s->mtype = BS_INFO;
		else if (s->rule->typed)
			s->mtype = s->rule->type;
		else
			s->mtype = s->kind == DCI_INT ? BS_UNKNOWN : BS_GAUGE;
	}
}

/* Ranges of the statistics read every scrape (not static, not skipped);
 * close ranges merged, and one range over them all past DCI_RUNS_MAX. */
static void plan_runs(struct dci_layout *l)
{
	uint32_t gap = 0, first = UINT32_MAX, last = 0;
	unsigned n = 0;

	for (uint32_t i = 0; i < l->nstats; i++) {
		const struct dci_stat *s = &l->stat[i];
		if (s->kind == DCI_SKIP || s->volatility == SV_STATIC || s->size == 0) {
			gap += s->size;
			continue;
		}
		if (n > 0 && gap <= MERGE_GAP_BYTES) {
			if (n <= DCI_RUNS_MAX) {
				l->run[n - 1].last = i;
				l->run[n - 1].bytes += gap + s->size;
			}
		} else {
			if (n < DCI_RUNS_MAX)
				l->run[n] = (struct dci_run){i, i, s->size};
			n++;
		}
		if (first == UINT32_MAX)
			first = i;
		last = i;
		gap = 0;
	}
	if (n > DCI_RUNS_MAX) {
		const struct dci_stat *e = &l->stat[last];
		l->run[0] =
		    (struct dci_run){first, last, e->offset + e->size - l->stat[first].offset};
		n = 1;
	}
	l->nrun = n;
}

int dci_layout_finish(struct dci_layout *l, const struct statmap *map, const char *module,
		      const char *title, const char *supplier, dci_drop_fn *drop, void *ctx)
{
	const char *keys[3] = {module, title, supplier};
	char(*buf)[STATMAP_NAME_BUF] = NULL;
	char **names = NULL;
	int rc = -ENOMEM;
	size_t off = 0;

	for (uint32_t i = 0; i < l->nstats; i++) {
		l->stat[i].offset = (uint32_t)off;
		off += l->stat[i].size;
		if (off > DCI_VALUES_MAX)
			return -E2BIG;
	}
	l->value_bytes = off;
	if (!(buf = malloc((size_t)l->nstats * STATMAP_NAME_BUF)) ||
	    !(names = malloc((size_t)l->nstats * sizeof(*names))))
		goto out_free;
	for (uint32_t i = 0; i < l->nstats; i++)
		names[i] = buf[i];
	map_stats(l, map, keys, names, drop, ctx);
	if (statmap_unique(names, l->nstats) < 0)
		goto out_free;
	for (uint32_t i = 0; i < l->nstats; i++)
		if (l->stat[i].kind != DCI_SKIP && !(l->stat[i].metric = strdup(names[i])))
			goto out_free;
	plan_runs(l);
	rc = 0;
out_free:
	free(names);
	free(buf);
	return rc;
}

bool dci_layout_same(const struct dci_layout *a, const struct dci_layout *b)
{
	if (a->nstats != b->nstats)
		return false;
	for (uint32_t i = 0; i < a->nstats; i++) {
		const struct dci_stat *x = &a->stat[i], *y = &b->stat[i];
		if (x->type != y->type || x->format != y->format ||
		    x->presentation != y->presentation || x->size != y->size ||
		    x->volatility != y->volatility ||
		    strcmp(x->name ? x->name : "", y->name ? y->name : "") != 0)
			return false;
	}
	return true;
}
