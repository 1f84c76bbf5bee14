/* The VMs the collector holds stats fds of.
 *
 * Grouping: the kernel names a stats fd after the thread that created the
 * VM or vCPU (kvm-TID, kvm-TID/vcpu-N). A vCPU belongs to the VM of the same
 * VMM whose id is its prefix; failing that (QEMU creates vCPUs in their own
 * threads) to the VMM's only VM; failing that, to a VM of its own prefix. */
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

static struct kvm_vm *vm_new(struct kvm_vmset *set, pid_t pid, const char *id,
			     const struct kvm_identity *ident)
{
	if (set->n >= set->max_vms)
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
	snprintf(vm->id, sizeof(vm->id), "%s", id);
	vm->ident = *ident;
	vm->vmfd.fd = -1;
	vm_label(set, vm);
	set->vm[set->n++] = vm;
	return vm;
}

static struct kvm_vm *vm_for_vcpu(struct kvm_vmset *set, pid_t pid, const char *id,
				  const struct kvm_identity *ident)
{
	char prefix[KVM_ID_MAX];
	struct kvm_vm *only = NULL;
	size_t in_pid = 0;

	snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(id, "/"), id);
	for (size_t i = 0; i < set->n; i++) {
		if (set->vm[i]->pid != pid)
			continue;
		if (strcmp(set->vm[i]->id, prefix) == 0)
			return set->vm[i];
		only = set->vm[i];
		in_pid++;
	}
	if (in_pid == 1)
		return only;
	return vm_new(set, pid, prefix, ident);
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

static int attach(struct kvm_vmset *set, pid_t pid, struct kvm_statsfd *s, int vmm_fd,
		  int vcpu_index, const struct kvm_identity *ident)
{
	struct kvm_vm *vm;

	if (vcpu_index < 0) {
		/* A VM fd may arrive after its vCPUs formed a VM under the same id. */
		vm = NULL;
		for (size_t i = 0; i < set->n && !vm; i++)
			if (set->vm[i]->pid == pid && strcmp(set->vm[i]->id, s->id) == 0)
				vm = set->vm[i];
		if (vm && vm->has_vmfd)
			return -EEXIST; /* a second stats fd of the same VM */
		if (!vm && !(vm = vm_new(set, pid, s->id, ident)))
			return -ENOSPC;
		vm->vmfd = *s;
		vm->vm_vmm_fd = vmm_fd;
		vm->has_vmfd = true;
		return 0;
	}
	if (!(vm = vm_for_vcpu(set, pid, s->id, ident)))
		return -ENOSPC;
	for (size_t j = 0; j < vm->nvcpu; j++)
		if (strcmp(vm->vcpu[j].s.id, s->id) == 0)
			return -EEXIST; /* QEMU 8.1+ and the shim both hold this vCPU's */
	return add_vcpu(vm, s, vcpu_index, vmm_fd, set->max_vcpus);
}

int kvm_vmset_add(struct kvm_vmset *set, pid_t pid, int fd, int vmm_fd, int vcpu_index,
		  const struct kvm_identity *ident, kvm_drop_fn *drop, void *ctx)
{
	struct kvm_statsfd s;
	int rc = kvm_statsfd_open(&s, fd, vcpu_index >= 0, &set->schemas, drop, ctx);

	if (rc < 0) {
		close(fd);
		return rc;
	}
	rc = attach(set, pid, &s, vmm_fd, vcpu_index, ident);
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
	return 0;
}

static void vm_free(struct kvm_vmset *set, struct kvm_vm *vm)
{
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
