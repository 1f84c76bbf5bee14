/* Domains and sets from xenstore. Everything a guest wrote is hostile: keys
 * are bounded by the caps before they are followed, references and ports
 * are parsed strictly, name pages are copied once and checked on the copy,
 * and a set that fails any check is refused (and counted), never half-made. */
#include "xen_registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_XS 1024
#define DOMAIN_ROOT "/local/domain"

int xen_registry_init(struct xen_registry *r, struct xen_seam *seam, const struct xen_caps *caps,
		      const struct statmap *map, bool create_stats_key)
{
	memset(r, 0, sizeof(*r));
	r->seam = seam;
	r->caps = caps;
	r->map = map;
	r->create_stats_key = create_stats_key;
	if (!(r->by_port = calloc(XEN_PORTS_MAX, sizeof(*r->by_port))))
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	return 0;
}

void xen_registry_drop(struct xen_registry *r, const char *reason)
{
	droptab_add(&r->drops, reason, 1);
}

/* A guest's text made a bounded label value: printable ASCII kept, the rest '?'. */
static void label_copy(char *dst, const char *src, size_t max)
{
	size_t i;
	for (i = 0; i < max && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

/* A decimal u32 and nothing else ("12", not "12x", "-1" or "0x1"). */
static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	if (!s || !*s || *s < '0' || *s > '9' || strlen(s) > 10)
		return -EINVAL;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static char *read_key(struct xen_registry *r, const char *dir, const char *key)
{
	char path[PATH_MAX_XS];
	unsigned len;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, key) >= sizeof(path))
		return NULL;
	return xen_xs_read(r->seam, path, &len);
}

/* ---- sets ---- */

/* The generic families' names, shared rather than copied per statistic. */
static char generic_number[] = "xen_pv_stat", generic_text[] = "xen_pv_stat_text";

bool xen_metric_generic(const char *metric)
{
	return metric == generic_number || metric == generic_text;
}

static void set_free(struct xen_registry *r, struct xen_set *s)
{
	if (s->port && r->by_port[s->port] == s) {
		r->by_port[s->port] = NULL;
		xen_evt_unbind(r->seam, s->port);
	}
	if (s->values)
		xen_gnt_unmap(r->seam, s->values, s->npages);
	for (size_t i = 0; s->stat && i < s->nstats; i++)
		if (s->stat[i].metric != generic_number && s->stat[i].metric != generic_text)
			free(s->stat[i].metric);
	free(s->stat);
	free(s->names);
	free(s->num);
	free(s->text);
	free(s->path);
	free(s);
}

static void withdraw(struct xen_registry *r, struct xen_domain *d, size_t i)
{
	set_free(r, d->set[i]);
	d->set[i] = d->set[--d->nsets];
	r->epoch++;
}

static void reject_cb(void *ctx, const char *reason)
{
	xen_registry_drop(ctx, reason);
}

/* The refs under prefix0.. (name-type-ref or val-ref), in order, at most
 * caps->pages; -E2BIG past it. */
static int read_refs(struct xen_registry *r, const char *dir, const char *prefix, uint32_t *refs,
		     uint32_t *n)
{
	char key[48];
	for (*n = 0; *n <= r->caps->pages; (*n)++) {
		snprintf(key, sizeof(key), "%s%u", prefix, *n);
		char *v = read_key(r, dir, key);
		if (!v)
			return 0;
		int rc = *n == r->caps->pages ? -E2BIG : parse_u32(v, &refs[*n]);
		free(v);
		if (rc < 0)
			return rc;
	}
	return -E2BIG;
}

/* Keys that look like refs beyond the contiguous run: "out of order". */
static bool stray_refs(struct xen_registry *r, const char *dir, uint32_t n)
{
	unsigned count = 0, found = 0;
	char **keys = xen_xs_directory(r->seam, dir, &count);
	for (unsigned i = 0; keys && i < count; i++)
		found += strncmp(keys[i], "name-type-ref", 13) == 0 ||
			 strncmp(keys[i], "val-ref", 7) == 0;
	free(keys);
	return found != 2 * n;
}

/* The set's statistics from the tuples parsed: names packed in one pool,
 * and room for the values each scrape copies. */
