/* The VMM processes the collector sees but may not read (no CAP_SYS_PTRACE
 * over them, another user namespace, Yama's ptrace_scope), and what is
 * missing: so that a host of unreadable VMs is counted, never a quiet 0. */
#ifndef KVM_DENIED_H
#define KVM_DENIED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "growarr.h"

#define KVM_DENIED_MAX 65536 /* unreadable VMMs remembered */
/* Those watched by a pidfd: at most a quarter of RLIMIT_NOFILE's soft
 * limit (the rest is the real work's: the collector's own VMs, scrapes),
 * and never more than this. Past it a VMM is counted without a watch and
 * recounted by each full walk instead. */
#define KVM_DENIED_WATCH_MAX 4096

struct kvm_denied_pid {
	pid_t pid;
	bool watched; /* held by a pidfd: leaves when it exits */
	bool seen;    /* by the running walk (only the unwatched need it) */
};

struct kvm_denied {
	GROWARR_OF(struct kvm_denied_pid, p, pids);
	size_t nwatched;
};

void kvm_denied_init(struct kvm_denied *d);
void kvm_denied_free(struct kvm_denied *d);
/* The entry of pid, or NULL. */
struct kvm_denied_pid *kvm_denied_find(const struct kvm_denied *d, pid_t pid);
bool kvm_denied_has(const struct kvm_denied *d, pid_t pid);
/* Returns 1 when pid is new, 0 when it was there, or -errno (full). */
int kvm_denied_add(struct kvm_denied *d, pid_t pid, bool watched);
/* Returns whether it was there. */
bool kvm_denied_remove(struct kvm_denied *d, pid_t pid);
/* A full walk starts: no unwatched VMM seen yet. */
void kvm_denied_walk_start(struct kvm_denied *d);
/* It ended: forgets the unwatched VMMs it did not see again (gone, or
 * readable now). Returns how many. */
size_t kvm_denied_walk_end(struct kvm_denied *d);
/* How many may be watched under a soft RLIMIT_NOFILE of `nofile`. */
size_t kvm_denied_watch_cap(unsigned long long nofile);

/* Whether a task's /proc stat line (comm and flags, readable by any user)
 * is KVM's: KVM's own worker in the VMM's thread group (kvm-nx-lpage-recovery,
 * its comm cut to "kvm-nx-lpage-re", flagged PF_USER_WORKER and not
 * PF_IO_WORKER). A name alone ("CPU N/KVM") is never enough: any user's
 * thread may take it. */
bool kvm_task_stat_is_kvm(const char *buf, size_t len);
/* Whether any thread of `pid` is, read from /proc/PID/task/TID/stat. The
 * sign of a VMM that needs no right over the process: /proc/PID/fd,
 * fdinfo, maps and exe all need one. */
bool kvm_vmm_visible(const char *proc, pid_t pid);

/* The warn line's bound: said at most once per KVM_DENIED_SAY_NS, however
 * often the count leaves 0 (a user allowed /dev/kvm can start and kill a
 * VM in a loop). Ten minutes: the alert's own `for`, so a line still comes
 * with each alert; the episodes in between are stated in the next line. */
#define KVM_DENIED_SAY_NS 600000000000ull

struct kvm_denied_say {
	uint64_t said_ns; /* 0: never said */
	uint64_t unsaid;  /* episodes since, not said */
};

/* One episode (the count left 0) at `now`: returns whether to say it, with
 * *episodes the number since the last line (this one included). */
bool kvm_denied_say_due(struct kvm_denied_say *s, uint64_t now, uint64_t *episodes);

/* The hidepid= of the /proc mounted at `proc` ("invisible", "noaccess",
 * "ptraceable", or 1/2 on older kernels) from a mountinfo text, or NULL
 * when it shows every process. Pure, for the tests. */
const char *kvm_mountinfo_hidepid(const char *text, const char *proc, char *out, size_t len);
/* The same read from /proc/self/mountinfo, when this process lacks
 * CAP_SYS_PTRACE (with it, hidepid hides nothing from us); else NULL. */
const char *kvm_proc_hidepid(const char *proc, char *out, size_t len);

/* What this process lacks to read other users' VMMs, for the log:
 * "CAP_SYS_PTRACE", "kernel.yama.ptrace_scope=3", "user_namespace" (our
 * capability holds in our own user namespace only) or "ptrace_access" (it
 * has the capability, and something else, an LSM, refused). */
const char *kvm_denied_missing(void);

#endif
