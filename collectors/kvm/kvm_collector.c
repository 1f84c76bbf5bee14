/* The KVM collector plugin: configuration, the watcher thread that keeps the
 * set of held stats fds current, and collect, which only reads and writes.
 *
 * The watcher learns of new VMs from KVM's uevents and scans just that
 * process; a full /proc walk runs at start and every rescan_interval as the
 * safety net. It watches every VMM with a pidfd and closes that VMM's fds
 * the moment it exits, so a dead VM's memory is never kept pinned. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <binstat/collector.h>

#include "kvm_attach.h"
#include "kvm_denied.h"
#include "kvm_discover.h"
#include "kvm_emit.h"
#include "kvm_handover_serve.h"
#include "kvm_hostview.h"
#include "kvm_libvirt.h"
#include "kvm_scrape.h"
#include "kvm_uevent.h"
#include "droptab.h"
#include "growarr.h"
#include "monoclock.h"
#include "worker.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define WATCH_MAX 65536
#define PENDING_MAX 256
#define FIRST_SCAN_WAIT_S 2	     /* a scrape waits this long for the first walk */
#define NO_FDS_LOG_NS 60000000000ull /* fds lost for want of fds: said this often at most */

/* epoll tags besides VMM pids and the hand-over server's (kvm_handover_serve.h) */
#define KVM_TAG_STOP UINT64_MAX
#define KVM_TAG_UEVENT (UINT64_MAX - 1)
#define KVM_TAG_WAKE (UINT64_MAX - 3)

/* After a create event, the process is looked at again at these delays:
 * stats fds appear when the VMM (or the shim) opens them, not at once. */
static const unsigned pending_delays_ms[] = {20, 200, 1000, 5000, 30000};
#define PENDING_TRIES (sizeof(pending_delays_ms) / sizeof(pending_delays_ms[0]))

struct kvm_pending {
	pid_t tid;
	unsigned tries;
	uint64_t due_ns;
};

struct kvm_watch {
	pid_t pid;
	int pidfd;
};

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
	bool attach_eperm_logged, attach_traced_logged;
	struct kvm_denied denied;	  /* VMMs seen but not readable */
	size_t denied_watch_cap;	  /* of them watched by a pidfd (kvm_denied_watch_cap) */
	bool denied_logged;		  /* this episode (since the count left 0) counted */
	struct kvm_denied_say denied_say; /* the warn line's bound */
	const char *missing;		  /* what the exporter lacks to read them */
	char hidepid[32];		  /* /proc's hidepid= without CAP_SYS_PTRACE, or "" */
	bool host_view;	   /* vCPU threads' schedstat and VMMs' memory (kvm_hostview.c) */
	bool hostview_due; /* a hand-over brought vCPUs whose threads are not known */
	struct kvm_libvirt_conf libvirt;
	bool libvirt_denied_logged;

	struct worker watcher; /* the watcher thread */
	int epfd, wakefd, ueventfd;
	GROWARR_OF(struct kvm_watch, watch, watches); /* the VMMs' pidfds */
	struct kvm_pending pending[PENDING_MAX];
	size_t npending;
	uint64_t next_rescan_ns;

	/* The hand-over socket (off without handover.socket), served in the
	 * watcher thread, and the caps of what it may bring. */
	struct kvm_handover_server handover;
	uint64_t handover_max_fds, handover_max_fds_per_peer;

	struct droptab wdrops; /* found between scrapes, reported by the next collect */
	uint64_t no_fds_unsaid, no_fds_said_ns; /* handover_no_fds since the last log line */
};

/* Counts a drop found outside a scrape; the caller holds k->lock. */
static void watcher_drop(void *ctx, const char *reason)
{
	struct kvm_collector *k = ctx;

	droptab_add(&k->wdrops, reason, 1);
}

/* An fd or a connection a peer handed over, lost for want of fds
 * (RLIMIT_NOFILE): counted, and logged at once, then at most once a
 * minute with how many since; the caller holds k->lock. */
static void lost_for_fds(struct kvm_collector *k)
{
	uint64_t now = monoclock_ns();
	char n[24];

	watcher_drop(k, "handover_no_fds");
	k->no_fds_unsaid++;
	if (k->no_fds_said_ns && now - k->no_fds_said_ns < NO_FDS_LOG_NS)
		return;
	snprintf(n, sizeof(n), "%llu", (unsigned long long)k->no_fds_unsaid);
	k->host->log(BS_LOG_WARN, "kvm",
		     "hand-over lost for want of fds: the exporter has none left (RLIMIT_NOFILE)",
		     "count", n, (char *)NULL);
	k->no_fds_unsaid = 0;
	k->no_fds_said_ns = now;
}

