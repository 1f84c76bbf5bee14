/* Attach mode: makes a stock VMM open its own stats fds, by injecting
 * ioctl(fd, KVM_GET_STATS_FD) into one of its threads with ptrace, as
 * `gdb -p PID -batch -ex 'call (int)ioctl(FD, 0xaece, 0)'` does. KVM only
 * answers that ioctl from the VM's own address space, hence the injection.
 *
 * Safety: only a thread blocked in a syscall other than KVM_RUN is used (its
 * registers then point just past a `syscall` instruction to reuse); the
 * registers are restored exactly, so the interrupted syscall restarts as if
 * nothing happened; a signal that arrives meanwhile is re-delivered at
 * detach; anything unexpected gives up and detaches. x86-64 only.
 *
 * Every wait has a deadline: a thread parked in vfork() (or any
 * uninterruptible sleep) never reaches the stop we ask for. The tracing
 * runs in a thread of its own, whose exit detaches whatever it could not
 * (the kernel's exit_ptrace), so giving up never leaves a VMM traced.
 *
 * Every vCPU ioctl takes vcpu->mutex, which the vCPU's thread holds for all
 * of KVM_RUN: asked from another thread, it would block that thread (QEMU's
 * main loop) for as long as the guest stays in. So a vCPU's stats fd is
 * asked for only from that vCPU's own thread, and only while it is outside
 * KVM_RUN (QEMU's vCPU threads wait there while the guest is paused or
 * userspace handles an exit); stopped by us, it cannot go back in. A VM's
 * stats fd takes no such lock and is asked for from the main thread.
 *
 * Before the first KVM_GET_STATS_FD, KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD)
 * is injected too, on a VM fd (a VM ioctl since KVM_CAP_CHECK_EXTENSION_VM;
 * it takes no lock): a kernel without the capability is asked for nothing
 * more. Each stats fd not made is counted by why (kvm_nostats.h). */
#include "kvm_attach.h"

#include "kvm_procfd.h"

#include <dirent.h>
#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define ATTACH_FDS_MAX 4096
#define STEP_TRIES 16
#define STOP_WAIT_US 250000  /* for a thread to reach the stop we asked for */
#define STEP_WAIT_US 1000000 /* for one injected, non-blocking ioctl */

/* One ioctl to inject: on fd, in thread tid. */
struct target {
	int fd;
	pid_t tid;
};

struct plan {
	struct target t[ATTACH_FDS_MAX];
	size_t n;
	bool vcpu_has_stats[ATTACH_FDS_MAX];
	int vcpu_fd_of[ATTACH_FDS_MAX];	   /* by vCPU index */
	pid_t vcpu_tid_of[ATTACH_FDS_MAX]; /* by vCPU index */
	int vm_fds[ATTACH_FDS_MAX];
	size_t nvm, nvmstats;
	int cap; /* KVM_CHECK_EXTENSION's answer; -1: not asked yet */
	unsigned nostats[KVM_NOSTATS_KINDS];
};

static bool note_fd(void *ctx, int fd, const char *link)
{
	struct plan *p = ctx;
	int idx = -1;

	if (strcmp(link, "anon_inode:kvm-vm") == 0 && p->nvm < ATTACH_FDS_MAX)
		p->vm_fds[p->nvm++] = fd;
	else if (strcmp(link, "anon_inode:kvm-vm-stats") == 0)
		p->nvmstats++;
	else if (sscanf(link, "anon_inode:kvm-vcpu-stats:%d", &idx) == 1 && idx >= 0 &&
		 idx < ATTACH_FDS_MAX)
		p->vcpu_has_stats[idx] = true;
	else if (sscanf(link, "anon_inode:kvm-vcpu:%d", &idx) == 1 && idx >= 0 &&
		 idx < ATTACH_FDS_MAX)
		p->vcpu_fd_of[idx] = fd;
	return true;
}

