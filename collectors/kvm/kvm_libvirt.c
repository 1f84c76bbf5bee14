/* libvirt's record of a running domain. The file is libvirtd's, but its
 * <metadata> and the names in it come from whoever defined the domain
 * (an orchestrator passing on what its users typed), so it is read as
 * hostile input: size-capped, no network, no entity substitution, no DTD,
 * libxml2's default depth limit; a label value is cut to a length on a
 * UTF-8 boundary (libxml2 refuses a document that is not UTF-8). */
#include "kvm_libvirt.h"

#include "readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

void kvm_meta_free(struct kvm_meta *m)
{
	free(m->domain);
	for (size_t i = 0; i < m->n; i++) {
		free(m->l[i].name);
		free(m->l[i].value);
	}
	*m = (struct kvm_meta){0};
}

static bool named(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static const xmlNode *child(const xmlNode *n, const char *name)
{
	for (const xmlNode *c = n ? n->children : NULL; c; c = c->next)
		if (named(c, name))
			return c;
	return NULL;
}

/* A copy cut to at most `max` bytes, not inside a UTF-8 sequence. */
static char *cut_dup(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return strndup(s, n);
}

/* The element's text, when it holds text alone (NULL for a subtree). */
static char *text_of(const xmlNode *n)
{
	for (const xmlNode *c = n->children; c; c = c->next)
		if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE)
			return NULL;
	return (char *)xmlNodeGetContent(n);
}

static int add_label(struct kvm_meta *m, const char *name, const char *value, size_t max)
{
	if (!value || !*value)
		return 0;
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->l[i].name, name) == 0)
			return 0; /* the first of a name counts */
	if (m->n == KVM_META_LABELS_MAX)
		return 0;
	char *nm = strdup(name), *v = cut_dup(value, max);
	if (!nm || !v) {
		free(nm);
		free(v);
		return -ENOMEM;
	}
	m->l[m->n++] = (struct kvm_meta_label){nm, v};
	return 0;
}

static int add_text(struct kvm_meta *m, const char *name, const xmlNode *n, size_t max)
{
	char *t = n ? text_of(n) : NULL;
	int rc = add_label(m, name, t, max);
	xmlFree(t);
	return rc;
}

static int add_attr(struct kvm_meta *m, const char *name, const xmlNode *n, const char *attr,
		    size_t max)
{
	char *t = n ? (char *)xmlGetProp(n, (const xmlChar *)attr) : NULL;
	int rc = add_label(m, name, t, max);
	xmlFree(t);
	return rc;
}

/* Nova's <nova:instance>: the names an operator asks for by. */
static int read_nova(struct kvm_meta *m, const xmlNode *inst, size_t max)
{
	const xmlNode *owner = child(inst, "owner"), *user = child(owner, "user"),
		      *project = child(owner, "project");
	int rc = 0;

	rc |= add_text(m, "instance_name", child(inst, "name"), max);
	rc |= add_attr(m, "flavor", child(inst, "flavor"), "name", max);
	rc |= add_text(m, "project_name", project, max);
	rc |= add_attr(m, "project_id", project, "uuid", max);
	rc |= add_text(m, "user_name", user, max);
	rc |= add_attr(m, "user_id", user, "uuid", max);
	return rc ? -ENOMEM : 0;
}

/* Another namespace: each text-only child element, as PREFIX_NAME (names
 * that are not label names are left out). */
