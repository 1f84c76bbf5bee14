/* Writes what the last exchange read: each supplier's health, then its
 * statistics through the shared family writer (lib/collkit/famgroup), whose
 * members are ordered by name, then supplier. */
#include "dci_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dci4_format.h"

static const struct dci_sup *sup_of(const struct famgroup_member *m)
{
	return m->src;
}

static const struct dci_stat *stat_of(const struct famgroup_member *m)
{
	return &sup_of(m)->layout->stat[m->stat];
}

static const char *member_metric(const struct famgroup_member *m)
{
	return stat_of(m)->metric;
}

static int member_cmp(const struct famgroup_member *a, const struct famgroup_member *b)
{
	return strcmp(sup_of(a)->name, sup_of(b)->name);
}

static bool member_live(const struct famgroup_member *m)
{
	return sup_of(m)->state == DCI_DONE;
}

static void member_head(const struct famgroup_member *m, struct bs_family *fam)
{
	const struct dci_stat *st = stat_of(m);

	*fam = (struct bs_family){st->metric, NULL, st->unit, st->mtype};
}

static int rebuild(struct dci_set *set, struct famgroup *g, const struct famgroup_ops *ops)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		for (uint32_t k = 0; set->sup[i]->layout && k < set->sup[i]->layout->nstats; k++)
			n += set->sup[i]->layout->stat[k].kind != DCI_SKIP;
	struct famgroup_member *m = famgroup_begin(n);
	if (!m)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < set->n; i++)
		for (uint32_t k = 0; set->sup[i]->layout && k < set->sup[i]->layout->nstats; k++)
			if (set->sup[i]->layout->stat[k].kind != DCI_SKIP)
				m[n++] = (struct famgroup_member){set->sup[i], k};
	famgroup_commit(g, m, n, set->epoch, ops);
	return 0;
}

