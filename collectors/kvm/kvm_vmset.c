/* The VMs the collector holds stats fds of.
 *
 * Grouping: the kernel names a stats fd after the thread that created the
 * VM or vCPU (kvm-TID, kvm-TID/vcpu-N), so VMs one thread created share an
 * id and nothing the kernel shows ties their vCPUs to one of them
 * (vcpu_owner says what is sound). A source is discovery or one hand-over
 * peer: what a peer sends never joins what was discovered or another peer
 * sent. */
#include "kvm_vmset.h"

#include "kvm_vmset_priv.h"

#include <errno.h>
#include <linux/kcmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "utf8.h"

void kvm_vmset_init(struct kvm_vmset *set, size_t max_vms, size_t max_handover_vms,
		    size_t max_vcpus)
{
	*set = (struct kvm_vmset){
	    .max_vms = max_vms, .max_vcpus = max_vcpus, .max_handover_vms = max_handover_vms};
	/* Each VMM holds a VM at least: no more VMMs than VMs. */
	growarr_init(&set->vms, sizeof(struct kvm_vm *), max_vms + max_handover_vms);
	growarr_init(&set->vmms, sizeof(struct kvm_vmm *), max_vms + max_handover_vms);
}

static bool same_file(pid_t pid, int vmm_fd, int our_fd)
{
	return syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, our_fd, vmm_fd) == 0;
}

bool *kvm_vmset_held_by_fd(const struct kvm_vmset *set, pid_t pid, int max_fd)
{
	bool *held = calloc((size_t)max_fd + 1, sizeof(bool));
	const struct kvm_vmm *m = kvm_vmset_vmm(set, pid);

	if (!held)
		return NULL;
	for (size_t i = 0; m && i < m->vmlist.n; i++) {
		const struct kvm_vm *vm = m->vms[i].vm;
		if (vm->has_vmfd && vm->vm_vmm_fd >= 0 && vm->vm_vmm_fd <= max_fd)
			held[vm->vm_vmm_fd] = true;
		for (size_t j = 0; j < vm->vcpus.n; j++)
			if (vm->vcpu[j].vmm_fd >= 0 && vm->vcpu[j].vmm_fd <= max_fd)
				held[vm->vcpu[j].vmm_fd] = true;
	}
	return held;
}

void kvm_vmset_trust(struct kvm_vmset *set, const uid_t *uids, size_t n)
{
	set->ntrusted = n < KVM_TRUSTED_MAX ? n : KVM_TRUSTED_MAX;
	memcpy(set->trusted, uids, set->ntrusted * sizeof(*uids));
}

/* The held VM other than `self` whose label this is, or NULL. */
static struct kvm_vm *label_holder(const struct kvm_vmset *set, const char *label,
				   const struct kvm_vm *self)
{
	uint64_t h = kvm_id_hash(label);
	for (size_t i = 0; i < set->vms.n; i++)
		if (set->vm[i] != self && set->vm[i]->label_hash == h &&
		    strcmp(set->vm[i]->label, label) == 0)
			return set->vm[i];
	return NULL;
}

/* What a VM's name carries when its VMM is not trusted with names: "" when
 * every uid it runs with (real, effective, saved) is trusted, else
 * "/uid-N", N the first that is not ("/uid-unknown" when they could not be
 * read). No kernel id or ordinal is like it, so the names an untrusted
 * VMM's VMs take are apart from the bare ones a trusted VMM may use. */
static void owner_mark(const struct kvm_vmset *set, const struct kvm_identity *id, char *out,
		       size_t len)
{
	out[0] = '\0';
	for (int i = 0; id->uid_known && i < 3; i++) {
		size_t t = 0;
		while (t < set->ntrusted && set->trusted[t] != id->uid[i])
			t++;
		if (t == set->ntrusted) {
			snprintf(out, len, "/uid-%u", (unsigned)id->uid[i]);
			return;
		}
	}
	if (!id->uid_known)
		snprintf(out, len, "/uid-unknown");
}

/* The vm label: the name, else the uuid, else the kernel's id, marked with
 * the VMM's uid when it is not trusted (owner_mark): a nameless VM keeps
 * the kernel's id whoever runs it (kvm-TID, kvm-TID/uid-N). Made unique by
 * the id, then an ordinal, when several VMs claim the same name (VMs one
 * thread created share the id too; a nameless one takes the ordinal at
 * once). A thread group says what it is: the name, the thread's id, and an
 * asterisk for all that thread's vCPUs. A trusted VM whose label an
 * untrusted one holds (a trusted name that looks marked) takes it, and the
 * other is named again. `vm` is in the set. */
