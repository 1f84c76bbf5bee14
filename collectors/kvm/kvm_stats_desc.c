/* Parser of a KVM binary stats fd's header and descriptors. It applies the
 * checks of the kernel's own selftest (kvm_binary_stats_test.c) and caps
 * every size, so a malformed or hostile file costs a bounded amount. */
#include "kvm_stats_desc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pow10.h"

static uint32_t le32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The API's first posting showed a 16-byte header, {name_size, count,
 * desc_offset, data_offset}, with the id inline after it; the kernel merged
 * six words, {flags, name_size, num_desc, id_offset, desc_offset,
 * data_offset}. A file in the draft's layout has a name size where flags
 * (0) stand and "kvm-" where desc_offset stands: read as the kernel's, its
 * fields would be nonsense, so it is refused under a reason that says why. */
static bool draft_layout(const unsigned char *p)
{
	return le32(p) != 0 && memcmp(p + 16, "kvm-", 4) == 0;
}

int kvm_stats_parse_header(const void *buf, size_t len, struct kvm_stats_hdr *h, const char **why)
{
	const unsigned char *p = buf;

	if (len < KVM_HDR_SIZE) {
		*why = "short_header";
		return -EINVAL;
	}
	if (draft_layout(p)) {
		*why = "draft_header_layout";
		return -EINVAL;
	}
	h->flags = le32(p);
	h->name_size = le32(p + 4);
	h->num_desc = le32(p + 8);
	h->id_offset = le32(p + 12);
	h->desc_offset = le32(p + 16);
	h->data_offset = le32(p + 20);
	*why = "bad_header";
	if (h->name_size == 0 || h->name_size > KVM_NAME_SIZE_MAX || h->num_desc == 0 ||
	    h->num_desc > KVM_DESC_MAX)
		return -EINVAL;
	if (h->id_offset < KVM_HDR_SIZE || h->desc_offset < KVM_HDR_SIZE ||
	    h->data_offset < KVM_HDR_SIZE || h->id_offset > KVM_FILE_OFFSET_MAX ||
	    h->desc_offset > KVM_FILE_OFFSET_MAX || h->data_offset > KVM_FILE_OFFSET_MAX)
		return -EINVAL;
	uint64_t desc_end = (uint64_t)h->desc_offset + kvm_stats_desc_block_size(h);
	if (!(h->desc_offset > h->data_offset || desc_end <= h->data_offset)) {
		*why = "overlapping_blocks";
		return -EINVAL;
	}
	return 0;
}

size_t kvm_stats_desc_block_size(const struct kvm_stats_hdr *h)
{
	return (size_t)h->num_desc * (KVM_DESC_FIXED + h->name_size);
}

int kvm_stats_parse_id(const struct kvm_stats_hdr *h, const void *buf, size_t len, char *id,
		       size_t idlen)
{
	size_t n = len < h->name_size ? len : h->name_size;
	const char *nul = memchr(buf, '\0', n);

	if (!nul || (size_t)(nul - (const char *)buf) >= idlen || strncmp(buf, "kvm", 3) != 0)
		return -EINVAL;
	memcpy(id, buf, (size_t)(nul - (const char *)buf) + 1);
	return 0;
}

