/* The hand-over server: accepts allowed peers (a few per uid, each closed
 * when idle), checks every fd and every claim a peer makes, and keeps its
 * socket and what was handed over across a reload.
 *
 * A connection that has handed over fds the set still holds stays open
 * while it is silent (a sender keeps it to learn of the exporter's end,
 * and sends again after a restart: README.md, "Hand-over socket"); any
 * other is closed after idle_timeout. The small per-uid and overall caps
 * hold for connections that have sent no fd the set kept; a sender's
 * connection counts against senders_cap instead (handover.max_vms, bounded
 * by RLIMIT_NOFILE), since one VMM keeps one for its whole life and one uid
 * (libvirt-qemu) may run every VM of the host.
 *
 * Trust: a peer is allowed by uid or group. What it sends must be a stats
 * fd KVM made (kvm_statsfd_identify), of the kind its message claims; it
 * may name as the VMM only itself, or a process it could ptrace (same uids,
 * or root). The collector's take (kvm_watch.c) then holds it to its
 * caps: its fds only ever form VMs of their own, never joining discovered
 * VMs or another peer's; and it may hold at most max_fds_per_peer fds, all
 * peers max_fds, in at most handover.max_vms VMs, apart from the room
 * discovery has. */
#include "kvm_handover_serve.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kvm_nostats.h"
#include "kvm_procfd.h"
#include "growarr.h"
#include "monoclock.h"

/* What one generation passes the next at a reload. */
struct kvm_handover_gift {
	int listenfd;
	struct unixsock_id sockid;
	struct growarr conns; /* of struct kvm_conn, moved from the server */
	struct growarr fds;   /* of struct kvm_handed_fd */
};

/* Every server with a socket path, oldest first. Process-wide, and it must
 * be: at a reload the daemon makes the next generation's collector (its
 * init) while this one still runs and serves, and the plugin ABI gives the
 * two no handle on each other. So that the socket is never unbound and no
 * peer's connection or handed fd is lost, the old server finds its heir
 * here by path and passes them on when it stops (kvm_handover_stop). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kvm_handover_server *registry;

size_t kvm_handover_senders_cap(size_t max_senders, unsigned long long nofile)
{
	unsigned long long room = nofile / 4;
	return room < max_senders ? (size_t)room : max_senders;
}

void kvm_handover_init(struct kvm_handover_server *s)
{
	*s = (struct kvm_handover_server){.epfd = -1, .wakefd = -1, .listenfd = -1};
	growarr_init(&s->conns, sizeof(struct kvm_conn), KVM_HANDOVER_CONNS_MAX);
}

static void drop(struct kvm_handover_server *s, const char *reason)
{
	s->host.drop(s->host.ctx, reason);
}

static void watch_listener(struct kvm_handover_server *s)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = KVM_TAG_LISTEN};
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listenfd, &ev);
}

int kvm_handover_start(struct kvm_handover_server *s, const struct kvm_handover_host *host,
		       int epfd, int wakefd)
{
	bool running = false;
	struct rlimit nofile;

	s->senders_cap = kvm_handover_senders_cap(
	    s->max_senders, getrlimit(RLIMIT_NOFILE, &nofile) == 0 ? nofile.rlim_cur : 1024);
	s->conns.max = KVM_HANDOVER_CONNS_MAX + s->senders_cap;
	s->host = *host;
	s->epfd = epfd;
	s->wakefd = wakefd;
	pthread_mutex_lock(&registry_lock);
	struct kvm_handover_server **p = &registry;
	for (; *p; p = &(*p)->reg_next)
		running |= strcmp((*p)->path, s->path) == 0;
	*p = s;
	s->inherited = running;
	if (!running) {
		/* Anyone may connect; the peer's credentials decide. */
		s->listenfd = unixsock_listen(s->path, SOCK_SEQPACKET, 0666, 64, &s->sockid);
		if (s->listenfd >= 0)
			watch_listener(s);
	}
	pthread_mutex_unlock(&registry_lock);
	return running ? 0 : s->listenfd < 0 ? s->listenfd : 0;
}

/* Open connections that have not handed over a kept fd: of `uid`, or of
 * any uid when `any`. */
