/* The host's view of the VMs. Each vCPU runs in a thread of its VMM; the
 * scheduler counts that thread's time on a CPU, its time waiting runnable
 * for one (what the guest sees as steal) and its timeslices in
 * /proc/PID/task/TID/schedstat. The thread is found, in this order:
 *   - by what it is seen doing, when the VMM holds one VM (a vCPU number
 *     is then unique): QEMU names it "CPU N/KVM" (libvirt always turns the
 *     names on), and any VMM's vCPU thread blocked in the guest's halt sits
 *     in ioctl(vcpu fd N, KVM_RUN) (/proc/PID/task/TID/syscall);
 *   - by the kernel's stats id, kvm-TID/vcpu-N, which names the thread
 *     that created the vCPU: the one that runs it in QEMU and in any VMM
 *     that creates each vCPU in its own thread. The VMM's main thread is
 *     not taken this way (Firecracker-like VMMs create every vCPU there).
 * Open /proc files refer to their task, not its number: a thread that
 * exits makes its file fail, never read another task's figures. */
#include "kvm_hostview.h"

#include "kvm_procfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Field `field` (1-based, as proc(5) numbers them) of a /proc stat line.
 * comm, field 2, may hold spaces and parentheses: fields resume after the
 * last ')'. */
static int stat_field(const char *buf, size_t len, int field, uint64_t *out)
{
	const char *p = NULL;
	for (size_t i = len; i > 0 && !p; i--)
		if (buf[i - 1] == ')')
			p = buf + i;
	if (!p || field < 3)
		return -EINVAL;
	const char *end = buf + len;
	for (int f = 2; f < field; f++) {
		while (p < end && *p == ' ')
			p++;
		if (f + 1 < field)
			while (p < end && *p != ' ')
				p++;
	}
	uint64_t v = 0;
	const char *digits = p;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == digits || (p < end && *p != ' ' && *p != '\n'))
		return -EINVAL;
	*out = v;
	return 0;
}

static int vcpu_of_fd(const struct kvm_census *census, int fd)
{
	for (size_t i = 0; census && i < census->vcpus.n; i++)
		if (census->vcpu[i].fd == fd)
			return census->vcpu[i].index;
	return -1;
}

#define PF_USER_WORKER 0x00004000 /* include/linux/sched.h */

/* Whether a thread is the kernel's worker in the VMM (KVM's
 * kvm-nx-lpage-recovery): made from a vCPU thread inside KVM_RUN, it shows
 * that thread's syscall for good. */
static bool is_worker(const char *proc, pid_t pid, pid_t tid)
{
	char path[96], buf[1024];
	uint64_t flags;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc, (int)pid, (int)tid);
	n = read_small(path, buf, sizeof(buf));
	return n <= 0 || stat_field(buf, (size_t)n, 9, &flags) < 0 || (flags & PF_USER_WORKER);
}

/* The vCPU a thread is seen to run, or -1. */
static int seen_vcpu(const char *proc, pid_t pid, pid_t tid, const struct kvm_census *census)
{
	char path[96], buf[256];
	int n;
	long nr;
	unsigned long fd, req;

	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc, (int)pid, (int)tid);
	if (read_small(path, buf, sizeof(buf)) > 0 && sscanf(buf, "CPU %9d/KVM", &n) == 1 && n >= 0)
		return n;
	if (!census || is_worker(proc, pid, tid))
		return -1;
	snprintf(path, sizeof(path), "%s/%d/task/%d/syscall", proc, (int)pid, (int)tid);
	if (read_small(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%ld 0x%lx 0x%lx", &nr, &fd, &req) == 3 && fd <= INT32_MAX &&
	    nr == SYS_ioctl && req == KVM_RUN)
		return vcpu_of_fd(census, (int)fd);
	return -1;
}

int kvm_threads_look(const char *proc, pid_t pid, const struct kvm_census *census,
		     struct kvm_threads *out)
{
	char path[64];
	struct dirent *e;

	*out = (struct kvm_threads){.pid = pid};
	growarr_init(&out->threads, sizeof(struct kvm_thread), KVM_THREADS_MAX);
	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) && out->threads.n < KVM_THREADS_MAX) {
		pid_t tid = kvm_proc_number(e->d_name);
		if (tid > 0 &&
		    growarr_push(&out->threads,
				 &(struct kvm_thread){tid, seen_vcpu(proc, pid, tid, census)}) < 0)
			break;
	}
	closedir(d);
	return 0;
}

void kvm_threads_free(struct kvm_threads *t)
{
	growarr_free(&t->threads);
	*t = (struct kvm_threads){0};
}

