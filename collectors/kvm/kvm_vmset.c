/* The VMs the collector holds stats fds of.
 *
 * Grouping: the kernel names a stats fd after the thread that created the
 * VM or vCPU (kvm-TID, kvm-TID/vcpu-N). A vCPU belongs to the VM of the same
 * VMM and source whose id is its prefix; failing that (QEMU creates vCPUs in
 * their own threads) to that VMM's and source's only VM; failing that, to a
 * VM of its own prefix. A source is discovery or one hand-over peer: what a
 * peer sends never joins what was discovered or another peer sent. */
#include "kvm_vmset.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static bool same_file(pid_t pid, int vmm_fd, int our_fd)
{
	return syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, our_fd, vmm_fd) == 0;
}

bool *kvm_vmset_held_by_fd(const struct kvm_vmset *set, pid_t pid, int max_fd)
{
	bool *held = calloc((size_t)max_fd + 1, sizeof(bool));

	if (!held)
		return NULL;
	for (size_t i = 0; i < set->n; i++) {
		const struct kvm_vm *vm = set->vm[i];
		if (vm->pid != pid)
			continue;
		if (vm->has_vmfd && vm->vm_vmm_fd >= 0 && vm->vm_vmm_fd <= max_fd)
			held[vm->vm_vmm_fd] = true;
		for (size_t j = 0; j < vm->nvcpu; j++)
			if (vm->vcpu[j].vmm_fd >= 0 && vm->vcpu[j].vmm_fd <= max_fd)
				held[vm->vcpu[j].vmm_fd] = true;
	}
	return held;
}

static bool label_taken(const struct kvm_vmset *set, const char *label)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->vm[i]->label, label) == 0)
			return true;
	return false;
}

/* The vm label: the name, else the uuid, else the kernel's id; made unique
 * by appending the id when two VMs claim the same name. */
static void vm_label(const struct kvm_vmset *set, struct kvm_vm *vm)
{
	const char *base = vm->ident.name[0]   ? vm->ident.name
			   : vm->ident.uuid[0] ? vm->ident.uuid
					       : vm->id;
	snprintf(vm->label, sizeof(vm->label), "%s", base);
	if (label_taken(set, vm->label))
		snprintf(vm->label, sizeof(vm->label), "%.90s/%.63s", base, vm->id);
}

static struct kvm_vm *vm_new(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id,
			     const struct kvm_identity *ident)
{
	if (from ? set->nhandover_vms >= set->max_handover_vms
		 : set->n - set->nhandover_vms >= set->max_vms)
		return NULL;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		struct kvm_vm **v = realloc(set->vm, cap * sizeof(*v));
		if (!v)
			return NULL;
		set->vm = v;
		set->cap = cap;
	}
	struct kvm_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->pid = pid;
	vm->from = from;
	set->nhandover_vms += from != 0;
	snprintf(vm->id, sizeof(vm->id), "%s", id);
	vm->ident = *ident;
	vm->vmfd.fd = -1;
	vm_label(set, vm);
	set->vm[set->n++] = vm;
	return vm;
}

static bool same_source(const struct kvm_vm *vm, pid_t pid, pid_t from)
{
	return vm->pid == pid && vm->from == from;
}

static struct kvm_vm *vm_for_vcpu(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id,
				  const struct kvm_identity *ident)
{
	char prefix[KVM_ID_MAX];
	struct kvm_vm *only = NULL;
	size_t in_pid = 0;

	snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(id, "/"), id);
	for (size_t i = 0; i < set->n; i++) {
		if (!same_source(set->vm[i], pid, from))
			continue;
		if (strcmp(set->vm[i]->id, prefix) == 0)
			return set->vm[i];
		only = set->vm[i];
		in_pid++;
	}
	if (in_pid == 1)
		return only;
	return vm_new(set, pid, from, prefix, ident);
}