/* ---- pidfds of the VMMs ---- */

/* The pidfd watching VMM `pid`, opened on first use; the caller holds k->lock. */
static int pidfd_of(void *ctx, pid_t pid)
{
	struct kvm_collector *k = ctx;

	for (size_t i = 0; i < k->watches.n; i++)
		if (k->watch[i].pid == pid)
			return k->watch[i].pidfd;
	int rc = growarr_room(&k->watches, 1);
	if (rc < 0)
		return rc == -E2BIG ? -ENOSPC : rc; /* WATCH_MAX VMMs watched */
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return -errno;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)pid};
	if (k->epfd >= 0 && epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return -errno;
	}
	k->watch[k->watches.n++] = (struct kvm_watch){pid, fd};
	return fd;
}

static void unwatch(struct kvm_collector *k, pid_t pid)
{
	for (size_t i = 0; i < k->watches.n; i++) {
		if (k->watch[i].pid != pid)
			continue;
		close(k->watch[i].pidfd); /* leaves the epoll set with it */
		k->watch[i] = k->watch[--k->watches.n];
		return;
	}
}

/* Closes that watch unless a VM of `pid` is held, or it is a VMM we may
 * not read (counted until it exits); the caller holds k->lock. */
static void watch_release(struct kvm_collector *k, pid_t pid)
{
	const struct kvm_denied_pid *d = kvm_denied_find(&k->denied, pid);

	if (d && d->watched)
		return;
	for (size_t i = 0; i < k->set.vms.n; i++)
		if (k->set.vm[i]->pid == pid)
			return;
	unwatch(k, pid);
}

/* ---- what the hand-over server brings (struct kvm_handover_host) ---- */

/* One checked fd into the set, within the caps; the caller holds k->lock. */
static void take_handed_fd(struct kvm_collector *k, const struct kvm_handed_fd *f)
{
	if (k->set.nhandover_fds >= k->handover_max_fds ||
	    kvm_vmset_fds_from(&k->set, f->from) >= k->handover_max_fds_per_peer) {
		watcher_drop(k, "handover_fd_limit");
		close(f->fd);
		return;
	}
	/* The VMM is watched like a discovered one: its exit closes the fd. */
	int rc = pidfd_of(k, f->pid);
	if (rc == -EMFILE || rc == -ENFILE)
		lost_for_fds(k);
	else if (rc < 0)
		watcher_drop(k, "handover_bad_pid");
	if (rc < 0) {
		close(f->fd);
		return;
	}
	if (kvm_vmset_add(&k->set, f->pid, f->from, f->fd, -1, f->vcpu, &f->ident, NULL,
			  watcher_drop, k) < 0)
		watch_release(k, f->pid); /* a refused fd keeps no watch of its own */
	else
		k->hostview_due = true;
}

static void handover_take(void *ctx, const struct kvm_handed_fd *fds, size_t n)
{
	struct kvm_collector *k = ctx;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < n; i++)
		take_handed_fd(k, &fds[i]);
	pthread_mutex_unlock(&k->lock);
}

static void handover_drop(void *ctx, const char *reason)
{
	struct kvm_collector *k = ctx;

	pthread_mutex_lock(&k->lock);
	if (strcmp(reason, "handover_no_fds") == 0)
		lost_for_fds(k);
	else
		watcher_drop(k, reason);
	pthread_mutex_unlock(&k->lock);
}

/* At shutdown, after the watcher stopped: nothing else touches the set. */
static void handover_release(void *ctx,
			     void (*give)(void *gctx, const struct kvm_vm *vm, int fd, int vcpu),
			     void *gctx)
{
	struct kvm_collector *k = ctx;

	kvm_vmset_release_handed(&k->set, give, gctx);
}

/* ---- scanning: the /proc reads and ptrace of a process hold no lock;
 * only taking its fds into the set does ---- */

/* Attach mode, before a look at a process: ptrace takes its time and
 * scrapes must not wait on it. */
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
	} else if (rc == -EALREADY && !k->attach_traced_logged) {
		k->host->log(BS_LOG_WARN, "kvm",
			     "attach skipped: the VMM is traced by another process (a debugger)",
			     "pid", p, (char *)NULL);
		k->attach_traced_logged = true;
	}
}

