/* Each scrape's preads of the held stats fds, and the writing of what they
 * read, shared out among threads: 9,000 preads took 6 ms on one core, and
 * writing their 160,000 series 4 ms more, on a host whose thousands of
 * vCPUs come with more cores than one. The reads come first, in runs taken
 * from a counter; once every VM is read, the families are written in parts
 * taken the same way, each part into an emitter of its own (emitters are
 * not thread-safe). What a reader finds wrong is counted, and told to the
 * collect's emitter by its thread once all are done. */
#include "kvm_scrape.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "kvm_hostview.h"

/* Yields before a thread waiting for the others' last runs sleeps instead. */
#define KVM_SPINS_MAX 1000

/* What the threads share. Runs index the VMs, then the VMM processes. */
struct scrape_work {
	struct kvm_vmset *set;
	const struct kvm_filter *vms;
	enum kvm_mode mode;
	size_t nitems; /* VMs and VMMs */
	struct kvm_emit_plan plan;
	struct bs_emitter *part_em[KVM_EMIT_PARTS_MAX];
	size_t next_run;  /* atomic: the item that starts the next run */
	size_t read;	  /* atomic: items read */
	size_t next_part; /* atomic: the next part to write */
	cpu_set_t cpus;	  /* where the process may run */
};

struct reader {
	struct scrape_work *work;
	bool placed; /* started away from the collect's CPU: free to move again */
	uint64_t read_errors, no_memory;
};

/* Folds the VM's fresh vCPUs into the first one's layout. */
static void fold_vm(struct reader *r, struct kvm_vm *vm)
{
	const struct kvm_schema *schema = NULL;

	for (size_t j = 0; j < vm->vcpus.n && !schema; j++)
		if (vm->vcpu[j].s.fresh)
			schema = vm->vcpu[j].s.schema;
	if (kvm_fold_begin(&vm->fold, schema) < 0) {
		r->no_memory++;
		return;
	}
	for (size_t j = 0; j < vm->vcpus.n; j++)
		kvm_fold_add(&vm->fold, &vm->vcpu[j].s);
}

static void read_vm(struct reader *r, struct kvm_vm *vm)
{
	vm->included = kvm_filter_match(r->work->vms, vm->label);
	if (!vm->included)
		return;
	if (vm->has_vmfd && kvm_statsfd_read(&vm->vmfd) < 0)
		r->read_errors++;
	for (size_t j = 0; j < vm->vcpus.n; j++)
		if (kvm_statsfd_read(&vm->vcpu[j].s) < 0)
			r->read_errors++;
	if (r->work->mode == KVM_PER_VM)
		fold_vm(r, vm);
	kvm_hostview_read_vm(vm);
}

static void read_item(struct reader *r, size_t i)
{
	struct kvm_vmset *set = r->work->set;

	if (i < set->vms.n)
		read_vm(r, set->vm[i]);
	else
		kvm_hostview_read_vmm(set->vmm[i - set->vms.n]);
}

/* Takes runs until none is left (a thread that starts late, as waking an
 * idle CPU took up to a millisecond here, takes fewer instead of finishing
 * its fixed share late), waits for the runs others still read, then takes
 * parts to write until none is left. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct scrape_work *w = r->work;
	size_t from, part;

	if (r->placed)
		sched_setaffinity(0, sizeof(w->cpus), &w->cpus);

	while ((from = __atomic_fetch_add(&w->next_run, KVM_READ_RUN, __ATOMIC_RELAXED)) <
	       w->nitems) {
		size_t to = w->nitems - from < KVM_READ_RUN ? w->nitems : from + KVM_READ_RUN;
		for (size_t i = from; i < to; i++)
			read_item(r, i);
		__atomic_add_fetch(&w->read, to - from, __ATOMIC_RELEASE);
	}
	/* At most a run's reads away, unless that thread lost its CPU. */
	for (unsigned spins = 0; __atomic_load_n(&w->read, __ATOMIC_ACQUIRE) < w->nitems; spins++)
		if (spins < KVM_SPINS_MAX)
			sched_yield();
		else
			usleep(50);
	while ((part = __atomic_fetch_add(&w->next_part, 1, __ATOMIC_RELAXED)) < w->plan.parts)
		kvm_emit_part(w->part_em[part], w->set, w->mode, &w->plan, part);
	return NULL;
}

/* One thread per CPU the process may run on (a unit's CPUAffinity, a
 * cpuset), up to KVM_READERS_MAX; one for few fds. */
static size_t threads_for(const struct kvm_vmset *set, cpu_set_t *cpus)
{
	if (set->nfds < KVM_READ_SPLIT_FDS || sched_getaffinity(0, sizeof(*cpus), cpus) != 0)
		return 1;
	size_t n = (size_t)CPU_COUNT(cpus);
	return n < 1 ? 1 : n < KVM_READERS_MAX ? n : KVM_READERS_MAX;
}

/* A new thread is queued on its creator's CPU now and then, even with
 * another idle (here, 1 to 4 ms behind this one's reads in half of the
 * scrapes): it starts on the process's other CPUs, then may go anywhere. */
static int start_reader(pthread_t *t, struct reader *r)
{
	cpu_set_t away = r->work->cpus;
	pthread_attr_t attr;
	int cpu = sched_getcpu(), rc;

	if (pthread_attr_init(&attr) != 0)
		return -1;
	if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &away)) {
		CPU_CLR(cpu, &away);
		r->placed = CPU_COUNT(&away) > 0 &&
			    pthread_attr_setaffinity_np(&attr, sizeof(away), &away) == 0;
	}
	rc = pthread_create(t, &attr, reader_main, r);
	pthread_attr_destroy(&attr);
	return rc;
}

void kvm_scrape(struct kvm_vmset *set, const struct kvm_filter *vms, const struct kvm_filter *stats,
		enum kvm_mode mode, const struct bs_host *host, struct bs_emitter *em)
{
	struct scrape_work w = {
	    .set = set, .vms = vms, .mode = mode, .nitems = set->vms.n + set->vmms.n};
	struct reader r[KVM_READERS_MAX];
	pthread_t thread[KVM_READERS_MAX];
	bool started[KVM_READERS_MAX] = {false};
	size_t n = threads_for(set, &w.cpus), parts = 1;
	uint64_t errors = 0, no_memory = 0;

	/* Made by the thread em is written by: this one. */
	w.part_em[0] = em;
	while (parts < n && (w.part_em[parts] = bs_fork(host, em)))
		parts++;
	if (kvm_emit_plan(&w.plan, set, mode, stats, parts) < 0) {
		bs_drop(em, "out_of_memory", 1);
		goto out_free_plan;
	}
	for (size_t k = 0; k < n; k++)
		r[k] = (struct reader){.work = &w};
	/* A thread that cannot start leaves its runs and parts to the others. */
	for (size_t k = 1; k < n; k++)
		started[k] = start_reader(&thread[k], &r[k]) == 0;
	reader_main(&r[0]);
	for (size_t k = 1; k < n; k++)
		if (started[k])
			pthread_join(thread[k], NULL);
	for (size_t k = 0; k < n; k++) {
		errors += r[k].read_errors;
		no_memory += r[k].no_memory;
	}
	if (errors)
		bs_drop(em, "read_error", errors);
	if (no_memory)
		bs_drop(em, "out_of_memory", no_memory);
out_free_plan:
	kvm_emit_plan_free(&w.plan);
}
