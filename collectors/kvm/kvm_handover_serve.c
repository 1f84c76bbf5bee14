/* The hand-over server: accepts allowed peers (a few per uid, each closed
 * when idle), checks every fd and every claim a peer makes, and keeps its
 * socket and what was handed over across a reload.
 *
 * Trust: a peer is allowed by uid or group. What it sends must be a stats
 * fd KVM made (kvm_statsfd_identify), of the kind its message claims; it
 * may name as the VMM only itself, or a process it could ptrace (same uids,
 * or root); its fds only ever form VMs of their own, never joining
 * discovered VMs or another peer's; and it may hold at most
 * max_fds_per_peer fds, all peers max_fds, in at most handover.max_vms VMs,
 * apart from the room discovery has. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvm_collector.h"

struct kvm_handed_fd {
	pid_t pid, from;
	int fd, vcpu;
	struct kvm_identity ident;
};

/* What one generation passes the next at a reload. */
struct kvm_handover_gift {
	int listenfd;
	struct unixsock_id sockid;
	struct kvm_conn conns[KVM_HANDOVER_CONNS_MAX];
	struct growarr fds; /* of struct kvm_handed_fd */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kvm_collector *registry; /* every instance with a socket path, oldest first */

static void drop_locked(struct kvm_collector *k, const char *reason)
{
	pthread_mutex_lock(&k->lock);
	kvm_watcher_drop(k, reason);
	pthread_mutex_unlock(&k->lock);
}

static void watch_listener(struct kvm_collector *k)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = KVM_TAG_LISTEN};
	epoll_ctl(k->epfd, EPOLL_CTL_ADD, k->listenfd, &ev);
}

int kvm_handover_start(struct kvm_collector *k)
{
	bool running = false;

	pthread_mutex_lock(&registry_lock);
	struct kvm_collector **p = &registry;
	for (; *p; p = &(*p)->reg_next)
		running |= strcmp((*p)->handover_path, k->handover_path) == 0;
	*p = k;
	if (!running) {
		/* Anyone may connect; the peer's credentials decide. */
		k->listenfd =
		    unixsock_listen(k->handover_path, SOCK_SEQPACKET, 0666, 64, &k->sockid);
		if (k->listenfd >= 0)
			watch_listener(k);
	}
	pthread_mutex_unlock(&registry_lock);
	return running ? 0 : k->listenfd < 0 ? k->listenfd : 0;
}

static size_t conns_of_uid(const struct kvm_collector *k, uid_t uid)
{
	size_t n = 0;
	for (size_t i = 0; i < KVM_HANDOVER_CONNS_MAX; i++)
		n += k->conns[i].fd >= 0 && k->conns[i].peer.uid == uid;
	return n;
}

static int add_conn(struct kvm_collector *k, int fd, const struct kvm_handover_peer *peer,
		    uint64_t now)
{
	size_t slot = 0;
	while (slot < KVM_HANDOVER_CONNS_MAX && k->conns[slot].fd >= 0)
		slot++;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = KVM_TAG_CONN | slot};
	if (slot == KVM_HANDOVER_CONNS_MAX || epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -ENOSPC;
	k->conns[slot] = (struct kvm_conn){fd, *peer, now};
	return 0;
}

