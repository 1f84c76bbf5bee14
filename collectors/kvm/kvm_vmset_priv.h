/* The VM set's records of VMMs (struct kvm_vmm, kvm_vmset.h): its VMs,
 * indexed by id, and the stats ids they hold. Private to the set: a VM
 * points to its VMM and a VMM lists its VMs, so kvm_vmset.c and kvm_vmm.c
 * are one module in two files, and nothing else includes this. */
#ifndef KVM_VMSET_PRIV_H
#define KVM_VMSET_PRIV_H

#include "kvm_vmset.h"

/* The record of VMM `pid`, made (and kept sorted by pid) with its first VM. */
struct kvm_vmm *kvm_vmm_get(struct kvm_vmset *set, pid_t pid);
void kvm_vmm_free(struct kvm_vmset *set, struct kvm_vmm *m);
/* `vm` joins its VMM's list; `gone` leaves it (and the record goes with
 * its last VM). */
int kvm_vmm_join(struct kvm_vmm *m, struct kvm_vm *vm);
void kvm_vmm_leave(struct kvm_vmset *set, const struct kvm_vm *gone);
/* The index by id (m->byid), current; false when out of memory. */
bool kvm_vmm_byid_ready(struct kvm_vmm *m);
/* Whether the VMM may hold a stats fd whose id hashes to h: false is sure,
 * true is to be checked against its VMs. */
bool kvm_vmm_may_hold(struct kvm_vmm *m, uint64_t h);
/* A stats fd whose id hashes to h was taken. */
void kvm_vmm_took(struct kvm_vmm *m, uint64_t h);

#endif
