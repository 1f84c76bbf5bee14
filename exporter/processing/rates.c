/* stats(3)'s sample rates as a verb of the /statistics/ interface
 * (stats_tpl_sample_rates): read, and changed at run time, every source
 * of a template's group chosen again by the same dice, all or nothing
 * and within max_memory_bytes. Callers hold the processing's lock. */
#include "rates.h"
#include "reply.h"
#include "srctab.h"
#include "stage_priv.h"
#include "tpl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* GET sample_rates: stats_tpl_sample_rates' "name":hash=pct list. */
void rates_get(struct processing *p, struct stage_reply *r)
{
	for (uint32_t i = 0; i < p->ntpl; i++)
		textbuf_printf(&r->text, "%s\"%s\":%" PRIu32 "=%" PRIu32, i ? "," : "",
			       tpl_name(p, i), p->tpl[i].hash, p->sample_pct[p->tpl[i].group]);
	textbuf_printf(&r->text, "\n");
}

/* A source's VOI as a new rate would leave it: made now for a source the
 * dice newly choose, so that nothing can fail once the change begins. */
struct resample {
	struct source *s;
	bool sampled;
	struct vstats_voi voi; /* newly chosen: its new VOIs */
	struct source_more *more;
	uint32_t nmore;
};

static bool chosen(uint32_t pct, const struct source *s)
{
	return vstats_rollthedice(&pct, 1, s->key, strlen(s->key)) == 0;
}

/* Every source whose choice the rates change, with the VOIs it will
 * need: 0; -EFBIG, before any VOI is made, when the VOIs gained would pass
 * max_memory_bytes (*more: the bytes they would add); -ENOMEM; nothing
 * kept on failure. */
static int plan_resample(struct processing *p, const uint32_t *pct, struct resample *plan,
			 size_t *n, uint64_t *more)
{
	uint64_t gained = 0, lost = 0;
	size_t k;

	*n = 0;
	for (size_t i = 0; i < p->srcs.n; i++) {
		struct source *s = p->src[i];
		const struct processing_group_conf *g = &p->conf->group[s->group];
		bool now = g->has_template && chosen(pct[s->group], s);
		if (now == s->sampled)
			continue;
		*(now ? &gained : &lost) += srctab_voi_bytes(g);
		plan[(*n)++] = (struct resample){s, now, {0}, NULL, 0};
	}
	*more = gained > lost ? gained - lost : 0;
	if (!srctab_fits(p, *more))
		return -EFBIG;
	for (k = 0; k < *n; k++) {
		const struct processing_group_conf *g = &p->conf->group[plan[k].s->group];
		if (plan[k].sampled &&
		    srctab_vois_make(&g->tpl, &plan[k].voi, &plan[k].more, &plan[k].nmore) < 0)
			goto err_free_vois;
	}
	return 0;
err_free_vois:
	while (k-- > 0)
		if (plan[k].sampled)
			srctab_vois_free(&plan[k].voi, plan[k].more, plan[k].nmore);
	return -ENOMEM;
}

/* The rates' templates, each found as stats_tpl_fetch_allocid finds it.
 * A template named by two pairs (in any of its spec forms) is -EINVAL, as
 * a definition's attribute named twice is: which one should win is the
 * writer's mistake, not ours to guess. -ESRCH naming none. */
static int resolve_rates(struct processing *p, const struct vstats_rate *rates, size_t n,
			 uint32_t *pct, struct stage_reply *r)
{
	size_t named[PROCESSING_GROUPS_MAX] = {0}; /* by group: the pair naming it, from 1 */
	int id, rc = 0;

	memcpy(pct, p->sample_pct, sizeof(p->sample_pct));
	for (size_t i = 0; i < n; i++) {
		if ((id = tpl_find(p, &rates[i].spec)) < 0) {
			textbuf_printf(&r->text, "ESRCH: pair %zu: no template matches\n", i + 1);
			rc = id;
			continue;
		}
		uint32_t g = p->tpl[id].group;
		if (named[g]) {
			textbuf_printf(&r->text,
				       "EINVAL: pair %zu: template \"%s\" named twice (pair %zu)\n",
				       i + 1, p->conf->group[g].tpl.name, named[g]);
			rc = -EINVAL;
			continue;
		}
		named[g] = i + 1;
		pct[g] = rates[i].pct;
	}
	return rc;
}

/* POST sample_rates: every template named gets its new rate, and every
 * source of its group is chosen again by the same dice (a raised rate
 * keeps the sources it had, a lowered one drops VOIs); all or nothing. */
void rates_post(struct processing *p, const char *body, struct stage_reply *r)
{
	struct vstats_rate rates[PROCESSING_GROUPS_MAX];
	uint32_t pct[PROCESSING_GROUPS_MAX];
	struct resample *plan;
	const char *why;
	uint64_t more;
	size_t n, np;
	int rc;

	if ((rc = vstats_rates_parse(body, rates, PROCESSING_GROUPS_MAX, &n, &why)) < 0) {
		reply_fail(r, 400, rc, why);
		return;
	}
	if (resolve_rates(p, rates, n, pct, r) < 0) {
		r->status = 400;
		return;
	}
	plan = calloc(p->srcs.n ? p->srcs.n : 1, sizeof(*plan));
	if ((rc = plan ? plan_resample(p, pct, plan, &np, &more) : -ENOMEM) < 0) {
		free(plan);
		if (rc == -EFBIG) {
			r->status = 400;
			textbuf_printf(&r->text,
				       "EFBIG: the VOIs these rates give would add %" PRIu64
				       " bytes to the processing's %" PRIu64
				       ", past max_memory_bytes (%" PRIu64 "): nothing changed\n",
				       more, p->mem_bytes, p->conf->max_memory_bytes);
		} else {
			reply_fail(r, 500, -ENOMEM, "out of memory: nothing changed");
		}
		return;
	}
	for (size_t i = 0; i < np; i++) {
		struct source *s = plan[i].s;
		size_t voi = srctab_voi_bytes(&p->conf->group[s->group]);
		if (s->sampled)
			srctab_vois_free(&s->voi, s->more, s->nmore);
		s->voi = plan[i].voi;
		s->more = plan[i].more;
		s->nmore = plan[i].nmore;
		s->sampled = plan[i].sampled;
		if (s->sampled) /* a blob made anew */
			s->created_ns = s->lastrst_ns = p->clock_ns();
		srctab_resize(p, s, s->sampled ? s->bytes + voi : s->bytes - voi);
	}
	free(plan);
	memcpy(p->sample_pct, pct, sizeof(pct));
	textbuf_printf(&r->text, "ok\n");
}
