/* A VMM's record: its VMs with the keys lookups compare, an index of them
 * by id and the set of stats ids they hold, so that taking a stats fd costs
 * the same with 4,000 VMs held as with one. */
#include "kvm_vmset_priv.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where VMM `pid` is, or would go, in the set's list sorted by pid. */
static size_t vmm_place(const struct kvm_vmset *set, pid_t pid)
{
	size_t lo = 0, hi = set->vmms.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (set->vmm[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct kvm_vmm *kvm_vmset_vmm(const struct kvm_vmset *set, pid_t pid)
{
	size_t at = vmm_place(set, pid);
	return at < set->vmms.n && set->vmm[at]->pid == pid ? set->vmm[at] : NULL;
}

struct kvm_vmm *kvm_vmm_get(struct kvm_vmset *set, pid_t pid)
{
	size_t at = vmm_place(set, pid);
	if (at < set->vmms.n && set->vmm[at]->pid == pid)
		return set->vmm[at];
	struct kvm_vmm *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	*m = (struct kvm_vmm){.pid = pid, .statfd = -1};
	growarr_init(&m->vmlist, sizeof(struct kvm_vmm_vm), set->vms.max);
	if (growarr_insert(&set->vmms, at, &m) < 0) {
		free(m);
		return NULL;
	}
	return m;
}

void kvm_vmm_free(struct kvm_vmset *set, struct kvm_vmm *m)
{
	growarr_remove(&set->vmms, vmm_place(set, m->pid));
	if (m->statfd >= 0)
		close(m->statfd);
	growarr_free(&m->vmlist);
	free(m->byid);
	free(m->held);
	free(m);
}

static void held_insert(struct kvm_vmm *m, uint64_t h)
{
	size_t mask = m->held_cap - 1, at = h & mask;
	h = h ? h : 1;
	while (m->held[at] && m->held[at] != h)
		at = (at + 1) & mask;
	m->nheld += !m->held[at];
	m->held[at] = h;
}

/* Rebuilt after fds went (removal from open addressing is not worth its
 * subtlety here) or when kvm_vmm_took found it full. */
bool kvm_vmm_may_hold(struct kvm_vmm *m, uint64_t h)
{
	if (!m->held || m->held_stale) {
		size_t cap = 16, n = 0;
		for (size_t i = 0; i < m->vmlist.n; i++)
			n += m->vms[i].vm->vcpus.n + 1;
		while (cap < 2 * n + 2)
			cap *= 2;
		uint64_t *t = calloc(cap, sizeof(*t));
		if (!t)
			return true;
		free(m->held);
		m->held = t;
		m->held_cap = cap;
		m->nheld = 0;
		m->held_stale = false;
		for (size_t i = 0; i < m->vmlist.n; i++) {
			const struct kvm_vm *vm = m->vms[i].vm;
			if (vm->has_vmfd)
				held_insert(m, vm->vmfd.id_hash);
			for (size_t j = 0; j < vm->vcpus.n; j++)
				held_insert(m, vm->vcpu[j].s.id_hash);
		}
	}
	size_t mask = m->held_cap - 1, at = h & mask;
	uint64_t k = h ? h : 1;
	for (; m->held[at]; at = (at + 1) & mask)
		if (m->held[at] == k)
			return true;
	return false;
}

void kvm_vmm_took(struct kvm_vmm *m, uint64_t h)
{
	if (m->held && !m->held_stale && 2 * (m->nheld + 1) <= m->held_cap)
		held_insert(m, h);
	else
		m->held_stale = true;
}

static void byid_insert(struct kvm_vmm *m, size_t slot)
{
	size_t mask = m->byid_cap - 1, at = m->vms[slot].id_hash & mask;
	while (m->byid[at])
		at = (at + 1) & mask;
	m->byid[at] = (uint32_t)slot + 1;
}

/* Rebuilt after a VM left, as the held set is. */
bool kvm_vmm_byid_ready(struct kvm_vmm *m)
{
	if (m->byid && !m->byid_stale)
		return true;
	size_t cap = 16;
	while (cap < 2 * m->vmlist.n)
		cap *= 2;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return false;
	free(m->byid);
	m->byid = t;
	m->byid_cap = cap;
	m->byid_stale = false;
	for (size_t i = 0; i < m->vmlist.n; i++)
		byid_insert(m, i);
	return true;
}

int kvm_vmm_join(struct kvm_vmm *m, struct kvm_vm *vm)
{
	struct kvm_vmm_vm e = {
	    .vm = vm, .id_hash = vm->id_hash, .from = vm->from, .group = vm->thread_group};
	int rc = growarr_push(&m->vmlist, &e);

	if (rc < 0)
		return rc;
	vm->vmm = m;
	vm->vmm_slot = m->vmlist.n - 1;
	if (m->byid && !m->byid_stale && 2 * m->vmlist.n <= m->byid_cap)
		byid_insert(m, m->vmlist.n - 1);
	else
		m->byid_stale = true;
	return 0;
}

void kvm_vmm_leave(struct kvm_vmset *set, const struct kvm_vm *gone)
{
	struct kvm_vmm *m = gone->vmm;

	m->vms[gone->vmm_slot] = m->vms[--m->vmlist.n];
	if (gone->vmm_slot < m->vmlist.n)
		m->vms[gone->vmm_slot].vm->vmm_slot = gone->vmm_slot;
	m->nvmfds -= gone->has_vmfd;
	m->byid_stale = true;
	m->held_stale = true;
	if (m->vmlist.n == 0)
		kvm_vmm_free(set, m);
}
