/* Every call the Xen collector makes into Xen, in one narrow interface:
 * xenstore (libxenstore), grant mapping (libxengnttab) and event channels
 * (libxenevtchn). The tests put a stand-in for the hypervisor beneath these
 * same libraries (tests/fixtures/xen/fakexen.c), so this file is what ships and what
 * is tested. Each call returns 0 or a value, or -errno. */
#ifndef XEN_SEAM_H
#define XEN_SEAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xen_seam;

int xen_seam_open(struct xen_seam **out);
void xen_seam_close(struct xen_seam *x);

/* xenstore. Strings returned are malloc'd (the caller frees). */
char **xen_xs_directory(struct xen_seam *x, const char *path, unsigned *n);
char *xen_xs_read(struct xen_seam *x, const char *path, unsigned *len);
/* Creates path (empty) owned by domid, which may then write below it. */
int xen_xs_make_owned(struct xen_seam *x, const char *path, uint32_t domid);
int xen_xs_watch(struct xen_seam *x, const char *path, const char *token);
int xen_xs_unwatch(struct xen_seam *x, const char *path, const char *token);
/* A fired watch without blocking: 1 with path and token (one malloc'd
 * vector, free(*vec)), 0 when none is queued. */
int xen_xs_next_watch(struct xen_seam *x, char ***vec);
int xen_xs_fd(struct xen_seam *x);
/* Whether the xenstore connection still answers: libxenstore closes a
 * connection whose daemon went away and never opens it again. */
bool xen_xs_alive(struct xen_seam *x);
/* A new xenstore connection in place of a lost one: its watches are gone
 * and must be set again. Grant mappings and event channels are untouched. */
int xen_xs_reconnect(struct xen_seam *x);

/* Grants: pages of domid mapped read-only, contiguous. */
int xen_gnt_map_ro(struct xen_seam *x, uint32_t domid, const uint32_t *refs, uint32_t n,
		   void **out);
void xen_gnt_unmap(struct xen_seam *x, void *addr, uint32_t n);

/* Event channels. Delivered ports are read, and unmasked, many to a
 * system call: the evtchn device takes a page of ports at once where
 * libxenevtchn's pending and unmask pass one (a scrape of 4,000 sets
 * would make 8,000 more calls). */
#define XEN_EVT_BATCH 1024 /* ports: a page, the most the device moves at once */
int xen_evt_bind(struct xen_seam *x, uint32_t domid, uint32_t remote_port);
int xen_evt_unbind(struct xen_seam *x, uint32_t port);
int xen_evt_notify(struct xen_seam *x, uint32_t port);
/* Delivered ports, each masked until unmasked, into ports[max]: how many
 * (0 when none is; never waits), or -errno. */
int xen_evt_pending(struct xen_seam *x, uint32_t *ports, size_t max);
int xen_evt_unmask(struct xen_seam *x, const uint32_t *ports, size_t n);
int xen_evt_fd(struct xen_seam *x);

#endif
