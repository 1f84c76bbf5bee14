/* Writes the held VMs' statistics as kvm_read.c read them. Families are
 * written whole, one after another: for each metric of each distinct
 * schema, every VM's series. Per-VM mode writes each VM's vCPUs as
 * kvm_fold.c folded them right after their reads. */
#include "kvm_emit.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool kvm_filter_match(const struct kvm_filter *f, const char *name)
{
	bool in = f->ninclude == 0;
	for (size_t i = 0; i < f->ninclude && !in; i++)
		in = fnmatch(f->include[i], name, 0) == 0;
	for (size_t i = 0; i < f->nexclude && in; i++)
		in = fnmatch(f->exclude[i], name, 0) != 0;
	return in;
}

/* Metric m of schema `of` as laid out in schema `in` (another schema is
 * rare: one kernel has one layout); NULL where `in` lacks it or is NULL. */
static const struct kvm_metric *metric_of(const struct kvm_schema *in, const struct kvm_metric *m,
					  const struct kvm_schema *of)
{
	if (in == of)
		return m;
	return in ? kvm_schema_metric(in, m->family) : NULL;
}

static const struct kvm_metric *metric_in(const struct kvm_statsfd *s, const struct kvm_metric *m,
					  const struct kvm_schema *of)
{
	return s->fresh ? metric_of(s->schema, m, of) : NULL;
}

static void write_values(struct bs_emitter *em, const struct kvm_metric *m, const uint64_t *vals,
			 uint64_t sum_raw, bool counted, const struct bs_label *l, size_t nl)
{
	if (m->mtype == BS_HISTOGRAM) {
		struct bs_histogram h = {m->nvalues, m->le, vals, m->sum_index >= 0,
					 kvm_metric_value(m, sum_raw)};
		em->ops->histogram(em, l, nl, &h);
	} else if (m->boolean) {
		/* counted: already the number of vCPUs where it is true */
		bs_sample_u64(em, l, nl, counted ? vals[0] : vals[0] != 0);
	} else {
		em->ops->sample(em, l, nl, kvm_metric_value(m, vals[0]));
	}
}

struct emit_ctx {
	struct bs_emitter *em;
	const struct kvm_vmset *set;
	enum kvm_mode mode;
	long page_size;
};

static void family_vm_level(struct emit_ctx *c, const struct kvm_metric *m,
			    const struct kvm_schema *s)
{
	for (size_t i = 0; i < c->set->n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->has_vmfd || !vm->included)
			continue;
		const struct kvm_metric *mm = metric_in(&vm->vmfd, m, s);
		if (!mm)
			continue;
		struct bs_label l = {"vm", vm->label};
		const uint64_t *d = vm->vmfd.data;
		write_values(c->em, mm, d + mm->index, mm->sum_index >= 0 ? d[mm->sum_index] : 0,
			     false, &l, 1);
	}
}

static void family_vcpu_level(struct emit_ctx *c, const struct kvm_metric *m,
			      const struct kvm_schema *s)
{
	char idx[16];

	for (size_t i = 0; i < c->set->n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->included)
			continue;
		struct bs_label l[2] = {{"vm", vm->label}, {"vcpu", idx}};
		if (c->mode == KVM_PER_VM) {
			const struct kvm_fold *f = &vm->fold;
			const struct kvm_metric *mm = metric_of(f->schema, m, s);
			if (mm && mm->nvalues == m->nvalues)
				write_values(c->em, mm, f->vals + mm->index,
					     mm->sum_index >= 0 ? f->vals[mm->sum_index] : 0, true,
					     l, 1);
			continue;
		}
		for (size_t j = 0; j < vm->nvcpu; j++) {
			const struct kvm_vcpu *v = &vm->vcpu[j];
			const struct kvm_metric *mm = metric_in(&v->s, m, s);
			if (!mm || mm->nvalues != m->nvalues)
				continue;
			snprintf(idx, sizeof(idx), "%d", v->index);
			const uint64_t *d = v->s.data;
			write_values(c->em, mm, d + mm->index,
				     mm->sum_index >= 0 ? d[mm->sum_index] : 0, false, l, 2);
		}
	}
}