/* The VMM's VM and vCPU fds, and which have a stats fd beside them. */
static void read_fds(const char *proc, pid_t pid, struct plan *p)
{
	kvm_procfd_each(proc, pid, note_fd, p);
}

/* Kernel threads and the kernel's user workers (KVM's NX huge page
 * recovery thread lives in the VMM's thread group) cannot be traced, and
 * their syscall file shows stale registers. */
static bool is_worker(const char *proc, pid_t pid, pid_t tid)
{
	char path[192], buf[512];
	unsigned long flags = 0;

	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc, (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return true;
	return flags & (0x00200000ul /* PF_KTHREAD */ | 0x00004000ul /* PF_USER_WORKER */);
}

static bool read_line(const char *path, char *line, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok = f && fgets(line, (int)len, f);
	if (f)
		fclose(f);
	return ok;
}

/* Which thread runs each vCPU: QEMU names them "CPU N/KVM" (libvirt always
 * sets debug-threads=on); failing a name, a thread seen in KVM_RUN on a
 * vCPU fd is that vCPU's. */
static void read_threads(const char *proc, pid_t pid, struct plan *p)
{
	char path[192], line[256];
	pid_t seen_in_run[ATTACH_FDS_MAX] = {0};

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = kvm_proc_number(e->d_name);
		int idx = -1;
		if (tid < 0)
			continue;
		long nr = -1;
		unsigned long a1 = 0, a2 = 0;
		if (is_worker(proc, pid, tid))
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc, (int)pid, (int)tid);
		if (read_line(path, line, sizeof(line)) && sscanf(line, "CPU %d/KVM", &idx) == 1 &&
		    idx >= 0 && idx < ATTACH_FDS_MAX)
			p->vcpu_tid_of[idx] = tid;
		snprintf(path, sizeof(path), "%s/%d/task/%d/syscall", proc, (int)pid, (int)tid);
		if (read_line(path, line, sizeof(line)) &&
		    sscanf(line, "%ld %lx %lx", &nr, &a1, &a2) == 3 && nr == SYS_ioctl &&
		    a2 == KVM_RUN)
			for (int i = 0; i < ATTACH_FDS_MAX; i++)
				if (p->vcpu_fd_of[i] == (int)a1)
					seen_in_run[i] = tid;
	}
	closedir(d);
	for (int i = 0; i < ATTACH_FDS_MAX; i++)
		if (!p->vcpu_tid_of[i])
			p->vcpu_tid_of[i] = seen_in_run[i];
}

static void make_plan(const char *proc, pid_t pid, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->cap = -1;
	for (size_t i = 0; i < ATTACH_FDS_MAX; i++)
		p->vcpu_fd_of[i] = -1;
	read_fds(proc, pid, p);
	if (p->nvm == 0)
		return; /* not a VMM */
	read_threads(proc, pid, p);
	/* With one VM per VMM (the common case) this is exact; with several,
	 * every VM is asked again and the duplicates are dropped by stats id. */
	if (p->nvmstats < p->nvm)
		for (size_t i = 0; i < p->nvm; i++)
			p->t[p->n++] = (struct target){p->vm_fds[i], pid};
	for (int i = 0; i < ATTACH_FDS_MAX && p->n < ATTACH_FDS_MAX; i++)
		if (p->vcpu_fd_of[i] >= 0 && !p->vcpu_has_stats[i] && p->vcpu_tid_of[i] > 0)
			p->t[p->n++] = (struct target){p->vcpu_fd_of[i], p->vcpu_tid_of[i]};
}

#if defined(__x86_64__)

/* Waits up to `us` for the tracee's next stop; a signal other than SIGTRAP
 * is kept in *pending to be re-delivered at detach. Returns the stop's
 * signal, -ETIMEDOUT, or -ECHILD. */
