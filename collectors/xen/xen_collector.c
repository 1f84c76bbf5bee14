/* The Xen collector plugin: the monitoring agent of Xen PV statistics
 * sets. A watcher thread keeps the registry of domains and sets current
 * from xenstore watches; collect asks every live set for an update at once
 * and writes what came back. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <binstat/collector.h>

#include "xen_emit.h"
#include "xen_registry.h"
#include "xen_sample.h"
#include "monoclock.h"
#include "worker.h"

#define TAG_STOP 1
#define TAG_XS 2
#define WATCHES_PER_ROUND 4096 /* then the dirty domains get their turn */
#define FOLLOWUP_NS 1000000000ull
#define XS_PROBE_NS 2000000000ull /* how often xenstore's connection is checked */

static const char *const rule_keys[] = {"provider", "set", "stat"};

struct xen_collector {
	const struct bs_host *host;
	struct xen_caps caps;
	struct statmap map;
	double timeout_s, scan_interval_s, resync_s;
	bool create_stats_key;
	struct xen_seam *seam;
	struct xen_registry reg;
	bool reg_ready;
	struct famgroup fam;
	struct worker worker;
	int epfd;
	bool xs_lost; /* xenstore's connection is gone: reconnecting */
};

/* ---- the watcher ---- */

/* Marks what a fired watch concerns; true when the domain list must be read. */
static bool note_watch(struct xen_collector *k, char **vec)
{
	const char *token = vec[1]; /* [0] the path, [1] the token */
	uint32_t domid;

	if (token[0] != 's')
		return true; /* @introduceDomain, @releaseDomain */
	domid = (uint32_t)strtoul(token + 1, NULL, 10);
	struct xen_domain *d = xen_registry_find(&k->reg, domid);
	if (d)
		d->dirty = true;
	/* The stats key itself came or went: perhaps with its whole domain,
	 * removed after @releaseDomain was already handled. Only that exact
	 * path counts: a guest's own ".../stats/x/stats" must not make every
	 * key it writes cost a re-read of the domain list. */
	char stats[48];
	snprintf(stats, sizeof(stats), "/local/domain/%u/stats", domid);
	return strcmp(vec[0], stats) == 0;
}

/* Scans dirty domains whose rest period is over; returns ms until the next
 * is due. Called without the lock: only this thread changes the domain
 * list, and the lock is taken per domain so a scrape never waits for more
 * than one domain's scan. */
static int scan_due(struct xen_collector *k)
{
	uint64_t now = monoclock_ns(), next = UINT64_MAX;

	for (size_t i = 0; i < k->reg.ndom; i++) {
		struct xen_domain *d = k->reg.dom[i];
		if (!d->dirty)
			continue;
		if (now < d->next_scan_ns) { /* a guest churning its keys waits its turn */
			next = d->next_scan_ns < next ? d->next_scan_ns : next;
			continue;
		}
		pthread_mutex_lock(&k->reg.lock);
		xen_registry_scan(&k->reg, d);
		pthread_mutex_unlock(&k->reg.lock);
		sched_yield(); /* a waiting scrape gets the lock before the next domain */
		d->dirty = false;
		d->next_scan_ns = now + (uint64_t)(k->scan_interval_s * 1e9);
	}
	return next == UINT64_MAX ? -1 : (int)((next - now) / 1000000 + 1);
}

static int ms_until(uint64_t now, uint64_t t)
{
	return t <= now ? 0 : (int)((t - now) / 1000000 + 1);
}

