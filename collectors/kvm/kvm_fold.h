/* Per-VM mode: a VM's vCPUs folded into one data block laid out as one of
 * their schemas, by the schema's fold plan (kvm_fold_plan). */
#ifndef KVM_FOLD_H
#define KVM_FOLD_H

#include "kvm_statsfd.h"
#include "growarr.h"

/* Owned by its VM and kept from one scrape to the next; valid within the
 * collect that made it. */
struct kvm_fold {
	const struct kvm_schema *schema; /* NULL: no vCPU was read */
	/* The schema's data block as u64s, reserved to the largest schema
	 * yet (at most KVM_DATA_MAX bytes). */
	GROWARR_OF(uint64_t, vals, valbuf);
};

/* An empty fold, its memory made by the first kvm_fold_begin. */
void kvm_fold_init(struct kvm_fold *f);
/* Starts an empty fold laid out as `schema` (NULL: none). Returns 0, or
 * -ENOMEM (the fold then holds nothing). */
int kvm_fold_begin(struct kvm_fold *f, const struct kvm_schema *schema);
/* Folds one vCPU's last read in, if it succeeded. */
void kvm_fold_add(struct kvm_fold *f, const struct kvm_statsfd *v);
void kvm_fold_free(struct kvm_fold *f);

#endif