static int wait_stop(pid_t tid, int *pending, long us)
{
	int status;
	for (long waited = 0;; waited += 100) {
		pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
		if (r < 0 || (r == tid && !WIFSTOPPED(status)))
			return -ECHILD;
		if (r == tid)
			break;
		if (waited >= us)
			return -ETIMEDOUT;
		usleep(100);
	}
	int sig = WSTOPSIG(status);
	if (status >> 16 == PTRACE_EVENT_STOP)
		return 0; /* the interrupt (or group) stop */
	if (sig != SIGTRAP)
		*pending = sig;
	return sig;
}

/* One ioctl to run in the stopped thread. */
struct call {
	int fd;
	unsigned long req, arg;
};

/* Runs one ioctl at the syscall instruction at `at`, from the saved
 * registers. Returns 0 with the ioctl's result (a new fd in the VMM, or
 * -errno) in *result, or -errno when the injection itself failed. */
static int inject_one(pid_t tid, const struct user_regs_struct *saved, unsigned long at,
		      struct call c, int *pending, long *result)
{
	struct user_regs_struct r = *saved;

	r.rip = at;
	r.rax = SYS_ioctl;
	r.rdi = (unsigned long)c.fd;
	r.rsi = c.req;
	r.rdx = c.arg;
	r.orig_rax = (unsigned long)-1; /* no syscall restart on these registers */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		return -errno;
	for (int tries = 0; tries < STEP_TRIES; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) < 0)
			return -errno;
		int sig = wait_stop(tid, pending, STEP_WAIT_US);
		if (sig < 0)
			return -ECHILD;
		if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
			return -errno;
		if (sig == SIGTRAP && r.rip == at + 2) {
			*result = (long)r.rax;
			return 0;
		}
		/* A signal stopped it before the syscall: it waits in *pending;
		 * put the registers back at the instruction and step again. */
		if (r.rip != at)
			return -EIO;
	}
	return -EAGAIN;
}

/* Whether the thread sits in KVM_RUN right now, from /proc alone: even
 * PTRACE_INTERRUPT would kick it out, so it is not touched at all. */
static bool in_kvm_run(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	long nr = -1;
	unsigned long a1 = 0, a2 = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	return !read_line(path, line, sizeof(line)) ||
	       (sscanf(line, "%ld %lx %lx", &nr, &a1, &a2) == 3 && nr == SYS_ioctl &&
		a2 == KVM_RUN);
}

/* Asks for one target's stats fd: 1 opened, 0 not made (counted in the
 * plan), or -errno when the injection failed. The capability is asked
 * first, once per attach. */
static int stats_fd_of(pid_t tid, const struct user_regs_struct *saved, unsigned long at,
		       struct plan *p, int fd, int *pending)
{
	long r = -1;
	int rc;

	if (p->cap < 0) {
		struct call check = {p->vm_fds[0], KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD};
		if ((rc = inject_one(tid, saved, at, check, pending, &r)) < 0)
			return rc;
		p->cap = r > 0;
	}
	if (p->cap == 0) {
		p->nostats[KVM_NOSTATS_UNSUPPORTED]++;
		return 0;
	}
	if ((rc = inject_one(tid, saved, at, (struct call){fd, KVM_GET_STATS_FD, 0}, pending, &r)) <
	    0)
		return rc;
	if (r >= 0)
		return 1;
	p->nostats[kvm_nostats_classify(1, (int)-r)]++;
	return 0;
}