static int keep_stats(struct xen_set *s, const struct xen_tuple *t, size_t n)
{
	size_t bytes = 0, nnum = 0, ntext = 0;

	for (size_t i = 0; i < n; i++)
		bytes += strlen(t[i].name) + 1;
	s->stat = calloc(n ? n : 1, sizeof(*s->stat));
	s->names = malloc(bytes ? bytes : 1);
	if (!s->stat || !s->names)
		return -ENOMEM;
	bytes = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(t[i].name) + 1;
		memcpy(s->names + bytes, t[i].name, len);
		s->stat[i] = (struct xen_stat){
		    .type = t[i].type, .slot = t[i].slot, .name = s->names + bytes};
		s->stat[i].sampled =
		    t[i].type == PVSTATS_ASCII ? (uint32_t)ntext++ : (uint32_t)nnum++;
		bytes += len;
	}
	s->nstats = n;
	s->dense = ntext == 0 && (n == 0 || t[n - 1].slot == n - 1); /* slots only ascend */
	s->num = calloc(nnum ? nnum : 1, sizeof(*s->num));
	s->text = ntext ? calloc(ntext, sizeof(*s->text)) : NULL;
	return s->num && (s->text || !ntext) ? 0 : -ENOMEM;
}

/* The names and types: mapped once, copied, unmapped, checked on the copy. */
static int read_names(struct xen_registry *r, struct xen_set *s, const uint32_t *refs, uint32_t n)
{
	struct xen_tuple *t;
	void *map;
	int rc = xen_gnt_map_ro(r->seam, s->dom->domid, refs, n, &map);
	if (rc < 0)
		return rc;
	uint8_t *copy = malloc((size_t)n * PVSTATS_PAGE_SIZE);
	if (!copy) {
		xen_gnt_unmap(r->seam, map, n);
		return -ENOMEM;
	}
	memcpy(copy, map, (size_t)n * PVSTATS_PAGE_SIZE);
	xen_gnt_unmap(r->seam, map, n);
	t = malloc((size_t)n * PVSTATS_PER_PAGE * sizeof(*t));
	rc = t ? keep_stats(s, t, xen_parse_names(copy, n, t, reject_cb, r)) : -ENOMEM;
	free(t);
	free(copy);
	return rc;
}

/* Each statistic's rule and family name. */
static int map_stats(struct xen_registry *r, struct xen_set *s)
{
	char name[STATMAP_NAME_BUF];

	for (size_t i = 0; i < s->nstats; i++) {
		struct xen_stat *st = &s->stat[i];
		const char *values[3] = {s->provider, s->name, st->name};
		const struct statmap_rule *rule = statmap_match(r->map, values);
		/* A rule that types or scales without naming gets a name of its own:
		 * the generic family holds only untyped statistics. */
		const char *tmpl = rule->name					   ? rule->name
				   : rule->typed || rule->unit || rule->scale != 1 ? "xen_pv_{stat}"
										   : NULL;
		st->rule = rule;
		if (rule->drop)
			continue;
		st->with_stat = !tmpl || !strstr(tmpl, "{stat}") || st->type == PVSTATS_ASCII;
		if (st->type == PVSTATS_ASCII)
			st->metric = generic_text;
		else if (!tmpl)
			st->metric = generic_number;
		else if (statmap_expand(r->map, tmpl, values, rule->unit, name) < 0)
			xen_registry_drop(r, "invalid_name");
		else if (!(st->metric = strdup(name)))
			return -ENOMEM;
	}
	return 0;
}

static const char *make_error_reason(int rc)
{
	switch (rc) {
	case -E2BIG:
		return "too_many_pages";
	case -EINVAL:
		return "bad_ref";
	case -ENOMEM:
		return "no_memory";
	}
	return "map_failed";
}