static int read_other(struct kvm_meta *m, const xmlNode *top, const char *prefix, size_t max)
{
	char name[128];

	for (const xmlNode *c = top->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		const char *local = (const char *)c->name;
		if (strspn(local,
			   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
			strlen(local) ||
		    snprintf(name, sizeof(name), "%s_%s", prefix, local) >= (int)sizeof(name))
			continue;
		if (add_text(m, name, c, max) < 0)
			return -ENOMEM;
	}
	return 0;
}

static const struct kvm_libvirt_ns *ns_of(const struct kvm_libvirt_conf *c, const xmlNode *n)
{
	if (!n->ns || !n->ns->href)
		return NULL;
	for (size_t i = 0; i < c->nns; i++)
		if (strcmp((const char *)n->ns->href, c->ns[i].uri) == 0)
			return &c->ns[i];
	return NULL;
}

static int read_metadata(const struct kvm_libvirt_conf *c, const xmlNode *md, struct kvm_meta *m)
{
	for (const xmlNode *n = md ? md->children : NULL; n; n = n->next) {
		const struct kvm_libvirt_ns *ns = n->type == XML_ELEMENT_NODE ? ns_of(c, n) : NULL;
		int rc = 0;
		if (!ns)
			continue;
		if (strncmp(ns->uri, KVM_NOVA_NS_PREFIX, strlen(KVM_NOVA_NS_PREFIX)) == 0) {
			if (named(n, "instance"))
				rc = read_nova(m, n, c->max_label_len);
		} else {
			rc = read_other(m, n, ns->prefix, c->max_label_len);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Whether the record is the one of VMM `pid` given `uuid`. */
static bool record_matches(const xmlNode *root, const xmlNode *dom, pid_t pid, const char *uuid)
{
	const xmlNode *un = child(dom, "uuid");
	char *p = (char *)xmlGetProp(root, (const xmlChar *)"pid");
	char *u = un ? text_of(un) : NULL;
	char *end = NULL;
	long v = p ? strtol(p, &end, 10) : -1;
	bool ok = p && end && *end == '\0' && v == pid && u && strcasecmp(u, uuid) == 0;
	xmlFree(p);
	xmlFree(u);
	return ok;
}

int kvm_libvirt_parse(const struct kvm_libvirt_conf *c, const char *buf, size_t len, pid_t pid,
		      const char *uuid, struct kvm_meta *out, const char **why)
{
	int rc = -EINVAL;

	*out = (struct kvm_meta){0};
	*why = "libvirt_bad_xml";
	if (len > KVM_LIBVIRT_FILE_MAX)
		return -EFBIG;
	xmlDoc *doc = xmlReadMemory(buf, (int)len, NULL, NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return -EINVAL;
	const xmlNode *root = xmlDocGetRootElement(doc), *dom = child(root, "domain");
	if (!named(root, "domstatus") || !dom)
		goto out_free_doc;
	*why = "libvirt_other_domain";
	if (!record_matches(root, dom, pid, uuid))
		goto out_free_doc;
	const xmlNode *nn = child(dom, "name");
	char *name = nn ? text_of(nn) : NULL;
	*why = "libvirt_bad_xml";
	if (!name || !*name) { /* libvirt writes a plain name; anything else is not its file */
		xmlFree(name);
		goto out_free_doc;
	}
	out->domain = cut_dup(name, c->max_label_len);
	xmlFree(name);
	*why = "out_of_memory";
	if (!out->domain || read_metadata(c, child(dom, "metadata"), out) < 0) {
		kvm_meta_free(out);
		rc = -ENOMEM;
		goto out_free_doc;
	}
	rc = 0;
out_free_doc:
	xmlFreeDoc(doc);
	return rc;
}

int kvm_libvirt_read(const struct kvm_libvirt_conf *c, const char *name, pid_t pid,
		     const char *uuid, struct kvm_meta *out, const char **why)
{
	char path[4096], *buf;
	size_t len;

	*why = "libvirt_unreadable";
	/* libvirt refuses '/' in a domain name; a name from a command line may have one. */
	if (!c->status_dir || !*name || strchr(name, '/') || name[0] == '.' ||
	    snprintf(path, sizeof(path), "%s/%s.xml", c->status_dir, name) >= (int)sizeof(path))
		return -ENOENT;
	int rc = readfile_bounded(path, KVM_LIBVIRT_FILE_MAX, true, &buf, &len);
	if (rc == -EINVAL || rc == -EFBIG)
		*why = "libvirt_bad_file";
	if (rc < 0)
		return rc == -EFBIG ? -EINVAL : rc;
	rc = kvm_libvirt_parse(c, buf, len, pid, uuid, out, why);
	free(buf);
	return rc;
}

static bool label_name(const char *s)
{
	return s && *s && !(*s >= '0' && *s <= '9') &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
		   strlen(s) &&
	       strlen(s) <= 64;
}

static int read_namespaces(const struct bs_conf *list, struct kvm_libvirt_conf *c)
{
	const struct bs_conf_ops *o = list->ops;

	if (o->kind(list) != BS_CONF_SEQ || o->length(list) > KVM_LIBVIRT_NS_MAX)
		return o->errorf(list, "must be a list of at most %d namespaces (uri, prefix)",
				 KVM_LIBVIRT_NS_MAX);
	c->nns = 0;
	for (size_t i = 0; i < o->length(list); i++) {
		const struct bs_conf *ns = o->item(list, i);
		struct kvm_libvirt_ns *n = &c->ns[c->nns++];
		*n = (struct kvm_libvirt_ns){0};
		if (o->kind(ns) != BS_CONF_MAP || o->get_str(ns, "uri", &n->uri) < 0)
			return o->error(ns, "a namespace is a mapping with a uri");
		bool nova = strncmp(n->uri, KVM_NOVA_NS_PREFIX, strlen(KVM_NOVA_NS_PREFIX)) == 0;
		if (o->get_str(ns, "prefix", &n->prefix) == -EINVAL)
			return -EINVAL;
		if (!nova && !label_name(n->prefix))
			return o->error(ns, "a namespace other than Nova's needs a prefix for its "
					    "labels ([a-zA-Z_][a-zA-Z0-9_]*)");
	}
	return 0;
}

int kvm_libvirt_conf_read(const struct bs_conf *conf, struct kvm_libvirt_conf *c)
{
	const struct bs_conf *lv = conf->ops->child(conf, "libvirt");
	uint64_t max = 128;

	*c = (struct kvm_libvirt_conf){
	    .status_dir = "/run/libvirt/qemu",
	    .nns = 2,
	    .ns = {{KVM_NOVA_NS_PREFIX "1.1", NULL}, {KVM_NOVA_NS_PREFIX "1.0", NULL}},
	};
	if (lv && lv->ops->kind(lv) != BS_CONF_MAP)
		return lv->ops->error(lv, "libvirt must be a mapping (status_dir, namespaces, "
					  "max_label_length)");
	const struct bs_conf *list = lv ? lv->ops->child(lv, "namespaces") : NULL;
	if (lv && (lv->ops->get_str(lv, "status_dir", &c->status_dir) == -EINVAL ||
		   lv->ops->get_u64(lv, "max_label_length", 16, 1024, &max) == -EINVAL ||
		   (list && read_namespaces(list, c) < 0)))
		return -EINVAL;
	if (!*c->status_dir)
		c->status_dir = NULL; /* "": off */
	xmlInitParser(); /* here in the main thread, before the watcher parses (libxml2's rule) */
	c->max_label_len = max;
	return 0;
}