static void vm_label(struct kvm_vmset *set, struct kvm_vm *vm)
{
	const char *name = vm->ident.name[0]   ? vm->ident.name
			   : vm->ident.uuid[0] ? vm->ident.uuid
					       : vm->id;
	bool nameless = name == vm->id;
	char mark[24], base[90 + sizeof(mark)], first[KVM_LABEL_MAX];
	struct kvm_vm *holder;

	owner_mark(set, &vm->ident, mark, sizeof(mark));
	vm->trusted = !mark[0];
	/* An untrusted VMM may claim any uuid, a trusted VM's too: marked, it
	 * never joins that VM's series on uuid. */
	snprintf(vm->uuid_label, sizeof(vm->uuid_label), "%s%s", vm->ident.uuid,
		 vm->ident.uuid[0] ? mark : "");
	/* Cut at a character: a label cut inside one is invalid UTF-8. */
	snprintf(base, sizeof(base), "%.*s%s", (int)utf8_cut(name, nameless ? 40 : 90), name, mark);
	if (vm->thread_group && nameless)
		snprintf(first, sizeof(first), "%s/*", base);
	else if (vm->thread_group)
		snprintf(first, sizeof(first), "%s/%.40s/*", base, vm->id);
	else if (nameless)
		snprintf(first, sizeof(first), "%s", base);
	else if (!(holder = label_holder(set, base, vm)) || (vm->trusted && !holder->trusted))
		snprintf(first, sizeof(first), "%s", base);
	else
		snprintf(first, sizeof(first), "%s/%.40s", base, vm->id);
	memcpy(vm->label, first, sizeof(first));
	holder = vm->trusted ? label_holder(set, first, vm) : NULL;
	if (holder && !holder->trusted) {
		vm->label_hash = kvm_id_hash(vm->label);
		holder->label[0] = '\0'; /* it sees first taken now */
		holder->label_hash = kvm_id_hash(holder->label);
		vm_label(set, holder);
		return;
	}
	for (unsigned n = 2; label_holder(set, vm->label, vm); n++)
		snprintf(vm->label, sizeof(vm->label), "%.*s#%u", (int)utf8_cut(first, 140), first,
			 n);
	vm->label_hash = kvm_id_hash(vm->label);
}

static struct kvm_vm *vm_new(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id,
			     const struct kvm_identity *ident, bool thread_group)
{
	if (from ? set->nhandover_vms >= set->max_handover_vms
		 : set->vms.n - set->nhandover_vms >= set->max_vms)
		return NULL;
	if (growarr_room(&set->vms, 1) < 0)
		return NULL;
	struct kvm_vmm *vmm = kvm_vmm_get(set, pid);
	struct kvm_vm *vm = vmm ? calloc(1, sizeof(*vm)) : NULL;
	if (!vm)
		goto err_vmm;
	growarr_init(&vm->vcpus, sizeof(struct kvm_vcpu), set->max_vcpus);
	kvm_fold_init(&vm->fold);
	vm->pid = pid;
	vm->from = from;
	set->nhandover_vms += from != 0;
	snprintf(vm->id, sizeof(vm->id), "%s", id);
	vm->id_hash = kvm_id_hash(vm->id);
	vm->ident = *ident;
	vm->vmfd.fd = -1;
	vm->thread_group = thread_group;
	if (kvm_vmm_join(vmm, vm) < 0)
		goto err_vm;
	set->groups_made += thread_group;
	set->vm[set->vms.n++] = vm;
	vm_label(set, vm);
	return vm;
err_vm:
	set->nhandover_vms -= from != 0;
	free(vm);
err_vmm:
	if (vmm && !vmm->vmlist.n)
		kvm_vmm_free(set, vmm);
	return NULL;
}

/* Which VM a stats fd belongs to by what its source says: a hand-over
 * peer's name=, else the kernel's id (or a vCPU id's prefix). */
static bool key_matches(const struct kvm_vmm_vm *e, pid_t from, const char *id, uint64_t id_hash,
			const struct kvm_identity *ident)
{
	if (from && ident->name[0])
		return strcmp(e->vm->ident.name, ident->name) == 0;
	return e->id_hash == id_hash && strcmp(e->vm->id, id) == 0;
}