static int add_vcpu(struct kvm_vm *vm, const struct kvm_statsfd *s, int index, int vmm_fd,
		    size_t max)
{
	if (vm->nvcpu >= max)
		return -ENOSPC;
	if (vm->nvcpu == vm->capvcpu) {
		size_t cap = vm->capvcpu ? vm->capvcpu * 2 : 8;
		struct kvm_vcpu *v = realloc(vm->vcpu, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		vm->vcpu = v;
		vm->capvcpu = cap;
	}
	/* Keep vCPUs in index order: the per-vCPU output reads naturally. */
	size_t at = vm->nvcpu;
	while (at > 0 && vm->vcpu[at - 1].index > index) {
		vm->vcpu[at] = vm->vcpu[at - 1];
		at--;
	}
	vm->vcpu[at] = (struct kvm_vcpu){*s, index, vmm_fd};
	vm->nvcpu++;
	return 0;
}

/* Whether a VM of VMM `pid` from any source already holds a stats fd with
 * this id: discovery and a hand-over of the same VMM must not count it twice. */
static bool id_held(const struct kvm_vmset *set, pid_t pid, const char *id, bool vcpu)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct kvm_vm *vm = set->vm[i];
		if (vm->pid != pid)
			continue;
		if (!vcpu && vm->has_vmfd && strcmp(vm->vmfd.id, id) == 0)
			return true;
		for (size_t j = 0; vcpu && j < vm->nvcpu; j++)
			if (strcmp(vm->vcpu[j].s.id, id) == 0)
				return true;
	}
	return false;
}

static int attach(struct kvm_vmset *set, pid_t pid, pid_t from, struct kvm_statsfd *s, int vmm_fd,
		  int vcpu_index, const struct kvm_identity *ident)
{
	struct kvm_vm *vm;

	if (id_held(set, pid, s->id, vcpu_index >= 0))
		return -EEXIST; /* the first to bring it keeps it (QEMU 8.1+ and the shim both hold
				   a vCPU's) */

	if (vcpu_index < 0) {
		/* A VM fd may arrive after its vCPUs formed a VM under the same id. */
		vm = NULL;
		for (size_t i = 0; i < set->n && !vm; i++)
			if (same_source(set->vm[i], pid, from) &&
			    strcmp(set->vm[i]->id, s->id) == 0)
				vm = set->vm[i];
		if (!vm && !(vm = vm_new(set, pid, from, s->id, ident)))
			return -ENOSPC;
		vm->vmfd = *s;
		vm->vm_vmm_fd = vmm_fd;
		vm->has_vmfd = true;
		return 0;
	}
	if (!(vm = vm_for_vcpu(set, pid, from, s->id, ident)))
		return -ENOSPC;
	return add_vcpu(vm, s, vcpu_index, vmm_fd, set->max_vcpus);
}

int kvm_vmset_add(struct kvm_vmset *set, pid_t pid, pid_t from, int fd, int vmm_fd, int vcpu_index,
		  const struct kvm_identity *ident, kvm_drop_fn *drop, void *ctx)
{
	struct kvm_statsfd s;
	int kind, rc;

	/* Checked here too for discovery: a VMM may swap the fd behind the
	 * number whose link it showed before pidfd_getfd copied it. */
	if (kvm_statsfd_identify(fd, &kind) < 0 || kind != vcpu_index) {
		drop(ctx, "not_kvm_stats");
		close(fd);
		return -ENOTTY;
	}
	if ((rc = kvm_statsfd_open(&s, fd, vcpu_index >= 0, &set->schemas, drop, ctx)) < 0) {
		close(fd);
		return rc;
	}
	rc = attach(set, pid, from, &s, vmm_fd, vcpu_index, ident);
	if (rc == -EEXIST) {
		kvm_statsfd_close(&s, &set->schemas);
		return rc;
	}
	if (rc < 0) {
		drop(ctx, rc == -ENOSPC ? "too_many_vms_or_vcpus" : "out_of_memory");
		kvm_statsfd_close(&s, &set->schemas);
		return rc;
	}
	set->nfds++;
	set->nhandover_fds += from != 0;
	return 0;
}

