/* Writes the held VMs' statistics as kvm_scrape.c read them. Families are
 * written whole, one after another: for each metric of each distinct
 * schema, every VM's series. Per-VM mode writes each VM's vCPUs as
 * kvm_fold.c folded them right after their reads. The families are laid
 * out first (kvm_emit_plan) and cut into parts of about the same work,
 * which threads write into emitters of their own. */
#include "kvm_emit.h"

#include <errno.h>
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
};

static void family_vm_level(struct emit_ctx *c, const struct kvm_metric *m,
			    const struct kvm_schema *s)
{
	for (size_t i = 0; i < c->set->vms.n; i++) {
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

	for (size_t i = 0; i < c->set->vms.n; i++) {
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
		for (size_t j = 0; j < vm->vcpus.n; j++) {
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

static void emit_metric(struct emit_ctx *c, const struct kvm_emit_item *it)
{
	bool vcpu = it->kind == KVM_ITEM_VCPU_METRIC;
	char help[2 * KVM_NAME_SIZE_MAX + 96];

	help_text(help, sizeof(help), it->metric, vcpu, c->mode);
	bs_family(c->em, it->metric->family, it->metric->mtype, it->metric->unit, help);
	if (vcpu)
		family_vcpu_level(c, it->metric, it->schema);
	else
		family_vm_level(c, it->metric, it->schema);
}

static void emit_info(struct emit_ctx *c)
{
	char pid[16], vcpus[16], known[16];

	bs_family(c->em, "kvm_vm_info", BS_INFO, NULL,
		  "A held VM: its VMM process, the kernel's stats id, its vCPU count and how "
		  "many of their host threads are known.");
	for (size_t i = 0; i < c->set->vms.n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->included)
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)vm->pid);
		size_t threads = 0;
		for (size_t j = 0; j < vm->vcpus.n; j++)
			threads += vm->vcpu[j].sched_fresh;
		snprintf(vcpus, sizeof(vcpus), "%zu", vm->vcpus.n);
		snprintf(known, sizeof(known), "%zu", threads);
		struct bs_label l[] = {
		    {"vm", vm->label}, {"name", vm->ident.name}, {"uuid", vm->uuid_label},
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
	for (size_t i = 0; i < c->set->vms.n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		if (!vm->included || !vm->meta.domain)
			continue;
		l[0] = (struct bs_label){"vm", vm->label};
		l[1] = (struct bs_label){"uuid", vm->uuid_label};
		l[2] = (struct bs_label){"domain", vm->meta.domain};
		for (size_t j = 0; j < vm->meta.n; j++)
			l[3 + j] = (struct bs_label){vm->meta.l[j].name, vm->meta.l[j].value};
		bs_info(c->em, l, 3 + vm->meta.n);
	}
}

static const struct {
	const char *name, *unit, *help;
} thread_family[KVM_THREAD_FAMILIES] = {
    {"kvm_vcpu_thread_cpu_seconds", "seconds",
     "Time the vCPU's host thread ran on a CPU, in the guest and in the VMM "
     "(schedstat)."},
    {"kvm_vcpu_thread_wait_seconds", "seconds",
     "Time the vCPU's host thread waited runnable for a CPU (schedstat run delay): "
     "the guest's steal time."},
    {"kvm_vcpu_thread_timeslices", NULL,
     "Times the vCPU's host thread was given a CPU (schedstat)."},
};

/* The scheduler's figure f for the vCPU threads, per vCPU or summed per VM
 * over the vCPUs whose thread is known (kvm_vm_info's vcpu_threads). */
static void emit_threads(struct emit_ctx *c, int f)
{
	char idx[16];

	bs_family(c->em, thread_family[f].name, BS_COUNTER, thread_family[f].unit,
		  thread_family[f].help);
	for (size_t i = 0; i < c->set->vms.n; i++) {
		const struct kvm_vm *vm = c->set->vm[i];
		struct bs_label l[2] = {{"vm", vm->label}, {"vcpu", idx}};
		uint64_t sum = 0;
		size_t known = 0;
		for (size_t j = 0; vm->included && j < vm->vcpus.n; j++) {
			const struct kvm_vcpu *v = &vm->vcpu[j];
			if (!v->sched_fresh)
				continue;
			known++;
			sum += v->sched[f];
			if (c->mode != KVM_PER_VCPU)
				continue;
			snprintf(idx, sizeof(idx), "%d", v->index);
			if (thread_family[f].unit)
				bs_sample_f64(c->em, l, 2, (double)v->sched[f] / 1e9);
			else
				bs_sample_u64(c->em, l, 2, v->sched[f]);
		}
		if (c->mode == KVM_PER_VCPU || !known)
			continue;
		if (thread_family[f].unit)
			bs_sample_f64(c->em, l, 1, (double)sum / 1e9);
		else
			bs_sample_u64(c->em, l, 1, sum);
	}
}

/* Per VMM process; `vm` names its VM when it holds one (join on pid with
 * kvm_vm_info otherwise). f: 0 resident memory, 1 major faults. */
static void emit_vmms(struct emit_ctx *c, int f)
{
	uint64_t page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	char pid[16];

	if (f == 0)
		bs_family(c->em, "kvm_vmm_resident_memory_bytes", BS_GAUGE, "bytes",
			  "Resident memory of the VMM process, guest memory included.");
	else
		bs_family(c->em, "kvm_vmm_major_page_faults", BS_COUNTER, NULL,
			  "Major page faults of the VMM process (its guest memory read in "
			  "from disk or swap).");
	for (size_t i = 0; i < c->set->vmms.n; i++) {
		const struct kvm_vmm *m = c->set->vmm[i];
		const struct kvm_vm *only = kvm_vmm_only(m);
		if (!m->fresh || (only && !only->included))
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)m->pid);
		struct bs_label l[2] = {{"vm", only ? only->label : ""}, {"pid", pid}};
		bs_sample_u64(c->em, l, 2, f == 0 ? m->rss_pages * page_size : m->majflt);
	}
}

/* ---- the plan ---- */

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
	for (size_t i = 0; i < set->vms.n; i++) {
		const struct kvm_vm *vm = set->vm[i];
		for (size_t j = 0; j < (vcpu ? vm->vcpus.n : vm->has_vmfd); j++) {
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

/* How many series of each kind the set may write, to weigh the items. */
struct plan_counts {
	size_t vms, vmfds, vcpus, metas, vmms;
};

static uint64_t item_weight(const struct kvm_emit_item *it, const struct plan_counts *n,
			    enum kvm_mode mode)
{
	size_t per_vcpu = mode == KVM_PER_VCPU ? n->vcpus : n->vms;
	uint64_t lines = 1;

	if (it->metric)
		lines = it->metric->nvalues + (it->metric->mtype == BS_HISTOGRAM ? 2 : 0);
	switch (it->kind) {
	case KVM_ITEM_INFO:
		return 3 * (uint64_t)n->vms; /* eight labels a line */
	case KVM_ITEM_METADATA:
		return 2 * (uint64_t)n->metas;
	case KVM_ITEM_VM_METRIC:
		return lines * n->vmfds;
	case KVM_ITEM_VCPU_METRIC:
		return lines * per_vcpu;
	case KVM_ITEM_THREADS:
		return per_vcpu;
	case KVM_ITEM_VMMS:
		break;
	}
	return n->vmms;
}

/* Every family of every schema at both levels, and the fixed ones. */
#define PLAN_ITEMS_MAX                                                                             \
	(2 + 2 * KVM_SCHEMAS_MAX * KVM_DESC_MAX + KVM_THREAD_FAMILIES + KVM_VMM_FAMILIES)

static int plan_add(struct kvm_emit_plan *p, struct kvm_emit_item it)
{
	return growarr_push(&p->items, &it) < 0 ? -ENOMEM : 0;
}

static int plan_level(struct kvm_emit_plan *p, const struct kvm_vmset *set, bool vcpu,
		      const struct kvm_filter *stats)
{
	const struct kvm_schema *schemas[KVM_SCHEMAS_MAX];
	size_t n = distinct_schemas(set, vcpu, schemas);

	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; i < schemas[k]->nmetric; i++) {
			const struct kvm_metric *m = &schemas[k]->metric[i];
			if (!kvm_filter_match(stats, m->stat) ||
			    written_before(schemas, k, m->family))
				continue;
			struct kvm_emit_item it = {vcpu ? KVM_ITEM_VCPU_METRIC : KVM_ITEM_VM_METRIC,
						   0, schemas[k], m};
			if (plan_add(p, it) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Cuts the items where the work before reaches k / parts of the whole. */
static void plan_cut(struct kvm_emit_plan *p, const struct kvm_vmset *set, enum kvm_mode mode,
		     size_t parts)
{
	struct plan_counts n = {.vms = set->vms.n, .vmms = set->vmms.n};
	uint64_t total = 0, done = 0;
	size_t k = 1;

	for (size_t i = 0; i < set->vms.n; i++) {
		n.vmfds += set->vm[i]->has_vmfd;
		n.vcpus += set->vm[i]->vcpus.n;
		n.metas += set->vm[i]->meta.domain != NULL;
	}
	for (size_t i = 0; i < p->items.n; i++)
		total += item_weight(&p->item[i], &n, mode);
	p->parts = parts;
	p->cut[0] = 0;
	for (size_t i = 0; i < p->items.n && k < parts; i++) {
		done += item_weight(&p->item[i], &n, mode);
		while (k < parts && done * parts >= total * k)
			p->cut[k++] = i + 1;
	}
	while (k <= parts)
		p->cut[k++] = p->items.n;
}

int kvm_emit_plan(struct kvm_emit_plan *p, const struct kvm_vmset *set, enum kvm_mode mode,
		  const struct kvm_filter *stats, size_t parts)
{
	*p = (struct kvm_emit_plan){0};
	growarr_init(&p->items, sizeof(struct kvm_emit_item), PLAN_ITEMS_MAX);
	if (plan_add(p, (struct kvm_emit_item){KVM_ITEM_INFO}) < 0 ||
	    plan_add(p, (struct kvm_emit_item){KVM_ITEM_METADATA}) < 0 ||
	    plan_level(p, set, false, stats) < 0 || plan_level(p, set, true, stats) < 0)
		return -ENOMEM;
	for (int f = 0; f < KVM_THREAD_FAMILIES; f++)
		if (plan_add(p, (struct kvm_emit_item){KVM_ITEM_THREADS, f}) < 0)
			return -ENOMEM;
	for (int f = 0; f < KVM_VMM_FAMILIES; f++)
		if (plan_add(p, (struct kvm_emit_item){KVM_ITEM_VMMS, f}) < 0)
			return -ENOMEM;
	plan_cut(p, set, mode,
		 parts < 1		      ? 1
		 : parts > KVM_EMIT_PARTS_MAX ? KVM_EMIT_PARTS_MAX
					      : parts);
	return 0;
}

void kvm_emit_part(struct bs_emitter *em, const struct kvm_vmset *set, enum kvm_mode mode,
		   const struct kvm_emit_plan *p, size_t part)
{
	struct emit_ctx c = {em, set, mode};

	for (size_t i = p->cut[part]; i < p->cut[part + 1]; i++) {
		const struct kvm_emit_item *it = &p->item[i];
		switch (it->kind) {
		case KVM_ITEM_INFO:
			emit_info(&c);
			break;
		case KVM_ITEM_METADATA:
			emit_metadata(&c);
			break;
		case KVM_ITEM_VM_METRIC:
		case KVM_ITEM_VCPU_METRIC:
			emit_metric(&c, it);
			break;
		case KVM_ITEM_THREADS:
			emit_threads(&c, it->which);
			break;
		case KVM_ITEM_VMMS:
			emit_vmms(&c, it->which);
			break;
		}
	}
}

void kvm_emit_plan_free(struct kvm_emit_plan *p)
{
	growarr_free(&p->items);
	memset(p, 0, sizeof(*p));
}