/* Never lose a VM silently: say which vCPUs are served without their VM. */
static void log_thread_group(const struct kvm_collector *k, pid_t pid)
{
	char p[16];

	snprintf(p, sizeof(p), "%d", (int)pid);
	for (size_t i = 0; i < k->set.vms.n; i++) {
		const struct kvm_vm *vm = k->set.vm[i];
		if (vm->pid == pid && vm->thread_group)
			k->host->log(BS_LOG_WARN, "kvm",
				     "one thread created several VMs: KVM names their vCPUs alike, "
				     "so they are served together, apart from every VM",
				     "pid", p, "vm", vm->label, (char *)NULL);
	}
}

/* libvirt's record of a VMM's domain, read with no lock held. */
struct meta_look {
	int rc;
	const char *why;
	struct kvm_meta meta;
};

static void meta_read(const struct kvm_collector *k, pid_t pid, const struct kvm_identity *id,
		      struct meta_look *m)
{
	*m = (struct meta_look){.rc = -ENOENT};
	if (k->libvirt.status_dir && id->name[0] && id->uuid[0])
		m->rc = kvm_libvirt_read(&k->libvirt, id->name, pid, id->uuid, &m->meta, &m->why);
}

/* Under the lock: gives the record to the VMM's one VM (libvirt runs one
 * per QEMU), or takes the old one away when the domain has none now. */
static void meta_apply(struct kvm_collector *k, pid_t pid, struct meta_look *m)
{
	const struct kvm_vmm *vmm = kvm_vmset_vmm(&k->set, pid);
	struct kvm_vm *vm = vmm ? kvm_vmm_only(vmm) : NULL;
	char p[16];

	if (m->rc == -EACCES && !k->libvirt_denied_logged) {
		snprintf(p, sizeof(p), "%d", (int)pid);
		k->host->log(BS_LOG_WARN, "kvm",
			     "cannot read libvirt's domain status files: no kvm_vm_metadata_info "
			     "(grant read access to libvirt.status_dir, see the README)",
			     "dir", k->libvirt.status_dir, "pid", p, (char *)NULL);
		k->libvirt_denied_logged = true;
	} else if (m->rc < 0 && m->rc != -ENOENT && m->rc != -EACCES) {
		watcher_drop(k, m->why);
	}
	if (vm && (m->rc == 0 || m->rc == -ENOENT)) {
		kvm_meta_free(&vm->meta);
		vm->meta = m->meta;
		m->meta = (struct kvm_meta){0};
	}
	kvm_meta_free(&m->meta);
}

/* A VMM seen that we may not read: counted once (drop vmm_not_permitted)
 * and watched, so the gauge loses it when it exits; said at warn when the
 * count leaves 0. Or, unreadable false, one we now may read, or that is
 * not a VMM any more. The caller holds k->lock. */
static void note_denied(struct kvm_collector *k, pid_t pid, bool unreadable)
{
	char p[16], n[24], e[24];
	uint64_t episodes;

	if (!unreadable) {
		if (kvm_denied_remove(&k->denied, pid) && !k->denied.pids.n)
			k->denied_logged = false;
		return;
	}
	struct kvm_denied_pid *known = kvm_denied_find(&k->denied, pid);
	if (known) {
		known->seen = true;
		return;
	}
	/* Watched within the cap; past it (or out of fds) counted all the
	 * same, and recounted by each full walk: a host of unreadable VMMs
	 * must never take the fds our own VMs need. */
	bool watched = false;
	if (k->denied.nwatched < k->denied_watch_cap) {
		int fd = pidfd_of(k, pid);
		if (fd == -ESRCH)
			return; /* gone meanwhile */
		watched = fd >= 0;
	}
	if (kvm_denied_add(&k->denied, pid, watched) < 0) {
		if (watched)
			unwatch(k, pid);
		return; /* past every cap: not counted twice */
	}
	watcher_drop(k, "vmm_not_permitted");
	if (k->denied_logged)
		return;
	k->denied_logged = true;
	k->missing = kvm_denied_missing();
	if (!kvm_denied_say_due(&k->denied_say, monoclock_ns(), &episodes))
		return;
	snprintf(p, sizeof(p), "%d", (int)pid);
	snprintf(n, sizeof(n), "%zu", k->denied.pids.n);
	snprintf(e, sizeof(e), "%llu", (unsigned long long)episodes);
	k->host->log(BS_LOG_WARN, "kvm",
		     "VMM processes hold VMs whose stats this exporter may not read: it needs "
		     "CAP_SYS_PTRACE over them (in their user namespace, allowed by Yama's "
		     "kernel.yama.ptrace_scope); the systemd unit grants it with "
		     "AmbientCapabilities=CAP_SYS_PTRACE (binstat_exporter.service)",
		     "missing", k->missing, "pid", p, "vmms", n, "episodes", e, (char *)NULL);
}

