/* libvirt's domain status files as the KVM collector reads them: Nova's
 * metadata, other namespaces, and the hostile documents a domain's definer
 * can make of its <metadata>. */
#include "helpers.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvm_libvirt.h"

#define UUID "6a1c4f0e-1111-4222-8333-444455556666"
#define PID 4242

static struct kvm_libvirt_conf conf(void)
{
	return (struct kvm_libvirt_conf){
	    .status_dir = "/nonexistent",
	    .nns = 3,
	    .ns = {{KVM_NOVA_NS_PREFIX "1.1", NULL},
		   {KVM_NOVA_NS_PREFIX "1.0", NULL},
		   {"http://example.com/acme/1.0", "acme"}},
	    .max_label_len = 32,
	};
}

/* A domstatus of `pid` and `uuid` around `metadata`. */
static char *status(int pid, const char *uuid, const char *metadata)
{
	char *s = NULL;
	assert_true(asprintf(&s,
			     "<domstatus state='running' reason='booted' pid='%d'>\n"
			     "  <vcpus><vcpu id='0' pid='%d'/></vcpus>\n"
			     "  <domain type='kvm' id='1'>\n"
			     "    <name>lv-web1</name>\n"
			     "    <uuid>%s</uuid>\n"
			     "    <metadata>%s</metadata>\n"
			     "  </domain>\n"
			     "</domstatus>\n",
			     pid, pid + 1, uuid, metadata) > 0);
	return s;
}

static const char *label(const struct kvm_meta *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->l[i].name, name) == 0)
			return m->l[i].value;
	return NULL;
}

static int parse(const char *doc, struct kvm_meta *m, const char **why)
{
	struct kvm_libvirt_conf c = conf();
	return kvm_libvirt_parse(&c, doc, strlen(doc), PID, UUID, m, why);
}

#define NOVA                                                                                       \
	"<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'>"                 \
	"<nova:name>web-frontend-1</nova:name>"                                                    \
	"<nova:flavor name='m1.small'><nova:memory>2048</nova:memory></nova:flavor>"               \
	"<nova:owner><nova:user uuid='u-1'>alice</nova:user>"                                      \
	"<nova:project uuid='p-9'>shop</nova:project></nova:owner>"                                \
	"</nova:instance>"

static void test_nova(void **state)
{
	struct kvm_meta m;
	const char *why;
	(void)state;
	char *doc = status(PID, UUID, NOVA);
	assert_int_equal(parse(doc, &m, &why), 0);
	assert_string_equal(m.domain, "lv-web1");
	assert_string_equal(label(&m, "instance_name"), "web-frontend-1");
	assert_string_equal(label(&m, "flavor"), "m1.small");
	assert_string_equal(label(&m, "project_name"), "shop");
	assert_string_equal(label(&m, "project_id"), "p-9");
	assert_string_equal(label(&m, "user_name"), "alice");
	assert_string_equal(label(&m, "user_id"), "u-1");
	assert_int_equal(m.n, 6);
	kvm_meta_free(&m);
	free(doc);
}

static void test_other_namespaces(void **state)
{
	struct kvm_meta m;
	const char *why;
	(void)state;
	/* acme's text-only children become acme_NAME; a subtree, a name that
	 * is no label name, and an unlisted namespace are left out. */
	char *doc =
	    status(PID, UUID,
		   "<acme:vm xmlns:acme='http://example.com/acme/1.0'>"
		   "<acme:team>payments</acme:team><acme:tier>gold</acme:tier>"
		   "<acme:tree><acme:leaf>x</acme:leaf></acme:tree>"
		   "<acme:bad-name>y</acme:bad-name></acme:vm>"
		   "<other:vm xmlns:other='http://example.com/other'>"
		   "<other:team>spy</other:team></other:vm>"
		   "<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/9.9'>"
		   "<nova:name>not read</nova:name></nova:instance>");
	assert_int_equal(parse(doc, &m, &why), 0);
	assert_string_equal(label(&m, "acme_team"), "payments");
	assert_string_equal(label(&m, "acme_tier"), "gold");
	assert_int_equal(m.n, 2);
	kvm_meta_free(&m);
	free(doc);
}

static void test_not_this_vm(void **state)
{
	struct kvm_meta m;
	const char *why;
	(void)state;
	/* A status file left by an earlier run (another pid), or another
	 * domain's (another uuid), is not this VM's. */
	char *stale = status(PID + 7, UUID, NOVA);
	char *other = status(PID, "00000000-0000-4000-8000-000000000000", NOVA);
	assert_int_equal(parse(stale, &m, &why), -EINVAL);
	assert_string_equal(why, "libvirt_other_domain");
	assert_int_equal(parse(other, &m, &why), -EINVAL);
	assert_string_equal(why, "libvirt_other_domain");
	assert_int_equal(parse("<domain><name>x</name></domain>", &m, &why), -EINVAL);
	assert_string_equal(why, "libvirt_bad_xml");
	free(stale);
	free(other);
}

