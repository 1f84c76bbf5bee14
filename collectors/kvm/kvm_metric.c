/* Maps validated KVM stat descriptors to metric families.
 *
 * Names: kvm_vm_<stat> / kvm_vcpu_<stat>; a unit token at the end of the
 * kernel's name (_ns, _us, _bytes, ...) is replaced by the base unit
 * (_seconds, _bytes, _cycles); a histogram's _hist suffix is dropped.
 * Pairing: a histogram and a cumulative stat that map to the same family
 * name with the same unit, base and exponent (halt_wait_hist and
 * halt_wait_ns) are one histogram whose _sum is the total; the kernel updates
 * both in the same place. */
#include "kvm_metric.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pow10.h"

static const char *const unit_name[] = {
    [KVM_U_NONE] = NULL,       [KVM_U_BYTES] = "bytes", [KVM_U_SECONDS] = "seconds",
    [KVM_U_CYCLES] = "cycles", [KVM_U_BOOLEAN] = NULL,
};

/* Unit tokens the kernel's names end with, per unit. */
static const char *const seconds_tokens[] = {"_ns",   "_us",  "_ms",   "_s",	   "_nsec", "_usec",
					     "_msec", "_sec", "_secs", "_seconds", NULL};
static const char *const bytes_tokens[] = {"_bytes", "_b",   "_kb",  "_mb", "_gb",
					   "_kib",   "_mib", "_gib", NULL};
static const char *const cycles_tokens[] = {"_cycles", NULL};

static size_t strip(const char *name, size_t n, const char *const *tokens)
{
	for (; tokens && *tokens; tokens++) {
		size_t k = strlen(*tokens);
		if (n > k && memcmp(name + n - k, *tokens, k) == 0)
			return n - k;
	}
	return n;
}

static void family_name(const char *prefix, const struct kvm_stat_desc *d, char *out)
{
	static const char *const *const tokens[] = {
	    [KVM_U_BYTES] = bytes_tokens,
	    [KVM_U_SECONDS] = seconds_tokens,
	    [KVM_U_CYCLES] = cycles_tokens,
	};
	size_t n = strlen(d->name);

	if ((d->type == KVM_T_LINEAR_HIST || d->type == KVM_T_LOG_HIST) && n > 5 &&
	    strcmp(d->name + n - 5, "_hist") == 0)
		n -= 5;
	if (d->unit == KVM_U_BYTES || d->unit == KVM_U_SECONDS || d->unit == KVM_U_CYCLES)
		n = strip(d->name, n, tokens[d->unit]);
	const char *unit = unit_name[d->unit];
	snprintf(out, KVM_FAMILY_MAX, "%s_%.*s%s%s", prefix, (int)n, d->name, unit ? "_" : "",
		 unit ? unit : "");
}

static void conversion(const struct kvm_stat_desc *d, struct kvm_metric *m)
{
	m->exact = false;
	m->factor = 1;
	m->pow10_div = 0;
	m->scale = 1;
	if (d->exponent >= 0) {
		if (d->base == KVM_B_POW2 && d->exponent < 64) {
			m->exact = true;
			m->factor = 1ull << d->exponent;
		} else if (d->base == KVM_B_POW10 && d->exponent <= POW10_U64_MAX) {
			m->exact = true;
			m->factor = pow10_u64[d->exponent];
		}
		m->scale = d->base == KVM_B_POW2 ? ldexp(1, d->exponent) : pow(10, d->exponent);
	} else if (d->base == KVM_B_POW10) {
		/* Dividing by an exact power of ten yields the double nearest to
		 * the decimal, which the writer then prints in its shortest form. */
		m->pow10_div = -d->exponent;
	} else {
		m->scale = ldexp(1, d->exponent);
	}
}

struct bs_value kvm_metric_value(const struct kvm_metric *m, uint64_t raw)
{
	uint64_t v;

	if (m->exact && !__builtin_mul_overflow(raw, m->factor, &v))
		return (struct bs_value){.kind = BS_VAL_U64, .u = v};
	if (m->pow10_div)
		return (struct bs_value){.kind = BS_VAL_F64,
					 .f = (double)raw / pow10_f64[m->pow10_div]};
	return (struct bs_value){.kind = BS_VAL_F64, .f = (double)raw * m->scale};
}

/* The kernel's bucket rules (include/linux/kvm_host.h):
 *   linear: index = min(v / bucket_size, size - 1)
 *   log:    index = min(fls64(v), size - 1)
 * so, values being integers, bucket i (not the last) holds up to
 * (i + 1) * bucket_size - 1, or 2^i - 1 (bucket 0 holds only 0). */
uint64_t kvm_bucket_upper_raw(unsigned ktype, uint32_t bucket_size, uint32_t i)
{
	if (ktype == KVM_T_LINEAR_HIST)
		return ((uint64_t)i + 1) * bucket_size - 1;
	return i >= 64 ? UINT64_MAX : (i == 0 ? 0 : (UINT64_MAX >> (64 - i)));
}

