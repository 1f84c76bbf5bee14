/* A VM's vCPUs folded into one block, run by run of the schema's fold plan:
 * a vCPU is folded right after its read, while its block is in cache
 * (folding family by family after every read missed the cache at each
 * value: most of a per-VM scrape's own CPU at 1,000 VMs of 8 vCPUs). */
#include "kvm_fold.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void fold_values(enum kvm_fold_op op, uint64_t *acc, const uint64_t *v, size_t n)
{
	switch (op) {
	case KVM_FOLD_SUM:
		for (size_t k = 0; k < n; k++) {
			uint64_t r = acc[k] + v[k];
			acc[k] =
			    r < v[k] ? UINT64_MAX : r; /* saturates, as a counter cannot wrap */
		}
		break;
	case KVM_FOLD_MAX:
		for (size_t k = 0; k < n; k++)
			acc[k] = v[k] > acc[k] ? v[k] : acc[k];
		break;
	case KVM_FOLD_COUNT:
		for (size_t k = 0; k < n; k++)
			acc[k] += v[k] != 0;
		break;
	case KVM_FOLD_NONE:
		break;
	}
}

void kvm_fold_init(struct kvm_fold *f)
{
	f->schema = NULL;
	growarr_init(&f->valbuf, sizeof(uint64_t), KVM_DATA_MAX / sizeof(uint64_t));
}

int kvm_fold_begin(struct kvm_fold *f, const struct kvm_schema *schema)
{
	size_t n = schema ? schema->data_size / sizeof(uint64_t) : 0;

	f->schema = NULL;
	if (growarr_reserve(&f->valbuf, n) < 0)
		return -ENOMEM;
	if (n)
		memset(f->vals, 0, n * sizeof(uint64_t));
	f->schema = schema;
	return 0;
}

/* A vCPU of another layout (not seen: one kernel has one) folds family by
 * family, where both have it with as many values. */
static void fold_by_name(struct kvm_fold *f, const struct kvm_statsfd *v)
{
	for (size_t i = 0; i < f->schema->nmetric; i++) {
		const struct kvm_metric *m = &f->schema->metric[i];
		const struct kvm_metric *mm = kvm_schema_metric(v->schema, m->family);
		if (!mm || mm->nvalues != m->nvalues)
			continue;
		fold_values(kvm_fold_op_of(m), f->vals + m->index, v->data + mm->index, m->nvalues);
		if (m->sum_index >= 0 && mm->sum_index >= 0)
			fold_values(KVM_FOLD_SUM, f->vals + m->sum_index, v->data + mm->sum_index,
				    1);
	}
}

void kvm_fold_add(struct kvm_fold *f, const struct kvm_statsfd *v)
{
	if (!f->schema || !v->fresh)
		return;
	if (v->schema != f->schema) {
		fold_by_name(f, v);
		return;
	}
	for (size_t r = 0; r < f->schema->nfold; r++) {
		const struct kvm_fold_run *run = &f->schema->fold[r];
		fold_values(run->op, f->vals + run->start, v->data + run->start, run->len);
	}
}

void kvm_fold_free(struct kvm_fold *f)
{
	growarr_free(&f->valbuf);
	f->schema = NULL;
}
