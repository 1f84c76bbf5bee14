/* Finds the stats fds VMM processes hold (/proc/PID/fd) and copies them
 * with pidfd_getfd; learns each VM's identity from its command line. */
#ifndef KVM_DISCOVER_H
#define KVM_DISCOVER_H

#include <sys/types.h>

#include "kvm_vmset.h"

#define KVM_FDS_PER_PROCESS_MAX (1 << 20) /* stats fds looked at in one process */

/* Gives the pidfd of `pid` (kept and watched by the caller), or -errno. */
typedef int kvm_pidfd_fn(void *ctx, pid_t pid);

/* Parses a NUL-separated command line for QEMU's -name and -uuid. */
void kvm_cmdline_identity(const char *buf, size_t len, struct kvm_identity *id);
/* The process (thread group) a thread id belongs to, or -1. */
pid_t kvm_tgid_of(const char *proc, pid_t tid);
/* Copies the stats fds of `pid` not yet held into the set. Returns how many
 * were added, or -EPERM when pidfd_getfd is refused (no CAP_SYS_PTRACE). */
int kvm_discover_pid(struct kvm_vmset *set, const char *proc, pid_t pid, kvm_pidfd_fn *pidfd_of,
		     kvm_drop_fn *drop, void *ctx);
/* Calls scan(ctx, pid) for every process under `proc` until it returns
 * -EPERM; the caller locks around each, so a full walk never holds a scrape
 * up for longer than one process takes. Returns 0 or that -EPERM. */
int kvm_discover_all(const char *proc, int (*scan)(void *ctx, pid_t pid), void *ctx);

#endif
