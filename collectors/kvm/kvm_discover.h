/* Finds the stats fds VMM processes hold (/proc/PID/fd) and copies them
 * with pidfd_getfd; learns each VM's identity from its command line. */
#ifndef KVM_DISCOVER_H
#define KVM_DISCOVER_H

#include <stdbool.h>
#include <sys/types.h>

#include "kvm_vmset.h"

#define KVM_FDS_PER_PROCESS_MAX (1 << 20) /* stats fds looked at in one process */

/* Gives the pidfd of `pid` (kept and watched by the caller), or -errno. */
typedef int kvm_pidfd_fn(void *ctx, pid_t pid);

/* Parses a NUL-separated command line for QEMU's -name and -uuid. */
void kvm_cmdline_identity(const char *buf, size_t len, struct kvm_identity *id);
/* The vmm label from a /proc/PID/exe link: its base name, without the
 * " (deleted)" the kernel adds once the binary was replaced or removed;
 * deleted: the binary really was (its inode has no link left), else a
 * binary named so keeps its whole name. */
void kvm_exe_name(const char *link, bool deleted, char *out, size_t len);
/* The process (thread group) a thread id belongs to, or -1. */
pid_t kvm_tgid_of(const char *proc, pid_t tid);
struct kvm_candidate {
	int fd;	  /* the VMM's fd number */
	int vcpu; /* -1: the VM's */
};

/* What one look at a process found. */
struct kvm_look {
	pid_t pid;
	GROWARR_OF(struct kvm_candidate, c, cands); /* at most KVM_FDS_PER_PROCESS_MAX */
	int max_fd;
	struct kvm_identity ident;
	struct kvm_census census; /* its vCPU fds at most KVM_FDS_PER_PROCESS_MAX too */
	bool denied;		  /* its fds could not be listed: EACCES or EPERM */
	bool unreadable_vmm;	  /* denied, and it shows it holds a VM (kvm_denied.h) */
};

/* Lists the stats fds `pid` holds and reads its identity: /proc reads of a
 * process that may be hostile (its cmdline waits on its mm), so the caller
 * holds no lock another path needs. Returns how many stats fds it holds. */
size_t kvm_discover_look(const char *proc, pid_t pid, struct kvm_look *look);
/* Copies the looked-at stats fds not yet held into the set (under the
 * caller's lock: only pidfd_getfd, kcmp and reads of verified stats fds).
 * Returns how many were added, or -EPERM when pidfd_getfd is refused (no
 * CAP_SYS_PTRACE). */
int kvm_discover_take(struct kvm_vmset *set, const struct kvm_look *look, kvm_pidfd_fn *pidfd_of,
		      kvm_drop_fn *drop, void *ctx);
void kvm_look_free(struct kvm_look *look);
/* Calls scan(ctx, pid) for every process under `proc`; the caller locks
 * around each, so a full walk never holds a scrape up for longer than one
 * process takes. Returns 0, or -errno when `proc` cannot be listed. */
int kvm_discover_all(const char *proc, void (*scan)(void *ctx, pid_t pid), void *ctx);

#endif
