/* Writes what the last sampling copied: each set's health, then its
 * statistics through the shared family writer (lib/collkit/famgroup), whose
 * members are ordered by name, then domain, set path and statistic. */
#include "xen_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "labelprefix.h"

static const struct xen_set *set_of(const struct famgroup_member *m)
{
	return m->src;
}

static const char *member_metric(const struct famgroup_member *m)
{
	return set_of(m)->stat[m->stat].metric;
}

static int member_cmp(const struct famgroup_member *a, const struct famgroup_member *b)
{
	const struct xen_set *x = set_of(a), *y = set_of(b);

	if (x->dom->domid != y->dom->domid)
		return x->dom->domid < y->dom->domid ? -1 : 1;
	int c = strcmp(x->path, y->path);
	return c ? c : (a->stat > b->stat) - (a->stat < b->stat);
}

static bool member_live(const struct famgroup_member *m)
{
	return set_of(m)->fresh;
}

static int rebuild(struct xen_registry *r, struct famgroup *g, const struct famgroup_ops *ops)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++)
			n += r->dom[i]->set[k]->nstats;
	struct famgroup_member *m = famgroup_begin(n);
	if (!m)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			struct xen_set *s = r->dom[i]->set[k];
			for (uint32_t j = 0; j < s->nstats; j++)
				if (s->stat[j].metric)
					m[n++] = (struct famgroup_member){s, j};
		}
	famgroup_commit(g, m, n, r->epoch, ops);
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

/* A set's labels go to the emitter once, as the prefix of its statistics'
 * series: consecutive members are mostly of one set. */
static void member_write(const struct famgroup_member *m, void *ctx, struct bs_emitter *em)
{
	const struct xen_set *s = set_of(m);
	const struct xen_stat *st = &s->stat[m->stat];
	double scale = st->rule->scale, d;
	struct bs_label all[6];
	size_t n = set_labels(s, all);
	size_t skip = labelprefix_use(ctx, em, s, all, n);
	struct bs_label *l = all + skip;
	uint64_t u = st->type == PVSTATS_ASCII ? 0 : s->num[st->sampled];
	const char *text;

	n -= skip;
	if (st->with_stat)
		l[n++] = (struct bs_label){"stat", st->name};
	switch (st->type) {
	case PVSTATS_S64:
	case PVSTATS_U64:
		famgroup_sample_int(em, l, n, st->type == PVSTATS_S64, u, scale);
		break;
	case PVSTATS_DOUBLE:
		memcpy(&d, &u, sizeof(d));
		bs_sample_f64(em, l, n, d * scale);
		break;
	default:
		if (!xen_value_ascii(s->text[st->sampled], &text)) {
			bs_drop(em, "bad_value", 1);
			break;
		}
		l[n++] = (struct bs_label){"value", text};
		bs_info(em, l, n);
	}
}

/* A member's family without its help: type and unit are what must agree. */
static void member_head(const struct famgroup_member *m, struct bs_family *fam)
{
	const struct xen_stat *st = &set_of(m)->stat[m->stat];
	const struct statmap_rule *rule = st->rule;

	fam->name = member_metric(m);
	fam->help = NULL;
	fam->unit = xen_metric_generic(fam->name) ? NULL : rule->unit;
	if (st->type == PVSTATS_ASCII)
		fam->type = BS_INFO;
	else
		fam->type = rule->typed ? rule->type : BS_UNKNOWN;
}

static void member_help(const struct famgroup_member *m, void *ctx, char *help, size_t cap)
{
	const struct xen_set *s = set_of(m);
	const struct xen_stat *st = &s->stat[m->stat];
	const struct statmap_rule *rule = st->rule;

	(void)ctx;
	if (rule->help)
		snprintf(help, cap, "%s", rule->help);
	else if (xen_metric_generic(member_metric(m)))
		snprintf(help, cap, "%s",
			 st->type == PVSTATS_ASCII
			     ? "A PV statistic whose value is text."
			     : "A PV driver or agent statistic, as its guest reports it.");
	else
		snprintf(help, cap, "PV statistic \"%s\" of provider \"%s\", set \"%s\".", st->name,
			 s->provider, s->name);
}

static const struct famgroup_ops member_ops = FAMGROUP_OPS(member);

int xen_emit(struct xen_registry *r, struct famgroup *g, const struct bs_host *host,
	     struct bs_emitter *em)
{
	struct labelprefix prefix;

	droptab_flush(&r->drops, em);
	emit_sets(r, em);
	if (famgroup_stale(g, r->epoch) && rebuild(r, g, &member_ops) < 0)
		return -ENOMEM;
	labelprefix_init(&prefix, host);
	famgroup_emit(g, &member_ops, &prefix, em);
	labelprefix_end(&prefix, em);
	return 0;
}