/* Whether an earlier schema of the same kind already wrote this family. */
static bool written_before(const struct kvm_schema *const *schemas, size_t k, const char *family)
{
	for (size_t i = 0; i < k; i++)
		if (kvm_schema_metric(schemas[i], family))
			return true;
	return false;
}

static size_t distinct_schemas(const struct kvm_vmset *set, bool vcpu,
			       const struct kvm_schema **out)
{
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct kvm_vm *vm = set->vm[i];
		for (size_t j = 0; j < (vcpu ? vm->nvcpu : vm->has_vmfd); j++) {
			const struct kvm_schema *s = vcpu ? vm->vcpu[j].s.schema : vm->vmfd.schema;
			size_t k;
			for (k = 0; k < n && out[k] != s; k++)
				;
			if (k == n && n < KVM_SCHEMAS_MAX)
				out[n++] = s;
		}
	}
	return n;
}

/* The kernel's stat name (and a histogram's paired total) lead the help,
 * so an operator can find the statistic in the kernel's documentation. */
static void help_text(char *help, size_t len, const struct kvm_metric *m, bool vcpu,
		      enum kvm_mode mode)
{
	int n = snprintf(help, len, "KVM %s statistic %s", vcpu ? "vCPU" : "VM", m->stat);
	if (m->sum_stat[0])
		n += snprintf(help + n, len - (size_t)n, " (sum: %s)", m->sum_stat);
	snprintf(help + n, len - (size_t)n, "%s",
		 vcpu && mode == KVM_PER_VM
		     ? ", over the VM's vCPUs (summed; peaks: max; booleans: vCPUs true)."
		     : ".");
}

static void emit_level(struct emit_ctx *c, bool vcpu, const struct kvm_filter *stats)
{
	const struct kvm_schema *schemas[KVM_SCHEMAS_MAX];
	size_t n = distinct_schemas(c->set, vcpu, schemas);

	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < schemas[k]->nmetric; i++) {
			const struct kvm_metric *m = &schemas[k]->metric[i];
			if (!kvm_filter_match(stats, m->stat) ||
			    written_before(schemas, k, m->family))
				continue;
			char help[2 * KVM_NAME_SIZE_MAX + 96];
			help_text(help, sizeof(help), m, vcpu, c->mode);
			bs_family(c->em, m->family, m->mtype, m->unit, help);
			if (vcpu)
				family_vcpu_level(c, m, schemas[k]);
			else
				family_vm_level(c, m, schemas[k]);
		}
	}
}

static void emit_info(struct emit_ctx *c)
{
	char pid[16], vcpus[16], known[16];

	bs_family(c->em, "kvm_vm_info", BS_INFO, NULL,
		  "A held VM: its VMM process, the kernel's stats id, its vCPU count and how "
		  "many of their host threads are known.");
	for (size_t i = 0; i < c->set->n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->included)
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)vm->pid);
		size_t threads = 0;
		for (size_t j = 0; j < vm->nvcpu; j++)
			threads += vm->vcpu[j].sched_fresh;
		snprintf(vcpus, sizeof(vcpus), "%zu", vm->nvcpu);
		snprintf(known, sizeof(known), "%zu", threads);
		struct bs_label l[] = {
		    {"vm", vm->label}, {"name", vm->ident.name}, {"uuid", vm->ident.uuid},
		    {"pid", pid},      {"vmm", vm->ident.vmm},	 {"stats_id", vm->id},
		    {"vcpus", vcpus},  {"vcpu_threads", known},
		};
		bs_info(c->em, l, sizeof(l) / sizeof(l[0]));
	}
}

/* libvirt's record of each VM, its orchestrator's names as labels. */
static void emit_metadata(struct emit_ctx *c)
{
	struct bs_label l[3 + KVM_META_LABELS_MAX];

	bs_family(c->em, "kvm_vm_metadata_info", BS_INFO, NULL,
		  "The libvirt domain of a VM and the metadata its orchestrator gave it "
		  "(OpenStack Nova's instance, project, user and flavor), joined on the VMM's "
		  "pid and uuid.");
	for (size_t i = 0; i < c->set->n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->included || !vm->meta.domain)
			continue;
		l[0] = (struct bs_label){"vm", vm->label};
		l[1] = (struct bs_label){"uuid", vm->ident.uuid};
		l[2] = (struct bs_label){"domain", vm->meta.domain};
		for (size_t j = 0; j < vm->meta.n; j++)
			l[3 + j] = (struct bs_label){vm->meta.l[j].name, vm->meta.l[j].value};
		bs_info(c->em, l, 3 + vm->meta.n);
	}
}

