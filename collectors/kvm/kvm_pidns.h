/* Whether the /proc the collector walks is the host's PID namespace: in a
 * container's own (no --pid=host, no hostPID) it sees no VMM at all, which
 * would look like a host with no VM; the exporter says so instead. */
#ifndef KVM_PIDNS_H
#define KVM_PIDNS_H

#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

enum kvm_pidns {
	KVM_PIDNS_UNKNOWN = 0, /* not looked at, or /proc would not say */
	KVM_PIDNS_HOST,	       /* the kernel's threads are seen: the host's */
	KVM_PIDNS_OWN,	       /* they are not: a PID namespace of its own */
};

/* Whether a /proc/2/stat line is a kernel thread's (PF_KTHREAD in its
 * flags). Pure, for the tests. */
bool kvm_pidns_stat_is_kthread(const char *buf, size_t len);
/* Looks at PID 2 under `proc`: kthreadd on every Linux since 2.6.22. */
enum kvm_pidns kvm_pidns_look(const char *proc);
/* kvm_collector_host_pid_namespace, 1 or 0; nothing while unknown. */
void kvm_pidns_emit(struct bs_emitter *em, enum kvm_pidns ns);

#endif