void kvm_handover_accept(struct kvm_collector *k)
{
	int fd;

	while ((fd = accept4(k->listenfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct kvm_handover_peer peer;
		const char *why = NULL;
		if (kvm_handover_peer(fd, k->allow_uid, k->nallow_uid, k->allow_gid, k->nallow_gid,
				      &peer) < 0)
			why = "handover_refused";
		else if (conns_of_uid(k, peer.uid) >= KVM_HANDOVER_CONNS_PER_UID)
			why = "handover_too_many_from_uid";
		else if (add_conn(k, fd, &peer, monoclock_ns()) < 0)
			why = "handover_too_many_peers";
		if (why) {
			drop_locked(k, why);
			close(fd);
		}
	}
}

static void close_conn(struct kvm_conn *c)
{
	close(c->fd); /* leaves the epoll set with it */
	c->fd = -1;
}

/* Why a received fd cannot be taken (checked with no lock held), or NULL. */
static const char *refuse_fd(struct kvm_collector *k, const struct kvm_conn *c, int fd,
			     const struct kvm_handover_msg *m, pid_t pid)
{
	int kind;
	if (kvm_statsfd_identify(fd, &kind) < 0)
		return "handover_not_kvm_stats";
	if (kind != m->vcpu)
		return "handover_vcpu_mismatch";
	if (!kvm_handover_may_name(k->proc, &c->peer, pid))
		return "handover_pid_refused";
	return NULL;
}

/* Takes one checked fd into the set, within the caps; the caller holds k->lock. */
static void take_fd(struct kvm_collector *k, pid_t pid, pid_t from, int fd, int vcpu,
		    const struct kvm_identity *ident)
{
	if (k->set.nhandover_fds >= k->handover_max_fds ||
	    kvm_vmset_fds_from(&k->set, from) >= k->handover_max_fds_per_peer) {
		kvm_watcher_drop(k, "handover_fd_limit");
		close(fd);
		return;
	}
	/* The VMM is watched like a discovered one: its exit closes the fd. */
	if (kvm_pidfd_of(k, pid) < 0) {
		kvm_watcher_drop(k, "handover_bad_pid");
		close(fd);
		return;
	}
	if (kvm_vmset_add(&k->set, pid, from, fd, -1, vcpu, ident, NULL, kvm_watcher_drop, k) < 0)
		kvm_watch_release(k, pid); /* a refused fd keeps no watch of its own */
	else
		k->hostview_due = true;
}

void kvm_handover_read(struct kvm_collector *k, struct kvm_conn *c)
{
	struct kvm_handover_msg m;
	int fd, rc;

	while (c->fd >= 0 && (rc = kvm_handover_recv(c->fd, &m, &fd)) != 0) {
		if (rc == -EPIPE) {
			close_conn(c);
			return;
		}
		c->last_ns = monoclock_ns();
		if (rc < 0) {
			drop_locked(k, "handover_malformed");
			continue;
		}
		pid_t pid = m.pid ? m.pid : c->peer.pid;
		const char *why = refuse_fd(k, c, fd, &m, pid);
		if (why) {
			drop_locked(k, why);
			close(fd);
			continue;
		}
		pthread_mutex_lock(&k->lock);
		take_fd(k, pid, c->peer.pid, fd, m.vcpu, &m.ident);
		pthread_mutex_unlock(&k->lock);
	}
}

int kvm_handover_idle(struct kvm_collector *k)
{
	uint64_t now = monoclock_ns(), next = UINT64_MAX;

	for (size_t i = 0; i < KVM_HANDOVER_CONNS_MAX; i++) {
		struct kvm_conn *c = &k->conns[i];
		if (c->fd < 0)
			continue;
		uint64_t due = c->last_ns + (uint64_t)(k->handover_idle_s * 1e9);
		if (due <= now) {
			drop_locked(k, "handover_idle_closed");
			close_conn(c);
		} else if (due < next) {
			next = due;
		}
	}
	return next == UINT64_MAX ? -1 : (int)((next - now) / 1000000u + 1);
}

/* ---- across a reload ---- */

static void gift_fd(void *ctx, const struct kvm_vm *vm, int fd, int vcpu)
{
	struct kvm_handover_gift *g = ctx;
	struct kvm_handed_fd f = {vm->pid, vm->from, fd, vcpu, vm->ident};

	if (growarr_push(&g->fds, &f) < 0)
		close(fd); /* that VM is lost, the rest carries on */
}

static void adopt_gift(struct kvm_collector *k, struct kvm_handover_gift *g)
{
	k->listenfd = g->listenfd;
	k->sockid = g->sockid;
	watch_listener(k);
	uint64_t now = monoclock_ns();
	for (size_t i = 0; i < KVM_HANDOVER_CONNS_MAX; i++) {
		struct kvm_conn *c = &g->conns[i];
		struct kvm_handover_peer peer;
		/* The new allow-lists apply to connections already open too. */
		if (c->fd >= 0 && (kvm_handover_peer(c->fd, k->allow_uid, k->nallow_uid,
						     k->allow_gid, k->nallow_gid, &peer) < 0 ||
				   add_conn(k, c->fd, &peer, now) < 0))
			close(c->fd);
	}
	pthread_mutex_lock(&k->lock);
	const struct kvm_handed_fd *fds = g->fds.p;
	for (size_t i = 0; i < g->fds.n; i++)
		take_fd(k, fds[i].pid, fds[i].from, fds[i].fd, fds[i].vcpu, &fds[i].ident);
	pthread_mutex_unlock(&k->lock);
	growarr_free(&g->fds);
	free(g);
}

void kvm_handover_adopt(struct kvm_collector *k)
{
	pthread_mutex_lock(&registry_lock);
	struct kvm_handover_gift *g = k->gift;
	k->gift = NULL;
	pthread_mutex_unlock(&registry_lock);
	if (g)
		adopt_gift(k, g);
}

static struct kvm_handover_gift *make_gift(struct kvm_collector *k)
{
	struct kvm_handover_gift *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	growarr_init(&g->fds, sizeof(struct kvm_handed_fd), KVM_HANDOVER_FDS_MAX);
	g->listenfd = k->listenfd;
	g->sockid = k->sockid;
	memcpy(g->conns, k->conns, sizeof(g->conns));
	kvm_vmset_release_handed(&k->set, gift_fd, g);
	k->listenfd = -1;
	for (size_t i = 0; i < KVM_HANDOVER_CONNS_MAX; i++)
		k->conns[i].fd = -1;
	return g;
}

void kvm_handover_stop(struct kvm_collector *k)
{
	uint64_t one = 1;

	/* All under the registry lock: no reload may bind the path, and no
	 * gift may arrive, between leaving the chain and passing things on. */
	pthread_mutex_lock(&registry_lock);
	struct kvm_collector **p = &registry;
	while (*p && *p != k)
		p = &(*p)->reg_next;
	if (!*p) {
		pthread_mutex_unlock(&registry_lock);
		return; /* never started */
	}
	*p = k->reg_next;
	if (k->gift) { /* it came after the watcher stopped: ours to pass on */
		adopt_gift(k, k->gift);
		k->gift = NULL;
	}
	struct kvm_collector *heir = NULL;
	for (struct kvm_collector *n = registry; n && k->listenfd >= 0 && !heir; n = n->reg_next)
		if (strcmp(n->handover_path, k->handover_path) == 0)
			heir = n; /* the oldest after us */
	if (heir && (heir->gift = make_gift(k)) != NULL) {
		/* Its watcher adopts at once; failing the wake-up, its stop does. */
		ssize_t w = write(heir->wakefd, &one, sizeof(one));
		(void)w;
	}
	pthread_mutex_unlock(&registry_lock);
	for (size_t i = 0; i < KVM_HANDOVER_CONNS_MAX; i++)
		if (k->conns[i].fd >= 0)
			close_conn(&k->conns[i]);
	if (k->listenfd >= 0) {
		close(k->listenfd);
		unixsock_unlink(k->handover_path, &k->sockid);
	}
}
