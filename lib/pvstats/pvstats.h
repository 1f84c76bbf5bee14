/* The provider's half of Xen PV statistics sets (docs/xen-pv-stats.md),
 * for a guest's drivers and agents: advertise sets of statistics in xenstore,
 * share their name and value pages with the toolstack domain, answer its
 * update requests, and withdraw cleanly. Links libxenstore, libxengnttab
 * (grant sharing) and libxenevtchn, as a guest has them. */
#ifndef PVSTATS_H
#define PVSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "pvstats_wire.h"

struct pvstats;
struct pvstats_set;

struct pvstats_stat {
	uint8_t type;	  /* PVSTATS_S64 .. PVSTATS_ASCII */
	const char *name; /* 1 to 62 of (isalnum || ispunct || ' ') */
};

/* Called when the toolstack asks for fresh values: write every statistic
 * of the set with the setters below; the library then signals back. */
typedef void pvstats_update_fn(void *ctx, struct pvstats_set *set);

/* domain_path: NULL inside a guest (keys are relative to its domain);
 * "/local/domain/<domid>" for a process acting for a domain. */
struct pvstats *pvstats_open(const char *domain_path, int *err);
void pvstats_close(struct pvstats *p);

/* Advertises stats/<provider>/<set>: pages shared with domain 0, refs
 * written, event-channel written last. provider and set are xenstore node
 * names, 1 to 62 of [A-Za-z0-9_@-]. NULL with *err (-EINVAL for a bad name
 * or type, -E2BIG past 16 pages). */
struct pvstats_set *pvstats_set_open(struct pvstats *p, const char *provider, const char *set,
				     const struct pvstats_stat *stats, size_t n,
				     pvstats_update_fn *update, void *ctx, int *err);
/* Withdraws the set: deletes event-channel, waits until the agent has
 * closed its end of the port (asked of Xen) but at most grace_ms, then
 * removes the keys and ends the sharing. Where Xen cannot be asked (no
 * privcmd), it waits the whole grace period. Returns 1 when the agent was
 * seen to close its port, 0 when the grace period ran out. */
int pvstats_set_withdraw(struct pvstats_set *s, unsigned grace_ms);

void pvstats_set_u64(struct pvstats_set *s, size_t i, uint64_t v);
void pvstats_set_s64(struct pvstats_set *s, size_t i, int64_t v);
void pvstats_set_double(struct pvstats_set *s, size_t i, double v);
/* Up to 63 bytes of (isalnum || ispunct || ' '); others become '?'. */
void pvstats_set_ascii(struct pvstats_set *s, size_t i, const char *text);

/* Serving from the application's loop: poll the fd, then dispatch. */
int pvstats_fd(const struct pvstats *p);
/* Answers every request that has arrived; returns how many. Never waits. */
int pvstats_dispatch(struct pvstats *p);

#endif
