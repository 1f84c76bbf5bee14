/* Writes the held VMs' statistics: per VM (vCPUs aggregated) or per vCPU. */
#ifndef KVM_EMIT_H
#define KVM_EMIT_H

#include <binstat/collector.h>

#include "kvm_vmset.h"

enum kvm_mode { KVM_PER_VM, KVM_PER_VCPU };

#define KVM_PATTERNS_MAX 64

/* Shell globs (fnmatch): a name passes if it matches an include and no exclude. */
struct kvm_filter {
	const char *include[KVM_PATTERNS_MAX];
	size_t ninclude;
	const char *exclude[KVM_PATTERNS_MAX];
	size_t nexclude;
};

bool kvm_filter_match(const struct kvm_filter *f, const char *name);
/* One pread per held fd of every VM the vms filter lets through (marking
 * which those are); a failed read leaves that fd out of this scrape. Per
 * VM, each VM's vCPUs are folded as soon as they are read. */
void kvm_read_all(struct kvm_vmset *set, const struct kvm_filter *vms, enum kvm_mode mode,
		  struct bs_emitter *em);
/* Writes what kvm_read_all read, for the stats the filter lets through. */
void kvm_emit(struct bs_emitter *em, const struct kvm_vmset *set, enum kvm_mode mode,
	      const struct kvm_filter *stats);

#endif