static bool vm_holds(const struct kvm_vm *vm, const char *id, uint64_t id_hash, bool vcpu)
{
	if (!vcpu)
		return vm->has_vmfd && vm->vmfd.id_hash == id_hash && strcmp(vm->vmfd.id, id) == 0;
	for (size_t j = 0; j < vm->vcpus.n; j++)
		if (vm->vcpu[j].s.id_hash == id_hash && strcmp(vm->vcpu[j].s.id, id) == 0)
			return true;
	return false;
}

/* Stats fds of VMM `pid` held for VMs (index < 0) or for vCPUs numbered `index`. */
static size_t files_held(const struct kvm_vmm *m, int index)
{
	size_t n = 0;
	for (size_t i = 0; i < m->vmlist.n; i++) {
		const struct kvm_vm *vm = m->vms[i].vm;
		n += index < 0 && vm->has_vmfd;
		for (size_t j = 0; index >= 0 && j < vm->vcpus.n; j++)
			n += vm->vcpu[j].index == index;
	}
	return n;
}

static size_t census_vcpus(const struct kvm_census *c, int index)
{
	size_t lo = 0, hi = c->vcpus.n, n = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->vcpu[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + n < c->vcpus.n && c->vcpu[lo + n].index == index)
		n++;
	return n;
}

/* Whether a new stats file with this id is another copy of one held.
 * Discovery: an id already held is a second VM or vCPU only while the VMM
 * holds more VMs (or vCPUs of that number) than we hold stats fds of; a
 * peer: the id is held by another source or by the VM it names. */
static bool is_copy(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id, int index,
		    const struct kvm_identity *ident, const struct kvm_census *census)
{
	bool vcpu = index >= 0, held = false;
	uint64_t h = kvm_id_hash(id);
	struct kvm_vmm *m = kvm_vmset_vmm(set, pid);

	if (!m || !kvm_vmm_may_hold(m, h))
		return false;
	for (size_t i = 0; i < m->vmlist.n && !held; i++) {
		const struct kvm_vm *vm = m->vms[i].vm;
		if (!vm_holds(vm, id, h, vcpu))
			continue;
		held = census || vm->from != from || key_matches(&m->vms[i], from, id, h, ident);
	}
	if (!held || !census)
		return held;
	size_t bound = vcpu ? census_vcpus(census, index) : census->vms;
	return files_held(m, index) >= bound;
}

/* The VM a vCPU belongs to. The kernel names a vCPU after the thread that
 * created it: that is its VM's id when the same thread created the VM (a
 * one-VM-per-thread VMM), and any thread in QEMU. So a VMM with one VM
 * owns all its vCPUs; else the VM whose id is the vCPU's prefix owns it,
 * when that VM is the only one of that id and every VM of the VMM is known
 * by its stats fd; else the VM cannot be known, and the vCPU joins its
 * creating thread's group rather than a VM it may not belong to. */
static struct kvm_vm *vcpu_owner(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id,
				 const struct kvm_identity *ident, const struct kvm_census *census)
{
	char prefix[KVM_ID_MAX];
	struct kvm_vm *match = NULL, *only = NULL, *group = NULL;
	size_t nmatch = 0, nvms = 0;

	snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(id, "/"), id);
	uint64_t h = kvm_id_hash(prefix);
	struct kvm_vmm *m = kvm_vmset_vmm(set, pid);
	if (census && census->vms > 1 && m && kvm_vmm_byid_ready(m)) {
		/* Discovery in a VMM of several VMs: only VMs of this id count. */
		size_t mask = m->byid_cap - 1;
		for (size_t at = h & mask; m->byid[at]; at = (at + 1) & mask) {
			const struct kvm_vmm_vm *e = &m->vms[m->byid[at] - 1];
			if (e->from != from || !key_matches(e, from, prefix, h, ident))
				continue;
			if (e->group)
				group = e->vm;
			else
				nmatch++, match = e->vm;
		}
		if (nmatch == 1 && m->nvmfds >= census->vms)
			return match;
		return group ? group : vm_new(set, pid, from, prefix, ident, true);
	}
	for (size_t i = 0; m && i < m->vmlist.n; i++) {
		const struct kvm_vmm_vm *e = &m->vms[i];
		if (e->from != from)
			continue;
		if (e->group) {
			group = e->id_hash == h && strcmp(e->vm->id, prefix) == 0 ? e->vm : group;
			continue;
		}
		only = e->vm;
		nvms++;
		if (key_matches(e, from, prefix, h, ident)) {
			match = e->vm;
			nmatch++;
		}
	}
	if (!census) { /* a peer: as it says, by name or by id */
		if (nmatch == 1)
			return match;
		if (nvms == 1 && !(from && ident->name[0]))
			return only;
		return vm_new(set, pid, from, prefix, ident, false);
	}
	if (census->vms <= 1 && nvms <= 1)
		return only ? only : vm_new(set, pid, from, prefix, ident, false);
	if (nmatch == 1 && m->nvmfds >= census->vms)
		return match;
	return group ? group : vm_new(set, pid, from, prefix, ident, true);
}