/* Names become part of metric names: the kernel's are [a-z0-9_]. */
static const char *name_check(const char *name, uint32_t name_size)
{
	const char *nul = memchr(name, '\0', name_size);
	if (!nul)
		return "name_without_nul";
	if (nul == name)
		return "bad_name";
	for (const char *c = name; c < nul; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return "bad_name";
	return NULL;
}

/* Why a descriptor cannot be used, or NULL. */
static const char *desc_check(const struct kvm_stat_desc *d, uint32_t flags)
{
	if (flags & ~0xFFFu)
		return "unknown_flags";
	if (d->type > KVM_T_LOG_HIST)
		return "unknown_type";
	if (d->unit > KVM_U_BOOLEAN)
		return "unknown_unit";
	if (d->base > KVM_B_POW2)
		return "unknown_base";
	if (d->unit == KVM_U_SECONDS ? d->exponent > 0 : d->exponent < 0)
		return "bad_exponent";
	/* Down to the smallest power of ten kvm_metric divides by exactly. */
	if (d->exponent < -POW10_F64_MAX || d->exponent > 63)
		return "bad_exponent";
	if (d->size == 0 || d->size > KVM_STAT_VALUES_MAX)
		return "bad_size";
	bool hist = d->type == KVM_T_LINEAR_HIST || d->type == KVM_T_LOG_HIST;
	if (!hist && d->size != 1)
		return "bad_size";
	if (hist && d->size < 2)
		return "bad_size";
	if ((d->type == KVM_T_LINEAR_HIST) != (d->bucket_size != 0))
		return "bad_bucket_size";
	if (d->offset % 8 || (uint64_t)d->offset + 8ull * d->size > KVM_DATA_MAX)
		return "bad_offset";
	return NULL;
}

static void desc_decode(const unsigned char *p, uint32_t name_size, struct kvm_stat_desc *d,
			uint32_t *flags)
{
	int16_t exponent;
	uint16_t size;

	*flags = le32(p);
	memcpy(&exponent, p + 4, 2);
	memcpy(&size, p + 6, 2);
	d->type = *flags & 0xF;
	d->unit = (*flags >> 4) & 0xF;
	d->base = (*flags >> 8) & 0xF;
	d->exponent = exponent;
	d->size = size;
	d->offset = le32(p + 8);
	d->bucket_size = le32(p + 12);
	memcpy(d->name, p + KVM_DESC_FIXED, name_size);
}

/* Names already accepted, in an open-addressing table of out[] indices:
 * a block of n names costs O(n), never the O(n^2) of a scan per name. */
struct name_set {
	uint32_t *slot; /* index + 1; 0 is empty */
	size_t mask;
};

static int name_set_init(struct name_set *ns, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	ns->mask = cap - 1;
	ns->slot = calloc(cap, sizeof(*ns->slot));
	return ns->slot ? 0 : -ENOMEM;
}

/* Adds out[i]'s name unless taken; returns whether it was taken. */
static bool name_set_taken(struct name_set *ns, const struct kvm_stat_desc *out, uint32_t i)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const char *c = out[i].name; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	for (size_t at = h & ns->mask;; at = (at + 1) & ns->mask) {
		if (!ns->slot[at]) {
			ns->slot[at] = i + 1;
			return false;
		}
		if (strcmp(out[ns->slot[at] - 1].name, out[i].name) == 0)
			return true;
	}
}

int kvm_stats_parse_descs(const struct kvm_stats_hdr *h, const void *buf, size_t len,
			  struct kvm_stat_desc *out, size_t *nout, size_t *data_size,
			  kvm_drop_fn *drop, void *ctx)
{
	size_t stride = KVM_DESC_FIXED + h->name_size;
	const unsigned char *p = buf;
	uint64_t size = 0;

	struct name_set names;

	*nout = 0;
	if (len < kvm_stats_desc_block_size(h)) {
		drop(ctx, "short_descriptors");
		return -EINVAL;
	}
	if (name_set_init(&names, h->num_desc) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->num_desc; i++, p += stride) {
		struct kvm_stat_desc *d = &out[*nout];
		uint32_t flags;
		desc_decode(p, h->name_size, d, &flags);
		const char *why = name_check(d->name, h->name_size);
		if (!why)
			why = desc_check(d, flags);
		if (!why && name_set_taken(&names, out, (uint32_t)*nout))
			why = "duplicate_name";
		if (why) {
			drop(ctx, why);
			continue;
		}
		uint64_t end = (uint64_t)d->offset + 8ull * d->size;
		size = end > size ? end : size;
		(*nout)++;
	}
	free(names.slot);
	/* The data block must not overlap the descriptors (selftest's last check). */
	uint64_t desc_end = (uint64_t)h->desc_offset + kvm_stats_desc_block_size(h);
	if (*nout == 0 ||
	    !(h->data_offset >= desc_end || h->data_offset + size <= h->desc_offset)) {
		drop(ctx, *nout ? "overlapping_blocks" : "no_valid_stats");
		return -EINVAL;
	}
	*data_size = (size_t)size;
	return 0;
}
