/* The hand-over server (kvm_handover_serve.c): the socket peers pass stats
 * fds to, its connections, and what it passes the next generation at a
 * reload. It sees the collector only through struct kvm_handover_host: it
 * hands over checked fds, counts drops, and at shutdown asks for the fds
 * peers handed over, never touching the set or its lock itself. */
#ifndef KVM_HANDOVER_SERVE_H
#define KVM_HANDOVER_SERVE_H

#include <stdint.h>
#include <sys/types.h>

#include "growarr.h"
#include "kvm_handover.h"
#include "unixsock.h"

/* Connections that hold no handed-over fd yet (just connected, or refused):
 * few, so that no peer can hold many empty ones. A sender's connection is
 * bounded instead by handover.max_vms and the fds the process may open. */
#define KVM_HANDOVER_CONNS_MAX 64
#define KVM_HANDOVER_CONNS_PER_UID 8 /* one allowed uid cannot shut out the others */
#define KVM_HANDOVER_IDS_MAX 64
/* Reports of a stats fd not made (no_stats_fd=), per connection: a burst,
 * then a steady rate; past them the connection is closed. A VMM reports
 * each VM or vCPU it failed to get one for, once. */
#define KVM_HANDOVER_REPORTS_BURST 64
#define KVM_HANDOVER_REPORTS_PER_S 16
#define KVM_HANDOVER_FDS_MAX 1000000   /* handover.max_fds at most */
#define KVM_HANDOVER_NOFD_PAUSE_MS 100 /* accept rests this long when no fd is left */

/* The server's tags in the watcher's epoll set, which the collector's own
 * (VMM pids, and UINT64_MAX, - 1 and - 3: kvm_watch.c) share. */
#define KVM_TAG_LISTEN (UINT64_MAX - 2)
#define KVM_TAG_CONN (1ull << 62) /* | the connection's index */

/* An fd a peer handed over, of the kind its message claimed, checked. */
struct kvm_handed_fd {
	pid_t pid, from; /* the VMM it is watched by; the peer that sent it */
	int fd, vcpu;	 /* vcpu -1: the VM's stats fd */
	struct kvm_identity ident;
};

/* What the server asks of the collector, given at start and called with
 * ctx. take and drop lock what they touch themselves; release runs only at
 * shutdown, after the watcher stopped. */
struct kvm_handover_host {
	void *ctx;
	/* Takes the fds into the set, within its caps: each is the set's from
	 * then on (refused, it is closed and the refusal counted). Returns
	 * how many the set kept. */
	size_t (*take)(void *ctx, const struct kvm_handed_fd *fds, size_t n);
	/* Counts a drop found outside a scrape; "handover_no_fds" (an fd or a
	 * connection lost for want of fds) is also for the operator to hear of. */
	void (*drop)(void *ctx, const char *reason);
	/* Whether the set holds stats fds peer `from` handed over: its
	 * connection then stays open however long it is silent, so that the
	 * sender learns of the exporter's end (a restart) by the connection's. */
	bool (*holds)(void *ctx, pid_t from);
	/* Gives every handed-over fd the set holds to `give`, which owns it
	 * from then on, and forgets it. */
	void (*release)(void *ctx,
			void (*give)(void *gctx, const struct kvm_vm *vm, int fd, int vcpu),
			void *gctx);
};

struct kvm_conn {
	int fd; /* -1: a free slot */
	struct kvm_handover_peer peer;
	uint64_t last_ns;   /* when it last sent anything */
	bool sent_fds;	    /* a sender's: the set kept a stats fd it handed over */
	bool held;	    /* and the set holds one still, as last looked at */
	double reports;	    /* reports it may send now (KVM_HANDOVER_REPORTS_*) */
	uint64_t report_ns; /* when reports was last topped up */
};

struct kvm_handover_gift;

/* One generation's server. The options are set between kvm_handover_init
 * and kvm_handover_start; only the watcher thread touches the rest, but
 * for start and stop. */
struct kvm_handover_server {
	const char *path; /* NULL: no socket */
	const char *proc; /* the pid rule's /proc */
	uint64_t allow_uid[KVM_HANDOVER_IDS_MAX], allow_gid[KVM_HANDOVER_IDS_MAX];
	size_t nallow_uid, nallow_gid;
	double idle_s;	    /* a connection silent this long is closed, unless it is a sender's */
	size_t max_senders; /* handover.max_vms: each sender's connection holds a VM */

	struct kvm_handover_host host;
	int epfd, wakefd; /* the watcher's: connections join the one, the other wakes it */
	int listenfd;
	uint64_t listen_paused_until; /* ns: accept found no fd left, the listener rests */
	struct unixsock_id sockid;
	/* The connections, a slot's index their epoll tag: KVM_HANDOVER_CONNS_MAX
	 * waiting to send plus senders_cap senders at most. */
	GROWARR_OF(struct kvm_conn, conn, conns);
	size_t senders_cap; /* max_senders, lowered to a quarter of RLIMIT_NOFILE */
	/* Servers of one socket path, oldest first (a reload makes the next):
	 * the oldest listens, and passes its socket, connections and handed-over
	 * fds to the next when it stops. */
	struct kvm_handover_server *reg_next;
	struct kvm_handover_gift *gift; /* received, not adopted yet: under the registry lock */
	size_t senders; /* connections open that sent fds the set holds; atomic, read by scrapes */
	bool inherited; /* the socket came from the previous generation (a reload) */
};

/* The senders' connections a server may keep: max_senders, but no more
 * than a quarter of the fds the process may open (`nofile`), each also
 * holding a stats fd and a VMM's pidfd. */
size_t kvm_handover_senders_cap(size_t max_senders, unsigned long long nofile);
/* No socket, no connections; the options empty. */
void kvm_handover_init(struct kvm_handover_server *s);
/* Listens on s->path, or waits for the running generation's socket when a
 * reload made this one. Connections and the listener join `epfd` (tagged
 * as above); `wakefd` is written when a gift arrives (then call
 * kvm_handover_adopt). Returns 0 or -errno. */
int kvm_handover_start(struct kvm_handover_server *s, const struct kvm_handover_host *host,
		       int epfd, int wakefd);
/* In the watcher thread, on KVM_TAG_LISTEN. */
void kvm_handover_accept(struct kvm_handover_server *s);
/* In the watcher thread, on KVM_TAG_CONN | conn. */
void kvm_handover_read(struct kvm_handover_server *s, size_t conn);
/* Closes connections idle past their time, and wakes a listener resting
 * for want of fds when its time is up; returns ms to the next such, or -1. */
int kvm_handover_idle(struct kvm_handover_server *s);
/* The senders connected now (struct kvm_handover_server's senders), from
 * any thread. */
size_t kvm_handover_senders(const struct kvm_handover_server *s);
/* Takes what the previous generation passed on (after a wake-up). */
void kvm_handover_adopt(struct kvm_handover_server *s);
/* After the watcher stopped: passes the socket, connections and handed-over
 * fds to the next generation, or closes them and removes the socket. */
void kvm_handover_stop(struct kvm_handover_server *s);

#endif