/* Copies s into buf, at most max bytes, not splitting a UTF-8 sequence. */
static const char *label_cut(const char *s, char *buf, size_t max)
{
	size_t n = strnlen(s, max + 1);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

static const char *supplier_type(uint32_t t)
{
	static const char *const names[] = {"general_supplier", "network_protocol",
					    "network_driver", "mbuf_manager"};
	return t < 4 ? names[t] : "unknown";
}

/* At least what DCI4's gatherer contracts to show of a title and a
 * description, whatever max_label_length says. */
#define DCI_TITLE_SHOWN 20
#define DCI_DESCRIPTION_SHOWN 50

static size_t at_least(size_t max, size_t floor)
{
	return max > floor ? max : floor;
}

static void emit_features(struct dci_set *set, struct bs_emitter *em)
{
	bs_family(em, "dci_supplier_features", BS_GAUGE, NULL,
		  "The supplier's features word; DCI4 defines no features, so any value but 0 is "
		  "the supplier's fault.");
	for (size_t i = 0; i < set->n; i++) {
		struct dci_sup *s = set->sup[i];
		struct bs_label l = {"supplier", s->name};
		if (s->state != DCI_GONE && s->have_info)
			bs_sample_u64(em, &l, 1, s->info.features);
	}
}

static void emit_suppliers(struct dci_set *set, const struct dci_config *cfg, struct bs_emitter *em)
{
	char mod[DCI4_STRING_MAX], title[DCI4_STRING_MAX], desc[DCI4_STRING_MAX];
	char ver[16], iver[16];

	bs_family(em, "dci_supplier_up", BS_GAUGE, NULL,
		  "1 when the supplier answered every request of this scrape, else 0.");
	for (size_t i = 0; i < set->n; i++) {
		struct dci_sup *s = set->sup[i];
		struct bs_label l = {"supplier", s->name};
		if (s->state != DCI_GONE)
			bs_sample_u64(em, &l, 1, s->state == DCI_DONE);
	}
	bs_family(em, "dci_supplier", BS_INFO, NULL,
		  "A supplier's identity, as its provider structure gives it.");
	for (size_t i = 0; i < set->n; i++) {
		struct dci_sup *s = set->sup[i];
		if (s->state == DCI_GONE || !s->have_info)
			continue;
		size_t max = cfg->max_label_len;
		snprintf(ver, sizeof(ver), "%u.%02u", s->info.s_version / 100 % 1000000,
			 s->info.s_version % 100);
		snprintf(iver, sizeof(iver), "%u.%02u", s->info.i_version / 100 % 1000000,
			 s->info.i_version % 100);
		struct bs_label l[] = {
		    {"supplier", s->name},
		    {"module", label_cut(s->info.module, mod, max)},
		    {"title", label_cut(s->info.title, title, at_least(max, DCI_TITLE_SHOWN))},
		    {"description",
		     label_cut(s->info.description, desc, at_least(max, DCI_DESCRIPTION_SHOWN))},
		    {"type", supplier_type(s->info.type)},
		    {"version", ver},
		    {"interface_version", iver},
		};
		bs_info(em, l, sizeof(l) / sizeof(l[0]));
	}
	bs_family(em, "dci_supplier_describes", BS_COUNTER, NULL,
		  "Times the supplier's statistics were described since the exporter started.");
	for (size_t i = 0; i < set->n; i++) {
		struct dci_sup *s = set->sup[i];
		struct bs_label l = {"supplier", s->name};
		if (s->state != DCI_GONE && s->describes)
			bs_sample_u64(em, &l, 1, s->describes);
	}
}

static void member_write(const struct famgroup_member *m, void *ctx, struct bs_emitter *em)
{
	const struct dci_config *cfg = ctx;
	const struct dci_sup *sup = sup_of(m);
	const struct dci_stat *st = stat_of(m);
	const uint8_t *slot = sup->values + st->offset;
	struct dci4_desc d;
	char text[DCI4_TEXT_MAX], cut[DCI4_TEXT_MAX];
	struct bs_label l[2] = {{"supplier", sup->name}, {"value", NULL}};
	double scale = st->rule->scale, f;
	bool sgn;
	uint64_t u;
	int64_t i;

	dci_layout_desc(st, &d);
	switch (st->kind) {
	case DCI_INT:
		if (dci4_value_int(&d, slot, &sgn, &u, &i) < 0)
			break;
		famgroup_sample_int(em, l, 1, sgn, sgn ? (uint64_t)i : u, scale);
		return;
	case DCI_BOOL: /* bit 0 of a little-endian word; SBF_INVERTED flips it */
		u = (slot[0] & 1u) ^ (st->format & SBF_INVERTED);
		famgroup_sample_int(em, l, 1, false, u, scale);
		return;
	case DCI_TIME:
		if (dci4_value_time(&d, slot, &f) < 0)
			break;
		bs_sample_f64(em, l, 1, f * scale);
		return;
	case DCI_TEXT:
		if (dci4_format_value(&d, slot, text) < 0)
			break; /* a string without its NUL, say */
		l[1].value = label_cut(text, cut, cfg->max_label_len);
		bs_info(em, l, 2);
		return;
	case DCI_SKIP:
		return;
	}
	bs_drop(em, "bad_value", 1);
}

/* The rule's help with its placeholders filled from the defining member, or
 * one naming the statistic. */
static void member_help(const struct famgroup_member *m, void *ctx, char *out, size_t cap)
{
	const struct dci_config *cfg = ctx;
	const struct dci_stat *st = stat_of(m);
	const struct dci4_info *info = &sup_of(m)->info;
	const char *values[4] = {info->module, info->title, sup_of(m)->name, st->name};

	if (st->rule->help)
		statmap_help(&cfg->map, st->rule->help, values, out, cap);
	else
		snprintf(out, cap, "DCI4 statistic \"%.200s\" of %.100s.", st->name, info->module);
}

static const struct famgroup_ops member_ops = FAMGROUP_OPS(member);

int dci_emit(struct dci_set *set, const struct dci_config *cfg, struct famgroup *g,
	     struct bs_emitter *em)
{
	emit_suppliers(set, cfg, em);
	emit_features(set, em);
	if (famgroup_stale(g, set->epoch) && rebuild(set, g, &member_ops) < 0)
		return -ENOMEM;
	famgroup_emit(g, &member_ops, (void *)cfg, em);
	return 0;
}
