/* One KVM stats fd: validated once when opened, read with one pread per
 * scrape. Only pread: lseek does nothing on these fds and read would move
 * the offset the VMM shares with us. */
#include "kvm_statsfd.h"

#include <ctype.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#define VM_LINK "anon_inode:kvm-vm-stats"
#define VCPU_LINK "anon_inode:kvm-vcpu-stats:"

int kvm_statsfd_identify(int fd, int *vcpu_index)
{
	char path[64], link[64];
	struct statfs fs;

	if (fstatfs(fd, &fs) < 0 || fs.f_type != ANON_INODE_FS_MAGIC)
		return -ENOTTY;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -ENOTTY;
	link[n] = '\0';
	if (strcmp(link, VM_LINK) == 0) {
		*vcpu_index = -1;
		return 0;
	}
	size_t pre = strlen(VCPU_LINK);
	if (strncmp(link, VCPU_LINK, pre) != 0 || !isdigit((unsigned char)link[pre]))
		return -ENOTTY;
	char *end;
	long v = strtol(link + pre, &end, 10);
	if (*end || v > 1 << 20)
		return -ENOTTY;
	*vcpu_index = (int)v;
	return 0;
}

static int pread_full(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static void schema_put(struct kvm_schemas *cache, struct kvm_schema *s)
{
	if (!s || --s->refs > 0)
		return;
	for (struct kvm_schema **p = &cache->head; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	cache->n--;
	kvm_metrics_free(s->metric, s->nmetric);
	free(s->metric);
	free(s->fold);
	free(s->raw);
	free(s);
}

static struct kvm_schema *schema_find(struct kvm_schemas *cache, const unsigned char *raw,
				      size_t len)
{
	for (struct kvm_schema *s = cache->head; s; s = s->next)
		if (s->raw_len == len && memcmp(s->raw, raw, len) == 0)
			return s;
	return NULL;
}

/* Parses a descriptor block into a new schema, which takes `raw`. */
static struct kvm_schema *schema_new(const struct kvm_stats_hdr *h, unsigned char *raw, size_t len,
				     bool vcpu, kvm_drop_fn *drop, void *ctx)
{
	struct kvm_schema *s = calloc(1, sizeof(*s));
	struct kvm_stat_desc *descs = calloc(h->num_desc, sizeof(*descs));
	size_t n = 0;

	if (!s || !descs)
		goto err_free;
	if (kvm_stats_parse_descs(h, raw + 4, len - 4, descs, &n, &s->data_size, drop, ctx) < 0)
		goto err_free;
	s->metric = calloc(n, sizeof(*s->metric));
	if (!s->metric)
		goto err_free;
	int nm = kvm_metrics_build(vcpu ? "kvm_vcpu" : "kvm_vm", descs, n, s->metric);
	if (nm < 0)
		goto err_free;
	s->nmetric = (size_t)nm;
	int nf = kvm_fold_plan(s->metric, s->nmetric, s->data_size / 8, &s->fold);
	if (nf < 0) {
		kvm_metrics_free(s->metric, s->nmetric);
		goto err_free;
	}
	s->nfold = (size_t)nf;
	s->raw = raw;
	s->raw_len = len;
	free(descs);
	return s;
err_free:
	if (s)
		free(s->metric);
	free(s);
	free(descs);
	return NULL;
}

static int find_schema(struct kvm_statsfd *s, const struct kvm_stats_hdr *h, bool vcpu,
		       struct kvm_schemas *cache, kvm_drop_fn *drop, void *ctx)
{
	size_t len = 4 + kvm_stats_desc_block_size(h);
	unsigned char *raw = malloc(len);
	int rc;

	if (!raw)
		return -ENOMEM;
	/* The prefix is part of the identity too: a VM and a vCPU block never share. */
	raw[0] = vcpu;
	raw[1] = raw[2] = raw[3] = 0;
	if ((rc = pread_full(s->fd, raw + 4, len - 4, h->desc_offset)) < 0) {
		drop(ctx, "read_error");
		free(raw);
		return rc;
	}
	struct kvm_schema *schema = schema_find(cache, raw, len);
	if (schema) {
		free(raw);
	} else {
		if (cache->n >= KVM_SCHEMAS_MAX) {
			drop(ctx, "too_many_schemas");
			free(raw);
			return -ENOSPC;
		}
		if (!(schema = schema_new(h, raw, len, vcpu, drop, ctx))) {
			free(raw);
			return -EINVAL;
		}
		schema->next = cache->head;
		cache->head = schema;
		cache->n++;
	}
	schema->refs++;
	s->schema = schema;
	return 0;
}

int kvm_statsfd_open(struct kvm_statsfd *s, int fd, bool vcpu, struct kvm_schemas *cache,
		     kvm_drop_fn *drop, void *ctx)
{
	unsigned char hdr[KVM_HDR_SIZE], id[KVM_NAME_SIZE_MAX];
	struct kvm_stats_hdr h;
	const char *why;
	int rc;

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	if ((rc = pread_full(fd, hdr, sizeof(hdr), 0)) < 0 ||
	    kvm_stats_parse_header(hdr, sizeof(hdr), &h, &why) < 0) {
		drop(ctx, rc < 0 ? "read_error" : why);
		return rc < 0 ? rc : -EINVAL;
	}
	if (pread_full(fd, id, h.name_size, h.id_offset) < 0 ||
	    kvm_stats_parse_id(&h, id, h.name_size, s->id, sizeof(s->id)) < 0) {
		drop(ctx, "bad_id");
		return -EINVAL;
	}
	s->id_hash = kvm_id_hash(s->id);
	if ((rc = find_schema(s, &h, vcpu, cache, drop, ctx)) < 0)
		return rc;
	s->data_offset = h.data_offset;
	s->data = calloc(1, s->schema->data_size);
	if (!s->data) {
		schema_put(cache, s->schema);
		return -ENOMEM;
	}
	return 0;
}

int kvm_statsfd_read(struct kvm_statsfd *s)
{
	int rc = pread_full(s->fd, s->data, s->schema->data_size, s->data_offset);
	s->fresh = rc == 0;
	return rc;
}

void kvm_statsfd_close(struct kvm_statsfd *s, struct kvm_schemas *cache)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	schema_put(cache, s->schema);
	s->schema = NULL;
	free(s->data);
	s->data = NULL;
}

void kvm_schemas_free(struct kvm_schemas *cache)
{
	struct kvm_schema *s, *next;
	for (s = cache->head; s; s = next) {
		next = s->next;
		kvm_metrics_free(s->metric, s->nmetric);
		free(s->metric);
		free(s->fold);
		free(s->raw);
		free(s);
	}
	cache->head = NULL;
	cache->n = 0;
}

const struct kvm_metric *kvm_schema_metric(const struct kvm_schema *in, const char *family)
{
	for (size_t i = 0; i < in->nmetric; i++)
		if (strcmp(in->metric[i].family, family) == 0)
			return &in->metric[i];
	return NULL;
}
