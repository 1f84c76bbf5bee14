/* A running libvirt domain's record (the domstatus file libvirtd keeps in
 * /run/libvirt/qemu/NAME.xml): its name and the <metadata> an orchestrator
 * put there, OpenStack Nova's instance above all. */
#ifndef KVM_LIBVIRT_H
#define KVM_LIBVIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <binstat/collector.h>

#define KVM_META_LABELS_MAX 16
#define KVM_LIBVIRT_NS_MAX 8
#define KVM_LIBVIRT_FILE_MAX (4u << 20) /* a domstatus is 10-100 KiB */
#define KVM_NOVA_NS_PREFIX "http://openstack.org/xmlns/libvirt/nova/"

struct kvm_meta {
	char *domain;
	size_t n;
	struct kvm_meta_label {
		char *name, *value;
	} l[KVM_META_LABELS_MAX];
};

struct kvm_libvirt_conf {
	const char *status_dir; /* NULL: not read */
	size_t nns;
	struct kvm_libvirt_ns {
		const char *uri;
		const char *prefix; /* of the labels; Nova's namespaces have their own */
	} ns[KVM_LIBVIRT_NS_MAX];
	size_t max_label_len;
};

/* Parses a domstatus document into *out (kvm_meta_free frees it). It
 * counts only as the record of VMM `pid` whose QEMU was given `uuid`: a
 * status file left by an earlier run, or of another domain, is refused.
 * Returns 0, or -errno with *why the reason counted. */
int kvm_libvirt_parse(const struct kvm_libvirt_conf *c, const char *buf, size_t len, pid_t pid,
		      const char *uuid, struct kvm_meta *out, const char **why);
/* Reads STATUS_DIR/NAME.xml (a regular file, never followed through a
 * link, at most KVM_LIBVIRT_FILE_MAX) and parses it. -ENOENT: no libvirt
 * domain of that name runs. */
int kvm_libvirt_read(const struct kvm_libvirt_conf *c, const char *name, pid_t pid,
		     const char *uuid, struct kvm_meta *out, const char **why);
void kvm_meta_free(struct kvm_meta *m);
/* The `libvirt:` options of the collector's section; the strings stay the
 * configuration's. */
int kvm_libvirt_conf_read(const struct bs_conf *conf, struct kvm_libvirt_conf *c);

#endif
