/* Each scrape's preads of the held stats fds, shared out among threads:
 * 9,000 preads took 6 ms on one core, and a host with that many vCPUs has
 * more cores than one. What a reader finds wrong is counted, and told to
 * the emitter (not thread-safe) by the collect's thread once all are done. */
#include "kvm_read.h"

#include <pthread.h>
#include <unistd.h>

#include "kvm_hostview.h"

/* What the readers share: the VMs, and the next run of them to take. */
struct read_work {
	struct kvm_vmset *set;
	const struct kvm_filter *vms;
	enum kvm_mode mode;
	size_t next; /* atomic: set->vm[next] starts the next run */
};

struct read_part {
	struct read_work *work;
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

static void read_vm(struct read_part *p, struct kvm_vm *vm)
{
	vm->included = kvm_filter_match(p->work->vms, vm->label);
	if (!vm->included)
		return;
	if (vm->has_vmfd && kvm_statsfd_read(&vm->vmfd) < 0)
		p->read_errors++;
	for (size_t j = 0; j < vm->nvcpu; j++)
		if (kvm_statsfd_read(&vm->vcpu[j].s) < 0)
			p->read_errors++;
	if (p->work->mode == KVM_PER_VM)
		fold_vm(p, vm);
}

/* Takes runs of VMs until none is left: a thread that starts late (waking
 * an idle CPU took up to a millisecond here) takes fewer, instead of
 * finishing its fixed share late. */
static void *read_part(void *arg)
{
	struct read_part *p = arg;
	struct kvm_vmset *set = p->work->set;

	for (;;) {
		size_t from = __atomic_fetch_add(&p->work->next, KVM_READ_RUN, __ATOMIC_RELAXED);
		if (from >= set->n)
			return NULL;
		size_t to = set->n - from < KVM_READ_RUN ? set->n : from + KVM_READ_RUN;
		for (size_t i = from; i < to; i++)
			read_vm(p, set->vm[i]);
	}
}

static size_t readers(const struct kvm_vmset *set)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (set->nfds < KVM_READ_SPLIT_FDS || cpus < 2)
		return 1;
	return cpus < KVM_READERS_MAX ? (size_t)cpus : KVM_READERS_MAX;
}

void kvm_read_all(struct kvm_vmset *set, const struct kvm_filter *vms, enum kvm_mode mode,
		  struct bs_emitter *em)
{
	struct read_work work = {set, vms, mode, 0};
	struct read_part part[KVM_READERS_MAX];
	pthread_t thread[KVM_READERS_MAX];
	bool started[KVM_READERS_MAX] = {false};
	size_t n = readers(set);
	uint64_t errors = 0, no_memory = 0;

	for (size_t k = 0; k < n; k++)
		part[k] = (struct read_part){.work = &work};
	/* A thread that cannot start leaves its runs to the others. */
	for (size_t k = 1; k < n; k++)
		started[k] = pthread_create(&thread[k], NULL, read_part, &part[k]) == 0;
	read_part(&part[0]);
	for (size_t k = 1; k < n; k++)
		if (started[k])
			pthread_join(thread[k], NULL);
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