/* The sooner of two epoll timeouts, -1 being none. */
static int min_ms(int a, int b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* The domain watches on xenstore's connection, and its fd in our epoll. */
static int watch_xenstore(struct xen_collector *k)
{
	struct epoll_event xs = {.events = EPOLLIN, .data.u32 = TAG_XS};
	int rc;
	if ((rc = xen_xs_watch(k->seam, "@introduceDomain", "I")) < 0 ||
	    (rc = xen_xs_watch(k->seam, "@releaseDomain", "R")) < 0)
		return rc;
	return epoll_ctl(k->epfd, EPOLL_CTL_ADD, xen_xs_fd(k->seam), &xs) < 0 ? -errno : 0;
}

/* xenstored restarted, or died: libxenstore closes the connection for good.
 * Live sets keep being sampled meanwhile (grants and event channels do not
 * go through xenstore); every few seconds a new connection is tried, and
 * once it is made the watches are set again and everything is read again.
 * Returns whether xenstore is usable now. */
static bool check_xenstore(struct xen_collector *k)
{
	if (!k->xs_lost && xen_xs_alive(k->seam))
		return true;
	if (!k->xs_lost)
		k->host->log(BS_LOG_WARN, "xen", "xenstore connection lost; reconnecting",
			     (char *)NULL);
	k->xs_lost = true;
	if (xen_xs_reconnect(k->seam) < 0 || watch_xenstore(k) < 0)
		return false;
	pthread_mutex_lock(&k->reg.lock);
	xen_registry_rewatch(&k->reg);
	xen_registry_sync_domains(&k->reg);
	pthread_mutex_unlock(&k->reg.lock);
	k->xs_lost = false;
	k->host->log(BS_LOG_INFO, "xen", "xenstore connection made again; watches set again",
		     (char *)NULL);
	return true;
}

static void *watcher_main(void *arg)
{
	struct xen_collector *k = arg;
	uint64_t next_resync = monoclock_ns() + (uint64_t)(k->resync_s * 1e9);
	bool followup = false; /* the due re-read is an event's follow-up, not the periodic one */
	int wait_ms;

	/* The first look, here rather than in init: on a host of a thousand
	 * domains it takes seconds, and the daemon serves meanwhile. */
	pthread_mutex_lock(&k->reg.lock);
	xen_registry_sync_domains(&k->reg);
	pthread_mutex_unlock(&k->reg.lock);
	wait_ms = scan_due(k);
	uint64_t next_probe = monoclock_ns() + XS_PROBE_NS;
	for (;;) {
		struct epoll_event ev[4];
		uint64_t now = monoclock_ns();
		int timeout =
		    min_ms(min_ms(wait_ms, ms_until(now, next_resync)), ms_until(now, next_probe));
		int n = epoll_wait(k->epfd, ev, 4, timeout);
		for (int i = 0; i < n; i++)
			if (ev[i].data.u32 == TAG_STOP)
				return NULL;
		if (monoclock_ns() >= next_probe) {
			next_probe = monoclock_ns() + XS_PROBE_NS;
			check_xenstore(k);
		}
		if (k->xs_lost)
			continue; /* nothing is read from xenstore until it is back */
		bool due = monoclock_ns() >= next_resync, event = false;
		char **vec;
		/* Dirty marks are the watcher's own: no lock needed for them. */
		for (int w = 0; w < WATCHES_PER_ROUND && xen_xs_next_watch(k->seam, &vec) == 1;
		     w++) {
			event |= note_watch(k, vec);
			free(vec);
		}
		if (due || event) {
			pthread_mutex_lock(&k->reg.lock);
			xen_registry_sync_domains(&k->reg);
			pthread_mutex_unlock(&k->reg.lock);
			for (size_t i = 0; due && !followup && i < k->reg.ndom; i++)
				k->reg.dom[i]->dirty = true; /* the safety net for lost watches */
			/* After a domain event, look once more a second later: the
			 * toolstack removes /local/domain/<domid> after releasing it. */
			followup = event;
			next_resync =
			    monoclock_ns() + (event ? FOLLOWUP_NS : (uint64_t)(k->resync_s * 1e9));
		}
		wait_ms = scan_due(k);
	}
}

/* ---- configuration ---- */

static int read_config(struct xen_collector *k, const struct bs_conf *conf)
{
	const struct bs_conf_ops *c = conf->ops;

	k->caps = (struct xen_caps){
	    .domains = 4096, .providers = 16, .sets = 64, .pages = 4, .label_len = 64};
	k->timeout_s = 1;
	k->scan_interval_s = 0.1;
	k->resync_s = 60;
	if (c->get_bool(conf, "create_stats_key", &k->create_stats_key) == -EINVAL ||
	    c->get_duration(conf, "timeout_seconds", 0.001, 600, &k->timeout_s) == -EINVAL ||
	    c->get_duration(conf, "rescan_min_interval_seconds", 0, 60, &k->scan_interval_s) ==
		-EINVAL ||
	    c->get_duration(conf, "resync_interval_seconds", 1, 86400, &k->resync_s) == -EINVAL ||
	    c->get_u64(conf, "max_domains", 1, 65536, &k->caps.domains) == -EINVAL ||
	    c->get_u64(conf, "max_providers_per_domain", 1, 1024, &k->caps.providers) == -EINVAL ||
	    c->get_u64(conf, "max_sets_per_domain", 1, 4096, &k->caps.sets) == -EINVAL ||
	    c->get_u64(conf, "max_pages_per_set", 1, 256, &k->caps.pages) == -EINVAL ||
	    c->get_u64(conf, "max_label_length", 8, XEN_LABEL_MAX, &k->caps.label_len) == -EINVAL)
		return -EINVAL;
	return statmap_init(&k->map, c->child(conf, "rules"), rule_keys, 3);
}

/* ---- the plugin ---- */

static void xen_shutdown(void *state)
{
	struct xen_collector *k = state;
	if (!k)
		return;
	worker_stop(&k->worker);
	famgroup_free(&k->fam);
	if (k->reg_ready)
		xen_registry_free(&k->reg);
	xen_seam_close(k->seam);
	if (k->epfd >= 0)
		close(k->epfd);
	statmap_free(&k->map);
	free(k);
}

static int start_watching(struct xen_collector *k)
{
	int rc;

	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (k->epfd < 0)
		return -errno;
	if ((rc = worker_open(&k->worker, k->epfd, (epoll_data_t){.u32 = TAG_STOP})) < 0 ||
	    (rc = watch_xenstore(k)) < 0)
		return rc;
	return worker_start(&k->worker, watcher_main, k);
}

static int xen_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	struct xen_collector *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	k->host = host;
	k->epfd = -1;
	worker_init(&k->worker);
	if ((rc = read_config(k, conf)) < 0)
		goto err_shutdown;
	if (host->flags &
	    BS_HOST_CHECK_ONLY) { /* xenstore is not even opened: keys are written there */
		*state = k;
		return 0;
	}
	if ((rc = xen_seam_open(&k->seam)) < 0) {
		host->log(BS_LOG_ERROR, "xen",
			  "cannot open xenstore, grant tables or event channels", "error",
			  strerror(-rc), (char *)NULL);
		goto err_shutdown;
	}
	if ((rc = xen_registry_init(&k->reg, k->seam, &k->caps, &k->map, k->create_stats_key)) < 0)
		goto err_shutdown;
	k->reg_ready = true;
	if ((rc = start_watching(k)) < 0)
		goto err_shutdown;
	*state = k;
	return 0;
err_shutdown:
	xen_shutdown(k);
	return rc;
}

static int xen_collect(void *state, struct bs_emitter *em)
{
	struct xen_collector *k = state;

	xen_sample(&k->reg, k->timeout_s, em); /* returns holding the lock */
	int rc = xen_emit(&k->reg, &k->fam, k->host, em);
	pthread_mutex_unlock(&k->reg.lock);
	return rc;
}

static void xen_describe(void *state, char *buf, size_t len)
{
	struct xen_collector *k = state;
	size_t sets = 0;

	pthread_mutex_lock(&k->reg.lock);
	for (size_t i = 0; i < k->reg.ndom; i++)
		sets += k->reg.dom[i]->nsets;
	snprintf(buf, len, "%zu domains, %zu statistics sets", k->reg.ndom, sets);
	pthread_mutex_unlock(&k->reg.lock);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_xen = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "xen",
    .description = "Xen PV statistics sets of guests' drivers and agents (the monitoring agent)",
    .init = xen_init,
    .collect = xen_collect,
    .shutdown = xen_shutdown,
    .describe = xen_describe,
};