static size_t waiting_conns(const struct kvm_handover_server *s, bool any, uid_t uid)
{
	size_t n = 0;
	for (size_t i = 0; i < s->conns.n; i++)
		n += s->conn[i].fd >= 0 && !s->conn[i].sent_fds &&
		     (any || s->conn[i].peer.uid == uid);
	return n;
}

static size_t sender_conns(const struct kvm_handover_server *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->conns.n; i++)
		n += s->conn[i].fd >= 0 && s->conn[i].sent_fds;
	return n;
}

/* Whether connection `c`, whose fd the set did not take, resent what the
 * set holds from its process already (a sender that reconnected while its
 * old connection was closed): then it is that process's one sender. */
static bool resent(const struct kvm_handover_server *s, const struct kvm_conn *c)
{
	for (size_t i = 0; i < s->conns.n; i++)
		if (s->conn[i].fd >= 0 && s->conn[i].sent_fds && s->conn[i].peer.pid == c->peer.pid)
			return false;
	return s->host.holds(s->host.ctx, c->peer.pid);
}

/* The connection's slot, or -ENOSPC. */
static int add_conn(struct kvm_handover_server *s, int fd, const struct kvm_handover_peer *peer,
		    uint64_t now, bool sent_fds)
{
	size_t slot = 0;
	while (slot < s->conns.n && s->conn[slot].fd >= 0)
		slot++;
	if (slot == s->conns.n && growarr_room(&s->conns, 1) < 0)
		return -ENOSPC;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = KVM_TAG_CONN | slot};
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -ENOSPC;
	s->conn[slot] =
	    (struct kvm_conn){fd, *peer, now, sent_fds, false, KVM_HANDOVER_REPORTS_BURST, now};
	if (slot == s->conns.n)
		s->conns.n++;
	return (int)slot;
}

/* Publishes the number of senders from each connection's `held`. */
static void sum_senders(struct kvm_handover_server *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->conns.n; i++)
		n += s->conn[i].fd >= 0 && s->conn[i].held;
	__atomic_store_n(&s->senders, n, __ATOMIC_RELAXED);
}

static void look_held(struct kvm_handover_server *s, struct kvm_conn *c)
{
	c->held = c->fd >= 0 && c->sent_fds && s->host.holds(s->host.ctx, c->peer.pid);
}

/* Counts the senders again, every connection looked at (each look walks
 * the set): at an idle check and an adoption, not at every message. */
static void count_senders(struct kvm_handover_server *s)
{
	for (size_t i = 0; i < s->conns.n; i++)
		look_held(s, &s->conn[i]);
	sum_senders(s);
}

size_t kvm_handover_senders(const struct kvm_handover_server *s)
{
	return __atomic_load_n(&s->senders, __ATOMIC_RELAXED);
}

/* The peer's credentials, if the allow-lists let it in. */
static int allowed_peer(const struct kvm_handover_server *s, int fd, struct kvm_handover_peer *peer)
{
	return kvm_handover_peer(fd, s->allow_uid, s->nallow_uid, s->allow_gid, s->nallow_gid,
				 peer);
}

/* Listens again, or rests: a connection the exporter has no fd for stays
 * in the backlog, and the listener would wake the watcher at once, for
 * ever (epoll is level-triggered). */
static void listener_rest(struct kvm_handover_server *s, bool rest)
{
	struct epoll_event ev = {.events = rest ? 0 : EPOLLIN, .data.u64 = KVM_TAG_LISTEN};

	s->listen_paused_until =
	    rest ? monoclock_ns() + KVM_HANDOVER_NOFD_PAUSE_MS * 1000000ull : 0;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->listenfd, &ev);
}

