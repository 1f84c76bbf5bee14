/* Parser of a KVM binary stats fd's header and descriptors: pure functions
 * over bytes, so every malformed case is testable without a kernel. */
#ifndef KVM_STATS_DESC_H
#define KVM_STATS_DESC_H

#include <stddef.h>
#include <stdint.h>

#define KVM_HDR_SIZE                                                                               \
	24		  /* six __u32: flags name_size num_desc id_offset desc_offset data_offset \
			   */
#define KVM_DESC_FIXED 16 /* flags, exponent, size, offset, bucket_size */
#define KVM_NAME_SIZE_MAX 256	 /* the kernel uses 48 */
#define KVM_DESC_MAX 1024	 /* descriptors in one fd (the kernel has 47) */
#define KVM_STAT_VALUES_MAX 4096 /* u64 values in one stat (histogram buckets) */
#define KVM_DATA_MAX (64u << 10) /* bytes of the data block (the kernel: 1.2 KiB) */
#define KVM_FILE_OFFSET_MAX (1u << 24)

/* Type, unit and base as <linux/kvm.h> numbers them (shifted down). */
enum { KVM_T_CUMULATIVE, KVM_T_INSTANT, KVM_T_PEAK, KVM_T_LINEAR_HIST, KVM_T_LOG_HIST };
enum { KVM_U_NONE, KVM_U_BYTES, KVM_U_SECONDS, KVM_U_CYCLES, KVM_U_BOOLEAN };
enum { KVM_B_POW10, KVM_B_POW2 };

struct kvm_stats_hdr {
	uint32_t flags, name_size, num_desc, id_offset, desc_offset, data_offset;
};

struct kvm_stat_desc {
	char name[KVM_NAME_SIZE_MAX];
	unsigned type, unit, base;
	int exponent;
	uint32_t size;	 /* u64 values */
	uint32_t offset; /* bytes from the data block's start */
	uint32_t bucket_size;
};

/* Reports one skipped descriptor (or the whole fd) and why. */
typedef void kvm_drop_fn(void *ctx, const char *reason);

/* Checks the header's sizes and offsets against the caps above.
 * Returns 0 or -EINVAL with a reason in *why. */
int kvm_stats_parse_header(const void *buf, size_t len, struct kvm_stats_hdr *h, const char **why);
/* Bytes of the descriptor block the header announces. */
size_t kvm_stats_desc_block_size(const struct kvm_stats_hdr *h);
/* Copies the id string ("kvm-1234" or "kvm-1234/vcpu-0"); -EINVAL if it
 * lacks its NUL or does not start with "kvm". */
int kvm_stats_parse_id(const struct kvm_stats_hdr *h, const void *buf, size_t len, char *id,
		       size_t idlen);
/* Validates every descriptor in buf (the whole block); valid ones go to
 * out[*nout] (room for h->num_desc), invalid ones are skipped through drop.
 * *data_size is the largest offset + 8 * size. Returns 0, or -EINVAL when
 * the blocks overlap or nothing valid is left. */
int kvm_stats_parse_descs(const struct kvm_stats_hdr *h, const void *buf, size_t len,
			  struct kvm_stat_desc *out, size_t *nout, size_t *data_size,
			  kvm_drop_fn *drop, void *ctx);

#endif
