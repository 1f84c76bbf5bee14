/* The VMs the collector holds stats fds of, grouped from what discovery
 * finds, with their identity and the label that names them. */
#ifndef KVM_VMSET_H
#define KVM_VMSET_H

#include <stdbool.h>
#include <sys/types.h>

#include "kvm_statsfd.h"

#define KVM_LABEL_MAX 160

struct kvm_vcpu {
	struct kvm_statsfd s;
	int index;  /* N of kvm-vcpu-stats:N */
	int vmm_fd; /* the VMM's fd number we copied, for liveness checks; -1: handed over */
};

struct kvm_identity {
	char name[128]; /* -name guest=NAME or -name NAME */
	char uuid[40];	/* -uuid */
	char vmm[64];	/* the VMM binary's base name */
};

struct kvm_vm {
	pid_t pid;	     /* the VMM process */
	pid_t from;	     /* 0: discovered; else the hand-over peer that sent it */
	char id[KVM_ID_MAX]; /* the VM's stats id (kvm-TID), or its vCPUs' prefix */
	bool has_vmfd;
	struct kvm_statsfd vmfd;
	int vm_vmm_fd;
	struct kvm_vcpu *vcpu;
	size_t nvcpu, capvcpu;
	struct kvm_identity ident;
	char label[KVM_LABEL_MAX]; /* unique among the held VMs */
	bool included;		   /* passes the vms filter: set by each scrape's read */
};

struct kvm_vmset {
	struct kvm_vm **vm;
	size_t n, cap;
	size_t max_vms, max_vcpus; /* caps from the configuration */
	size_t max_handover_vms;   /* VMs handed over count apart: discovery keeps its room */
	size_t nfds, nhandover_vms, nhandover_fds;
	struct kvm_schemas schemas;
};

/* A stats fd discovery copied (from 0) or hand-over peer `from` sent, of
 * VMM `pid`: the set takes `fd` in every case (closing it unless held).
 * `vcpu_index` < 0 for a VM fd; it must match what the kernel named the fd.
 * A vCPU joins only a VM of the same VMM and the same source, so no peer
 * can add to a VM it did not hand over. Returns 0, -EEXIST (already held),
 * or -errno (the reason dropped). */
int kvm_vmset_add(struct kvm_vmset *set, pid_t pid, pid_t from, int fd, int vmm_fd, int vcpu_index,
		  const struct kvm_identity *ident, kvm_drop_fn *drop, void *ctx);
/* Gives every handed-over fd to `take`, which owns it from then on, and
 * forgets it: a reload passes them to the next generation. */
void kvm_vmset_release_handed(struct kvm_vmset *set,
			      void (*take)(void *ctx, const struct kvm_vm *vm, int fd, int vcpu),
			      void *ctx);
/* Stats fds held that peer `from` handed over. */
size_t kvm_vmset_fds_from(const struct kvm_vmset *set, pid_t from);
/* For each fd number 0..max_fd of VMM `pid`, whether we hold a copy of it
 * (a calloc'd array the caller frees, NULL when out of memory). Call after
 * kvm_vmset_prune, which drops copies whose number the VMM reused. */
bool *kvm_vmset_held_by_fd(const struct kvm_vmset *set, pid_t pid, int max_fd);
/* Closes the fds the VMM no longer holds itself (kcmp); returns how many. */
size_t kvm_vmset_prune(struct kvm_vmset *set, pid_t pid);
/* Closes every fd of the VMM `pid`; returns how many VMs went. */
size_t kvm_vmset_remove_pid(struct kvm_vmset *set, pid_t pid);
void kvm_vmset_free(struct kvm_vmset *set);

#endif