/* One look at a process; named_by_kvm: a KVM create uevent named it, so it
 * is a VMM even when it shows no other sign. */
static void scan_pid_as(struct kvm_collector *k, pid_t pid, bool named_by_kvm)
{
	struct kvm_look look;

	if (k->attach && pid != getpid())
		attach_pid(k, pid);
	struct kvm_threads threads = {0};
	struct meta_look meta = {.rc = -ENOENT};
	if (kvm_discover_look(k->proc, pid, &look)) {
		if (k->host_view)
			kvm_threads_look(k->proc, pid, &look.census, &threads);
		meta_read(k, pid, &look.ident, &meta);
	}
	pthread_mutex_lock(&k->lock);
	size_t groups = k->set.groups_made;
	int rc = kvm_discover_take(&k->set, &look, pidfd_of, watcher_drop, k);
	if (k->host_view)
		kvm_hostview_assign(&k->set, k->proc, &threads);
	if (look.cands.n)
		meta_apply(k, pid, &meta);
	if (k->set.groups_made != groups)
		log_thread_group(k, pid);
	/* EPERM from pidfd_getfd: its VM fds were listed, not copied. */
	note_denied(k, pid, look.unreadable_vmm || rc == -EPERM || (named_by_kvm && look.denied));
	watch_release(k, pid);
	pthread_mutex_unlock(&k->lock);
	kvm_threads_free(&threads);
	kvm_look_free(&look);
}

static void scan_pid(void *ctx, pid_t pid)
{
	scan_pid_as(ctx, pid, false);
}

static void full_scan(struct kvm_collector *k)
{
	pthread_mutex_lock(&k->lock);
	kvm_denied_walk_start(&k->denied);
	pthread_mutex_unlock(&k->lock);
	kvm_discover_all(k->proc, scan_pid, k);
	pthread_mutex_lock(&k->lock);
	if (kvm_denied_walk_end(&k->denied) && !k->denied.pids.n)
		k->denied_logged = false;
	pthread_mutex_unlock(&k->lock);
	k->next_rescan_ns = monoclock_ns() + (uint64_t)(k->rescan_s * 1e9);
}

static void vmm_exited(struct kvm_collector *k, pid_t pid)
{
	pthread_mutex_lock(&k->lock);
	kvm_vmset_remove_pid(&k->set, pid);
	note_denied(k, pid, false);
	unwatch(k, pid);
	pthread_mutex_unlock(&k->lock);
}

static void add_pending(struct kvm_collector *k, pid_t tid)
{
	if (k->npending == PENDING_MAX) {
		k->next_rescan_ns = monoclock_ns(); /* too many at once: walk everything */
		return;
	}
	k->pending[k->npending++] = (struct kvm_pending){tid, 0, monoclock_ns() + 20000000u};
}

/* A task KVM's uevent named that our /proc does not show: with hidepid,
 * another user's VMM (it exists: pidfd_open finds it, or says EINVAL of a
 * thread that is not its group's leader). Counted, and watched when it is
 * the leader; a thread is counted until the next full walk. */
static bool hidden_vmm(struct kvm_collector *k, pid_t tid)
{
	if (!k->hidepid[0])
		return false;
	int fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno == EINVAL;
}

