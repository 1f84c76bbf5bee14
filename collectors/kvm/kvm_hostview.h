/* The host's view of the VMs: which thread runs each vCPU and what the
 * scheduler counted for it, and each VMM process's memory and faults. */
#ifndef KVM_HOSTVIEW_H
#define KVM_HOSTVIEW_H

#include <stdint.h>
#include <sys/types.h>

#include "kvm_vmset.h"
#include "growarr.h"

#define KVM_THREADS_MAX 65536 /* threads of one VMM looked at */

/* A thread of a VMM and the vCPU it is seen to run: by QEMU's name for it
 * (CPU N/KVM) or blocked in KVM_RUN on vCPU fd N; -1 when neither. */
struct kvm_thread {
	pid_t tid;
	int vcpu;
};

/* Zeroed is empty (and may be freed); kvm_threads_look fills it. */
struct kvm_threads {
	pid_t pid;
	GROWARR_OF(struct kvm_thread, t, threads); /* at most KVM_THREADS_MAX */
};

/* Lists the threads of VMM `pid` (outside any lock: /proc reads of a
 * process that may be hostile). The census, when discovery has one, maps
 * the fd a thread runs KVM_RUN on to its vCPU. Returns 0 or -errno. */
int kvm_threads_look(const char *proc, pid_t pid, const struct kvm_census *census,
		     struct kvm_threads *out);
void kvm_threads_free(struct kvm_threads *t);
/* Under the lock: finds the thread of each vCPU of that VMM that has none
 * yet and opens its schedstat, and the VMM's /proc/PID/stat. Opening these
 * /proc files never waits on the process. */
void kvm_hostview_assign(struct kvm_vmset *set, const char *proc, const struct kvm_threads *t);
/* Whether a VMM still lacks a vCPU thread or its stat file. */
bool kvm_hostview_wanted(const struct kvm_vmset *set, pid_t pid);

/* Parses /proc/PID/task/TID/schedstat: time on a CPU, time waiting
 * runnable for one (ns), timeslices. */
int kvm_schedstat_parse(const char *buf, size_t len, uint64_t out[3]);
/* Parses /proc/PID/stat for major faults and resident pages. */
int kvm_procstat_parse(const char *buf, size_t len, uint64_t *majflt, uint64_t *rss_pages);
/* One pread of the VMM's open stat file. */
void kvm_hostview_read_vmm(struct kvm_vmm *m);
/* One pread of each open schedstat file of the VM's vCPU threads; a thread
 * that is gone loses its file (found again at the next look). */
void kvm_hostview_read_vm(struct kvm_vm *vm);

#endif
