/* The source table and its memory budget: the sources in order of
 * arrival and per group, the index that finds one by its series, and
 * the rule that the memory in use (mem_bytes) is the sum of every
 * source's bytes and never above max_memory_bytes. Only this file
 * changes mem_bytes; the others ask srctab_fits and call srctab_resize. */
#include "srctab.h"
#include "stage_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

void srctab_key_split(const char *key, size_t len, struct srctab_key *kp)
{
	const char *brace = memchr(key, '{', len); /* a metric name has none */

	kp->name_len = (size_t)(brace - key) + 1;
	kp->n = seriesset_split(brace + 1, len - kp->name_len - 1, kp->l, EMITTER_MAX_LABELS);
}

/* The name's hash plus each label's: the same labels in any order are
 * one series to a scrape (seriesset), so they are one source here. The
 * per-process seed keeps label values from being chosen to collide. */
uint64_t srctab_hash(uint32_t group, const char *key, const struct srctab_key *kp)
{
	uint64_t seed = hash_seed() ^ (0x9e3779b97f4a7c15ull * (group + 1));
	uint64_t h = hash_bytes(key, kp->name_len, seed);

	for (size_t i = 0; i < kp->n; i++)
		h += hash_bytes(kp->l[i].text, kp->l[i].len, ~seed);
	return h;
}

void srctab_resize(struct processing *p, struct source *s, size_t bytes)
{
	p->mem_bytes = p->mem_bytes - s->bytes + bytes;
	s->bytes = bytes;
}

static void source_free(struct processing *p, struct source *s)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];

	for (uint32_t i = 0; s->stat && i < g->nstats; i++)
		statproc_free(&s->stat[i]);
	free(s->stat);
	if (s->sampled)
		srctab_vois_free(&s->voi, s->more, s->nmore);
	free(s->prev_count);
	srctab_resize(p, s, 0); /* 0 until it was made whole */
	free(s);		/* with its key, name and labels */
}

static void index_insert(struct processing *p, size_t i)
{
	size_t k = p->src[i]->hash & (p->index_cap - 1);

	while (p->index[k].s)
		k = (k + 1) & (p->index_cap - 1);
	p->index[k] = (struct srctab_slot){p->src[i]->hash, p->src[i]};
}

static int index_rebuild(struct processing *p, size_t cap)
{
	struct srctab_slot *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	free(p->index);
	p->index = idx;
	p->index_cap = cap;
	for (size_t i = 0; i < p->srcs.n; i++)
		index_insert(p, i);
	return 0;
}

/* The source of group whose key names the same series: the same name
 * and the same labels, in any order. */
struct source *srctab_find(struct processing *p, uint32_t group, const char *key,
			   const struct srctab_key *kp, uint64_t h)
{
	if (!p->index_cap)
		return NULL;
	for (size_t k = h & (p->index_cap - 1); p->index[k].s; k = (k + 1) & (p->index_cap - 1)) {
		struct source *s = p->index[k].s;
		if (p->index[k].hash == h && s->group == group && s->nlabels == kp->n &&
		    s->keylen > kp->name_len && memcmp(s->key, key, kp->name_len) == 0 &&
		    seriesset_block_holds(s->key + kp->name_len, s->keylen - kp->name_len - 1,
					  s->nlabels, kp->l, kp->n))
			return s;
	}
	return NULL;
}

/* Whether a new source of key is chosen by its group's template's dice
 * (the rate in force). */
static bool source_chosen(const struct processing *p, uint32_t group, const char *key, size_t len)
{
	uint32_t pct = p->sample_pct[group];

	return p->conf->group[group].has_template && vstats_rollthedice(&pct, 1, key, len) == 0;
}