/* The VM a VM's stats fd makes or completes: one its vCPUs formed before
 * it came, else a new one (one thread's VMs share the id). Returns 0, or
 * -EEXIST when a peer sent a second stats fd for a VM it named. */
static int vmfd_owner(struct kvm_vmset *set, pid_t pid, pid_t from, const char *id,
		      const struct kvm_identity *ident, struct kvm_vm **owner)
{
	uint64_t h = kvm_id_hash(id);
	struct kvm_vmm *m = kvm_vmset_vmm(set, pid);
	if (!from && m && m->vmlist.n > 1 && kvm_vmm_byid_ready(m)) {
		size_t mask = m->byid_cap - 1;
		for (size_t at = h & mask; m->byid[at]; at = (at + 1) & mask) {
			const struct kvm_vmm_vm *e = &m->vms[m->byid[at] - 1];
			if (!e->from && !e->group && key_matches(e, 0, id, h, ident) &&
			    !e->vm->has_vmfd) {
				*owner = e->vm;
				return 0;
			}
		}
		*owner = vm_new(set, pid, from, id, ident, false);
		return *owner ? 0 : -ENOSPC;
	}
	for (size_t i = 0; m && i < m->vmlist.n; i++) {
		struct kvm_vm *vm = m->vms[i].vm;
		if (m->vms[i].from != from || m->vms[i].group ||
		    !key_matches(&m->vms[i], from, id, h, ident))
			continue;
		if (!vm->has_vmfd) {
			*owner = vm;
			return 0;
		}
		if (from && ident->name[0])
			return -EEXIST;
	}
	*owner = vm_new(set, pid, from, id, ident, false);
	return *owner ? 0 : -ENOSPC;
}

/* -ENOSPC past max_vcpus (the array's cap), or -ENOMEM. */
static int add_vcpu(struct kvm_vm *vm, const struct kvm_statsfd *s, int index, int vmm_fd)
{
	struct kvm_vcpu c = {.s = *s, .index = index, .vmm_fd = vmm_fd, .schedfd = -1};
	int tid, n;

	if (sscanf(s->id, "kvm-%d/vcpu-%d", &tid, &n) == 2 && tid > 0)
		c.creator = tid;
	/* Keep vCPUs in index order: the per-vCPU output reads naturally. */
	size_t at = vm->vcpus.n;
	while (at > 0 && vm->vcpu[at - 1].index > index)
		at--;
	int rc = growarr_insert(&vm->vcpus, at, &c);
	return rc == -E2BIG ? -ENOSPC : rc;
}

static int attach(struct kvm_vmset *set, pid_t pid, pid_t from, struct kvm_statsfd *s, int vmm_fd,
		  int vcpu_index, const struct kvm_identity *ident, const struct kvm_census *census)
{
	struct kvm_vm *vm;

	if (is_copy(set, pid, from, s->id, vcpu_index, ident, census))
		return -EEXIST; /* the first to bring it keeps it (QEMU 8.1+ and the shim both hold
				   a vCPU's) */
	if (vcpu_index < 0) {
		int rc = vmfd_owner(set, pid, from, s->id, ident, &vm);
		if (rc < 0)
			return rc;
		vm->vmfd = *s;
		vm->vm_vmm_fd = vmm_fd;
		vm->has_vmfd = true;
		vm->vmm->nvmfds++;
		kvm_vmm_took(vm->vmm, s->id_hash);
		return 0;
	}
	if (!(vm = vcpu_owner(set, pid, from, s->id, ident, census)))
		return -ENOSPC;
	int rc = add_vcpu(vm, s, vcpu_index, vmm_fd);
	if (rc == 0)
		kvm_vmm_took(vm->vmm, s->id_hash);
	return rc;
}