/* Injects, in thread tid, the ioctl of every target that names tid. */
static int inject(pid_t pid, pid_t tid, struct plan *p)
{
	struct user_regs_struct saved;
	int pending = 0, opened = 0, rc = 0;

	/* A thread that enters KVM_RUN just after this look is caught by the
	 * check on its registers below, and left at once. */
	if (in_kvm_run(pid, tid))
		return -EBUSY;
	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0) {
		rc = -errno;
		goto detach;
	}
	/* A signal may stop it before the interrupt does; keep it and wait on. */
	for (int i = 0; i < STEP_TRIES; i++) {
		int sig = wait_stop(tid, &pending, STOP_WAIT_US);
		if (sig == -ETIMEDOUT)
			return sig; /* not stopped, so not detachable: our thread's exit detaches it
				     */
		if (sig == 0)
			break;
		if (sig < 0 || i == STEP_TRIES - 1) {
			rc = -ECHILD;
			goto detach;
		}
		ptrace(PTRACE_CONT, tid, 0, 0);
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
	}
	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0) {
		rc = -errno;
		goto detach;
	}
	/* Blocked in a syscall, and not KVM_RUN: the two bytes before rip are
	 * that `syscall` (0f 05), which we run again for our ioctl. */
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, tid, saved.rip - 2, 0);
	if ((long)saved.orig_rax < 0 || errno || (word & 0xFFFF) != 0x050F ||
	    (saved.orig_rax == SYS_ioctl && saved.rsi == KVM_RUN)) {
		rc = -EBUSY;
		goto restore;
	}
	for (size_t i = 0; i < p->n; i++) {
		if (p->t[i].tid != tid)
			continue;
		int r = stats_fd_of(tid, &saved, saved.rip - 2, p, p->t[i].fd, &pending);
		if (r > 0)
			opened++;
		else if (r == -ECHILD || r == -EIO)
			break; /* the thread is in a state we did not expect: stop */
	}
restore:
	/* Exactly as it was: the interrupted syscall restarts on resume. */
	if (ptrace(PTRACE_SETREGS, tid, 0, &saved) < 0)
		rc = rc ? rc : -errno;
detach:
	ptrace(PTRACE_DETACH, tid, 0, (void *)(long)pending);
	return rc < 0 ? rc : opened;
}

/* The process's tracer, from its status (0: none). */
static pid_t tracer_of(const char *proc, pid_t pid)
{
	char v[32];
	int tracer;
	return kvm_proc_status(proc, pid, "TracerPid", v, sizeof(v)) &&
		       sscanf(v, "%d", &tracer) == 1
		   ? tracer
		   : 0;
}

struct attach_job {
	const char *proc;
	pid_t pid;
	int rc;
	unsigned *nostats; /* the caller's, added to */
};

static void *attach_main(void *arg)
{
	struct attach_job *job = arg;
	const char *proc = job->proc;
	pid_t pid = job->pid;
	struct plan *p = malloc(sizeof(*p));
	int opened = 0, rc = 0;

	if (!p) {
		job->rc = -ENOMEM;
		return NULL;
	}
	make_plan(proc, pid, p);
	for (size_t i = 0; i < p->n; i++) {
		bool first = true; /* each thread once */
		for (size_t j = 0; j < i && first; j++)
			first = p->t[j].tid != p->t[i].tid;
		if (!first)
			continue;
		int r = inject(pid, p->t[i].tid, p);
		if (r > 0)
			opened += r;
		else if (r < 0)
			rc = r; /* that thread was not in a safe place: try at the next look */
	}
	for (int k = 0; k < KVM_NOSTATS_KINDS; k++)
		job->nostats[k] += p->nostats[k];
	free(p);
	job->rc = opened ? opened : rc;
	return NULL;
}

int kvm_attach_pid(const char *proc, pid_t pid, unsigned nostats[KVM_NOSTATS_KINDS])
{
	struct attach_job job = {proc, pid, 0, nostats};
	pthread_t t;

	if (tracer_of(proc, pid) > 0)
		return -EALREADY; /* ptrace would refuse with EPERM, which means something else */
	if (pthread_create(&t, NULL, attach_main, &job) != 0)
		return -EAGAIN;
	pthread_join(t, NULL); /* bounded: every wait in it has a deadline */
	return job.rc;
}

#else

int kvm_attach_pid(const char *proc, pid_t pid, unsigned nostats[KVM_NOSTATS_KINDS])
{
	(void)proc;
	(void)pid;
	(void)nostats;
	return -ENOSYS;
}

#endif
