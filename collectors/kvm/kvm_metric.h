/* Maps validated KVM stat descriptors to metric families: Prometheus names
 * in base units, exact conversions, histogram bounds as the kernel buckets. */
#ifndef KVM_METRIC_H
#define KVM_METRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "kvm_stats_desc.h"

#define KVM_FAMILY_MAX 160

struct kvm_metric {
	char family[KVM_FAMILY_MAX]; /* kvm_vcpu_halt_wait_seconds: no _total */
	const char *unit;	     /* "seconds", "bytes", "cycles" or NULL */
	enum bs_metric_type mtype;   /* counter, gauge or histogram */
	unsigned ktype;		     /* KVM_T_*: decides per-VM aggregation */
	bool boolean;		     /* written 0/1 (per vCPU) or as a count (per VM) */
	uint32_t index;		     /* first u64 in the data block */
	uint32_t nvalues;	     /* 1, or the number of buckets */
	/* value in base units = raw * factor when exact, raw * scale otherwise */
	bool exact;
	uint64_t factor;
	int pow10_div; /* >0: divide by 10^pow10_div (exact power) instead of scale */
	double scale;
	double *le;    /* histograms: nvalues upper bounds in base units, the last +Inf */
	int sum_index; /* histograms: the paired cumulative total's index, or -1 */
	char stat[KVM_NAME_SIZE_MAX];	  /* the kernel's name, for help and filters */
	char sum_stat[KVM_NAME_SIZE_MAX]; /* histograms: the paired total's name, or "" */
};

/* Fills out[] (room for n) from descs; `prefix` is "kvm_vm" or "kvm_vcpu".
 * A cumulative total paired with a histogram is folded into it (see
 * kvm_metrics_pair). Returns how many metrics, or -ENOMEM. */
int kvm_metrics_build(const char *prefix, const struct kvm_stat_desc *descs, size_t n,
		      struct kvm_metric *out);
void kvm_metrics_free(struct kvm_metric *m, size_t n);

/* A raw value in base units, exact as an integer where the unit allows. */
struct bs_value kvm_metric_value(const struct kvm_metric *m, uint64_t raw);
/* Upper bound of bucket i in the kernel's raw units (inclusive), i < nvalues - 1. */
uint64_t kvm_bucket_upper_raw(unsigned ktype, uint32_t bucket_size, uint32_t i);

/* How per-VM mode folds a value of each vCPU into the VM's: counters,
 * gauges and histogram buckets summed, peaks as the largest, booleans as
 * the number of vCPUs where true. */
enum kvm_fold_op { KVM_FOLD_NONE, KVM_FOLD_SUM, KVM_FOLD_MAX, KVM_FOLD_COUNT };

enum kvm_fold_op kvm_fold_op_of(const struct kvm_metric *m);

/* Values [start, start + len) of a data block, folded alike. */
struct kvm_fold_run {
	uint32_t start, len;
	enum kvm_fold_op op;
};

/* The fold of a block of `nvals` values laid out as m[0..n) (with their
 * histograms' totals): runs in index order, neighbours of one kind merged;
 * a value two stats share folds by the first's kind, once. Returns the
 * number of runs, in *out (the caller frees it), or -ENOMEM. */
int kvm_fold_plan(const struct kvm_metric *m, size_t n, size_t nvals, struct kvm_fold_run **out);

#endif
