/* The KVM collector's state, shared by the plugin (kvm_collector.c) and the
 * hand-over server it runs in its watcher thread (kvm_handover_serve.c). */
#ifndef KVM_COLLECTOR_H
#define KVM_COLLECTOR_H

#include <pthread.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "kvm_emit.h"
#include "kvm_handover.h"
#include "kvm_libvirt.h"
#include "droptab.h"
#include "growarr.h"
#include "monoclock.h"
#include "unixsock.h"
#include "worker.h"

#define KVM_PENDING_MAX 256
#define KVM_HANDOVER_CONNS_MAX 64
#define KVM_HANDOVER_CONNS_PER_UID 8 /* one allowed uid cannot shut out the others */
#define KVM_HANDOVER_IDS_MAX 64
#define KVM_HANDOVER_FDS_MAX 1000000 /* handover.max_fds at most */

/* epoll tags besides VMM pids */
#define KVM_TAG_STOP UINT64_MAX
#define KVM_TAG_UEVENT (UINT64_MAX - 1)
#define KVM_TAG_LISTEN (UINT64_MAX - 2)
#define KVM_TAG_WAKE (UINT64_MAX - 3)
#define KVM_TAG_CONN (1ull << 62) /* | the connection's index */

struct kvm_pending {
	pid_t tid;
	unsigned tries;
	uint64_t due_ns;
};

struct kvm_watch {
	pid_t pid;
	int pidfd;
};

struct kvm_conn {
	int fd; /* -1: a free slot */
	struct kvm_handover_peer peer;
	uint64_t last_ns; /* when it last sent anything */
};

struct kvm_handover_gift;

struct kvm_collector {
	const struct bs_host *host;
	bool check_only;      /* --check-config: the options are read, nothing is touched */
	pthread_mutex_t lock; /* the set, the watches and wdrops */
	pthread_cond_t scanned;
	bool first_scan_done;
	struct kvm_vmset set;
	enum kvm_mode mode;
	struct kvm_filter stats, vms;
	const char *proc;
	double rescan_s;
	bool passive;
	bool attach; /* inject KVM_GET_STATS_FD into stock VMMs (ptrace) */
	bool attach_eperm_logged, attach_traced_logged, eperm_logged;
	bool host_view;	   /* vCPU threads' schedstat and VMMs' memory (kvm_hostview.c) */
	bool hostview_due; /* a hand-over brought vCPUs whose threads are not known */
	struct kvm_libvirt_conf libvirt;
	bool libvirt_denied_logged;

	struct worker watcher; /* the watcher thread */
	int epfd, wakefd, ueventfd;
	GROWARR_OF(struct kvm_watch, watch, watches); /* the VMMs' pidfds */
	struct kvm_pending pending[KVM_PENDING_MAX];
	size_t npending;
	uint64_t next_rescan_ns;

	/* The hand-over socket: off when no path is configured. Only the
	 * watcher thread touches the connections. */
	const char *handover_path;
	int listenfd;
	struct unixsock_id sockid;
	uint64_t allow_uid[KVM_HANDOVER_IDS_MAX], allow_gid[KVM_HANDOVER_IDS_MAX];
	size_t nallow_uid, nallow_gid;
	uint64_t handover_max_fds, handover_max_fds_per_peer;
	double handover_idle_s; /* a connection silent this long is closed */
	struct kvm_conn conns[KVM_HANDOVER_CONNS_MAX];
	/* Instances serving one socket path, oldest first (a reload makes the
	 * next): the oldest listens, and passes its socket, connections and
	 * handed-over fds to the next when it shuts down. */
	struct kvm_collector *reg_next;
	struct kvm_handover_gift *gift; /* received, not adopted yet: under the registry lock */

	struct droptab wdrops; /* found between scrapes, reported by the next collect */
};

/* Counts a drop found outside a scrape; the caller holds k->lock. */
void kvm_watcher_drop(void *ctx, const char *reason);
/* The pidfd watching VMM `pid`, opened on first use; the caller holds k->lock. */
int kvm_pidfd_of(void *ctx, pid_t pid);
/* Closes that watch unless a VM of `pid` is held; the caller holds k->lock. */
void kvm_watch_release(struct kvm_collector *k, pid_t pid);

/* The hand-over server (kvm_handover_serve.c), all in the watcher thread
 * but start and stop. */
/* Listens on the configured path, or waits for the running generation's
 * socket when a reload made this one (a check listens nowhere). */
int kvm_handover_start(struct kvm_collector *k);
void kvm_handover_accept(struct kvm_collector *k);
void kvm_handover_read(struct kvm_collector *k, struct kvm_conn *c);
/* Closes connections idle past their time; returns ms to the next such, or -1. */
int kvm_handover_idle(struct kvm_collector *k);
/* Takes what the previous generation passed on (after KVM_TAG_WAKE). */
void kvm_handover_adopt(struct kvm_collector *k);
/* After the watcher stopped: passes the socket, connections and handed-over
 * fds to the next generation, or closes them and removes the socket. */
void kvm_handover_stop(struct kvm_collector *k);

#endif
