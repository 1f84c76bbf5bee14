/* Each scrape's preads of the held stats fds, shared out among threads:
 * 9,000 preads took 6 ms on one core, and a host with that many vCPUs has
 * more cores than one. What a reader finds wrong is counted, and told to
 * the emitter (not thread-safe) by the collect's thread once all are done. */
#include "kvm_read.h"

#include <pthread.h>
#include <unistd.h>

#include "kvm_hostview.h"

struct read_part {
	struct kvm_vmset *set;
	const struct kvm_filter *vms;
	enum kvm_mode mode;
	size_t from, to; /* set->vm[from, to) */
	uint64_t read_errors, no_memory;
};

/* Folds the VM's fresh vCPUs into the first one's layout. */
static void fold_vm(struct read_part *p, struct kvm_vm *vm)
{
	const struct kvm_schema *schema = NULL;

	for (size_t j = 0; j < vm->nvcpu && !schema; j++)
		if (vm->vcpu[j].s.fresh)
			schema = vm->vcpu[j].s.schema;
	if (kvm_fold_begin(&vm->fold, schema) < 0) {
		p->no_memory++;
		return;
	}
	for (size_t j = 0; j < vm->nvcpu; j++)
		kvm_fold_add(&vm->fold, &vm->vcpu[j].s);
}

static void *read_part(void *arg)
{
	struct read_part *p = arg;

	for (size_t i = p->from; i < p->to; i++) {
		struct kvm_vm *vm = p->set->vm[i];
		vm->included = kvm_filter_match(p->vms, vm->label);
		if (!vm->included)
			continue;
		if (vm->has_vmfd && kvm_statsfd_read(&vm->vmfd) < 0)
			p->read_errors++;
		for (size_t j = 0; j < vm->nvcpu; j++)
			if (kvm_statsfd_read(&vm->vcpu[j].s) < 0)
				p->read_errors++;
		if (p->mode == KVM_PER_VM)
			fold_vm(p, vm);
	}
	return NULL;
}

static size_t readers(const struct kvm_vmset *set)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (set->nfds < KVM_READ_SPLIT_FDS || cpus < 2)
		return 1;
	return cpus < KVM_READERS_MAX ? (size_t)cpus : KVM_READERS_MAX;
}

/* Cuts the VMs into n runs of about set->nfds / n fds each. */
static void share_out(struct kvm_vmset *set, struct read_part *part, size_t n)
{
	size_t k = 0, fds = 0;

	part[0].from = 0;
	for (size_t i = 0; i < set->n && k + 1 < n; i++) {
		fds += set->vm[i]->nvcpu + set->vm[i]->has_vmfd;
		if (fds * n >= (k + 1) * set->nfds) {
			part[k].to = i + 1;
			part[++k].from = i + 1;
		}
	}
	part[k].to = set->n;
	for (size_t j = k + 1; j < n; j++)
		part[j].from = part[j].to = set->n;
}

void kvm_read_all(struct kvm_vmset *set, const struct kvm_filter *vms, enum kvm_mode mode,
		  struct bs_emitter *em)
{
	struct read_part part[KVM_READERS_MAX];
	pthread_t thread[KVM_READERS_MAX];
	bool started[KVM_READERS_MAX] = {false};
	size_t n = readers(set);
	uint64_t errors = 0, no_memory = 0;

	for (size_t k = 0; k < n; k++)
		part[k] = (struct read_part){.set = set, .vms = vms, .mode = mode};
	share_out(set, part, n);
	/* A thread that cannot start reads inline: every part is read. */
	for (size_t k = 1; k < n; k++)
		started[k] = pthread_create(&thread[k], NULL, read_part, &part[k]) == 0;
	read_part(&part[0]);
	for (size_t k = 1; k < n; k++) {
		if (started[k])
			pthread_join(thread[k], NULL);
		else
			read_part(&part[k]);
	}
	for (size_t k = 0; k < n; k++) {
		errors += part[k].read_errors;
		no_memory += part[k].no_memory;
	}
	if (errors)
		bs_drop(em, "read_error", errors);
	if (no_memory)
		bs_drop(em, "out_of_memory", no_memory);
	kvm_hostview_read(set);
}
