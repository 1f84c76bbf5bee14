/* Attach mode: makes a stock VMM open its own stats fds (ptrace injection). */
#ifndef KVM_ATTACH_H
#define KVM_ATTACH_H

#include <sys/types.h>

#include "kvm_nostats.h"

/* Makes VMM `pid` open the stats fds its VMs and vCPUs lack, so passive
 * discovery can copy them. Returns how many it opened, 0 when none was
 * missing, or -errno when it gave up (the VMM untouched): -EBUSY when no
 * thread was in a safe place, -EALREADY when another tracer holds it,
 * -ENOSYS off x86-64. Needs CAP_SYS_PTRACE. Returns within a second or so
 * per thread used, whatever state the VMM's threads are in. Each stats fd
 * KVM would not make (KVM_CAP_BINARY_STATS_FD absent, EMFILE, ENOMEM...)
 * adds one to nostats[its kind]; the caller zeroes the array. */
int kvm_attach_pid(const char *proc, pid_t pid, unsigned nostats[KVM_NOSTATS_KINDS]);

#endif
