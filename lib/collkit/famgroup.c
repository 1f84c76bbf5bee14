/* The family writer the DCI and Xen collectors share: one sort when the
 * sources change, then each scrape is a single pass over the members. */
#include "famgroup.h"

#include <stdlib.h>
#include <string.h>

void famgroup_free(struct famgroup *g)
{
	free(g->m);
	memset(g, 0, sizeof(*g));
}

bool famgroup_stale(const struct famgroup *g, uint64_t epoch)
{
	return !g->built || g->epoch != epoch;
}

struct famgroup_member *famgroup_begin(size_t max)
{
	return malloc((max ? max : 1) * sizeof(struct famgroup_member));
}

static int cmp_member(const void *a, const void *b, void *arg)
{
	const struct famgroup_ops *ops = arg;
	const struct famgroup_member *x = a, *y = b;
	int c = strcmp(x->metric, y->metric);

	return c ? c : ops->cmp(a, b);
}

void famgroup_commit(struct famgroup *g, struct famgroup_member *m, size_t n, uint64_t epoch,
		     const struct famgroup_ops *ops)
{
	for (size_t i = 0; i < n; i++) {
		struct bs_family f;
		m[i].metric = ops->metric(&m[i]);
		ops->head(&m[i], &f);
		m[i].type = f.type;
		m[i].unit = f.unit;
	}
	qsort_r(m, n, sizeof(*m), cmp_member, (void *)ops);
	free(g->m);
	*g = (struct famgroup){epoch, true, m, n};
}

static bool same_shape(const struct famgroup_member *a, const struct famgroup_member *b)
{
	return a->type == b->type &&
	       (a->unit == b->unit || (a->unit && b->unit && strcmp(a->unit, b->unit) == 0));
}

/* The live member whose shape most live members share, or NULL; *nshapes
 * says how many shapes were seen. Shapes are met in member order, so a tie
 * keeps the first. */
static const struct famgroup_member *definer(const struct famgroup_member *m, size_t n,
					     const struct famgroup_ops *ops, size_t *nshapes)
{
	const struct famgroup_member *first[FAMGROUP_SHAPES_MAX];
	size_t votes[FAMGROUP_SHAPES_MAX], nshape = 0, best = 0;

	for (size_t i = 0; i < n; i++) {
		if (!ops->live(&m[i]))
			continue;
		size_t k = 0;
		while (k < nshape && !same_shape(first[k], &m[i]))
			k++;
		if (k == nshape) {
			if (nshape == FAMGROUP_SHAPES_MAX)
				continue;
			first[nshape] = &m[i];
			votes[nshape++] = 0;
		}
		votes[k]++;
	}
	for (size_t k = 1; k < nshape; k++)
		if (votes[k] > votes[best])
			best = k;
	*nshapes = nshape;
	return nshape ? first[best] : NULL;
}

static void emit_family(const struct famgroup_member *m, size_t n, const struct famgroup_ops *ops,
			void *ctx, struct bs_emitter *em)
{
	size_t nshapes;
	const struct famgroup_member *def = definer(m, n, ops, &nshapes);
	struct bs_family fam;
	char help[FAMGROUP_HELP_MAX];

	if (!def)
		return;
	ops->head(def, &fam);
	ops->help(def, ctx, help, sizeof(help));
	fam.help = help;
	if (em->ops->family(em, &fam) < 0)
		return; /* rejected, and counted, by the emitter */
	for (size_t i = 0; i < n; i++) {
		if (!ops->live(&m[i]))
			continue;
		/* one shape: every live member has it */
		if (nshapes > 1 && !same_shape(def, &m[i])) {
			bs_drop(em, "family_conflict", 1);
			continue;
		}
		ops->write(&m[i], ctx, em);
	}
}

void famgroup_emit(const struct famgroup *g, const struct famgroup_ops *ops, void *ctx,
		   struct bs_emitter *em)
{
	for (size_t i = 0, j; i < g->n; i = j) {
		const char *name = g->m[i].metric;
		/* Collectors mostly share one string per family name. */
		for (j = i + 1;
		     j < g->n && (g->m[j].metric == name || strcmp(g->m[j].metric, name) == 0); j++)
			;
		emit_family(&g->m[i], j - i, ops, ctx, em);
	}
}

int famgroup_sample_int(struct bs_emitter *em, const struct bs_label *l, size_t n, bool is_signed,
			uint64_t raw, double scale)
{
	if (scale != 1)
		return bs_sample_f64(em, l, n,
				     (is_signed ? (double)(int64_t)raw : (double)raw) * scale);
	if (is_signed)
		return bs_sample_i64(em, l, n, (int64_t)raw);
	return bs_sample_u64(em, l, n, raw);
}
