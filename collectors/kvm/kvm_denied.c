/* VMM processes seen but not readable. Without CAP_SYS_PTRACE over a VMM
 * every way to its stats fds is shut (/proc/PID/fd and fdinfo, pidfd_getfd,
 * ptrace), and so is everything that would say it holds a VM (its fd links,
 * maps, exe). What stays readable is each thread's stat line: KVM runs a
 * worker of its own in the VMM's thread group, flagged by the kernel. That
 * is the one sign of a thread counted here: a thread's name alone ("CPU
 * 0/KVM", QEMU's vCPUs) is any user's to choose (prctl), and would let
 * anyone raise the count and its alert. */
#include "kvm_denied.h"

#include "kvm_procfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PF_IO_WORKER 0x00000002 /* include/linux/sched.h */
#define PF_USER_WORKER 0x00004000
#define KVM_WORKER_COMM "kvm-nx-lpage-re" /* "kvm-nx-lpage-recovery" in TASK_COMM_LEN */
#define TASKS_MAX 65536			  /* threads of one process looked at */

void kvm_denied_init(struct kvm_denied *d)
{
	growarr_init(&d->pids, sizeof(struct kvm_denied_pid), KVM_DENIED_MAX);
	d->nwatched = 0;
}

void kvm_denied_free(struct kvm_denied *d)
{
	growarr_free(&d->pids);
	d->nwatched = 0;
}

struct kvm_denied_pid *kvm_denied_find(const struct kvm_denied *d, pid_t pid)
{
	for (size_t i = 0; i < d->pids.n; i++)
		if (d->p[i].pid == pid)
			return &d->p[i];
	return NULL;
}

bool kvm_denied_has(const struct kvm_denied *d, pid_t pid)
{
	return kvm_denied_find(d, pid) != NULL;
}

int kvm_denied_add(struct kvm_denied *d, pid_t pid, bool watched)
{
	if (kvm_denied_has(d, pid))
		return 0;
	int rc = growarr_push(&d->pids, &(struct kvm_denied_pid){pid, watched, true});
	if (rc < 0)
		return rc;
	d->nwatched += watched;
	return 1;
}

static void remove_at(struct kvm_denied *d, size_t i)
{
	d->nwatched -= d->p[i].watched;
	d->p[i] = d->p[--d->pids.n];
}

bool kvm_denied_remove(struct kvm_denied *d, pid_t pid)
{
	for (size_t i = 0; i < d->pids.n; i++)
		if (d->p[i].pid == pid) {
			remove_at(d, i);
			return true;
		}
	return false;
}

void kvm_denied_walk_start(struct kvm_denied *d)
{
	for (size_t i = 0; i < d->pids.n; i++)
		d->p[i].seen = false;
}

size_t kvm_denied_walk_end(struct kvm_denied *d)
{
	size_t gone = 0;

	for (size_t i = 0; i < d->pids.n;)
		if (!d->p[i].watched && !d->p[i].seen) {
			remove_at(d, i);
			gone++;
		} else {
			i++;
		}
	return gone;
}

size_t kvm_denied_watch_cap(unsigned long long nofile)
{
	unsigned long long cap = nofile / 4;
	return cap > KVM_DENIED_WATCH_MAX ? KVM_DENIED_WATCH_MAX : (size_t)cap;
}

bool kvm_task_stat_is_kvm(const char *buf, size_t len)
{
	const char *open = memchr(buf, '(', len), *close = NULL;
	char comm[32];
	unsigned long flags;

	for (size_t i = len; i > 0 && !close; i--)
		if (buf[i - 1] == ')')
			close = buf + i - 1;
	if (!open || !close || close <= open || (size_t)(close - open - 1) >= sizeof(comm))
		return false;
	snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1), open + 1);
	if (strcmp(comm, KVM_WORKER_COMM) != 0)
		return false;
	/* Fields after comm: state ppid pgrp session tty_nr tpgid flags. A
	 * user thread may name itself so; only the kernel sets the flag. But a
	 * thread may also rename a kernel worker of its own thread group
	 * (/proc/self/task/TID/comm): io_uring's, which any user can make,
	 * carry PF_IO_WORKER too, and are refused by it. */
	char line[256];
	size_t n = len - (size_t)(close + 1 - buf);
	snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
		 close + 1);
	return sscanf(line, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & PF_USER_WORKER) && !(flags & PF_IO_WORKER);
}