void kvm_vmset_release_handed(struct kvm_vmset *set,
			      void (*take)(void *ctx, const struct kvm_vm *vm, int fd, int vcpu),
			      void *ctx)
{
	for (size_t i = 0; i < set->n; i++) {
		struct kvm_vm *vm = set->vm[i];
		if (!vm->from)
			continue;
		if (vm->has_vmfd && vm->vmfd.fd >= 0) {
			take(ctx, vm, vm->vmfd.fd, -1);
			vm->vmfd.fd = -1;
		}
		for (size_t j = 0; j < vm->nvcpu; j++) {
			take(ctx, vm, vm->vcpu[j].s.fd, vm->vcpu[j].index);
			vm->vcpu[j].s.fd = -1;
		}
	}
}

size_t kvm_vmset_fds_from(const struct kvm_vmset *set, pid_t from)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++)
		if (set->vm[i]->from == from)
			n += set->vm[i]->nvcpu + set->vm[i]->has_vmfd;
	return n;
}

static void vm_free(struct kvm_vmset *set, struct kvm_vm *vm)
{
	set->nhandover_vms -= vm->from != 0;
	if (vm->from)
		set->nhandover_fds -= vm->nvcpu + vm->has_vmfd;
	if (vm->has_vmfd)
		kvm_statsfd_close(&vm->vmfd, &set->schemas);
	for (size_t j = 0; j < vm->nvcpu; j++)
		kvm_statsfd_close(&vm->vcpu[j].s, &set->schemas);
	set->nfds -= vm->nvcpu + vm->has_vmfd;
	free(vm->vcpu);
	free(vm);
}

static void remove_at(struct kvm_vmset *set, size_t i)
{
	vm_free(set, set->vm[i]);
	memmove(&set->vm[i], &set->vm[i + 1], (set->n - i - 1) * sizeof(set->vm[0]));
	set->n--;
}

size_t kvm_vmset_prune(struct kvm_vmset *set, pid_t pid)
{
	size_t closed = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct kvm_vm *vm = set->vm[i];
		if (vm->pid != pid)
			continue;
		for (size_t j = 0; j < vm->nvcpu;) {
			struct kvm_vcpu *c = &vm->vcpu[j];
			if (c->vmm_fd < 0 || same_file(pid, c->vmm_fd, c->s.fd)) {
				j++;
				continue;
			}
			kvm_statsfd_close(&c->s, &set->schemas);
			memmove(c, c + 1, (vm->nvcpu - j - 1) * sizeof(*c));
			vm->nvcpu--;
			set->nfds--;
			closed++;
		}
		if (vm->has_vmfd && vm->vm_vmm_fd >= 0 &&
		    !same_file(pid, vm->vm_vmm_fd, vm->vmfd.fd)) {
			kvm_statsfd_close(&vm->vmfd, &set->schemas);
			vm->has_vmfd = false;
			set->nfds--;
			closed++;
		}
	}
	/* A VM with nothing left is gone. */
	for (size_t i = 0; i < set->n;)
		if (set->vm[i]->pid == pid && !set->vm[i]->has_vmfd && set->vm[i]->nvcpu == 0)
			remove_at(set, i);
		else
			i++;
	return closed;
}

size_t kvm_vmset_remove_pid(struct kvm_vmset *set, pid_t pid)
{
	size_t removed = 0;
	for (size_t i = 0; i < set->n;)
		if (set->vm[i]->pid == pid) {
			remove_at(set, i);
			removed++;
		} else {
			i++;
		}
	return removed;
}

void kvm_vmset_free(struct kvm_vmset *set)
{
	while (set->n)
		remove_at(set, set->n - 1);
	free(set->vm);
	set->vm = NULL;
	set->cap = 0;
	kvm_schemas_free(&set->schemas);
}
