/* Writes what the last exchange read. Members of one family are kept sorted
 * (name, then supplier) between describes, so a scrape is a single pass.
 * A family's type, unit and kind are those most of its members that
 * answered this scrape share (a tie: the first supplier by name's); a
 * member that disagrees is dropped and counted (family_conflict), so one
 * hostile supplier claiming another's statistic loses alone. */
#include "dci_emit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dci4_format.h"

#define HELP_MAX 400

void dci_families_free(struct dci_families *f)
{
	free(f->m);
	memset(f, 0, sizeof(*f));
}

static const struct dci_stat *stat_of(const struct dci_member *m)
{
	return &m->sup->layout->stat[m->stat];
}

static int cmp_member(const void *a, const void *b)
{
	const struct dci_member *x = a, *y = b;
	int c = strcmp(stat_of(x)->metric, stat_of(y)->metric);
	return c ? c : strcmp(x->sup->name, y->sup->name);
}

static int rebuild(struct dci_set *set, struct dci_families *f)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		for (uint32_t k = 0; set->sup[i]->layout && k < set->sup[i]->layout->nstats; k++)
			n += set->sup[i]->layout->stat[k].kind != DCI_SKIP;
	struct dci_member *m = malloc((n ? n : 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < set->n; i++)
		for (uint32_t k = 0; set->sup[i]->layout && k < set->sup[i]->layout->nstats; k++)
			if (set->sup[i]->layout->stat[k].kind != DCI_SKIP)
				m[n++] = (struct dci_member){set->sup[i], k};
	qsort(m, n, sizeof(*m), cmp_member);
	free(f->m);
	f->m = m;
	f->n = n;
	f->epoch = set->epoch;
	f->built = true;
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
		    {"title", label_cut(s->info.title, title, max)},
		    {"description", label_cut(s->info.description, desc, max)},
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

static void emit_value(const struct dci_member *m, const struct dci_config *cfg,
		       struct bs_emitter *em)
{
	const struct dci_stat *st = stat_of(m);
	const uint8_t *slot = m->sup->values + st->offset;
	struct dci4_desc d;
	char text[DCI4_TEXT_MAX], cut[DCI4_TEXT_MAX];
	struct bs_label l[2] = {{"supplier", m->sup->name}, {"value", NULL}};
	double scale = st->rule->scale, f;
	bool sgn;
	uint64_t u;
	int64_t i;

	dci_layout_desc(st, &d);
	switch (st->kind) {
	case DCI_INT:
		if (dci4_value_int(&d, slot, &sgn, &u, &i) < 0)
			break;
		if (scale != 1)
			bs_sample_f64(em, l, 1, (sgn ? (double)i : (double)u) * scale);
		else if (sgn)
			bs_sample_i64(em, l, 1, i);
		else
			bs_sample_u64(em, l, 1, u);
		return;
	case DCI_BOOL: /* bit 0 of a little-endian word; SBF_INVERTED flips it */
		u = (slot[0] & 1u) ^ (st->format & SBF_INVERTED);
		if (scale != 1)
			bs_sample_f64(em, l, 1, (double)u * scale);
		else
			bs_sample_u64(em, l, 1, u);
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

static bool same_family(const struct dci_stat *a, const struct dci_stat *b)
{
	return a->mtype == b->mtype && (a->kind == DCI_TEXT) == (b->kind == DCI_TEXT) &&
	       (a->unit == b->unit || (a->unit && b->unit && strcmp(a->unit, b->unit) == 0));
}

/* The rule's help with its placeholders filled from the defining member, or
 * one naming the statistic. */
static void family_help(const struct dci_member *m, const struct dci_config *cfg, char *out)
{
	const struct dci_stat *st = stat_of(m);
	const struct dci4_info *info = &m->sup->info;
	const char *values[4] = {info->module, info->title, m->sup->name, st->name};

	if (st->rule->help)
		statmap_help(&cfg->map, st->rule->help, values, out, HELP_MAX);
	else
		snprintf(out, HELP_MAX, "DCI4 statistic \"%.200s\" of %.100s.", st->name,
			 info->module);
}

#define SHAPES_MAX 8 /* distinct definitions counted per family; more lose outright */

/* The member whose definition most answering members share, or NULL when
 * none answered. */
static const struct dci_member *family_definer(const struct dci_member *m, size_t n)
{
	const struct dci_member *shape[SHAPES_MAX];
	size_t votes[SHAPES_MAX], nshape = 0, best = 0;

	for (size_t i = 0; i < n; i++) {
		if (m[i].sup->state != DCI_DONE)
			continue;
		size_t k = 0;
		while (k < nshape && !same_family(stat_of(shape[k]), stat_of(&m[i])))
			k++;
		if (k == nshape) {
			if (nshape == SHAPES_MAX)
				continue;
			shape[nshape] = &m[i];
			votes[nshape++] = 0;
		}
		votes[k]++;
	}
	for (size_t k = 1; k < nshape; k++) /* shapes are in name order: a tie keeps the first */
		if (votes[k] > votes[best])
			best = k;
	return nshape ? shape[best] : NULL;
}

static void emit_family(const struct dci_member *m, size_t n, const struct dci_config *cfg,
			struct bs_emitter *em)
{
	const struct dci_member *definer = family_definer(m, n);
	const struct dci_stat *def;
	char help[HELP_MAX];

	if (!definer)
		return;
	def = stat_of(definer);
	family_help(definer, cfg, help);
	if (bs_family(em, def->metric, def->mtype, def->unit, help) < 0)
		return; /* rejected, and counted, by the emitter */
	for (size_t i = 0; i < n; i++) {
		if (m[i].sup->state != DCI_DONE)
			continue;
		if (!same_family(def, stat_of(&m[i]))) {
			bs_drop(em, "family_conflict", 1);
			continue;
		}
		emit_value(&m[i], cfg, em);
	}
}

int dci_emit(struct dci_set *set, const struct dci_config *cfg, struct dci_families *f,
	     struct bs_emitter *em)
{
	emit_suppliers(set, cfg, em);
	if ((!f->built || f->epoch != set->epoch) && rebuild(set, f) < 0)
		return -ENOMEM;
	for (size_t i = 0, j; i < f->n; i = j) {
		const char *name = stat_of(&f->m[i])->metric;
		for (j = i + 1; j < f->n && strcmp(stat_of(&f->m[j])->metric, name) == 0; j++)
			;
		emit_family(&f->m[i], j - i, cfg, em);
	}
	return 0;
}
