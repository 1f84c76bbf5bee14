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
/* Writes what kvm_read_all (kvm_read.h) read, for the stats the filter
 * lets through. */
void kvm_emit(struct bs_emitter *em, const struct kvm_vmset *set, enum kvm_mode mode,
	      const struct kvm_filter *stats);

#endif