static void test_hostile(void **state)
{
	struct kvm_meta m;
	const char *why;
	(void)state;

	/* Not UTF-8: libxml2 refuses the document. */
	char *latin1 = status(PID, UUID,
			      "<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/"
			      "1.1'><nova:name>caf\xe9</nova:name></nova:instance>");
	assert_int_equal(parse(latin1, &m, &why), -EINVAL);
	assert_string_equal(why, "libvirt_bad_xml");
	free(latin1);

	/* A long name is cut at 32 bytes, never inside a UTF-8 sequence. */
	char *longname =
	    status(PID, UUID,
		   "<nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/"
		   "1.1'><nova:name>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\xc3\xa9"
		   "</nova:name></nova:instance>");
	assert_int_equal(parse(longname, &m, &why), 0);
	assert_string_equal(label(&m, "instance_name"), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	kvm_meta_free(&m);
	free(longname);

	/* Entities are not substituted, the DTD not loaded: no file is read
	 * into a label, no expansion blows up. */
	const char *xxe =
	    "<?xml version='1.0'?>"
	    "<!DOCTYPE domstatus [<!ENTITY x SYSTEM 'file:///etc/passwd'>"
	    "<!ENTITY a 'aaaaaaaaaa'><!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'>"
	    "<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'><!ENTITY d "
	    "'&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'>]>"
	    "<domstatus pid='4242'><domain><name>&x;&d;</name><uuid>" UUID "</uuid>"
	    "<metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'>"
	    "<nova:name>&d;&d;&d;</nova:name></nova:instance></metadata></domain></domstatus>";
	assert_int_equal(parse(xxe, &m, &why), -EINVAL); /* the name is entity references */
	assert_string_equal(why, "libvirt_bad_xml");
	const char *xxe_meta =
	    "<?xml version='1.0'?>"
	    "<!DOCTYPE domstatus [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
	    "<domstatus pid='4242'><domain><name>lv</name><uuid>" UUID "</uuid>"
	    "<metadata><nova:instance xmlns:nova='http://openstack.org/xmlns/libvirt/nova/1.1'>"
	    "<nova:name>&x;</nova:name><nova:flavor name='&#65;'/></nova:instance></metadata>"
	    "</domain></domstatus>";
	assert_int_equal(parse(xxe_meta, &m, &why), 0);
	assert_null(label(&m, "instance_name")); /* an entity reference is not text */
	assert_string_equal(label(&m, "flavor"), "A");
	kvm_meta_free(&m);

	/* Nested deeper than libxml2's limit of 256 (XML_PARSE_HUGE is off). */
	size_t depth = 5000;
	char *deep = malloc(depth * 7 + 1), *p = deep;
	assert_non_null(deep);
	for (size_t i = 0; i < depth; i++, p += 3)
		memcpy(p, "<x>", 3);
	for (size_t i = 0; i < depth; i++, p += 4)
		memcpy(p, "</x>", 4);
	*p = '\0';
	char *nested = status(PID, UUID, deep);
	assert_int_equal(parse(nested, &m, &why), -EINVAL);
	free(nested);
	free(deep);

	/* More than 16 labels: the first 16. */
	char many[4096] = "<acme:vm xmlns:acme='http://example.com/acme/1.0'>";
	for (int i = 0; i < 40; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "<acme:k%d>v</acme:k%d>",
			 i, i);
	snprintf(many + strlen(many), sizeof(many) - strlen(many), "</acme:vm>");
	char *lots = status(PID, UUID, many);
	assert_int_equal(parse(lots, &m, &why), 0);
	assert_int_equal(m.n, KVM_META_LABELS_MAX);
	kvm_meta_free(&m);
	free(lots);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/test_kvm_libvirt.XXXXXX", path[128];
	struct kvm_meta m;
	const char *why;
	(void)state;
	assert_non_null(mkdtemp(dir));
	struct kvm_libvirt_conf c = conf();
	c.status_dir = dir;

	assert_int_equal(kvm_libvirt_read(&c, "none", PID, UUID, &m, &why), -ENOENT);
	assert_int_equal(kvm_libvirt_read(&c, "../etc/x", PID, UUID, &m, &why), -ENOENT);
	/* Over the size cap: refused unread (a sparse file costs nothing). */
	snprintf(path, sizeof(path), "%s/huge.xml", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, KVM_LIBVIRT_FILE_MAX + 1), 0);
	close(fd);
	assert_int_equal(kvm_libvirt_read(&c, "huge", PID, UUID, &m, &why), -EINVAL);
	assert_string_equal(why, "libvirt_bad_file");
	/* A FIFO, and a link to elsewhere, are never opened for reading. */
	snprintf(path, sizeof(path), "%s/fifo.xml", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(kvm_libvirt_read(&c, "fifo", PID, UUID, &m, &why), -EINVAL);
	snprintf(path, sizeof(path), "%s/link.xml", dir);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_int_equal(kvm_libvirt_read(&c, "link", PID, UUID, &m, &why), -ELOOP);
	/* The real thing. */
	char *doc = status(PID, UUID, NOVA);
	snprintf(path, sizeof(path), "%s/lv-web1.xml", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_int_equal(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	assert_int_equal(kvm_libvirt_read(&c, "lv-web1", PID, UUID, &m, &why), 0);
	assert_string_equal(label(&m, "project_name"), "shop");
	kvm_meta_free(&m);
	free(doc);
	for (const char *f = "huge\0fifo\0link\0lv-web1\0"; *f; f += strlen(f) + 1) {
		snprintf(path, sizeof(path), "%s/%s.xml", dir, f);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_nova),	cmocka_unit_test(test_other_namespaces),
	    cmocka_unit_test(test_not_this_vm), cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests_name("kvm_libvirt", tests, NULL, NULL);
}
