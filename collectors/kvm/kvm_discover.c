/* Finds the stats fds VMM processes hold and copies them with pidfd_getfd.
 * KVM refuses KVM_GET_STATS_FD from another process (its ioctls must come
 * from the VM's own mm), but a stats fd the VMM already holds reads fine
 * from anywhere: copying those is the passive way in. */
#include "kvm_discover.h"

#include "kvm_denied.h"
#include "kvm_procfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utf8.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define CMDLINE_MAX 65536

/* QEMU option values: key=value pairs split on ',', with ",," a literal comma. */
static void opt_value(const char *arg, const char *key, bool implied, char *out, size_t outlen)
{
	size_t klen = strlen(key), o = 0;
	bool first = true;

	for (const char *p = arg; *p;) {
		const char *start = p;
		char val[256];
		size_t v = 0;
		for (; *p && !(p[0] == ',' && p[1] != ','); p++) {
			if (p[0] == ',' && p[1] == ',')
				p++;
			if (v + 1 < sizeof(val))
				val[v++] = *p;
		}
		val[v] = '\0';
		if (*p == ',')
			p++;
		bool has_eq = memchr(start, '=', (size_t)(p - start)) != NULL;
		if ((first && implied && !has_eq) ||
		    (strncmp(val, key, klen) == 0 && val[klen] == '=')) {
			const char *s = has_eq ? val + klen + 1 : val;
			size_t keep = utf8_cut(s, outlen - 1); /* whole characters */
			for (o = 0; o < keep; o++)
				out[o] = s[o];
			out[o] = '\0';
			return;
		}
		first = false;
	}
}

void kvm_cmdline_identity(const char *buf, size_t len, struct kvm_identity *id)
{
	const char *end = buf + len;

	id->name[0] = id->uuid[0] = '\0';
	for (const char *a = buf; a < end; a += strnlen(a, (size_t)(end - a)) + 1) {
		const char *next = a + strnlen(a, (size_t)(end - a)) + 1;
		/* The value must end inside the buffer: a command line cut at
		 * CMDLINE_MAX has no NUL after its last argument. */
		if (next >= end || !memchr(next, '\0', (size_t)(end - next)))
			break;
		if (strcmp(a, "-name") == 0 || strcmp(a, "--name") == 0)
			opt_value(next, "guest", true, id->name, sizeof(id->name));
		else if (strcmp(a, "-uuid") == 0 || strcmp(a, "--uuid") == 0)
			snprintf(id->uuid, sizeof(id->uuid), "%.36s", next);
	}
}

pid_t kvm_tgid_of(const char *proc, pid_t tid)
{
	char v[32];
	int tgid;
	return kvm_proc_status(proc, tid, "Tgid", v, sizeof(v)) && sscanf(v, "%d", &tgid) == 1
		   ? tgid
		   : -1;
}

void kvm_exe_name(const char *link, bool deleted, char *out, size_t len)
{
	static const char suffix[] = " (deleted)";
	const char *base = strrchr(link, '/');
	size_t n;

	base = base ? base + 1 : link;
	n = strlen(base);
	/* The kernel adds this to the link of a file unlinked since it was
	 * run: an upgrade under a running VMM must not make it another one. */
	if (deleted && n >= sizeof(suffix) && strcmp(base + n - (sizeof(suffix) - 1), suffix) == 0)
		n -= sizeof(suffix) - 1;
	snprintf(out, len, "%.*s", (int)n, base);
}

static void read_identity(const char *proc, pid_t pid, struct kvm_identity *id)
{
	char path[128], buf[PATH_MAX];
	int fd;
	ssize_t n;

	memset(id, 0, sizeof(*id));
	id->uid_known = kvm_proc_uids(proc, pid, id->uid);
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc, (int)pid);
	char *cmd = malloc(CMDLINE_MAX);
	if (cmd && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, cmd, CMDLINE_MAX);
		close(fd);
		if (n > 0)
			kvm_cmdline_identity(cmd, (size_t)n, id);
	}
	free(cmd);
	snprintf(path, sizeof(path), "%s/%d/exe", proc, (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n > 0) {
		struct stat st;
		buf[n] = '\0';
		/* stat follows the link to the running binary's inode, unlinked
		 * or not: " (deleted)" is the kernel's only when it has no name
		 * left (a binary may be named so). */
		bool gone = stat(path, &st) == 0 && st.st_nlink == 0;
		kvm_exe_name(buf, gone, id->vmm, sizeof(id->vmm));
		return;
	}
	snprintf(path, sizeof(path), "%s/%d/comm", proc, (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(id->vmm) - 1);
		close(fd);
		if (n > 0)
			snprintf(id->vmm, sizeof(id->vmm), "%.*s", (int)strcspn(buf, "\n"), buf);
	}
}

static bool candidates_push(struct kvm_look *cs, int fd, int vcpu)
{
	if (growarr_push(&cs->cands, &(struct kvm_candidate){fd, vcpu}) < 0)
		return false;
	cs->max_fd = fd > cs->max_fd ? fd : cs->max_fd;
	return true;
}

