/* The KVM collector's watcher thread: it keeps the set of held stats fds
 * current, and collect only reads and writes.
 *
 * The watcher learns of new VMs from KVM's uevents and scans just that
 * process; a full /proc walk runs at start and every rescan_interval as the
 * safety net. It watches every VMM with a pidfd and closes that VMM's fds
 * the moment it exits, so a dead VM's memory is never kept pinned. It also
 * serves the hand-over socket and takes what it brings within the caps. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kvm_attach.h"
#include "kvm_discover.h"
#include "kvm_hostview.h"
#include "kvm_uevent.h"
#include "kvm_watch.h"
#include "monoclock.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define NO_FDS_LOG_NS 60000000000ull /* fds lost for want of fds: said this often at most */

/* epoll tags besides VMM pids and the hand-over server's (kvm_handover_serve.h) */
#define KVM_TAG_STOP UINT64_MAX
#define KVM_TAG_UEVENT (UINT64_MAX - 1)
#define KVM_TAG_WAKE (UINT64_MAX - 3)

/* After a create event, the process is looked at again at these delays:
 * stats fds appear when the VMM (or the shim) opens them, not at once. */
static const unsigned pending_delays_ms[] = {20, 200, 1000, 5000, 30000};
#define PENDING_TRIES (sizeof(pending_delays_ms) / sizeof(pending_delays_ms[0]))

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
		return rc == -E2BIG ? -ENOSPC : rc; /* KVM_WATCH_MAX VMMs watched */
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

/* One checked fd into the set, within the caps: whether the set kept it.
 * The caller holds k->lock. */
static bool take_handed_fd(struct kvm_collector *k, const struct kvm_handed_fd *f)
{
	if (k->set.nhandover_fds >= k->handover_max_fds ||
	    kvm_vmset_fds_from(&k->set, f->from) >= k->handover_max_fds_per_peer) {
		watcher_drop(k, "handover_fd_limit");
		close(f->fd);
		return false;
	}
	/* The VMM is watched like a discovered one: its exit closes the fd. */
	int rc = pidfd_of(k, f->pid);
	if (rc == -EMFILE || rc == -ENFILE)
		lost_for_fds(k);
	else if (rc < 0)
		watcher_drop(k, "handover_bad_pid");
	if (rc < 0) {
		close(f->fd);
		return false;
	}
	if (kvm_vmset_add(&k->set, f->pid, f->from, f->fd, -1, f->vcpu, &f->ident, NULL,
			  watcher_drop, k) < 0) {
		watch_release(k, f->pid); /* a refused fd keeps no watch of its own */
		return false;
	}
	k->hostview_due = true;
	return true;
}

static size_t handover_take(void *ctx, const struct kvm_handed_fd *fds, size_t n)
{
	struct kvm_collector *k = ctx;
	size_t kept = 0;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < n; i++)
		kept += take_handed_fd(k, &fds[i]);
	pthread_mutex_unlock(&k->lock);
	return kept;
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

static bool handover_holds(void *ctx, pid_t from)
{
	struct kvm_collector *k = ctx;
	bool held = false;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->set.vms.n && !held; i++)
		held = k->set.vm[i]->from == from; /* a VM is freed with its last fd */
	pthread_mutex_unlock(&k->lock);
	return held;
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
	unsigned nostats[KVM_NOSTATS_KINDS] = {0};
	int rc = kvm_attach_pid(k->proc, pid, nostats);

	pthread_mutex_lock(&k->lock); /* stats fds KVM would not make, by why */
	for (int i = 0; i < KVM_NOSTATS_KINDS; i++)
		if (nostats[i])
			droptab_add(&k->wdrops, kvm_nostats_reason((enum kvm_nostats)i),
				    nostats[i]);
	pthread_mutex_unlock(&k->lock);

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
		     "AmbientCapabilities=CAP_SYS_PTRACE (binstat_exporter.service), a "
		     "container with --cap-add=SYS_PTRACE (Kubernetes: capabilities add "
		     "SYS_PTRACE)",
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

/* In a PID namespace of its own the walk finds no VMM: said once, after
 * the first walk, rather than left to look like a host with no VM. A
 * walk that found VMMs all the same runs where they run (a host that is
 * itself a system container): the gauge says 0, nothing more is said. */
static void pidns_say(struct kvm_collector *k, enum kvm_pidns ns)
{
	pthread_mutex_lock(&k->lock);
	k->pidns = ns;
	bool none = k->set.vms.n == 0 && k->denied.pids.n == 0;
	pthread_mutex_unlock(&k->lock);
	if (ns == KVM_PIDNS_OWN && none)
		k->host->log(
		    BS_LOG_WARN, "kvm",
		    "this /proc shows a PID namespace of its own, not the host's (PID 2 is "
		    "not the kernel's kthreadd), and no VMM in it: the host's VMMs are not seen; "
		    "run the container with --pid=host (Kubernetes: hostPID: true)",
		    "proc", k->proc, (char *)NULL);
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
	if (k->passive || k->attach) {
		enum kvm_pidns ns = kvm_pidns_look(k->proc);
		full_scan(k);
		pidns_say(k, ns);
	}
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

static int watch_fd(struct kvm_collector *k, int fd, uint64_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag};
	return epoll_ctl(k->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The watcher's fds exist before its thread starts (uevents arriving
 * meanwhile are queued). */
int kvm_watch_open(struct kvm_collector *k)
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
	const struct kvm_handover_host hooks = {k, handover_take, handover_drop, handover_holds,
						handover_release};
	if (!k->handover.path)
		return 0;
	if ((rc = kvm_handover_start(&k->handover, &hooks, k->epfd, k->wakefd)) < 0) {
		k->host->log(BS_LOG_ERROR, "kvm", "cannot listen for hand-over", "path",
			     k->handover.path, "err", strerror(-rc), (char *)NULL);
		return rc;
	}
	/* A restart starts with no VM handed over: they come back as their
	 * senders reconnect (kvm_collector_handover_senders says how many). */
	if (!k->handover.inherited)
		k->host->log(BS_LOG_INFO, "kvm",
			     "listening for hand-over: no VM is held until senders connect; a "
			     "sender that keeps its connection sends again after a restart",
			     "path", k->handover.path, (char *)NULL);
	return 0;
}

int kvm_watch_start(struct kvm_collector *k)
{
	k->next_rescan_ns = UINT64_MAX; /* the watcher's first walk sets the next one */
	return worker_start(&k->watcher, watcher, k);
}

void kvm_watch_stop(struct kvm_collector *k)
{
	worker_stop(&k->watcher);
	if (k->handover.path)
		kvm_handover_stop(&k->handover);
}

static void close_if_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

void kvm_watch_close(struct kvm_collector *k)
{
	for (size_t i = 0; i < k->watches.n; i++)
		close(k->watch[i].pidfd);
	growarr_free(&k->watches);
	close_if_open(k->epfd);
	close_if_open(k->wakefd);
	close_if_open(k->ueventfd);
}
