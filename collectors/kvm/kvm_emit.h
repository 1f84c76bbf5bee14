/* Writes the held VMs' statistics: per VM (vCPUs aggregated) or per vCPU. */
#ifndef KVM_EMIT_H
#define KVM_EMIT_H

#include <binstat/collector.h>

#include "kvm_vmset.h"
#include "growarr.h"

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

/* Parts a scrape's families are cut in: one per thread that writes. */
#define KVM_EMIT_PARTS_MAX (1 + BS_EMITTER_FORKS_MAX)
#define KVM_THREAD_FAMILIES 3 /* schedstat's three figures */
#define KVM_VMM_FAMILIES 2    /* a VMM's resident memory, major faults */

enum kvm_item_kind {
	KVM_ITEM_INFO,
	KVM_ITEM_METADATA,
	KVM_ITEM_VM_METRIC,
	KVM_ITEM_VCPU_METRIC,
	KVM_ITEM_THREADS, /* a scheduler figure of the vCPU threads */
	KVM_ITEM_VMMS,	  /* a figure of the VMM processes */
};

/* One family to write. */
struct kvm_emit_item {
	enum kvm_item_kind kind;
	int which; /* the figure, for THREADS and VMMS */
	const struct kvm_schema *schema;
	const struct kvm_metric *metric; /* for VM_METRIC and VCPU_METRIC */
};

/* A scrape's families in the order they are written, cut into parts of
 * about the same work (series to write, from the set's size). */
struct kvm_emit_plan {
	GROWARR_OF(struct kvm_emit_item, item, items);
	size_t parts;
	size_t cut[KVM_EMIT_PARTS_MAX + 1]; /* part k: items cut[k] to cut[k + 1] */
};

/* Lays out the families of the set's schemas the stats filter lets
 * through, cut into `parts` (at most KVM_EMIT_PARTS_MAX), in `p`, which it
 * makes (not a plan in use: free that first). The schemas must not change
 * until the parts are written. Returns 0 or -ENOMEM; free the plan with
 * kvm_emit_plan_free either way. */
int kvm_emit_plan(struct kvm_emit_plan *p, const struct kvm_vmset *set, enum kvm_mode mode,
		  const struct kvm_filter *stats, size_t parts);
/* Writes one part of what kvm_scrape (kvm_scrape.h) read. */
void kvm_emit_part(struct bs_emitter *em, const struct kvm_vmset *set, enum kvm_mode mode,
		   const struct kvm_emit_plan *p, size_t part);
void kvm_emit_plan_free(struct kvm_emit_plan *p);

#endif
