/* Writes what the last sampling copied. Families are sorted (name, then
 * domain, provider, set) between changes, so a scrape is one pass. */
#include "xen_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELP_MAX 400

void xen_families_free(struct xen_families *f)
{
	free(f->m);
	memset(f, 0, sizeof(*f));
}

static const char *metric_of(const struct xen_member *m)
{
	return m->set->metric[m->stat];
}

static int cmp_member(const void *a, const void *b)
{
	const struct xen_member *x = a, *y = b;
	int c = strcmp(metric_of(x), metric_of(y));
	if (c)
		return c;
	if (x->set->dom->domid != y->set->dom->domid)
		return x->set->dom->domid < y->set->dom->domid ? -1 : 1;
	c = strcmp(x->set->path, y->set->path);
	return c ? c : (x->stat > y->stat) - (x->stat < y->stat);
}

static int rebuild(struct xen_registry *r, struct xen_families *f)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++)
			n += r->dom[i]->set[k]->nstats;
	struct xen_member *m = malloc((n ? n : 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			struct xen_set *s = r->dom[i]->set[k];
			for (uint32_t j = 0; j < s->nstats; j++)
				if (s->metric[j])
					m[n++] = (struct xen_member){s, j};
		}
	qsort(m, n, sizeof(*m), cmp_member);
	free(f->m);
	*f = (struct xen_families){r->epoch, true, m, n};
	return 0;
}

/* Labels of a set: domid, domain, provider, set (and room for two more). */
static size_t set_labels(const struct xen_set *s, struct bs_label *l)
{
	l[0] = (struct bs_label){"domid", s->dom->id};
	l[1] = (struct bs_label){"domain", s->dom->name};
	l[2] = (struct bs_label){"provider", s->provider};
	l[3] = (struct bs_label){"set", s->name};
	return 4;
}

typedef void set_value_fn(struct bs_emitter *em, const struct xen_set *s, struct bs_label *l,
			  size_t n);

static void each_set(struct xen_registry *r, struct bs_emitter *em, set_value_fn *fn)
{
	struct bs_label l[6];
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			const struct xen_set *s = r->dom[i]->set[k];
			fn(em, s, l, set_labels(s, l));
		}
}

static void up_value(struct bs_emitter *em, const struct xen_set *s, struct bs_label *l, size_t n)
{
	bs_sample_u64(em, l, n, s->fresh);
}

static void timeouts_value(struct bs_emitter *em, const struct xen_set *s, struct bs_label *l,
			   size_t n)
{
	bs_sample_u64(em, l, n, s->timeouts);
}

static void count_value(struct bs_emitter *em, const struct xen_set *s, struct bs_label *l,
			size_t n)
{
	bs_sample_u64(em, l, n, s->nstats);
}

static void emit_sets(struct xen_registry *r, struct bs_emitter *em)
{
	size_t nsets = 0;
	for (size_t i = 0; i < r->ndom; i++)
		nsets += r->dom[i]->nsets;
	bs_family(em, "xen_pv_domains", BS_GAUGE, NULL, "Domains the agent watches in xenstore.");
	bs_sample_u64(em, NULL, 0, r->ndom);
	bs_family(em, "xen_pv_stats_sets", BS_GAUGE, NULL, "Statistics sets live now.");
	bs_sample_u64(em, NULL, 0, nsets);
	bs_family(em, "xen_pv_stats_set_up", BS_GAUGE, NULL,
		  "1 when the set's provider answered this scrape's update request in time.");
	each_set(r, em, up_value);
	bs_family(em, "xen_pv_stats_set_timeouts", BS_COUNTER, NULL,
		  "Update requests the set's provider did not answer in time.");
	each_set(r, em, timeouts_value);
	bs_family(em, "xen_pv_stats_set_statistics", BS_GAUGE, NULL,
		  "Statistics the set advertises (after any it named wrongly were left out).");
	each_set(r, em, count_value);
}