/* The scheduler's figures for the vCPU threads, per vCPU or summed per VM
 * over the vCPUs whose thread is known (kvm_vm_info's vcpu_threads). */
static void emit_threads(struct emit_ctx *c)
{
	static const struct {
		const char *name, *unit, *help;
	} fam[3] = {
	    {"kvm_vcpu_thread_cpu_seconds", "seconds",
	     "Time the vCPU's host thread ran on a CPU, in the guest and in the VMM "
	     "(schedstat)."},
	    {"kvm_vcpu_thread_wait_seconds", "seconds",
	     "Time the vCPU's host thread waited runnable for a CPU (schedstat run delay): "
	     "the guest's steal time."},
	    {"kvm_vcpu_thread_timeslices", NULL,
	     "Times the vCPU's host thread was given a CPU (schedstat)."},
	};
	char idx[16];

	for (int f = 0; f < 3; f++) {
		bs_family(c->em, fam[f].name, BS_COUNTER, fam[f].unit, fam[f].help);
		for (size_t i = 0; i < c->set->n; i++) {
			const struct kvm_vm *vm = c->set->vm[i];
			struct bs_label l[2] = {{"vm", vm->label}, {"vcpu", idx}};
			uint64_t sum = 0;
			size_t known = 0;
			for (size_t j = 0; vm->included && j < vm->nvcpu; j++) {
				const struct kvm_vcpu *v = &vm->vcpu[j];
				if (!v->sched_fresh)
					continue;
				known++;
				sum += v->sched[f];
				if (c->mode != KVM_PER_VCPU)
					continue;
				snprintf(idx, sizeof(idx), "%d", v->index);
				if (fam[f].unit)
					bs_sample_f64(c->em, l, 2, (double)v->sched[f] / 1e9);
				else
					bs_sample_u64(c->em, l, 2, v->sched[f]);
			}
			if (c->mode == KVM_PER_VCPU || !known)
				continue;
			if (fam[f].unit)
				bs_sample_f64(c->em, l, 1, (double)sum / 1e9);
			else
				bs_sample_u64(c->em, l, 1, sum);
		}
	}
}

/* Per VMM process; `vm` names its VM when it holds one (join on pid with
 * kvm_vm_info otherwise). */
static void emit_vmms(struct emit_ctx *c)
{
	char pid[16];

	for (int f = 0; f < 2; f++) {
		if (f == 0)
			bs_family(c->em, "kvm_vmm_resident_memory_bytes", BS_GAUGE, "bytes",
				  "Resident memory of the VMM process, guest memory included.");
		else
			bs_family(c->em, "kvm_vmm_major_page_faults", BS_COUNTER, NULL,
				  "Major page faults of the VMM process (its guest memory read in "
				  "from disk or swap).");
		for (size_t i = 0; i < c->set->nvmm; i++) {
			const struct kvm_vmm *m = c->set->vmm[i];
			const struct kvm_vm *only = kvm_vmm_only(m);
			if (!m->fresh || (only && !only->included))
				continue;
			snprintf(pid, sizeof(pid), "%d", (int)m->pid);
			struct bs_label l[2] = {{"vm", only ? only->label : ""}, {"pid", pid}};
			bs_sample_u64(c->em, l, 2,
				      f == 0 ? m->rss_pages * (uint64_t)c->page_size : m->majflt);
		}
	}
}

void kvm_emit(struct bs_emitter *em, const struct kvm_vmset *set, enum kvm_mode mode,
	      const struct kvm_filter *stats)
{
	struct emit_ctx *c = malloc(sizeof(*c));
	if (!c)
		return;
	*c = (struct emit_ctx){
	    .em = em, .set = set, .mode = mode, .page_size = sysconf(_SC_PAGESIZE)};
	emit_info(c);
	emit_metadata(c);
	emit_level(c, false, stats);
	emit_level(c, true, stats);
	emit_threads(c);
	emit_vmms(c);
	free(c);
}