static void run_pending(struct kvm_collector *k)
{
	uint64_t now = monoclock_ns();

	for (size_t i = 0; i < k->npending;) {
		struct kvm_pending *p = &k->pending[i];
		if (p->due_ns > now) {
			i++;
			continue;
		}
		pid_t tgid = kvm_tgid_of(k->proc, p->tid);
		if (tgid > 0) {
			scan_pid_as(k, tgid, true);
		} else if (hidden_vmm(k, p->tid)) {
			pthread_mutex_lock(&k->lock);
			note_denied(k, p->tid, true);
			pthread_mutex_unlock(&k->lock);
		} else if (k->next_rescan_ns > now + 1000000000u)
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

static void wake_up(struct kvm_collector *k)
{
	uint64_t n;
	if (read(k->wakefd, &n, sizeof(n)) == sizeof(n))
		kvm_handover_adopt(&k->handover);
}

static void read_uevents(struct kvm_collector *k)
{
	pid_t pid;
	int ev;

	bool discovering = k->passive || k->attach; /* else only the hand-over brings VMs */

	while ((ev = kvm_uevent_recv(k->ueventfd, &pid)) != -EAGAIN) {
		if (!discovering)
			continue;
		if (ev == -ENOBUFS)
			k->next_rescan_ns = monoclock_ns();
		else if (ev == KVM_UEVENT_CREATE)
			add_pending(k, pid);
	}
}

static int next_timeout_ms(struct kvm_collector *k)
{
	uint64_t now = monoclock_ns(), next = k->next_rescan_ns;
	for (size_t i = 0; i < k->npending; i++)
		next = k->pending[i].due_ns < next ? k->pending[i].due_ns : next;
	uint64_t ms = next <= now ? 0 : (next - now) / 1000000u + 1;
	int idle_ms = kvm_handover_idle(&k->handover);
	if (idle_ms >= 0 && (uint64_t)idle_ms < ms)
		return idle_ms;
	return ms > INT_MAX ? -1 : (int)ms; /* -1: nothing due but events */
}

/* Start-up's cost grows with the host: the first walk says what it took. */
static void first_scan(struct kvm_collector *k)
{
	uint64_t t0 = monoclock_ns();
	char vms[24], fds[24], ms[24];

	char hp[sizeof(k->hidepid)];
	if ((k->passive || k->attach) && kvm_proc_hidepid(k->proc, hp, sizeof(hp))) {
		pthread_mutex_lock(&k->lock);
		memcpy(k->hidepid, hp, sizeof(hp));
		pthread_mutex_unlock(&k->lock);
		k->host->log(BS_LOG_WARN, "kvm",
			     "/proc hides other users' processes (hidepid): their VMMs are not "
			     "served, and counted in kvm_collector_vmms_not_permitted only when "
			     "KVM's uevent names them; grant CAP_SYS_PTRACE "
			     "(AmbientCapabilities=CAP_SYS_PTRACE in the unit), or mount /proc "
			     "without hidepid",
			     "proc", k->proc, "hidepid", hp, (char *)NULL);
	}
	if (k->passive || k->attach)
		full_scan(k);
	pthread_mutex_lock(&k->lock);
	snprintf(vms, sizeof(vms), "%zu", k->set.vms.n);
	snprintf(fds, sizeof(fds), "%zu", k->set.nfds);
	snprintf(ms, sizeof(ms), "%.1f", (double)(monoclock_ns() - t0) / 1e6);
	k->host->log(BS_LOG_INFO, "kvm", "first scan done", "vms", vms, "stats_fds", fds,
		     "duration_ms", ms, (char *)NULL);
	k->first_scan_done = true;
	pthread_cond_broadcast(&k->scanned);
	pthread_mutex_unlock(&k->lock);
}

/* Finds the vCPU threads and libvirt records of handed-over VMMs, which
 * no look at the process does: the reads outside the lock. */
static void hostview_pass(struct kvm_collector *k)
{
	struct {
		pid_t pid;
		struct kvm_identity ident;
	} *due = calloc(PENDING_MAX, sizeof(*due));
	size_t n = 0;

	pthread_mutex_lock(&k->lock);
	k->hostview_due = false;
	for (size_t i = 0; due && i < k->set.vmms.n && n < PENDING_MAX; i++) {
		const struct kvm_vmm *m = k->set.vmm[i];
		const struct kvm_vm *only = kvm_vmm_only(m);
		if (!kvm_hostview_wanted(&k->set, m->pid) && (!only || only->meta.domain))
			continue;
		due[n].pid = m->pid;
		if (only)
			due[n].ident = only->ident;
		n++;
	}
	pthread_mutex_unlock(&k->lock);
	for (size_t i = 0; i < n; i++) {
		struct kvm_threads t = {0};
		struct meta_look meta;
		if (k->host_view)
			kvm_threads_look(k->proc, due[i].pid, NULL, &t);
		meta_read(k, due[i].pid, &due[i].ident, &meta);
		pthread_mutex_lock(&k->lock);
		if (k->host_view)
			kvm_hostview_assign(&k->set, k->proc, &t);
		meta_apply(k, due[i].pid, &meta);
		pthread_mutex_unlock(&k->lock);
		kvm_threads_free(&t);
	}
	free(due);
}

static void *watcher(void *arg)
{
	struct kvm_collector *k = arg;
	struct epoll_event ev[32];

	/* The first walk, here rather than in init: a process that will not
	 * stop for ptrace or answer its /proc reads must not keep the daemon
	 * from listening. Scrapes wait for it a little (kvm_collect). */
	first_scan(k);
	for (;;) {
		int n = epoll_wait(k->epfd, ev, 32, next_timeout_ms(k));
		for (int i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;
			if (tag == KVM_TAG_STOP)
				return NULL;
			if (tag == KVM_TAG_UEVENT)
				read_uevents(k);
			else if (tag == KVM_TAG_LISTEN)
				kvm_handover_accept(&k->handover);
			else if (tag == KVM_TAG_WAKE)
				wake_up(k);
			else if (tag & KVM_TAG_CONN)
				kvm_handover_read(&k->handover, tag & ~KVM_TAG_CONN);
			else
				vmm_exited(k, (pid_t)tag);
		}
		run_pending(k);
		if (k->hostview_due)
			hostview_pass(k);
		if (monoclock_ns() >= k->next_rescan_ns)
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
		return list->ops->errorf(list, "must be a list of at most %d glob patterns",
					 KVM_PATTERNS_MAX);
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
	if (list->ops->kind(list) != BS_CONF_SEQ || list->ops->length(list) > KVM_HANDOVER_IDS_MAX)
		return list->ops->errorf(list, "must be a list of at most %d numeric ids",
					 KVM_HANDOVER_IDS_MAX);
	for (size_t i = 0; i < list->ops->length(list); i++) {
		const char *s = list->ops->scalar(list->ops->item(list, i));
		unsigned long v = s ? strtoul(s, &end, 10) : 0;
		if (!s || !*s || *end || v > 0xFFFFFFFFul)
			return list->ops->error(list, "ids must be numbers");
		out[(*n)++] = v;
	}
	return 0;
}

/* The VMM owners trusted with VM names, by user name or number. A name
 * that no user has here is left out, and said so. */
static int read_trusted(struct kvm_collector *k, const struct bs_conf *conf)
{
	static const char *const defaults[] = {"root", "libvirt-qemu"};
	const struct bs_conf *list = conf->ops->child(conf, "trusted_users");
	size_t n = list ? list->ops->length(list) : 2, got = 0;
	uid_t uids[KVM_TRUSTED_MAX];
	char buf[4096], *end;

	if (list && (list->ops->kind(list) != BS_CONF_SEQ || n > KVM_TRUSTED_MAX))
		return list->ops->errorf(list, "must be a list of at most %d user names or uids",
					 KVM_TRUSTED_MAX);
	for (size_t i = 0; i < n; i++) {
		const char *u = list ? list->ops->scalar(list->ops->item(list, i)) : defaults[i];
		struct passwd pw, *found = NULL;
		unsigned long v;
		if (!u || !*u)
			return list->ops->error(list, "trusted_users must be user names or uids");
		if ((v = strtoul(u, &end, 10)) <= 0xFFFFFFFEul && !*end && *u != '-') {
			uids[got++] = (uid_t)v;
			continue;
		}
		if (getpwnam_r(u, &pw, buf, sizeof(buf), &found) == 0 && found)
			uids[got++] = found->pw_uid;
		else
			k->host->log(BS_LOG_INFO, "kvm",
				     "trusted VMM owner not found here: skipped", "user", u,
				     (char *)NULL);
	}
	kvm_vmset_trust(&k->set, uids, got);
	return 0;
}

/* Sets *max_vms to handover.max_vms when there is a hand-over socket. */
static int read_handover(struct kvm_collector *k, const struct bs_conf *conf, uint64_t *max_vms)
{
	const struct bs_conf *h = conf->ops->child(conf, "handover");
	struct kvm_handover_server *s = &k->handover;

	k->handover_max_fds = 16384;
	k->handover_max_fds_per_peer = 4096;
	s->idle_s = 10;
	if (!h)
		return 0;
	*max_vms = 1024;
	if (h->ops->kind(h) != BS_CONF_MAP)
		return h->ops->error(h,
				     "handover must be a mapping (socket, allow_uids, allow_gids)");
	if (h->ops->get_str(h, "socket", &s->path) < 0)
		return h->ops->error(h, "handover needs a socket path");
	if (read_ids(h, "allow_uids", s->allow_uid, &s->nallow_uid) < 0 ||
	    read_ids(h, "allow_gids", s->allow_gid, &s->nallow_gid) < 0 ||
	    h->ops->get_u64(h, "max_vms", 1, 1000000, max_vms) == -EINVAL ||
	    h->ops->get_u64(h, "max_fds", 1, KVM_HANDOVER_FDS_MAX, &k->handover_max_fds) ==
		-EINVAL ||
	    h->ops->get_u64(h, "max_fds_per_peer", 1, KVM_HANDOVER_FDS_MAX,
			    &k->handover_max_fds_per_peer) == -EINVAL ||
	    h->ops->get_duration(h, "idle_timeout_seconds", 0.1, 3600, &s->idle_s) == -EINVAL)
		return -EINVAL;
	if (s->nallow_uid + s->nallow_gid == 0)
		return h->ops->error(h, "handover needs allow_uids or allow_gids");
	return 0;
}

static int read_config(struct kvm_collector *k, const struct bs_conf *conf)
{
	const struct bs_conf_ops *c = conf->ops;
	const char *mode = "per_vm";
	uint64_t max_vms = 4096, max_vcpus = 1024, handover_vms = 0;

	k->proc = "/proc";
	k->rescan_s = 60;
	k->passive = true;
	k->host_view = true;
	if (c->get_str(conf, "mode", &mode) == -EINVAL ||
	    c->get_bool(conf, "host_view", &k->host_view) == -EINVAL ||
	    c->get_duration(conf, "rescan_interval_seconds", 1, 86400, &k->rescan_s) == -EINVAL ||
	    c->get_bool(conf, "passive", &k->passive) == -EINVAL ||
	    c->get_bool(conf, "attach", &k->attach) == -EINVAL ||
	    c->get_str(conf, "proc", &k->proc) == -EINVAL ||
	    c->get_u64(conf, "max_vms", 1, 1000000, &max_vms) == -EINVAL ||
	    c->get_u64(conf, "max_vcpus_per_vm", 1, 4096, &max_vcpus) == -EINVAL ||
	    read_filter(conf, "stats", &k->stats) < 0 || read_filter(conf, "vms", &k->vms) < 0 ||
	    read_handover(k, conf, &handover_vms) < 0 ||
	    kvm_libvirt_conf_read(conf, &k->libvirt) < 0)
		return -EINVAL;
	if (strcmp(mode, "per_vm") == 0)
		k->mode = KVM_PER_VM;
	else if (strcmp(mode, "per_vcpu") == 0)
		k->mode = KVM_PER_VCPU;
	else
		return c->error(c->child(conf, "mode"), "mode must be per_vm or per_vcpu");
	kvm_vmset_init(&k->set, max_vms, handover_vms, max_vcpus);
	k->handover.proc = k->proc;
	return read_trusted(k, conf);
}

/* ---- the plugin ---- */

static void kvm_shutdown(void *state);

static int watch_fd(struct kvm_collector *k, int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
	return epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The watcher's fds exist before its thread starts (uevents arriving
 * meanwhile are queued). */
static int open_watch_fds(struct kvm_collector *k)
{
	int rc;

	k->epfd = epoll_create1(EPOLL_CLOEXEC);
	k->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->epfd < 0 || k->wakefd < 0)
		return -errno;
	if ((rc = worker_open(&k->watcher, k->epfd, (epoll_data_t){.u64 = KVM_TAG_STOP})) < 0 ||
	    (rc = watch_fd(k, k->wakefd, KVM_TAG_WAKE)) < 0)
		return rc;
	k->ueventfd = kvm_uevent_open();
	if (k->ueventfd >= 0)
		watch_fd(k, k->ueventfd, KVM_TAG_UEVENT);
	else
		k->host->log(BS_LOG_WARN, "kvm", "no uevents: new VMs appear at the next rescan",
			     "err", strerror(-k->ueventfd), (char *)NULL);
	const struct kvm_handover_host hooks = {k, handover_take, handover_drop, handover_release};
	if (k->handover.path &&
	    (rc = kvm_handover_start(&k->handover, &hooks, k->epfd, k->wakefd)) < 0) {
		k->host->log(BS_LOG_ERROR, "kvm", "cannot listen for hand-over", "path",
			     k->handover.path, "err", strerror(-rc), (char *)NULL);
		return rc;
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
	k->check_only = host->flags & BS_HOST_CHECK_ONLY;
	k->epfd = k->wakefd = k->ueventfd = -1;
	worker_init(&k->watcher);
	growarr_init(&k->watches, sizeof(struct kvm_watch), WATCH_MAX);
	kvm_denied_init(&k->denied);
	struct rlimit nofile;
	k->denied_watch_cap =
	    kvm_denied_watch_cap(getrlimit(RLIMIT_NOFILE, &nofile) == 0 ? nofile.rlim_cur : 1024);
	kvm_handover_init(&k->handover);
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_t ca; /* its waits have monotonic deadlines */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->scanned, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = read_config(k, conf)) < 0)
		goto err_shutdown;
	if (k->check_only) { /* no socket, no scan, no ptrace: a check changes nothing */
		*state = k;
		return 0;
	}
	if ((rc = open_watch_fds(k)) < 0)
		goto err_shutdown;
	k->next_rescan_ns = UINT64_MAX; /* the watcher's first walk sets the next one */
	if ((rc = worker_start(&k->watcher, watcher, k)) < 0)
		goto err_shutdown;
	*state = k;
	return 0;
err_shutdown:
	kvm_shutdown(k);
	return rc;
}

static void collect_totals(struct kvm_collector *k, struct bs_emitter *em)
{
	bs_family(em, "kvm_collector_vms", BS_GAUGE, NULL,
		  "VMs whose stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.vms.n);
	bs_family(em, "kvm_collector_stats_fds", BS_GAUGE, NULL, "Stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.nfds);
	size_t unowned = 0;
	for (size_t i = 0; i < k->set.vms.n; i++)
		unowned += k->set.vm[i]->thread_group ? k->set.vm[i]->vcpus.n : 0;
	bs_family(em, "kvm_collector_vcpus_of_unknown_vm", BS_GAUGE, NULL,
		  "vCPUs served in their creating thread's group (vm=\"NAME/kvm-TID/*\"): one "
		  "thread created several VMs and KVM names their vCPUs alike.");
	bs_sample_u64(em, NULL, 0, unowned);
	bs_family(em, "kvm_collector_vmms_not_permitted", BS_GAUGE, NULL,
		  "VMM processes seen holding VMs whose stats fds the collector may not read: "
		  "it lacks CAP_SYS_PTRACE over them (the log says what). Their VMs are not "
		  "served.");
	bs_sample_u64(em, NULL, 0, k->denied.pids.n);
}

/* The first walk may still run when the first scrape comes. */
static void wait_first_scan(struct kvm_collector *k)
{
	struct timespec until =
	    monoclock_timespec(monoclock_ns() + (uint64_t)FIRST_SCAN_WAIT_S * 1000000000u);
	while (!k->first_scan_done &&
	       pthread_cond_timedwait(&k->scanned, &k->lock, &until) != ETIMEDOUT)
		;
}

/* Reads every held fd under the lock: each is a stats fd KVM made
 * (kvm_statsfd_identify), whose pread copies kernel memory and never waits. */
static int kvm_collect(void *state, struct bs_emitter *em)
{
	struct kvm_collector *k = state;

	pthread_mutex_lock(&k->lock);
	wait_first_scan(k);
	droptab_flush(&k->wdrops, em);
	kvm_scrape(&k->set, &k->vms, &k->stats, k->mode, k->host, em);
	collect_totals(k, em);
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static void close_if_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void kvm_shutdown(void *state)
{
	struct kvm_collector *k = state;

	worker_stop(&k->watcher);
	if (k->handover.path)
		kvm_handover_stop(&k->handover);
	kvm_vmset_free(&k->set);
	for (size_t i = 0; i < k->watches.n; i++)
		close(k->watch[i].pidfd);
	growarr_free(&k->watches);
	kvm_denied_free(&k->denied);
	close_if_open(k->epfd);
	close_if_open(k->wakefd);
	close_if_open(k->ueventfd);
	pthread_cond_destroy(&k->scanned);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static void kvm_describe(void *state, char *buf, size_t len)
{
	struct kvm_collector *k = state;
	size_t vcpus = 0, handed = 0;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->set.vms.n; i++) {
		vcpus += k->set.vm[i]->vcpus.n;
		handed += k->set.vm[i]->from != 0;
	}
	int n = snprintf(buf, len, "%zu VMs (%zu handed over), %zu vCPUs, %zu stats fds",
			 k->set.vms.n, handed, vcpus, k->set.nfds);
	/* After a newline: a warning the landing page shows apart, in red. */
	if (k->denied.pids.n && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "\n%zu VMM process(es) not readable (missing %s): grant CAP_SYS_PTRACE, "
			 "AmbientCapabilities=CAP_SYS_PTRACE in the unit",
			 k->denied.pids.n, k->missing ? k->missing : "CAP_SYS_PTRACE");
	else if (k->hidepid[0] && n >= 0 && (size_t)n < len)
		snprintf(
		    buf + n, len - (size_t)n,
		    "\n/proc hides other users' processes (hidepid=%s): their VMMs are not "
		    "seen; grant CAP_SYS_PTRACE, AmbientCapabilities=CAP_SYS_PTRACE in the unit",
		    k->hidepid);
	pthread_mutex_unlock(&k->lock);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_kvm = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "kvm",
    .description = "KVM VM and vCPU statistics from binary stats fds",
    .init = kvm_init,
    .collect = kvm_collect,
    .shutdown = kvm_shutdown,
    .describe = kvm_describe,
};