/* Makes the set at path live, or counts why not. */
static void make_live(struct xen_registry *r, struct xen_domain *d, const char *provider,
		      const char *set, const char *path, uint32_t remote_port)
{
	uint32_t *refs = calloc(2 * (r->caps->pages + 1), sizeof(uint32_t));
	uint32_t *vrefs = refs ? refs + r->caps->pages + 1 : NULL, nn = 0, nv = 0;
	struct xen_set *s = calloc(1, sizeof(*s));
	const char *why = NULL;
	int rc;

	if (!refs || !s || !(s->path = strdup(path))) {
		why = "no_memory";
		goto out_release;
	}
	s->dom = d;
	s->remote_port = remote_port;
	label_copy(s->provider, provider, r->caps->label_len);
	label_copy(s->name, set, r->caps->label_len);
	if ((rc = read_refs(r, path, "name-type-ref", refs, &nn)) < 0 ||
	    (rc = read_refs(r, path, "val-ref", vrefs, &nv)) < 0) {
		why = make_error_reason(rc);
		goto out_release;
	}
	if (nn == 0 || nn != nv || stray_refs(r, path, nn)) {
		why = nn == 0 ? "no_refs" : "refs_out_of_order";
		goto out_release;
	}
	if ((rc = read_names(r, s, refs, nn)) < 0 ||
	    (rc = xen_gnt_map_ro(r->seam, d->domid, vrefs, nv, &s->values)) < 0) {
		why = rc == -ENOMEM ? "no_memory" : "grant_refused";
		goto out_release;
	}
	s->npages = nv;
	if (map_stats(r, s) < 0) {
		why = "no_memory";
		goto out_release;
	}
	rc = xen_evt_bind(r->seam, d->domid, remote_port);
	if (rc <= 0 || (uint32_t)rc >= XEN_PORTS_MAX) {
		if (rc > 0)
			xen_evt_unbind(r->seam, (uint32_t)rc);
		why = "bind_failed";
		goto out_release;
	}
	s->port = (uint32_t)rc;
	s->seen = true;
	r->by_port[s->port] = s;
	d->set[d->nsets++] = s;
	r->epoch++;
	s = NULL;
out_release:
	if (why)
		xen_registry_drop(r, why);
	if (s)
		set_free(r, s);
	free(refs);
}

/* ---- one domain's stats tree ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entries of path, at most cap (the rest counted as `reason`). */
static char **list(struct xen_registry *r, const char *path, uint64_t cap, const char *reason,
		   unsigned *n)
{
	char **v = xen_xs_directory(r->seam, path, n);
	if (!v) {
		*n = 0;
		return NULL;
	}
	qsort(v, *n, sizeof(char *), cmp_str);
	if (*n > cap) {
		xen_registry_drop(r, reason);
		*n = (unsigned)cap;
	}
	return v;
}

static struct xen_set *find_set(struct xen_domain *d, const char *path, size_t *at)
{
	for (size_t i = 0; i < d->nsets; i++) {
		if (strcmp(d->set[i]->path, path) == 0) {
			*at = i;
			return d->set[i];
		}
	}
	return NULL;
}

/* One advertised set: live, withdrawn, or remade when its port changed. */
static void scan_set(struct xen_registry *r, struct xen_domain *d, const char *provider,
		     const char *set, const char *path)
{
	uint32_t port = 0;
	size_t at = 0;
	char *ec = read_key(r, path, "event-channel");
	bool has = ec && parse_u32(ec, &port) == 0;
	struct xen_set *s = find_set(d, path, &at);

	if (ec && !has)
		xen_registry_drop(r, "bad_port");
	free(ec);
	if (s && (!has || port != s->remote_port)) {
		withdraw(r, d, at); /* the provider withdrew it (or rebound) */
		s = NULL;
	}
	if (s) {
		s->seen = true;
		return;
	}
	if (!has)
		return;
	if (d->nsets >= r->caps->sets) {
		xen_registry_drop(r, "too_many_sets");
		return;
	}
	make_live(r, d, provider, set, path, port);
}

void xen_registry_scan(struct xen_registry *r, struct xen_domain *d)
{
	char stats[64], prov_path[PATH_MAX_XS], set_path[PATH_MAX_XS];
	unsigned np = 0, ns;

	for (size_t i = 0; i < d->nsets; i++)
		d->set[i]->seen = false;
	snprintf(stats, sizeof(stats), DOMAIN_ROOT "/%u/stats", d->domid);
	errno = 0;
	char **prov = list(r, stats, r->caps->providers, "too_many_providers", &np);
	if (!prov && errno != ENOENT)
		return; /* xenstore unreachable: what was live stays live */
	for (unsigned i = 0; i < np; i++) {
		if ((size_t)snprintf(prov_path, sizeof(prov_path), "%s/%s", stats, prov[i]) >=
		    sizeof(prov_path))
			continue;
		char **sets = list(r, prov_path, r->caps->sets, "too_many_sets", &ns);
		for (unsigned k = 0; k < ns; k++)
			if ((size_t)snprintf(set_path, sizeof(set_path), "%s/%s", prov_path,
					     sets[k]) < sizeof(set_path))
				scan_set(r, d, prov[i], sets[k], set_path);
		free(sets);
	}
	free(prov);
	for (size_t i = d->nsets; i-- > 0;) /* sets no longer advertised at all */
		if (!d->set[i]->seen)
			withdraw(r, d, i);
}

