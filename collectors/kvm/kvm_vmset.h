/* The VMs the collector holds stats fds of, grouped from what discovery
 * finds, with their identity and the label that names them. */
#ifndef KVM_VMSET_H
#define KVM_VMSET_H

#include <stdbool.h>
#include <sys/types.h>

#include "kvm_fold.h"
#include "kvm_libvirt.h"
#include "kvm_statsfd.h"
#include "growarr.h"

#define KVM_LABEL_MAX 160
#define KVM_TRUSTED_MAX 64 /* trusted VMM owners */

struct kvm_vcpu {
	struct kvm_statsfd s;
	int index;	   /* N of kvm-vcpu-stats:N */
	int vmm_fd;	   /* the VMM's fd number we copied, for liveness checks; -1: handed over */
	pid_t creator;	   /* the thread its stats id (kvm-TID/vcpu-N) names, 0: none */
	pid_t tid;	   /* the host thread that runs it, 0: not known (kvm_hostview.c) */
	int schedfd;	   /* its /proc/PID/task/TID/schedstat, -1: none */
	bool sched_fresh;  /* sched[] read by this scrape */
	uint64_t sched[3]; /* ns on a CPU, ns waiting runnable, timeslices */
};

/* One VM in its VMM's list, with the keys a lookup compares, so that
 * finding a VM touches only this small array until something matches. */
struct kvm_vmm_vm {
	struct kvm_vm *vm;
	uint64_t id_hash; /* the VM's id */
	pid_t from;
	bool group;
};

/* A VMM process, shared by the VMs it holds: its /proc/PID/stat, and its
 * VMs with what finds them quickly (kvm_vmm.c). */
struct kvm_vmm {
	pid_t pid;
	int statfd; /* -1: not open */
	bool fresh; /* read by this scrape */
	uint64_t majflt, rss_pages;
	GROWARR_OF(struct kvm_vmm_vm, vms, vmlist); /* its VMs, in no order */
	size_t nvmfds;				    /* VM stats fds held */
	uint32_t *byid;	 /* slot + 1 of vms, by id_hash (open addressing); 0: free */
	size_t byid_cap; /* a power of two, or 0 */
	bool byid_stale; /* to be rebuilt before use */
	uint64_t *held;	 /* the hashes of the stats ids held (open addressing); 0: free */
	size_t held_cap, nheld;
	bool held_stale;
};

/* The VMM's one VM, NULL when it holds several. */
static inline struct kvm_vm *kvm_vmm_only(const struct kvm_vmm *m)
{
	return m->vmlist.n == 1 ? m->vms[0].vm : NULL;
}

struct kvm_identity {
	char name[128]; /* -name guest=NAME or -name NAME */
	char uuid[40];	/* -uuid */
	char vmm[64];	/* the VMM binary's base name */
	uid_t uid[3];	/* the VMM's real, effective and saved uids, */
	bool uid_known; /* when they could be read */
};

/* What a VMM holds besides its stats fds, counted by discovery: how many
 * distinct VMs and vCPUs its stats fds can stand for. A VMM may hold two
 * stats fds of one vCPU (QEMU 8.1+ and the shim each keep one), and one
 * thread may create several VMs whose stats fds then share an id. */
struct kvm_vcpu_fd {
	int index; /* N of anon_inode:kvm-vcpu:N */
	int fd;	   /* the VMM's fd number */
};

struct kvm_census {
	size_t vms;				     /* anon_inode:kvm-vm fds */
	GROWARR_OF(struct kvm_vcpu_fd, vcpu, vcpus); /* sorted by index */
};