static int source_stats(struct processing *p, struct source *s, bool sampled, uint64_t now_ns)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];

	if (g->nstats && !(s->stat = calloc(g->nstats, sizeof(*s->stat))))
		return -ENOMEM;
	for (uint32_t i = 0; i < g->nstats; i++) {
		const struct processing_stat_conf *c = &g->stat[i];
		if (statproc_init(&s->stat[i], c->name, c->units, &c->def, now_ns) < 0)
			return -ENOMEM; /* the definition was checked at load */
		if (c->on)
			statproc_start(&s->stat[i], now_ns);
	}
	if (sampled) {
		if (srctab_vois_make(&g->tpl, &s->voi, &s->more, &s->nmore) < 0)
			return -ENOMEM;
		s->sampled = true;
	}
	return 0;
}

int srctab_vois_make(const struct processing_template_conf *t, struct vstats_voi *voi,
		     struct source_more **more, uint32_t *nmore)
{
	const struct processing_voi_conf *c = t->voi;
	const char *why;
	uint32_t k;

	*more = NULL;
	*nmore = 0;
	if (vstats_voi_init(voi, c->dtype, c->relative, c->spec, c->nspec, &why) < 0)
		return -ENOMEM; /* the specs were checked at load */
	if (t->nvoi > 1 && !(*more = calloc(t->nvoi - 1, sizeof(**more))))
		goto free_first;
	for (k = 1; k < t->nvoi; k++) {
		c = &t->voi[k];
		if (vstats_voi_init(&(*more)[k - 1].voi, c->dtype, c->relative, c->spec, c->nspec,
				    &why) < 0)
			goto free_more;
	}
	*nmore = t->nvoi - 1;
	return 0;
free_more:
	srctab_vois_free(NULL, *more, k - 1);
	*more = NULL;
free_first:
	vstats_voi_free(voi);
	return -ENOMEM;
}

void srctab_vois_free(struct vstats_voi *voi, struct source_more *more, uint32_t nmore)
{
	if (voi)
		vstats_voi_free(voi);
	for (uint32_t k = 0; k < nmore; k++) {
		vstats_voi_free(&more[k].voi);
		free(more[k].prev_count);
	}
	free(more);
}

static char *copy_str(char **to, const char *str, size_t len)
{
	char *at = *to;

	memcpy(at, str, len + 1);
	*to += len + 1;
	return at;
}

/* The bytes of a source's own allocation: the record, then its labels,
 * name, the labels' strings and the key. */
static size_t source_alloc_size(size_t keylen, const char *name, const struct bs_label *labels,
				size_t n)
{
	size_t size = sizeof(struct source) + n * sizeof(struct bs_label);

	size += keylen + 1 + strlen(name) + 1;
	for (size_t i = 0; i < n; i++)
		size += strlen(labels[i].name) + 1 + strlen(labels[i].value) + 1;
	return size;
}

#define HIST_PREV_BYTES (STAGE_HIST_BUCKETS_MAX * sizeof(uint64_t)) /* prev_count's most */

/* A source's bytes beside its statistics' data (see srctab_bytes). */
static size_t source_fixed_bytes(const struct processing_group_conf *g, size_t alloc,
				 bool histogram, bool sampled)
{
	return alloc + (histogram ? HIST_PREV_BYTES : 0) +
	       g->nstats * sizeof(struct statproc_stat) +
	       (g->has_template && sampled ? srctab_voi_bytes(g) : 0);
}

_Static_assert(sizeof(struct source_more) + HIST_PREV_BYTES <= PROCESSING_VOI_STATE_BYTES,
	       "a VOI's state passes what the configuration counts for it");

size_t srctab_voi_bytes(const struct processing_group_conf *g)
{
	return g->tpl.voi_bytes;
}

size_t srctab_bytes(const struct processing *p, const struct source *s)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	size_t bytes =
	    source_fixed_bytes(g, source_alloc_size(s->keylen, s->name, s->labels, s->nlabels),
			       s->histogram, s->sampled);

	for (uint32_t k = 0; s->stat && k < g->nstats; k++)
		bytes += statproc_data_bytes(&s->stat[k].def);
	return bytes;
}