static int histogram_bounds(const struct kvm_stat_desc *d, struct kvm_metric *m)
{
	m->le = malloc(d->size * sizeof(double));
	if (!m->le)
		return -ENOMEM;
	m->le[d->size - 1] = INFINITY; /* the last bucket takes everything above */
	for (uint32_t i = 0; i + 1 < d->size; i++) {
		struct bs_value v =
		    kvm_metric_value(m, kvm_bucket_upper_raw(d->type, d->bucket_size, i));
		m->le[i] = v.kind == BS_VAL_U64 ? (double)v.u : v.f;
	}
	return 0;
}

static bool pairs_with(const struct kvm_stat_desc *hist, const struct kvm_metric *hm,
		       const struct kvm_stat_desc *total, const char *total_family)
{
	return total->type == KVM_T_CUMULATIVE && total->unit == hist->unit &&
	       total->base == hist->base && total->exponent == hist->exponent &&
	       strcmp(total_family, hm->family) == 0;
}

/* Marks in folded[] each cumulative total that a histogram takes as its sum.
 * m[i] is the metric of descs[i] here: none is folded yet. */
static void pair_totals(const struct kvm_stat_desc *descs, size_t n, struct kvm_metric *m,
			bool *folded)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i].mtype != BS_HISTOGRAM)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (!folded[j] && pairs_with(&descs[i], &m[i], &descs[j], m[j].family)) {
				m[i].sum_index = (int)(descs[j].offset / 8);
				memcpy(m[i].sum_stat, descs[j].name, sizeof(m[i].sum_stat));
				folded[j] = true;
				break;
			}
		}
	}
}

int kvm_metrics_build(const char *prefix, const struct kvm_stat_desc *descs, size_t n,
		      struct kvm_metric *out)
{
	bool *folded = calloc(n ? n : 1, sizeof(bool));
	size_t built = 0, kept = 0;

	if (!folded)
		return -ENOMEM;
	for (; built < n; built++) {
		const struct kvm_stat_desc *d = &descs[built];
		struct kvm_metric *m = &out[built];
		memset(m, 0, sizeof(*m));
		family_name(prefix, d, m->family);
		memcpy(m->stat, d->name, sizeof(m->stat));
		m->unit = unit_name[d->unit];
		m->ktype = d->type;
		m->boolean = d->unit == KVM_U_BOOLEAN;
		m->index = d->offset / 8;
		m->nvalues = d->size;
		m->sum_index = -1;
		m->mtype = d->type == KVM_T_CUMULATIVE				 ? BS_COUNTER
			   : (d->type == KVM_T_INSTANT || d->type == KVM_T_PEAK) ? BS_GAUGE
										 : BS_HISTOGRAM;
		conversion(d, m);
		if (m->mtype == BS_HISTOGRAM && histogram_bounds(d, m) < 0) {
			kvm_metrics_free(out, built);
			free(folded);
			return -ENOMEM;
		}
	}
	pair_totals(descs, n, out, folded);
	for (size_t i = 0; i < n; i++) {
		if (folded[i])
			continue; /* now a histogram's _sum */
		out[kept++] = out[i];
	}
	free(folded);
	return (int)kept;
}
void kvm_metrics_free(struct kvm_metric *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].le);
		m[i].le = NULL;
	}
}

enum kvm_fold_op kvm_fold_op_of(const struct kvm_metric *m)
{
	if (m->boolean)
		return KVM_FOLD_COUNT;
	return m->ktype == KVM_T_PEAK ? KVM_FOLD_MAX : KVM_FOLD_SUM;
}

static void claim(unsigned char *op, uint32_t from, uint32_t n, enum kvm_fold_op kind)
{
	for (uint32_t k = from; k < from + n; k++)
		if (op[k] == KVM_FOLD_NONE)
			op[k] = (unsigned char)kind;
}

int kvm_fold_plan(const struct kvm_metric *m, size_t n, size_t nvals, struct kvm_fold_run **out)
{
	unsigned char *op = calloc(nvals ? nvals : 1, 1);
	size_t nruns = 0;

	*out = NULL;
	if (!op)
		return -ENOMEM;
	/* The parser keeps every stat inside the block. */
	for (size_t i = 0; i < n; i++) {
		claim(op, m[i].index, m[i].nvalues, kvm_fold_op_of(&m[i]));
		if (m[i].sum_index >= 0)
			claim(op, (uint32_t)m[i].sum_index, 1, KVM_FOLD_SUM);
	}
	for (size_t k = 0; k < nvals; k++)
		nruns += op[k] != KVM_FOLD_NONE && (k == 0 || op[k] != op[k - 1]);
	struct kvm_fold_run *run = calloc(nruns ? nruns : 1, sizeof(*run));
	if (!run) {
		free(op);
		return -ENOMEM;
	}
	size_t r = 0;
	for (size_t k = 0; k < nvals; k++) {
		if (op[k] == KVM_FOLD_NONE)
			continue;
		if (k == 0 || op[k] != op[k - 1])
			run[r++] = (struct kvm_fold_run){(uint32_t)k, 0, op[k]};
		run[r - 1].len++;
	}
	free(op);
	*out = run;
	return (int)nruns;
}
