/* The supplier set follows the supplier directory: sockets that appear
 * become suppliers, sockets that vanish (or are replaced) take their
 * connection and description with them. */
#include "dci_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "dci4_dir.h"

int dci_set_init(struct dci_set *set)
{
	memset(set, 0, sizeof(*set));
	set->epfd = epoll_create1(EPOLL_CLOEXEC);
	return set->epfd < 0 ? -errno : 0;
}

void dci_sup_forget(struct dci_set *set, struct dci_sup *s)
{
	if (s->layout) {
		set->stats_total -= s->layout->nstats;
		set->epoch++;
	}
	if (s->values)
		dci_budget_give(&set->budget, s->layout->value_bytes ? s->layout->value_bytes : 1);
	dci_layout_free(s->layout);
	dci_sup_unbuild(set, s);
	free(s->values);
	s->layout = NULL;
	s->values = NULL;
	s->statics_read = false;
}

int dci_sup_build(struct dci_set *set, struct dci_sup *s, uint32_t max_stat, size_t cap)
{
	size_t own = s->layout ? s->layout->nstats : 0, want = (size_t)max_stat + 1;

	dci_sup_unbuild(set, s);
	/* Its own layout goes when this one is adopted: only the rest counts. */
	if (set->stats_total - own + set->stats_building + want > cap)
		return -EDQUOT;
	if (!(s->building = dci_layout_new(max_stat, s->info.reset, s->info.i_version)))
		return -ENOMEM;
	s->building_extra = want > own ? want - own : 0;
	set->stats_building += s->building_extra;
	return 0;
}

struct dci_layout *dci_sup_built(struct dci_set *set, struct dci_sup *s)
{
	struct dci_layout *l = s->building;

	set->stats_building -= s->building_extra;
	s->building_extra = 0;
	s->building = NULL;
	return l;
}

void dci_sup_unbuild(struct dci_set *set, struct dci_sup *s)
{
	dci_layout_free(dci_sup_built(set, s));
}

static void sup_free(struct dci_set *set, struct dci_sup *s)
{
	dci_sup_forget(set, s);
	dci_link_free(&s->link);
	free(s->path);
	free(s);
}

void dci_set_free(struct dci_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		sup_free(set, set->sup[i]);
	free(set->sup);
	if (set->epfd >= 0)
		close(set->epfd);
	memset(set, 0, sizeof(*set));
	set->epfd = -1;
}

/* The sockets in dir, sorted by name; what was left out is counted. */
static int list_dir(const char *dir, struct bs_emitter *em, struct dci4_dir_entry **out, size_t *n)
{
	struct dci4_dir_skipped skipped;
	int rc = dci4_dir_list(dir, DCI_DIR_ENTRIES_MAX, out, n, &skipped);

	if (skipped.bad_names)
		bs_drop(em, "bad_socket_name", skipped.bad_names);
	if (skipped.truncated)
		bs_drop(em, "too_many_suppliers", 1);
	return rc;
}

static struct dci_sup *sup_new(struct dci_set *set, const char *dir, const struct dci4_dir_entry *e)
{
	struct dci_sup *s = calloc(1, sizeof(*s));
	size_t need = strlen(dir) + strlen(e->name) + 7;

	if (!s || !(s->path = malloc(need))) {
		free(s);
		return NULL;
	}
	snprintf(s->path, need, "%s/%s.sock", dir, e->name);
	memcpy(s->name, e->name, sizeof(s->name));
	s->ino = e->ino;
	dci_link_init(&s->link, &set->budget);
	return s;
}

int dci_set_sync(struct dci_set *set, const struct dci_config *cfg, struct bs_emitter *em)
{
	struct dci4_dir_entry *e;
	size_t n, i = 0, j = 0, k = 0;
	int rc = list_dir(cfg->dir, em, &e, &n);

	if (rc < 0)
		return rc;
	if (n > cfg->max_suppliers) {
		bs_drop(em, "too_many_suppliers", n - cfg->max_suppliers);
		n = cfg->max_suppliers;
	}
	struct dci_sup **next = n ? calloc(n, sizeof(*next)) : NULL;
	if (n && !next) {
		free(e);
		return -ENOMEM;
	}
	/* Both lists are sorted: one merge keeps, adds and drops. */
	while (i < set->n || j < n) {
		int c = i == set->n ? 1 : j == n ? -1 : strcmp(set->sup[i]->name, e[j].name);
		if (c < 0 || (c == 0 && set->sup[i]->ino != e[j].ino)) {
			sup_free(set, set->sup[i++]);
			set->epoch++;
			continue;
		}
		if (c == 0) {
			next[k++] = set->sup[i++];
			j++;
			continue;
		}
		struct dci_sup *s = sup_new(set, cfg->dir, &e[j++]);
		if (!s) {
			bs_drop(em, "no_memory", 1);
			continue;
		}
		next[k++] = s;
		set->epoch++;
	}
	free(set->sup);
	free(e);
	set->sup = next;
	set->n = k;
	return 0;
}
