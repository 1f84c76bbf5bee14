/* The KVM collector's configuration: its options read into the state,
 * each refused with the position of what is wrong. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_config.h"

static int read_patterns(const struct bs_conf *node, const char *key, const char **out, size_t *n)
{
	const struct bs_conf *list = node ? node->ops->child(node, key) : NULL;
	if (!list)
		return 0;
	if (list->ops->kind(list) != BS_CONF_SEQ || list->ops->length(list) > KVM_PATTERNS_MAX)
		return list->ops->errorf(list, "must be a list of at most %d glob patterns",
					 KVM_PATTERNS_MAX);
	for (size_t i = 0; i < list->ops->length(list); i++) {
		const char *s = list->ops->scalar(list->ops->item(list, i));
		if (!s)
			return list->ops->error(list, "patterns must be strings");
		out[(*n)++] = s;
	}
	return 0;
}

static int read_filter(const struct bs_conf *conf, const char *key, struct kvm_filter *f)
{
	const struct bs_conf *node = conf->ops->child(conf, key);
	if (node && node->ops->kind(node) != BS_CONF_MAP)
		return node->ops->error(node, "must be a mapping with include and exclude lists");
	if (read_patterns(node, "include", f->include, &f->ninclude) < 0 ||
	    read_patterns(node, "exclude", f->exclude, &f->nexclude) < 0)
		return -EINVAL;
	return 0;
}

static int read_ids(const struct bs_conf *node, const char *key, uint64_t *out, size_t *n)
{
	const struct bs_conf *list = node->ops->child(node, key);
	char *end;
	if (!list)
		return 0;
	if (list->ops->kind(list) != BS_CONF_SEQ || list->ops->length(list) > KVM_HANDOVER_IDS_MAX)
		return list->ops->errorf(list, "must be a list of at most %d numeric ids",
					 KVM_HANDOVER_IDS_MAX);
	for (size_t i = 0; i < list->ops->length(list); i++) {
		const char *s = list->ops->scalar(list->ops->item(list, i));
		unsigned long v = s ? strtoul(s, &end, 10) : 0;
		if (!s || !*s || *end || v > 0xFFFFFFFFul)
			return list->ops->error(list, "ids must be numbers");
		out[(*n)++] = v;
	}
	return 0;
}

/* The VMM owners trusted with VM names, by user name or number. A name
 * that no user has here is left out, and said so. */
static int read_trusted(struct kvm_collector *k, const struct bs_conf *conf)
{
	static const char *const defaults[] = {"root", "libvirt-qemu"};
	const struct bs_conf *list = conf->ops->child(conf, "trusted_users");
	size_t n = list ? list->ops->length(list) : 2, got = 0;
	uid_t uids[KVM_TRUSTED_MAX];
	char buf[4096], *end;

	if (list && (list->ops->kind(list) != BS_CONF_SEQ || n > KVM_TRUSTED_MAX))
		return list->ops->errorf(list, "must be a list of at most %d user names or uids",
					 KVM_TRUSTED_MAX);
	for (size_t i = 0; i < n; i++) {
		const char *u = list ? list->ops->scalar(list->ops->item(list, i)) : defaults[i];
		struct passwd pw, *found = NULL;
		unsigned long v;
		if (!u || !*u)
			return list->ops->error(list, "trusted_users must be user names or uids");
		if ((v = strtoul(u, &end, 10)) <= 0xFFFFFFFEul && !*end && *u != '-') {
			uids[got++] = (uid_t)v;
			continue;
		}
		if (getpwnam_r(u, &pw, buf, sizeof(buf), &found) == 0 && found)
			uids[got++] = found->pw_uid;
		else
			k->host->log(BS_LOG_INFO, "kvm",
				     "trusted VMM owner not found here: skipped", "user", u,
				     (char *)NULL);
	}
	kvm_vmset_trust(&k->set, uids, got);
	return 0;
}

/* Sets *max_vms to handover.max_vms when there is a hand-over socket. */
static int read_handover(struct kvm_collector *k, const struct bs_conf *conf, uint64_t *max_vms)
{
	const struct bs_conf *h = conf->ops->child(conf, "handover");
	struct kvm_handover_server *s = &k->handover;

	k->handover_max_fds = 16384;
	k->handover_max_fds_per_peer = 4096;
	s->idle_s = 10;
	if (!h)
		return 0;
	*max_vms = 1024;
	if (h->ops->kind(h) != BS_CONF_MAP)
		return h->ops->error(h,
				     "handover must be a mapping (socket, allow_uids, allow_gids)");
	if (h->ops->get_str(h, "socket", &s->path) < 0)
		return h->ops->error(h, "handover needs a socket path");
	if (read_ids(h, "allow_uids", s->allow_uid, &s->nallow_uid) < 0 ||
	    read_ids(h, "allow_gids", s->allow_gid, &s->nallow_gid) < 0 ||
	    h->ops->get_u64(h, "max_vms", 1, 1000000, max_vms) == -EINVAL ||
	    h->ops->get_u64(h, "max_fds", 1, KVM_HANDOVER_FDS_MAX, &k->handover_max_fds) ==
		-EINVAL ||
	    h->ops->get_u64(h, "max_fds_per_peer", 1, KVM_HANDOVER_FDS_MAX,
			    &k->handover_max_fds_per_peer) == -EINVAL ||
	    h->ops->get_duration(h, "idle_timeout_seconds", 0.1, 3600, &s->idle_s) == -EINVAL)
		return -EINVAL;
	if (s->nallow_uid + s->nallow_gid == 0)
		return h->ops->error(h, "handover needs allow_uids or allow_gids");
	s->max_senders = (size_t)*max_vms;
	return 0;
}

int kvm_config_read(struct kvm_collector *k, const struct bs_conf *conf)
{
	const struct bs_conf_ops *c = conf->ops;
	const char *mode = "per_vm";
	uint64_t max_vms = 4096, max_vcpus = 1024, handover_vms = 0;

	k->proc = "/proc";
	k->rescan_s = 60;
	k->passive = true;
	k->host_view = true;
	if (c->get_str(conf, "mode", &mode) == -EINVAL ||
	    c->get_bool(conf, "host_view", &k->host_view) == -EINVAL ||
	    c->get_duration(conf, "rescan_interval_seconds", 1, 86400, &k->rescan_s) == -EINVAL ||
	    c->get_bool(conf, "passive", &k->passive) == -EINVAL ||
	    c->get_bool(conf, "attach", &k->attach) == -EINVAL ||
	    c->get_str(conf, "proc", &k->proc) == -EINVAL ||
	    c->get_u64(conf, "max_vms", 1, 1000000, &max_vms) == -EINVAL ||
	    c->get_u64(conf, "max_vcpus_per_vm", 1, 4096, &max_vcpus) == -EINVAL ||
	    read_filter(conf, "stats", &k->stats) < 0 || read_filter(conf, "vms", &k->vms) < 0 ||
	    read_handover(k, conf, &handover_vms) < 0 ||
	    kvm_libvirt_conf_read(conf, &k->libvirt) < 0)
		return -EINVAL;
	if (strcmp(mode, "per_vm") == 0)
		k->mode = KVM_PER_VM;
	else if (strcmp(mode, "per_vcpu") == 0)
		k->mode = KVM_PER_VCPU;
	else
		return c->error(c->child(conf, "mode"), "mode must be per_vm or per_vcpu");
	kvm_vmset_init(&k->set, max_vms, handover_vms, max_vcpus);
	k->handover.proc = k->proc;
	return read_trusted(k, conf);
}
