/* One KVM stats fd: validated once when opened, read with one pread per
 * scrape. fds whose descriptor blocks are identical share one schema. */
#ifndef KVM_STATSFD_H
#define KVM_STATSFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvm_metric.h"

#define KVM_ID_MAX 64
#define KVM_SCHEMAS_MAX 64

struct kvm_schema {
	struct kvm_schema *next;
	int refs;
	unsigned char *raw; /* name_size and the descriptor block: the identity */
	size_t raw_len;
	size_t data_size;
	struct kvm_metric *metric;
	size_t nmetric;
	struct kvm_fold_run *fold; /* how a block of this layout folds into a VM's */
	size_t nfold;
};

struct kvm_schemas {
	struct kvm_schema *head;
	size_t n;
};

struct kvm_statsfd {
	int fd;
	uint32_t data_offset;
	struct kvm_schema *schema;
	uint64_t *data; /* schema->data_size bytes, as last read */
	bool fresh;	/* the last read succeeded */
	char id[KVM_ID_MAX];
	uint64_t id_hash; /* kvm_id_hash(id) */
};

/* FNV-1a of a stats id or label: lets the set's many lookups compare one
 * integer before any string (equal hashes still compare the strings). */
static inline uint64_t kvm_id_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Whether `fd` is a stats fd KVM itself made: an anon inode the kernel
 * named kvm-vm-stats or kvm-vcpu-stats:N, which no process can forge.
 * Returns 0 with *vcpu_index (-1 for a VM's), or -ENOTTY. Only such fds
 * are ever read: a pread on anything else a peer can hand over
 * (/dev/kmsg, a FUSE file) may block for good, and their reads are plain
 * copies of kernel memory that never wait. */
int kvm_statsfd_identify(int fd, int *vcpu_index);
/* Validates the fd's header and descriptors and finds or makes its schema.
 * Takes the fd on success (closed by kvm_statsfd_close); on failure the
 * caller keeps it. `vcpu` picks the kvm_vcpu_ or kvm_vm_ prefix. */
int kvm_statsfd_open(struct kvm_statsfd *s, int fd, bool vcpu, struct kvm_schemas *cache,
		     kvm_drop_fn *drop, void *ctx);
/* One pread of the whole data block. */
int kvm_statsfd_read(struct kvm_statsfd *s);
void kvm_statsfd_close(struct kvm_statsfd *s, struct kvm_schemas *cache);
void kvm_schemas_free(struct kvm_schemas *cache);
/* The metric of schema `in` named `family`, or NULL. */
const struct kvm_metric *kvm_schema_metric(const struct kvm_schema *in, const char *family);

#endif