/* ---- domains ---- */

struct xen_domain *xen_registry_find(struct xen_registry *r, uint32_t domid)
{
	size_t lo = 0, hi = r->ndom;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->dom[mid]->domid == domid)
			return r->dom[mid];
		if (r->dom[mid]->domid < domid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void xen_registry_rewatch(struct xen_registry *r)
{
	char path[64];
	for (size_t i = 0; i < r->ndom; i++) {
		struct xen_domain *d = r->dom[i];
		snprintf(path, sizeof(path), DOMAIN_ROOT "/%u/stats", d->domid);
		if (xen_xs_watch(r->seam, path, d->token) < 0)
			xen_registry_drop(r, "watch_failed");
		d->dirty = true;
	}
}

static void domain_free(struct xen_registry *r, struct xen_domain *d)
{
	char path[64];
	while (d->nsets)
		withdraw(r, d, d->nsets - 1);
	snprintf(path, sizeof(path), DOMAIN_ROOT "/%u/stats", d->domid);
	xen_xs_unwatch(r->seam, path, d->token);
	free(d->set);
	free(d);
}

static struct xen_domain *domain_new(struct xen_registry *r, uint32_t domid)
{
	char path[64];
	unsigned len;
	struct xen_domain *d = calloc(1, sizeof(*d));

	if (!d || !(d->set = calloc(r->caps->sets, sizeof(*d->set)))) {
		free(d);
		return NULL;
	}
	d->domid = domid;
	snprintf(d->id, sizeof(d->id), "%u", domid);
	snprintf(path, sizeof(path), DOMAIN_ROOT "/%u/name", domid);
	char *name = xen_xs_read(r->seam, path, &len);
	label_copy(d->name, name ? name : "", r->caps->label_len);
	free(name);
	snprintf(path, sizeof(path), DOMAIN_ROOT "/%u/stats", domid);
	char *had = r->create_stats_key ? xen_xs_read(r->seam, path, &len) : NULL;
	if (r->create_stats_key && !had && xen_xs_make_owned(r->seam, path, domid) < 0)
		xen_registry_drop(r, "stats_key_refused");
	free(had);
	snprintf(d->token, sizeof(d->token), "s%u", domid);
	/* The watch fires once at once: the first scan comes from it. */
	if (xen_xs_watch(r->seam, path, d->token) < 0) {
		xen_registry_drop(r, "watch_failed");
		d->dirty = true; /* scanned now, and at each periodic resync */
	}
	return d;
}

static int cmp_domid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int xen_registry_sync_domains(struct xen_registry *r)
{
	unsigned n = 0, k = 0;
	char **names = xen_xs_directory(r->seam, DOMAIN_ROOT, &n);
	uint32_t *ids = calloc(n ? n : 1, sizeof(*ids));
	struct xen_domain **next = calloc(n ? n : 1, sizeof(*next));
	size_t i = 0, j = 0, m = 0;

	if (!names) { /* xenstore unreachable: keep what we know */
		free(ids);
		free(next);
		return -EIO;
	}
	if (!ids || !next) {
		free(names);
		free(ids);
		free(next);
		return -ENOMEM;
	}
	for (unsigned x = 0; x < n; x++)
		if (parse_u32(names[x], &ids[k]) == 0)
			k++;
	free(names);
	qsort(ids, k, sizeof(*ids), cmp_domid);
	if (k > r->caps->domains) {
		xen_registry_drop(r, "too_many_domains");
		k = (unsigned)r->caps->domains;
	}
	while (i < r->ndom || j < k) {
		if (j == k || (i < r->ndom && r->dom[i]->domid < ids[j])) {
			domain_free(r, r->dom[i++]); /* gone from xenstore */
		} else if (i < r->ndom && r->dom[i]->domid == ids[j]) {
			next[m++] = r->dom[i++];
			j++;
		} else {
			struct xen_domain *d = domain_new(r, ids[j++]);
			if (d)
				next[m++] = d;
			else
				xen_registry_drop(r, "no_memory");
		}
	}
	free(r->dom);
	free(ids);
	r->dom = next;
	r->ndom = m;
	return 0;
}

void xen_registry_free(struct xen_registry *r)
{
	for (size_t i = 0; i < r->ndom; i++)
		domain_free(r, r->dom[i]);
	free(r->dom);
	free(r->by_port);
	pthread_mutex_destroy(&r->lock);
	memset(r, 0, sizeof(*r));
}