int kvm_vmset_add(struct kvm_vmset *set, pid_t pid, pid_t from, int fd, int vmm_fd, int vcpu_index,
		  const struct kvm_identity *ident, const struct kvm_census *census,
		  kvm_drop_fn *drop, void *ctx)
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
	rc = attach(set, pid, from, &s, vmm_fd, vcpu_index, ident, census);
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
	for (size_t i = 0; i < set->vms.n; i++) {
		struct kvm_vm *vm = set->vm[i];
		if (!vm->from)
			continue;
		if (vm->has_vmfd && vm->vmfd.fd >= 0) {
			take(ctx, vm, vm->vmfd.fd, -1);
			vm->vmfd.fd = -1;
		}
		for (size_t j = 0; j < vm->vcpus.n; j++) {
			take(ctx, vm, vm->vcpu[j].s.fd, vm->vcpu[j].index);
			vm->vcpu[j].s.fd = -1;
		}
	}
}

size_t kvm_vmset_fds_from(const struct kvm_vmset *set, pid_t from)
{
	size_t n = 0;
	for (size_t i = 0; i < set->vms.n; i++)
		if (set->vm[i]->from == from)
			n += set->vm[i]->vcpus.n + set->vm[i]->has_vmfd;
	return n;
}

static void vcpu_close(struct kvm_vmset *set, struct kvm_vcpu *c)
{
	kvm_statsfd_close(&c->s, &set->schemas);
	if (c->schedfd >= 0)
		close(c->schedfd);
	c->schedfd = -1;
}

static void vm_free(struct kvm_vmset *set, struct kvm_vm *vm)
{
	set->nhandover_vms -= vm->from != 0;
	if (vm->from)
		set->nhandover_fds -= vm->vcpus.n + vm->has_vmfd;
	if (vm->has_vmfd)
		kvm_statsfd_close(&vm->vmfd, &set->schemas);
	for (size_t j = 0; j < vm->vcpus.n; j++)
		vcpu_close(set, &vm->vcpu[j]);
	set->nfds -= vm->vcpus.n + vm->has_vmfd;
	kvm_vmm_leave(set, vm);
	kvm_meta_free(&vm->meta);
	kvm_fold_free(&vm->fold);
	growarr_free(&vm->vcpus);
	free(vm);
}

static void remove_at(struct kvm_vmset *set, size_t i)
{
	vm_free(set, set->vm[i]);
	growarr_remove(&set->vms, i);
}

size_t kvm_vmset_prune(struct kvm_vmset *set, pid_t pid)
{
	size_t closed = 0, emptied = 0;
	struct kvm_vmm *m = kvm_vmset_vmm(set, pid);

	for (size_t i = 0; m && i < m->vmlist.n; i++) {
		struct kvm_vm *vm = m->vms[i].vm;
		for (size_t j = 0; j < vm->vcpus.n;) {
			struct kvm_vcpu *c = &vm->vcpu[j];
			if (c->vmm_fd < 0 || same_file(pid, c->vmm_fd, c->s.fd)) {
				j++;
				continue;
			}
			vcpu_close(set, c);
			growarr_remove(&vm->vcpus, j);
			m->held_stale = true;
			set->nfds--;
			closed++;
		}
		if (vm->has_vmfd && vm->vm_vmm_fd >= 0 &&
		    !same_file(pid, vm->vm_vmm_fd, vm->vmfd.fd)) {
			kvm_statsfd_close(&vm->vmfd, &set->schemas);
			vm->has_vmfd = false;
			vm->vmm->nvmfds--;
			vm->vmm->held_stale = true;
			set->nfds--;
			closed++;
		}
		emptied += !vm->has_vmfd && vm->vcpus.n == 0;
	}
	/* A VM with nothing left is gone. */
	for (size_t i = 0; emptied && i < set->vms.n;)
		if (set->vm[i]->pid == pid && !set->vm[i]->has_vmfd && set->vm[i]->vcpus.n == 0)
			remove_at(set, i);
		else
			i++;
	return closed;
}

size_t kvm_vmset_remove_pid(struct kvm_vmset *set, pid_t pid)
{
	size_t removed = 0;
	for (size_t i = 0; i < set->vms.n;)
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
	while (set->vms.n)
		remove_at(set, set->vms.n - 1);
	growarr_free(&set->vms);
	growarr_free(&set->vmms);
	kvm_schemas_free(&set->schemas);
}
