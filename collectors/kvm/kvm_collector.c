/* The KVM collector plugin: configuration, the watcher thread that keeps the
 * set of held stats fds current, and collect, which only reads and writes.
 *
 * The watcher learns of new VMs from KVM's uevents and scans just that
 * process; a full /proc walk runs at start and every rescan_interval as the
 * safety net. It watches every VMM with a pidfd and closes that VMM's fds
 * the moment it exits, so a dead VM's memory is never kept pinned. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <binstat/collector.h>

#include "kvm_attach.h"
#include "kvm_discover.h"
#include "kvm_emit.h"
#include "kvm_handover.h"
#include "kvm_uevent.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define PENDING_MAX 256
#define WATCH_MAX 65536
#define WDROPS_MAX 16
#define HANDOVER_CONNS_MAX 64
#define HANDOVER_IDS_MAX 64

/* epoll tags besides VMM pids */
#define TAG_STOP UINT64_MAX
#define TAG_UEVENT (UINT64_MAX - 1)
#define TAG_LISTEN (UINT64_MAX - 2)
#define TAG_CONN (1ull << 62) /* | the connection's index */

/* After a create event, the process is looked at again at these delays:
 * stats fds appear when the VMM (or the shim) opens them, not at once. */
static const unsigned pending_delays_ms[] = {20, 200, 1000, 5000, 30000};
#define PENDING_TRIES (sizeof(pending_delays_ms) / sizeof(pending_delays_ms[0]))

struct pending {
	pid_t tid;
	unsigned tries;
	uint64_t due_ns;
};

struct watch {
	pid_t pid;
	int pidfd;
};

struct conn {
	int fd; /* -1: a free slot */
	pid_t peer;
};

struct kvm_collector {
	const struct bs_host *host;
	pthread_mutex_t lock; /* everything below */
	struct kvm_vmset set;
	enum kvm_mode mode;
	struct kvm_filter stats, vms;
	const char *proc;
	double rescan_s;
	bool passive;
	bool attach; /* inject KVM_GET_STATS_FD into stock VMMs (ptrace) */
	bool attach_eperm_logged;