static bool thread_taken(const struct kvm_vmm *m, pid_t tid)
{
	for (size_t i = 0; i < m->vmlist.n; i++) {
		const struct kvm_vm *vm = m->vms[i].vm;
		for (size_t j = 0; j < vm->vcpus.n; j++)
			if (vm->vcpu[j].tid == tid)
				return true;
	}
	return false;
}

/* The thread seen to run vCPU `index`, when exactly one is. */
static pid_t seen_running(const struct kvm_threads *t, int index)
{
	pid_t found = 0;
	for (size_t i = 0; i < t->threads.n; i++)
		if (t->t[i].vcpu == index) {
			if (found)
				return 0;
			found = t->t[i].tid;
		}
	return found;
}

/* The thread that created the vCPU, when it still runs and is not the
 * VMM's main thread. */
static pid_t creator(const struct kvm_threads *t, pid_t tid)
{
	for (size_t i = 0; tid && tid != t->pid && i < t->threads.n; i++)
		if (t->t[i].tid == tid)
			return tid;
	return 0;
}

static int open_proc(const char *proc, pid_t pid, pid_t tid, const char *file)
{
	char path[96];
	if (tid)
		snprintf(path, sizeof(path), "%s/%d/task/%d/%s", proc, (int)pid, (int)tid, file);
	else
		snprintf(path, sizeof(path), "%s/%d/%s", proc, (int)pid, file);
	return open(path, O_RDONLY | O_CLOEXEC);
}

void kvm_hostview_assign(struct kvm_vmset *set, const char *proc, const struct kvm_threads *t)
{
	struct kvm_vmm *m = kvm_vmset_vmm(set, t->pid);

	if (!m)
		return;
	if (m->statfd < 0)
		m->statfd = open_proc(proc, t->pid, 0, "stat");
	for (size_t i = 0; i < m->vmlist.n; i++) {
		struct kvm_vm *vm = m->vms[i].vm;
		for (size_t j = 0; j < vm->vcpus.n; j++) {
			struct kvm_vcpu *c = &vm->vcpu[j];
			if (c->schedfd >= 0)
				continue;
			pid_t tid = creator(t, c->creator);
			if (!tid && kvm_vmm_only(m) == vm)
				tid = seen_running(t, c->index);
			if (!tid || thread_taken(m, tid))
				continue;
			c->schedfd = open_proc(proc, t->pid, tid, "schedstat");
			c->tid = c->schedfd >= 0 ? tid : 0;
		}
	}
}

bool kvm_hostview_wanted(const struct kvm_vmset *set, pid_t pid)
{
	const struct kvm_vmm *m = kvm_vmset_vmm(set, pid);
	if (!m)
		return false;
	if (m->statfd < 0)
		return true;
	for (size_t i = 0; i < m->vmlist.n; i++) {
		const struct kvm_vm *vm = m->vms[i].vm;
		for (size_t j = 0; j < vm->vcpus.n; j++)
			if (vm->vcpu[j].schedfd < 0)
				return true;
	}
	return false;
}

int kvm_schedstat_parse(const char *buf, size_t len, uint64_t out[3])
{
	char tmp[128];
	if (len == 0 || len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	return sscanf(tmp, "%" SCNu64 " %" SCNu64 " %" SCNu64, &out[0], &out[1], &out[2]) == 3
		   ? 0
		   : -EINVAL;
}

int kvm_procstat_parse(const char *buf, size_t len, uint64_t *majflt, uint64_t *rss_pages)
{
	if (stat_field(buf, len, 12, majflt) < 0 || stat_field(buf, len, 24, rss_pages) < 0)
		return -EINVAL;
	return 0;
}

static void read_vcpu(struct kvm_vcpu *c)
{
	char buf[128];
	ssize_t n;

	c->sched_fresh = false;
	if (c->schedfd < 0)
		return;
	n = pread(c->schedfd, buf, sizeof(buf) - 1, 0);
	if (n > 0 && kvm_schedstat_parse(buf, (size_t)n, c->sched) == 0) {
		c->sched_fresh = true;
		return;
	}
	close(c->schedfd); /* the thread is gone: found again at the next look */
	c->schedfd = -1;
	c->tid = 0;
}

void kvm_hostview_read_vmm(struct kvm_vmm *m)
{
	char buf[1024];
	ssize_t n = m->statfd >= 0 ? pread(m->statfd, buf, sizeof(buf), 0) : -1;

	m->fresh = n > 0 && kvm_procstat_parse(buf, (size_t)n, &m->majflt, &m->rss_pages) == 0;
}

void kvm_hostview_read_vm(struct kvm_vm *vm)
{
	for (size_t j = 0; j < vm->vcpus.n; j++)
		read_vcpu(&vm->vcpu[j]);
}
