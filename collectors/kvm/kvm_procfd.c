/* The fds a process holds, with their /proc links. The direct way reads
 * /proc/PID/fd; an exporter with CAP_SYS_PTRACE as its only capability (the
 * shipped unit) may not list that directory for another user's process,
 * but may list /proc/PID/fdinfo and copy fds with pidfd_getfd. */
#include "kvm_procfd.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define LINK_MAX_LEN 64

int kvm_proc_number(const char *name)
{
	char *end;
	long v = strtol(name, &end, 10);
	return isdigit((unsigned char)name[0]) && !*end && v <= INT_MAX ? (int)v : -1;
}

static int each_by_link(DIR *d, kvm_procfd_fn *each, void *ctx)
{
	char link[LINK_MAX_LEN];
	struct dirent *e;

	while ((e = readdir(d))) {
		int fd = kvm_proc_number(e->d_name);
		ssize_t len = fd < 0 ? -1 : readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		/* Listed but not readable: the links need the ptrace right the
		 * listing did not (our uid, another user namespace's process). */
		if (len < 0 && fd >= 0 && (errno == EACCES || errno == EPERM))
			return -EACCES;
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, "anon_inode:", 11) == 0 && !each(ctx, fd, link))
			break;
	}
	return 0;
}

bool kvm_proc_status(const char *proc, pid_t pid, const char *key, char *val, size_t len)
{
	char path[128], line[256];
	size_t klen = strlen(key);
	bool found = false;

	snprintf(path, sizeof(path), "%s/%d/status", proc, (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			snprintf(val, len, "%s", line + klen + 1);
			found = true;
		}
	fclose(f);
	return found;
}

bool kvm_proc_uids(const char *proc, pid_t pid, uid_t uid[3])
{
	char v[128];
	unsigned r, e, s;

	if (!kvm_proc_status(proc, pid, "Uid", v, sizeof(v)) ||
	    sscanf(v, "%u %u %u", &r, &e, &s) != 3)
		return false;
	uid[0] = r, uid[1] = e, uid[2] = s;
	return true;
}

/* An fdinfo file's inode and mount (its "ino:" and "mnt_id:" lines). */
static void fdinfo_identity(FILE *f, unsigned long *ino, int *mnt)
{
	char line[128];
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", mnt) != 1)
			sscanf(line, "ino: %lu", ino);
}

/* The inode and mount every anon inode shares (one for the kernel's
 * lifetime), read once from an eventfd of ours. */
static unsigned long anon_ino;
static int anon_mnt = -1;
static pthread_once_t anon_once = PTHREAD_ONCE_INIT;

static void read_anon_identity(void)
{
	char path[64];
	unsigned long ino = 0;
	int mnt = -1, efd = eventfd(0, EFD_CLOEXEC);

	if (efd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", efd);
	FILE *f = fopen(path, "re");
	if (f) {
		fdinfo_identity(f, &ino, &mnt);
		fclose(f);
	}
	close(efd);
	if (ino && mnt >= 0) {
		anon_ino = ino;
		anon_mnt = mnt;
	}
}

static int anon_identity(unsigned long *ino, int *mnt)
{
	pthread_once(&anon_once, read_anon_identity);
	*ino = anon_ino;
	*mnt = anon_mnt;
	return anon_mnt >= 0 ? 0 : -ENOENT;
}

static bool is_anon(int fdinfo_dir, const char *name, unsigned long ino, int mnt)
{
	unsigned long i = 0;
	int m = -1, fd = openat(fdinfo_dir, name, O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	fdinfo_identity(f, &i, &m);
	fclose(f);
	return i == ino && m == mnt;
}

static int each_by_copy(DIR *d, pid_t pid, kvm_procfd_fn *each, void *ctx)
{
	char path[64], link[LINK_MAX_LEN];
	unsigned long ino;
	int mnt, rc = 0;
	struct dirent *e;

	if ((rc = anon_identity(&ino, &mnt)) < 0)
		return rc;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	while ((e = readdir(d))) {
		int fd = kvm_proc_number(e->d_name);
		if (fd < 0 || !is_anon(dirfd(d), e->d_name, ino, mnt))
			continue;
		int copy = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (copy < 0) {
			if (errno == EPERM) {
				rc = -EPERM;
				break;
			}
			continue; /* closed meanwhile */
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", copy);
		ssize_t len = readlink(path, link, sizeof(link) - 1);
		close(copy); /* an anon inode's release never waits on anyone */
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (!each(ctx, fd, link))
			break;
	}
	close(pidfd);
	return rc;
}

int kvm_procfd_each(const char *proc, pid_t pid, kvm_procfd_fn *each, void *ctx)
{
	char path[128];
	int rc;

	snprintf(path, sizeof(path), "%s/%d/fd", proc, (int)pid);
	DIR *d = opendir(path);
	if (d) {
		rc = each_by_link(d, each, ctx);
		closedir(d);
		return rc;
	}
	if (errno != EACCES)
		return -errno;
	snprintf(path, sizeof(path), "%s/%d/fdinfo", proc, (int)pid);
	if (!(d = opendir(path)))
		return -errno;
	rc = each_by_copy(d, pid, each, ctx);
	closedir(d);
	return rc;
}