static bool census_push(struct kvm_look *look, int fd, int index)
{
	return growarr_push(&look->census.vcpus, &(struct kvm_vcpu_fd){index, fd}) == 0;
}

static bool note_fd(void *ctx, int fd, const char *link)
{
	struct kvm_look *look = ctx;
	int vcpu;

	if (strcmp(link, "anon_inode:kvm-vm") == 0)
		look->census.vms++;
	else if (strncmp(link, "anon_inode:kvm-vcpu:", 20) == 0 &&
		 sscanf(link + 20, "%9d", &vcpu) == 1 && vcpu >= 0)
		return census_push(look, fd, vcpu);
	else if (strcmp(link, "anon_inode:kvm-vm-stats") == 0)
		return candidates_push(look, fd, -1);
	else if (strncmp(link, "anon_inode:kvm-vcpu-stats:", 26) == 0 &&
		 sscanf(link + 26, "%9d", &vcpu) == 1 && vcpu >= 0)
		return candidates_push(look, fd, vcpu);
	return true;
}

static int index_cmp(const void *a, const void *b)
{
	int x = ((const struct kvm_vcpu_fd *)a)->index, y = ((const struct kvm_vcpu_fd *)b)->index;
	return (x > y) - (x < y);
}

/* Keeps the process's KVM stats fds and counts its VMs and vCPUs. Only a
 * process that holds a VM itself (anon_inode:kvm-vm) is a VMM: another
 * exporter, or any reader holding copies, is not, and counting its copies
 * would count the VM twice. */
static void list_stats_fds(const char *proc, pid_t pid, struct kvm_look *look)
{
	int rc = kvm_procfd_each(proc, pid, note_fd, look);

	look->denied = rc == -EACCES || rc == -EPERM;
	/* Counted as a VMM only on a sign (kvm_denied.c), or a VM fd seen
	 * before the refusal: most processes we may not read hold no VM. */
	look->unreadable_vmm = look->denied && (look->census.vms || kvm_vmm_visible(proc, pid));
	if (!look->census.vms)
		look->cands.n = 0;
	if (look->census.vcpus.n) /* qsort takes no NULL, even for nothing */
		qsort(look->census.vcpu, look->census.vcpus.n, sizeof(look->census.vcpu[0]),
		      index_cmp);
}

size_t kvm_discover_look(const char *proc, pid_t pid, struct kvm_look *look)
{
	memset(look, 0, sizeof(*look));
	look->pid = pid;
	look->max_fd = -1;
	growarr_init(&look->cands, sizeof(struct kvm_candidate), KVM_FDS_PER_PROCESS_MAX);
	growarr_init(&look->census.vcpus, sizeof(struct kvm_vcpu_fd), KVM_FDS_PER_PROCESS_MAX);
	/* Our own copies are stats fds too: never discover ourselves. */
	if (pid != getpid())
		list_stats_fds(proc, pid, look);
	if (look->cands.n)
		read_identity(proc, pid, &look->ident);
	return look->cands.n;
}

void kvm_look_free(struct kvm_look *look)
{
	growarr_free(&look->cands);
	growarr_free(&look->census.vcpus);
}

int kvm_discover_take(struct kvm_vmset *set, const struct kvm_look *look, kvm_pidfd_fn *pidfd_of,
		      kvm_drop_fn *drop, void *ctx)
{
	pid_t pid = look->pid;
	bool *held = NULL;
	int added = 0;

	if (look->cands.n == 0)
		return 0;
	int pidfd = pidfd_of(ctx, pid);
	if (pidfd < 0)
		return 0;
	kvm_vmset_prune(set, pid);
	if (!(held = kvm_vmset_held_by_fd(set, pid, look->max_fd)))
		return -ENOMEM;
	/* VM fds first, so vCPUs find their VM. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < look->cands.n; i++) {
			const struct kvm_candidate *c = &look->c[i];
			if ((pass == 0) != (c->vcpu < 0) || held[c->fd])
				continue; /* prune just kept only the live copies */
			int fd = (int)syscall(SYS_pidfd_getfd, pidfd, c->fd, 0);
			if (fd < 0) {
				if (errno == EPERM) {
					added = -EPERM;
					goto out_free_held;
				}
				continue; /* closed meanwhile */
			}
			if (kvm_vmset_add(set, pid, 0, fd, c->fd, c->vcpu, &look->ident,
					  &look->census, drop, ctx) == 0)
				added++;
		}
	}
out_free_held:
	free(held);
	return added;
}

int kvm_discover_all(const char *proc, void (*scan)(void *ctx, pid_t pid), void *ctx)
{
	DIR *d = opendir(proc);
	struct dirent *e;

	if (!d)
		return -errno;
	/* Every process, even once one refused us: each VMM we may not read
	 * is counted (kvm_denied.h), not only the first. */
	while ((e = readdir(d))) {
		pid_t pid = kvm_proc_number(e->d_name);
		if (pid > 0)
			scan(ctx, pid);
	}
	closedir(d);
	return 0;
}