void kvm_handover_accept(struct kvm_handover_server *s)
{
	int fd;

	while ((fd = accept4(s->listenfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0 ||
	       errno == EINTR || errno == ECONNABORTED) {
		if (fd < 0)
			continue;
		struct kvm_handover_peer peer;
		const char *why = NULL;
		if (allowed_peer(s, fd, &peer) < 0)
			why = "handover_refused";
		else if (waiting_conns(s, false, peer.uid) >= KVM_HANDOVER_CONNS_PER_UID)
			why = "handover_too_many_from_uid";
		else if (waiting_conns(s, true, 0) >= KVM_HANDOVER_CONNS_MAX ||
			 add_conn(s, fd, &peer, monoclock_ns(), false) < 0)
			why = "handover_too_many_peers";
		if (why) {
			drop(s, why);
			close(fd);
		}
	}
	if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
		drop(s, errno == EMFILE || errno == ENFILE ? "handover_no_fds" : "out_of_memory");
		listener_rest(s, true);
	}
}

static void close_conn(struct kvm_conn *c)
{
	close(c->fd); /* leaves the epoll set with it */
	c->fd = -1;
}

/* Whether the connection may send one more report of a stats fd not made:
 * its budget is topped up at KVM_HANDOVER_REPORTS_PER_S, to the burst. */
static bool report_allowed(struct kvm_conn *c, uint64_t now)
{
	double r = c->reports + (double)(now - c->report_ns) / 1e9 * KVM_HANDOVER_REPORTS_PER_S;

	c->report_ns = now;
	c->reports = r > KVM_HANDOVER_REPORTS_BURST ? KVM_HANDOVER_REPORTS_BURST : r;
	if (c->reports < 1)
		return false;
	c->reports -= 1;
	return true;
}

/* Why a received fd cannot be taken (checked with no lock held), or NULL. */
static const char *refuse_fd(const struct kvm_handover_server *s, const struct kvm_conn *c, int fd,
			     const struct kvm_handover_msg *m, pid_t pid)
{
	int kind;
	if (kvm_statsfd_identify(fd, &kind) < 0)
		return "handover_not_kvm_stats";
	if (kind != m->vcpu)
		return "handover_vcpu_mismatch";
	if (!kvm_handover_may_name(s->proc, &c->peer, pid))
		return "handover_pid_refused";
	return NULL;
}

/* Whose the VMM is, for its name (kvm_vmset_trust): its uids now, or the
 * peer's own (as it connected) when the peer is the VMM and its /proc
 * cannot be read. */
static void owner_uids(const struct kvm_handover_server *s, const struct kvm_conn *c,
		       struct kvm_handed_fd *f)
{
	f->ident.uid_known = kvm_proc_uids(s->proc, f->pid, f->ident.uid);
	if (!f->ident.uid_known && f->pid == c->peer.pid) {
		f->ident.uid[0] = f->ident.uid[1] = f->ident.uid[2] = c->peer.uid;
		f->ident.uid_known = true;
	}
}

void kvm_handover_read(struct kvm_handover_server *s, size_t conn)
{
	struct kvm_conn *c = &s->conn[conn];
	struct kvm_handover_msg m;
	int fd, rc;

	while (c->fd >= 0 && (rc = kvm_handover_recv(c->fd, &m, &fd)) != 0) {
		if (rc == -EPIPE) {
			close_conn(c);
			break;
		}
		c->last_ns = monoclock_ns();
		if (rc < 0) {
			drop(s, rc == -EMFILE ? "handover_no_fds" : "handover_malformed");
			continue;
		}
		if (fd < 0 && !report_allowed(c, c->last_ns)) {
			drop(s, "handover_report_flood");
			close_conn(c);
			break;
		}
		if (fd < 0) { /* a stats fd the sender could not get: counted, as ours would be */
			drop(s, kvm_nostats_reason((enum kvm_nostats)m.nostats));
			continue;
		}
		pid_t pid = m.pid ? m.pid : c->peer.pid;
		const char *why = refuse_fd(s, c, fd, &m, pid);
		if (why) {
			drop(s, why);
			close(fd);
			continue;
		}
		if (!c->sent_fds && sender_conns(s) >= s->senders_cap) {
			drop(s, "handover_too_many_senders"); /* it may try again later */
			close(fd);
			continue;
		}
		struct kvm_handed_fd f = {pid, c->peer.pid, fd, m.vcpu, m.ident};
		owner_uids(s, c, &f);
		size_t kept = s->host.take(s->host.ctx, &f, 1);
		if (kept > 0 || (!c->sent_fds && resent(s, c)))
			c->sent_fds = true;
	}
	look_held(s, c); /* this one changed; VMs that went are seen at the idle check */
	sum_senders(s);
}

int kvm_handover_idle(struct kvm_handover_server *s)
{
	uint64_t now = monoclock_ns(), next = UINT64_MAX;

	if (s->listen_paused_until && s->listen_paused_until <= now)
		listener_rest(s, false);
	else if (s->listen_paused_until)
		next = s->listen_paused_until;

	for (size_t i = 0; i < s->conns.n; i++) {
		struct kvm_conn *c = &s->conn[i];
		if (c->fd < 0)
			continue;
		uint64_t due = c->last_ns + (uint64_t)(s->idle_s * 1e9);
		if (due <= now && c->sent_fds && s->host.holds(s->host.ctx, c->peer.pid)) {
			c->last_ns = now; /* a sender's: looked at again an idle time on */
			due = now + (uint64_t)(s->idle_s * 1e9);
		}
		if (due <= now) {
			drop(s, "handover_idle_closed");
			close_conn(c);
		} else if (due < next) {
			next = due;
		}
	}
	count_senders(s);
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

static void adopt_gift(struct kvm_handover_server *s, struct kvm_handover_gift *g)
{
	s->listenfd = g->listenfd;
	s->sockid = g->sockid;
	watch_listener(s);
	uint64_t now = monoclock_ns();
	const struct kvm_conn *old = g->conns.p;
	for (size_t i = 0; i < g->conns.n; i++) {
		const struct kvm_conn *c = &old[i];
		struct kvm_handover_peer peer;
		if (c->fd < 0)
			continue;
		/* The new allow-lists and caps apply to connections already open too. */
		bool room = c->sent_fds ? sender_conns(s) < s->senders_cap
					: waiting_conns(s, true, 0) < KVM_HANDOVER_CONNS_MAX;
		if (!room || allowed_peer(s, c->fd, &peer) < 0 ||
		    add_conn(s, c->fd, &peer, now, c->sent_fds) < 0)
			close(c->fd);
	}
	s->host.take(s->host.ctx, g->fds.p, g->fds.n);
	count_senders(s);
	growarr_free(&g->conns);
	growarr_free(&g->fds);
	free(g);
}

void kvm_handover_adopt(struct kvm_handover_server *s)
{
	pthread_mutex_lock(&registry_lock);
	struct kvm_handover_gift *g = s->gift;
	s->gift = NULL;
	pthread_mutex_unlock(&registry_lock);
	if (g)
		adopt_gift(s, g);
}

static struct kvm_handover_gift *make_gift(struct kvm_handover_server *s)
{
	struct kvm_handover_gift *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	growarr_init(&g->fds, sizeof(struct kvm_handed_fd), KVM_HANDOVER_FDS_MAX);
	g->listenfd = s->listenfd;
	g->sockid = s->sockid;
	g->conns = s->conns; /* moved: the server keeps an empty array */
	growarr_init(&s->conns, sizeof(struct kvm_conn), KVM_HANDOVER_CONNS_MAX);
	s->host.release(s->host.ctx, gift_fd, g);
	s->listenfd = -1;
	return g;
}

void kvm_handover_stop(struct kvm_handover_server *s)
{
	uint64_t one = 1;

	/* All under the registry lock: no reload may bind the path, and no
	 * gift may arrive, between leaving the chain and passing things on. */
	pthread_mutex_lock(&registry_lock);
	struct kvm_handover_server **p = &registry;
	while (*p && *p != s)
		p = &(*p)->reg_next;
	if (!*p) {
		pthread_mutex_unlock(&registry_lock);
		return; /* never started */
	}
	*p = s->reg_next;
	if (s->gift) { /* it came after the watcher stopped: ours to pass on */
		adopt_gift(s, s->gift);
		s->gift = NULL;
	}
	struct kvm_handover_server *heir = NULL;
	for (struct kvm_handover_server *n = registry; n && s->listenfd >= 0 && !heir;
	     n = n->reg_next)
		if (strcmp(n->path, s->path) == 0)
			heir = n; /* the oldest after us */
	if (heir && (heir->gift = make_gift(s)) != NULL) {
		/* Its watcher adopts at once; failing the wake-up, its stop does. */
		ssize_t w = write(heir->wakefd, &one, sizeof(one));
		(void)w;
	}
	pthread_mutex_unlock(&registry_lock);
	for (size_t i = 0; i < s->conns.n; i++)
		if (s->conn[i].fd >= 0)
			close_conn(&s->conn[i]);
	growarr_free(&s->conns);
	if (s->listenfd >= 0) {
		close(s->listenfd);
		unixsock_unlink(s->path, &s->sockid);
	}
}