struct kvm_vm {
	pid_t pid;	     /* the VMM process */
	pid_t from;	     /* 0: discovered; else the hand-over peer that sent it */
	char id[KVM_ID_MAX]; /* the VM's stats id (kvm-TID), or its vCPUs' prefix */
	uint64_t id_hash;    /* kvm_id_hash(id) */
	bool has_vmfd;
	struct kvm_statsfd vmfd;
	int vm_vmm_fd;
	GROWARR_OF(struct kvm_vcpu, vcpu, vcpus); /* in index order, at most max_vcpus */
	struct kvm_identity ident;
	/* vCPUs whose VM cannot be known: one thread created several VMs of
	 * this VMM, and KVM names their vCPUs alike (kvm-TID/vcpu-N). */
	bool thread_group;
	bool trusted;		   /* its VMM runs with trusted uids only */
	char label[KVM_LABEL_MAX]; /* unique among the held VMs */
	char uuid_label[64];	   /* the uuid, marked like the label when not trusted */
	uint64_t label_hash;
	bool included; /* passes the vms filter: set by each scrape's read */
	struct kvm_vmm *vmm;
	size_t vmm_slot;      /* its place in vmm->vms */
	struct kvm_meta meta; /* libvirt's record, when meta.domain is set */
	struct kvm_fold fold; /* per-VM mode: its vCPUs as this scrape read them */
};

struct kvm_vmset {
	GROWARR_OF(struct kvm_vm *, vm, vms);	 /* at most max_vms + max_handover_vms */
	GROWARR_OF(struct kvm_vmm *, vmm, vmms); /* one per VMM process held, by pid */
	size_t max_vms, max_vcpus;		 /* caps from the configuration */
	size_t max_handover_vms; /* VMs handed over count apart: discovery keeps its room */
	size_t nfds, nhandover_vms, nhandover_fds;
	size_t groups_made;		/* thread groups ever made: the collector logs each */
	uid_t trusted[KVM_TRUSTED_MAX]; /* VMM owners whose VMs may take bare names */
	size_t ntrusted;
	struct kvm_schemas schemas;
};

/* Makes the set empty, with its caps: VMs discovery finds, VMs hand-over
 * peers send (counted apart, so discovery keeps its room), vCPUs a VM. */
void kvm_vmset_init(struct kvm_vmset *set, size_t max_vms, size_t max_handover_vms,
		    size_t max_vcpus);
/* The VMM owners trusted with names (at most KVM_TRUSTED_MAX; set before
 * the first VM comes). A VM whose VMM runs with a uid not on the list
 * (real, effective or saved), or whose uids are not known, never takes a
 * bare name: its label is NAME/uid-N (N the first such uid, or
 * "unknown"), and a trusted VM's name is never left to it, whichever
 * started first. */
void kvm_vmset_trust(struct kvm_vmset *set, const uid_t *uids, size_t n);
/* A stats fd discovery copied (from 0, with the VMM's census) or hand-over
 * peer `from` sent (census NULL), of VMM `pid`: the set takes `fd` in every
 * case (closing it unless held). `vcpu_index` < 0 for a VM fd; it must
 * match what the kernel named the fd. A vCPU joins only a VM of the same
 * VMM and the same source, so no peer can add to a VM it did not hand
 * over; a peer that names its VMs (name=) groups by that name. Returns 0,
 * -EEXIST (already held), or -errno (the reason dropped). */
int kvm_vmset_add(struct kvm_vmset *set, pid_t pid, pid_t from, int fd, int vmm_fd, int vcpu_index,
		  const struct kvm_identity *ident, const struct kvm_census *census,
		  kvm_drop_fn *drop, void *ctx);
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
/* The record of VMM `pid`, NULL when no VM of it is held. */
struct kvm_vmm *kvm_vmset_vmm(const struct kvm_vmset *set, pid_t pid);
/* Closes the fds the VMM no longer holds itself (kcmp); returns how many. */
size_t kvm_vmset_prune(struct kvm_vmset *set, pid_t pid);
/* Closes every fd of the VMM `pid`; returns how many VMs went. */
size_t kvm_vmset_remove_pid(struct kvm_vmset *set, pid_t pid);
void kvm_vmset_free(struct kvm_vmset *set);

#endif
