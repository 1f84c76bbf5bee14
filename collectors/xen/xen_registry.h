/* The domains and statistics sets the Xen collector knows, kept current
 * from xenstore by the watcher thread: a set becomes live when its
 * event-channel key appears (its pages checked and mapped, its port bound)
 * and is withdrawn the moment that key goes. */
#ifndef XEN_REGISTRY_H
#define XEN_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "droptab.h"
#include "statmap.h"
#include "xen_page.h"
#include "xen_seam.h"

#define XEN_PORTS_MAX (1u << 17) /* the FIFO event channel ABI's limit */
#define XEN_LABEL_MAX 64

/* A statistic of a live set. Its name is in the set's pool of names and
 * its value, each scrape, in the set's numbers or texts: what a scrape
 * reads of 256,000 statistics then fits in a few megabytes, not the 34 of
 * whole name fields and value pages. */
struct xen_stat {
	uint8_t type;
	bool with_stat;	  /* its name is a label */
	uint32_t slot;	  /* its tuple in the value pages */
	uint32_t sampled; /* its place in num, or in text for an ASCII value */
	const char *name;
	const struct statmap_rule *rule;
	char *metric; /* its family; NULL: left out */
};

struct xen_caps {
	uint64_t domains, providers, sets, pages;
	uint64_t label_len;
};

struct xen_set {
	struct xen_domain *dom;
	char *path; /* /local/domain/<domid>/stats/<provider>/<set> */
	char provider[XEN_LABEL_MAX + 1], name[XEN_LABEL_MAX + 1]; /* label-safe */
	uint32_t remote_port, port;
	uint32_t npages;
	void *values; /* the guest's value pages, mapped read-only */
	struct xen_stat *stat;
	size_t nstats;
	char *names; /* the statistics' names, one after another */
	/* This scrape's private copy of the values: numbers, and the tuples
	 * of ASCII values whole. */
	uint64_t *num;
	uint8_t (*text)[PVSTATS_TUPLE_SIZE];
	bool dense; /* statistic i is number i and tuple i, for every i */
	bool awaiting, fresh;
	bool seen; /* by the scan in progress */
	uint64_t timeouts;
};

struct xen_domain {
	uint32_t domid;
	char id[12]; /* domid as a label value */
	char name[XEN_LABEL_MAX + 1];
	char token[16];
	struct xen_set **set;
	size_t nsets;
	bool dirty;
	uint64_t next_scan_ns;
};

struct xen_registry {
	pthread_mutex_t lock; /* everything below */
	struct xen_seam *seam;
	const struct xen_caps *caps;
	const struct statmap *map;
	bool create_stats_key;
	struct xen_domain **dom; /* sorted by domid */
	size_t ndom;
	struct xen_set **by_port; /* XEN_PORTS_MAX entries */
	uint64_t epoch;		  /* moves whenever a set comes or goes */
	struct droptab drops;	  /* found by the watcher, reported by the next scrape */
};

int xen_registry_init(struct xen_registry *r, struct xen_seam *seam, const struct xen_caps *caps,
		      const struct statmap *map, bool create_stats_key);
void xen_registry_free(struct xen_registry *r);
void xen_registry_drop(struct xen_registry *r, const char *reason);

/* Caller holds the lock. Re-reads /local/domain: new domains are watched
 * (and given a stats key when asked), vanished ones lose everything. */
int xen_registry_sync_domains(struct xen_registry *r);
/* Sets every domain's watch again on a new xenstore connection, and marks
 * every domain to be read again. */
void xen_registry_rewatch(struct xen_registry *r);
/* Caller holds the lock. Re-reads one domain's stats tree. */
void xen_registry_scan(struct xen_registry *r, struct xen_domain *d);
struct xen_domain *xen_registry_find(struct xen_registry *r, uint32_t domid);
/* True for the generic families, xen_pv_stat and xen_pv_stat_text. */
bool xen_metric_generic(const char *metric);

#endif