	pthread_t thread;
	bool thread_started;
	int epfd, stopfd, ueventfd;
	struct watch *watch;
	size_t nwatch, capwatch;
	struct pending pending[PENDING_MAX];
	size_t npending;
	uint64_t next_rescan_ns;
	bool eperm_logged;
	/* the hand-over socket: off when no path is configured */
	const char *handover_path;
	int listenfd;
	uint64_t allow_uid[HANDOVER_IDS_MAX], allow_gid[HANDOVER_IDS_MAX];
	size_t nallow_uid, nallow_gid;
	struct conn conns[HANDOVER_CONNS_MAX];
	/* drops found between scrapes, reported by the next collect */
	struct {
		const char *reason;
		uint64_t n;
	} wdrops[WDROPS_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Reasons are string literals from the parser, so pointers compare. */
static void watcher_drop(void *ctx, const char *reason)
{
	struct kvm_collector *k = ctx;
	for (size_t i = 0; i < WDROPS_MAX; i++) {
		if (!k->wdrops[i].reason || k->wdrops[i].reason == reason ||
		    strcmp(k->wdrops[i].reason, reason) == 0) {
			k->wdrops[i].reason = reason;
			k->wdrops[i].n++;
			return;
		}
	}
}

/* ---- pidfds of the VMMs ---- */

static int pidfd_of(void *ctx, pid_t pid)
{
	struct kvm_collector *k = ctx;

	for (size_t i = 0; i < k->nwatch; i++)
		if (k->watch[i].pid == pid)
			return k->watch[i].pidfd;
	if (k->nwatch >= WATCH_MAX)
		return -ENOSPC;
	if (k->nwatch == k->capwatch) {
		size_t cap = k->capwatch ? k->capwatch * 2 : 64;
		struct watch *w = realloc(k->watch, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		k->watch = w;
		k->capwatch = cap;
	}
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)pid};
	if (k->epfd >= 0 && epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return -errno;
	}
	k->watch[k->nwatch++] = (struct watch){pid, fd};
	return fd;
}

static void unwatch(struct kvm_collector *k, pid_t pid)
{
	for (size_t i = 0; i < k->nwatch; i++) {
		if (k->watch[i].pid != pid)
			continue;
		close(k->watch[i].pidfd); /* leaves the epoll set with it */
		k->watch[i] = k->watch[--k->nwatch];
		return;
	}
}

static bool holds_pid(const struct kvm_collector *k, pid_t pid)
{
	for (size_t i = 0; i < k->set.n; i++)
		if (k->set.vm[i]->pid == pid)
			return true;
	return false;
}

/* ---- scanning (callers hold no lock; each process is scanned under it) ---- */

/* Attach mode, before a look at a process: outside the lock, since ptrace
 * takes its time and scrapes must not wait on it. */
static void attach_pid(struct kvm_collector *k, pid_t pid)
{
	char n[16], p[16];
	int rc = kvm_attach_pid(k->proc, pid);

	snprintf(p, sizeof(p), "%d", (int)pid);
	if (rc > 0) {
		snprintf(n, sizeof(n), "%d", rc);
		k->host->log(BS_LOG_INFO, "kvm", "attached: the VMM opened its stats fds", "pid", p,
			     "fds", n, (char *)NULL);
	} else if (rc == -EPERM && !k->attach_eperm_logged) {
		k->host->log(BS_LOG_ERROR, "kvm", "attach refused: ptrace needs CAP_SYS_PTRACE",
			     "pid", p, (char *)NULL);
		k->attach_eperm_logged = true;
	}
}

static int scan_pid(void *ctx, pid_t pid)
{
	struct kvm_collector *k = ctx;

	if (k->attach && pid != getpid())
		attach_pid(k, pid);
	pthread_mutex_lock(&k->lock);
	int rc = kvm_discover_pid(&k->set, k->proc, pid, pidfd_of, watcher_drop, k);
	if (!holds_pid(k, pid))
		unwatch(k, pid);
	if (rc == -EPERM && !k->eperm_logged) {
		k->host->log(BS_LOG_ERROR, "kvm",
			     "cannot copy stats fds from VMM processes: pidfd_getfd needs "
			     "CAP_SYS_PTRACE (or use the hand-over socket)",
			     "pid", "", (char *)NULL);
		k->eperm_logged = true;
	}
	pthread_mutex_unlock(&k->lock);
	return rc;
}

static void full_scan(struct kvm_collector *k)
{
	kvm_discover_all(k->proc, scan_pid, k);
	k->next_rescan_ns = now_ns() + (uint64_t)(k->rescan_s * 1e9);
}

static void vmm_exited(struct kvm_collector *k, pid_t pid)
{
	pthread_mutex_lock(&k->lock);
	kvm_vmset_remove_pid(&k->set, pid);
	unwatch(k, pid);
	pthread_mutex_unlock(&k->lock);
}

static void add_pending(struct kvm_collector *k, pid_t tid)
{
	if (k->npending == PENDING_MAX) {
		k->next_rescan_ns = now_ns(); /* too many at once: walk everything */
		return;
	}
	k->pending[k->npending++] = (struct pending){tid, 0, now_ns() + 20000000u};
}

static void run_pending(struct kvm_collector *k)
{
	uint64_t now = now_ns();

	for (size_t i = 0; i < k->npending;) {
		struct pending *p = &k->pending[i];
		if (p->due_ns > now) {
			i++;
			continue;
		}
		pid_t tgid = kvm_tgid_of(k->proc, p->tid);
		if (tgid > 0)
			scan_pid(k, tgid);
		else if (k->next_rescan_ns > now + 1000000000u)
			k->next_rescan_ns =
			    now + 1000000000u; /* the thread is gone: look everywhere, soon */
		if (tgid <= 0 || ++p->tries == PENDING_TRIES) {
			*p = k->pending[--k->npending];
			continue;
		}
		p->due_ns = now + pending_delays_ms[p->tries] * 1000000ull;
		i++;
	}
}

static void read_uevents(struct kvm_collector *k)
{
	pid_t pid;
	int ev;

	while ((ev = kvm_uevent_recv(k->ueventfd, &pid)) != -EAGAIN) {
		if (ev == -ENOBUFS)
			k->next_rescan_ns = now_ns();
		else if (ev == KVM_UEVENT_CREATE)
			add_pending(k, pid);
	}
}

/* ---- the hand-over socket ---- */

static bool allowed(const uint64_t *list, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

static void handover_accept(struct kvm_collector *k)
{
	int fd;

	while ((fd = accept4(k->listenfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		size_t slot = 0;
		while (slot < HANDOVER_CONNS_MAX && k->conns[slot].fd >= 0)
			slot++;
		bool ok = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
			  (allowed(k->allow_uid, k->nallow_uid, cred.uid) ||
			   allowed(k->allow_gid, k->nallow_gid, cred.gid));
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_CONN | slot};
		if (!ok || slot == HANDOVER_CONNS_MAX ||
		    epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			pthread_mutex_lock(&k->lock);
			watcher_drop(k, ok ? "handover_too_many_peers" : "handover_refused");
			pthread_mutex_unlock(&k->lock);
			close(fd);
			continue;
		}
		k->conns[slot] = (struct conn){fd, cred.pid};
	}
}

/* Takes every message waiting on a connection; closes it at its end. */
static void handover_read(struct kvm_collector *k, struct conn *c)
{
	struct kvm_handover_msg m;
	int fd, rc;

	while ((rc = kvm_handover_recv(c->fd, &m, &fd)) != 0) {
		if (rc == -EPIPE) {
			close(c->fd); /* leaves the epoll set with it */
			c->fd = -1;
			return;
		}
		pthread_mutex_lock(&k->lock);
		if (rc < 0) {
			watcher_drop(k, "handover_malformed");
		} else {
			pid_t pid = m.pid ? m.pid : c->peer;
			/* The VMM is watched like a discovered one: its exit closes the fd. */
			if (pidfd_of(k, pid) < 0) {
				watcher_drop(k, "handover_bad_pid");
				close(fd);
			} else {
				kvm_vmset_add(&k->set, pid, fd, -1, m.vcpu, &m.ident, watcher_drop,
					      k);
			}
		}
		pthread_mutex_unlock(&k->lock);
	}
}

static int next_timeout_ms(const struct kvm_collector *k)
{
	uint64_t now = now_ns(), next = k->next_rescan_ns;
	for (size_t i = 0; i < k->npending; i++)
		next = k->pending[i].due_ns < next ? k->pending[i].due_ns : next;
	return next <= now ? 0 : (int)((next - now) / 1000000u + 1);
}

static void *watcher(void *arg)
{
	struct kvm_collector *k = arg;
	struct epoll_event ev[32];

	for (;;) {
		int n = epoll_wait(k->epfd, ev, 32, next_timeout_ms(k));
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			if (tag == TAG_STOP)
				return NULL;
			if (tag == TAG_UEVENT)
				read_uevents(k);
			else if (tag == TAG_LISTEN)
				handover_accept(k);
			else if (tag & TAG_CONN)
				handover_read(k, &k->conns[tag & ~TAG_CONN]);
			else
				vmm_exited(k, (pid_t)tag);
		}
		run_pending(k);
		if (now_ns() >= k->next_rescan_ns)
			full_scan(k);
	}
}

/* ---- configuration ---- */

static int read_patterns(const struct bs_conf *node, const char *key, const char **out, size_t *n)
{
	const struct bs_conf *list = node ? node->ops->child(node, key) : NULL;
	if (!list)
		return 0;
	if (list->ops->kind(list) != BS_CONF_SEQ || list->ops->length(list) > KVM_PATTERNS_MAX)
		return list->ops->error(list, "must be a list of at most 64 glob patterns");
	for (size_t i = 0; i < list->ops->length(list); i++) {
		const char *s = list->ops->scalar(list->ops->item(list, i));
		if (!s)
			return list->ops->error(list, "patterns must be strings");
		out[(*n)++] = s;
	}
	return 0;
}

static int read_filter(const struct bs_conf *conf, const char *key, struct kvm_filter *f)
{
	const struct bs_conf *node = conf->ops->child(conf, key);
	if (node && node->ops->kind(node) != BS_CONF_MAP)
		return node->ops->error(node, "must be a mapping with include and exclude lists");
	if (read_patterns(node, "include", f->include, &f->ninclude) < 0 ||
	    read_patterns(node, "exclude", f->exclude, &f->nexclude) < 0)
		return -EINVAL;
	return 0;
}

static int read_ids(const struct bs_conf *node, const char *key, uint64_t *out, size_t *n)
{
	const struct bs_conf *list = node->ops->child(node, key);
	char *end;
	if (!list)
		return 0;
	if (list->ops->kind(list) != BS_CONF_SEQ || list->ops->length(list) > HANDOVER_IDS_MAX)
		return list->ops->error(list, "must be a list of at most 64 numeric ids");
	for (size_t i = 0; i < list->ops->length(list); i++) {
		const char *s = list->ops->scalar(list->ops->item(list, i));
		unsigned long v = s ? strtoul(s, &end, 10) : 0;
		if (!s || !*s || *end || v > 0xFFFFFFFFul)
			return list->ops->error(list, "ids must be numbers");
		out[(*n)++] = v;
	}
	return 0;
}

static int read_handover(struct kvm_collector *k, const struct bs_conf *conf)
{
	const struct bs_conf *h = conf->ops->child(conf, "handover");
	if (!h)
		return 0;
	if (h->ops->kind(h) != BS_CONF_MAP)
		return h->ops->error(h,
				     "handover must be a mapping (socket, allow_uids, allow_gids)");
	if (h->ops->get_str(h, "socket", &k->handover_path) < 0)
		return h->ops->error(h, "handover needs a socket path");
	if (read_ids(h, "allow_uids", k->allow_uid, &k->nallow_uid) < 0 ||
	    read_ids(h, "allow_gids", k->allow_gid, &k->nallow_gid) < 0)
		return -EINVAL;
	if (k->nallow_uid + k->nallow_gid == 0)
		return h->ops->error(h, "handover needs allow_uids or allow_gids");
	return 0;
}

static int read_config(struct kvm_collector *k, const struct bs_conf *conf)
{
	const struct bs_conf_ops *c = conf->ops;
	const char *mode = "per_vm";
	uint64_t max_vms = 4096, max_vcpus = 1024;

	k->proc = "/proc";
	k->rescan_s = 60;
	k->passive = true;
	if (c->get_str(conf, "mode", &mode) == -EINVAL ||
	    c->get_f64(conf, "rescan_interval_seconds", 1, 86400, &k->rescan_s) == -EINVAL ||
	    c->get_bool(conf, "passive", &k->passive) == -EINVAL ||
	    c->get_bool(conf, "attach", &k->attach) == -EINVAL ||
	    c->get_str(conf, "proc", &k->proc) == -EINVAL ||
	    c->get_u64(conf, "max_vms", 1, 1000000, &max_vms) == -EINVAL ||
	    c->get_u64(conf, "max_vcpus_per_vm", 1, 4096, &max_vcpus) == -EINVAL ||
	    read_filter(conf, "stats", &k->stats) < 0 || read_filter(conf, "vms", &k->vms) < 0 ||
	    read_handover(k, conf) < 0)
		return -EINVAL;
	if (strcmp(mode, "per_vm") == 0)
		k->mode = KVM_PER_VM;
	else if (strcmp(mode, "per_vcpu") == 0)
		k->mode = KVM_PER_VCPU;
	else
		return c->error(c->child(conf, "mode"), "mode must be per_vm or per_vcpu");
	k->set.max_vms = max_vms;
	k->set.max_vcpus = max_vcpus;
	return 0;
}

/* ---- the plugin ---- */

static void kvm_shutdown(void *state);

/* The watcher's fds exist before the first scan (it registers pidfds, and
 * uevents arriving meanwhile are queued); its thread starts after it. */
static int open_watch_fds(struct kvm_collector *k)
{
	struct epoll_event stop = {.events = EPOLLIN, .data.u64 = TAG_STOP};
	struct epoll_event uev = {.events = EPOLLIN, .data.u64 = TAG_UEVENT};

	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	k->stopfd = eventfd(0, EFD_CLOEXEC);
	if (k->epfd < 0 || k->stopfd < 0 || epoll_ctl(k->epfd, EPOLL_CTL_ADD, k->stopfd, &stop) < 0)
		return -errno;
	k->ueventfd = kvm_uevent_open();
	if (k->ueventfd >= 0)
		epoll_ctl(k->epfd, EPOLL_CTL_ADD, k->ueventfd, &uev);
	else
		k->host->log(BS_LOG_WARN, "kvm", "no uevents: new VMs appear at the next rescan",
			     "err", strerror(-k->ueventfd), (char *)NULL);
	if (k->handover_path) {
		struct epoll_event lev = {.events = EPOLLIN, .data.u64 = TAG_LISTEN};
		/* Anyone may connect; SO_PEERCRED against the allow-list decides. */
		k->listenfd = kvm_handover_listen(k->handover_path, 0666);
		if (k->listenfd < 0) {
			k->host->log(BS_LOG_ERROR, "kvm", "cannot listen for hand-over", "path",
				     k->handover_path, "err", strerror(-k->listenfd), (char *)NULL);
			return k->listenfd;
		}
		epoll_ctl(k->epfd, EPOLL_CTL_ADD, k->listenfd, &lev);
	}
	return 0;
}

static int kvm_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	struct kvm_collector *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	k->host = host;
	k->epfd = k->stopfd = k->ueventfd = k->listenfd = -1;
	for (size_t i = 0; i < HANDOVER_CONNS_MAX; i++)
		k->conns[i].fd = -1;
	pthread_mutex_init(&k->lock, NULL);
	if ((rc = read_config(k, conf)) < 0)
		goto fail;
	if ((rc = open_watch_fds(k)) < 0)
		goto fail;
	/* The first walk happens now, so the first scrape sees the VMs; it
	 * also sets when the watcher walks next. */
	if (k->passive || k->attach)
		full_scan(k);
	else
		k->next_rescan_ns = UINT64_MAX;
	if (pthread_create(&k->thread, NULL, watcher, k) != 0) {
		rc = -EAGAIN;
		goto fail;
	}
	k->thread_started = true;
	*state = k;
	return 0;
fail:
	kvm_shutdown(k);
	return rc;
}

static void collect_totals(struct kvm_collector *k, struct bs_emitter *em)
{
	bs_family(em, "kvm_collector_vms", BS_GAUGE, NULL,
		  "VMs whose stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.n);
	bs_family(em, "kvm_collector_stats_fds", BS_GAUGE, NULL, "Stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.nfds);
}

static int kvm_collect(void *state, struct bs_emitter *em)
{
	struct kvm_collector *k = state;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < WDROPS_MAX && k->wdrops[i].reason; i++) {
		bs_drop(em, k->wdrops[i].reason, k->wdrops[i].n);
		k->wdrops[i].reason = NULL;
		k->wdrops[i].n = 0;
	}
	kvm_read_all(&k->set, &k->vms, em);
	kvm_emit(em, &k->set, k->mode, &k->stats);
	collect_totals(k, em);
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static void kvm_shutdown(void *state)
{
	struct kvm_collector *k = state;
	uint64_t one = 1;

	if (k->thread_started) {
		if (write(k->stopfd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(k->thread);
		pthread_join(k->thread, NULL);
	}
	kvm_vmset_free(&k->set);
	for (size_t i = 0; i < k->nwatch; i++)
		close(k->watch[i].pidfd);
	free(k->watch);
	if (k->epfd >= 0)
		close(k->epfd);
	if (k->stopfd >= 0)
		close(k->stopfd);
	if (k->ueventfd >= 0)
		close(k->ueventfd);
	for (size_t i = 0; i < HANDOVER_CONNS_MAX; i++)
		if (k->conns[i].fd >= 0)
			close(k->conns[i].fd);
	if (k->listenfd >= 0) {
		close(k->listenfd);
		unlink(k->handover_path);
	}
	pthread_mutex_destroy(&k->lock);
	free(k);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_kvm = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "kvm",
    .description = "KVM VM and vCPU statistics from binary stats fds",
    .init = kvm_init,
    .collect = kvm_collect,
    .shutdown = kvm_shutdown,
};