static void emit_value(const struct xen_member *m, bool with_stat, struct bs_emitter *em)
{
	const struct xen_set *s = m->set;
	const struct xen_stat *st = &s->stat[m->stat];
	const uint8_t *slot = s->copy + (size_t)st->slot * XEN_TUPLE_SIZE;
	double scale = s->rule[m->stat]->scale, d;
	struct bs_label l[6];
	size_t n = set_labels(s, l);
	uint64_t u = xen_value_u64(slot);
	const char *text;

	if (with_stat)
		l[n++] = (struct bs_label){"stat", st->name};
	switch (st->type) {
	case STATS_TYPE_S64:
		if (scale != 1)
			bs_sample_f64(em, l, n, (double)(int64_t)u * scale);
		else
			bs_sample_i64(em, l, n, (int64_t)u);
		break;
	case STATS_TYPE_U64:
		if (scale != 1)
			bs_sample_f64(em, l, n, (double)u * scale);
		else
			bs_sample_u64(em, l, n, u);
		break;
	case STATS_TYPE_DOUBLE:
		memcpy(&d, &u, sizeof(d));
		bs_sample_f64(em, l, n, d * scale);
		break;
	default:
		if (!xen_value_ascii(slot, &text)) {
			bs_drop(em, "bad_value", 1);
			break;
		}
		l[n++] = (struct bs_label){"value", text};
		bs_info(em, l, n);
	}
}

/* A member's family without its help: type and unit are what must agree. */
static void family_head(const struct xen_member *m, struct bs_family *fam)
{
	const struct xen_stat *st = &m->set->stat[m->stat];
	const struct statmap_rule *rule = m->set->rule[m->stat];

	fam->name = metric_of(m);
	fam->help = NULL;
	fam->unit = xen_metric_generic(fam->name) ? NULL : rule->unit;
	if (st->type == STATS_TYPE_ASCII)
		fam->type = BS_INFO;
	else
		fam->type = rule->typed ? rule->type : BS_UNKNOWN;
}

static void family_help(const struct xen_member *m, const struct bs_family *fam, char *help)
{
	const struct xen_stat *st = &m->set->stat[m->stat];
	const struct statmap_rule *rule = m->set->rule[m->stat];

	if (rule->help)
		snprintf(help, HELP_MAX, "%s", rule->help);
	else if (xen_metric_generic(fam->name))
		snprintf(help, HELP_MAX, "%s",
			 st->type == STATS_TYPE_ASCII
			     ? "A PV statistic whose value is text."
			     : "A PV driver or agent statistic, as its guest reports it.");
	else
		snprintf(help, HELP_MAX, "PV statistic \"%s\" of provider \"%s\", set \"%s\".",
			 st->name, m->set->provider, m->set->name);
}

static bool same_family(const struct bs_family *a, const struct bs_family *b)
{
	return a->type == b->type &&
	       (a->unit == b->unit || (a->unit && b->unit && strcmp(a->unit, b->unit) == 0));
}

static void emit_family(const struct xen_member *m, size_t n, struct bs_emitter *em)
{
	struct bs_family def, f;
	char help[HELP_MAX];
	bool opened = false;

	family_head(&m[0], &def);
	for (size_t i = 0; i < n; i++) {
		if (!m[i].set->fresh)
			continue;
		family_head(&m[i], &f);
		if (!same_family(&def, &f)) {
			bs_drop(em, "family_conflict", 1);
			continue;
		}
		if (!opened) {
			family_help(&m[0], &def, help);
			def.help = help;
			if (!(opened = em->ops->family(em, &def) == 0))
				return;
		}
		emit_value(&m[i], m[i].set->with_stat[m[i].stat], em);
	}
}

int xen_emit(struct xen_registry *r, struct xen_families *f, struct bs_emitter *em)
{
	for (size_t i = 0; i < XEN_DROPS_MAX && r->drops[i].reason; i++) {
		bs_drop(em, r->drops[i].reason, r->drops[i].n);
		r->drops[i].reason = NULL;
		r->drops[i].n = 0;
	}
	emit_sets(r, em);
	if ((!f->built || f->epoch != r->epoch) && rebuild(r, f) < 0)
		return -ENOMEM;
	for (size_t i = 0, j; i < f->n; i = j) {
		for (j = i + 1; j < f->n && strcmp(metric_of(&f->m[j]), metric_of(&f->m[i])) == 0;
		     j++)
			;
		emit_family(&f->m[i], j - i, em);
	}
	return 0;
}