bool kvm_vmm_visible(const char *proc, pid_t pid)
{
	char path[96], buf[512];
	struct dirent *e;
	bool kvm = false;
	size_t seen = 0;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	while (!kvm && seen++ < TASKS_MAX && (e = readdir(d))) {
		int tid = kvm_proc_number(e->d_name);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc, (int)pid, tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		kvm = n > 0 && kvm_task_stat_is_kvm(buf, (size_t)n);
	}
	closedir(d);
	return kvm;
}

bool kvm_denied_say_due(struct kvm_denied_say *s, uint64_t now, uint64_t *episodes)
{
	s->unsaid++;
	if (s->said_ns && now - s->said_ns < KVM_DENIED_SAY_NS)
		return false;
	*episodes = s->unsaid;
	s->unsaid = 0;
	s->said_ns = now ? now : 1;
	return true;
}

static bool has_cap_sys_ptrace(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct c[2] = {0};

	if (syscall(SYS_capget, &h, c) < 0)
		return false;
	return c[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective & CAP_TO_MASK(CAP_SYS_PTRACE);
}

/* Whether we run in the initial user namespace: its uid_map is the whole
 * range onto itself. A capability holds in its own namespace and those
 * below, never over a VMM outside it. */
static bool initial_user_ns(void)
{
	char buf[128];
	unsigned long inside, outside, count;
	FILE *f = fopen("/proc/self/uid_map", "re");
	bool init = true;

	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f) &&
	    sscanf(buf, "%lu %lu %lu", &inside, &outside, &count) == 3)
		init = inside == 0 && outside == 0 && count == 4294967295ul;
	fclose(f);
	return init;
}

static int ptrace_scope(void)
{
	char buf[16];
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC), scope = -1;

	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "%d", &scope);
	}
	return scope;
}

const char *kvm_mountinfo_hidepid(const char *text, const char *proc, char *out, size_t len)
{
	const char *found = NULL;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char mnt[256], fs[32], opts[512];
		/* id parent major:minor root mount-point options [tags...] - fstype source
		 * superopts */
		if (sscanf(l, "%*s %*s %*s %*s %255s", mnt) != 1 || strcmp(mnt, proc) != 0)
			continue;
		const char *dash = strstr(l, " - ");
		const char *eol = strchr(l, '\n');
		if (!dash || (eol && dash > eol) ||
		    sscanf(dash, " - %31s %*s %511s", fs, opts) != 2 || strcmp(fs, "proc") != 0)
			continue;
		const char *h = strstr(opts, "hidepid=");
		found = NULL; /* the last mount on that point is the one seen */
		if (h) {
			h += 8;
			size_t n = strcspn(h, ",");
			snprintf(out, len, "%.*s", (int)n, h);
			if (strcmp(out, "0") != 0 && strcmp(out, "off") != 0)
				found = out;
		}
	}
	return found;
}

const char *kvm_proc_hidepid(const char *proc, char *out, size_t len)
{
	char *text = malloc(1 << 20);
	const char *h = NULL;
	int fd;

	if (!text || has_cap_sys_ptrace() ||
	    (fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0) {
		free(text);
		return NULL;
	}
	size_t n = 0;
	ssize_t r;
	while (n < (1 << 20) - 1 && (r = read(fd, text + n, (1 << 20) - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	text[n] = '\0';
	h = kvm_mountinfo_hidepid(text, proc, out, len);
	free(text);
	return h;
}

const char *kvm_denied_missing(void)
{
	if (!has_cap_sys_ptrace())
		return "CAP_SYS_PTRACE";
	if (ptrace_scope() == 3)
		return "kernel.yama.ptrace_scope=3";
	if (!initial_user_ns())
		return "user_namespace";
	return "ptrace_access";
}