bool srctab_fits(const struct processing *p, uint64_t more)
{
	return more <= p->conf->max_memory_bytes - p->mem_bytes;
}

int srctab_take_histogram(struct processing *p, struct source *s)
{
	if (s->histogram)
		return 0;
	if (!srctab_fits(p, HIST_PREV_BYTES))
		return -EFBIG;
	s->histogram = true;
	srctab_resize(p, s, s->bytes + HIST_PREV_BYTES);
	return 0;
}

/* The source with copies of its name, labels and key in its own
 * allocation (size: source_alloc_size), in the order a sample reads them. */
static struct source *source_alloc(size_t size, const char *key, size_t len, const char *name,
				   const struct bs_label *labels, size_t n)
{
	size_t nl = strlen(name);
	struct source *s;
	char *at;

	if (!(s = calloc(1, size)))
		return NULL;
	s->labels = s->mem;
	s->nlabels = n;
	at = (char *)(s->mem + n);
	s->name = copy_str(&at, name, nl);
	for (size_t i = 0; i < n; i++) {
		s->labels[i].name = copy_str(&at, labels[i].name, strlen(labels[i].name));
		s->labels[i].value = copy_str(&at, labels[i].value, strlen(labels[i].value));
	}
	s->key = copy_str(&at, key, len); /* last: only a new source and the interface read it */
	s->keylen = len;
	return s;
}

/* A new source, if what it would hold fits max_memory_bytes (computed
 * from its group's configured definitions before anything is allocated):
 * 0, -EFBIG past the limit, -ENOMEM. histogram: made by a histogram. */
/* s into the arrays and the index: 0, -ENOMEM with nothing changed. */
static int table_insert(struct processing *p, struct source *s)
{
	if (growarr_push(&p->srcs, &s) < 0)
		return -ENOMEM;
	if (growarr_push(&p->grp[s->group].srcs, &s) < 0) {
		p->srcs.n--;
		return -ENOMEM;
	}
	if (p->srcs.n * 2 <= p->index_cap) {
		index_insert(p, p->srcs.n - 1);
	} else if (index_rebuild(p, p->index_cap ? 2 * p->index_cap : 128) < 0) {
		p->srcs.n--;
		p->grp[s->group].srcs.n--;
		return -ENOMEM;
	}
	return 0;
}

int srctab_add(struct processing *p, uint32_t group, const char *key, size_t len, uint64_t h,
	       const char *name, const struct bs_label *labels, size_t n, bool histogram,
	       uint64_t now_ns, struct source **out)
{
	const struct processing_group_conf *g = &p->conf->group[group];
	size_t alloc = source_alloc_size(len, name, labels, n);
	bool sampled = source_chosen(p, group, key, len);
	size_t bytes = source_fixed_bytes(g, alloc, histogram, sampled);
	struct source *s;

	for (uint32_t k = 0; k < g->nstats; k++)
		bytes += statproc_data_bytes(&g->stat[k].def);
	if (!srctab_fits(p, bytes))
		return -EFBIG;
	if (!(s = source_alloc(alloc, key, len, name, labels, n)))
		return -ENOMEM;
	s->group = group;
	s->hash = h;
	s->seen_ns = now_ns;
	s->created_ns = s->lastrst_ns = now_ns;
	s->histogram = histogram;
	if (source_stats(p, s, sampled, now_ns) < 0 || table_insert(p, s) < 0) {
		source_free(p, s);
		return -ENOMEM;
	}
	s->id = p->next_id[group]++;
	srctab_resize(p, s, bytes);
	*out = s;
	return 0;
}

int srctab_adopt(struct processing *p, struct source *s)
{
	size_t bytes = srctab_bytes(p, s);
	struct srctab_key kp;
	int rc;

	srctab_key_split(s->key, s->keylen, &kp);
	s->hash = srctab_hash(s->group, s->key, &kp); /* the group's index may differ */
	s->bytes = 0; /* its share of the table it left was given back */
	s->next_fed = NULL;
	s->expired = false;
	s->fed_pass = 0; /* no pass of this table's sampler */
	for (uint32_t k = 0; k < s->nmore; k++)
		s->more[k].fed_pass = 0;
	if (p->srcs.n >= p->conf->max_sources)
		return -E2BIG;
	if (!srctab_fits(p, bytes))
		return -EFBIG;
	if ((rc = table_insert(p, s)) < 0)
		return rc;
	if (s->id >= p->next_id[s->group])
		p->next_id[s->group] = s->id + 1;
	srctab_resize(p, s, bytes);
	return 0;
}

void srctab_discard(struct processing *p, struct source *s)
{
	source_free(p, s);
}

/* Takes the sources marked `expired` out of the table, each freed or
 * (free_them false) left to whoever marked it, its share given back
 * either way. The count taken out. */
static size_t remove_marked(struct processing *p, bool free_them)
{
	size_t kept = 0, n0 = p->srcs.n;

	for (size_t i = 0; i < p->srcs.n; i++) {
		struct source *s = p->src[i];
		if (s->next_fed && s->next_fed->expired)
			s->next_fed = NULL;
	}
	for (uint32_t g = 0; g < p->conf->ngroups; g++) { /* before any is freed */
		struct stage_group_srcs *gs = &p->grp[g];
		size_t n = 0;
		for (size_t i = 0; i < gs->srcs.n; i++)
			if (!gs->src[i]->expired)
				gs->src[n++] = gs->src[i];
		gs->srcs.n = n;
	}
	for (size_t i = 0; i < p->srcs.n; i++) {
		struct source *s = p->src[i];
		if (!s->expired)
			p->src[kept++] = s;
		else if (free_them)
			source_free(p, s);
		else
			srctab_resize(p, s, 0);
	}
	if (kept != p->srcs.n) {
		p->srcs.n = kept;
		index_rebuild(p, p->index_cap); /* same size: cannot grow the table */
	}
	return n0 - kept;
}

size_t srctab_take_marked(struct processing *p)
{
	return remove_marked(p, false);
}

void srctab_drop_group(struct processing *p, uint32_t group)
{
	for (size_t i = 0; i < p->srcs.n; i++)
		p->src[i]->expired = p->src[i]->group == group;
	remove_marked(p, true);
}

/* Sources not seen for the ttl are freed, and every next_fed that
 * pointed at one forgotten. */
void srctab_expire(struct processing *p, uint64_t now_ns)
{
	uint64_t ttl = (uint64_t)(p->conf->source_ttl_s * 1e9);
	size_t kept = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->srcs.n; i++) {
		if (i + 16 < p->srcs.n) /* a miss each: ask for them ahead */
			__builtin_prefetch(&p->src[i + 16]->seen_ns, 1);
		p->src[i]->expired = now_ns - p->src[i]->seen_ns > ttl;
		kept += !p->src[i]->expired;
	}
	if (kept != p->srcs.n)
		p->count.expired_sources += remove_marked(p, true);
	pthread_mutex_unlock(&p->lock);
}

void srctab_init(struct processing *p)
{
	/* max_sources caps what is kept; the array never needs more. */
	growarr_init(&p->srcs, sizeof(struct source *), p->conf->max_sources);
	for (uint32_t g = 0; g < PROCESSING_GROUPS_MAX; g++)
		growarr_init(&p->grp[g].srcs, sizeof(struct source *), p->conf->max_sources);
}

void srctab_free(struct processing *p)
{
	for (size_t i = 0; i < p->srcs.n; i++)
		source_free(p, p->src[i]);
	growarr_free(&p->srcs);
	for (uint32_t g = 0; g < PROCESSING_GROUPS_MAX; g++)
		growarr_free(&p->grp[g].srcs);
	free(p->index);
}
