/* Whether the KVM collector's /proc is the host's PID namespace: PID 2's
 * stat line, a /proc made of files, and the gauge that says it. */
#include "helpers.h"

#include <sys/stat.h>
#include <unistd.h>

#include "kvm_pidns.h"

#define IS_KTHREAD(line) kvm_pidns_stat_is_kthread(line, strlen(line))

static void test_stat_is_kthread(void **state)
{
	(void)state;
	/* kthreadd as read on this kind of host (flags 0x208040). */
	assert_true(IS_KTHREAD("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24"));
	/* A container's PID 2: a user process, whatever its name. */
	assert_false(IS_KTHREAD("2 (binstat_exporte) S 1 2 2 0 -1 4194560 130 0 0 0"));
	assert_false(IS_KTHREAD("2 (kthreadd) S 0 0 0 0 -1 4194560 0 0"));
	/* A name with ") S 0 0 0 0 -1 2129984" in it fools no one: the
	 * fields start after the last ')'. */
	assert_false(IS_KTHREAD("2 (x) S 0 0 0 0 -1 2129984 y) S 1 2 2 0 -1 4194560 0"));
	/* Cut short, or no comm at all. */
	assert_false(IS_KTHREAD("2 (kthreadd) S 0 0"));
	assert_false(IS_KTHREAD("2 kthreadd S 0 0 0 0 -1 2129984"));
	assert_false(IS_KTHREAD(""));
}

static void write_stat(const char *dir, const char *line)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/2", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/2/stat", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(line, f);
	fclose(f);
}

static void remove_stat(const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/2/stat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/2", dir);
	rmdir(path);
}

static void test_look(void **state)
{
	char dir[] = "/tmp/kvm_pidns.XXXXXX";
	(void)state;

	assert_non_null(mkdtemp(dir));
	/* No PID 2 at all: a namespace of its own, of one or two processes. */
	assert_int_equal(kvm_pidns_look(dir), KVM_PIDNS_OWN);
	write_stat(dir, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24\n");
	assert_int_equal(kvm_pidns_look(dir), KVM_PIDNS_HOST);
	remove_stat(dir);
	write_stat(dir, "2 (catatonit) S 1 2 2 0 -1 4194560 130 0\n");
	assert_int_equal(kvm_pidns_look(dir), KVM_PIDNS_OWN);
	remove_stat(dir);
	write_stat(dir, ""); /* nothing to read: no conclusion */
	assert_int_equal(kvm_pidns_look(dir), KVM_PIDNS_UNKNOWN);
	remove_stat(dir);
	rmdir(dir);
	/* The real /proc of this test: the host's, or a container's. */
	enum kvm_pidns real = kvm_pidns_look("/proc");
	assert_true(real == KVM_PIDNS_HOST || real == KVM_PIDNS_OWN);
}

static void test_emit(void **state)
{
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	kvm_pidns_emit(&c.em.pub, KVM_PIDNS_OWN);
	kvm_pidns_emit(&c.em.pub, KVM_PIDNS_UNKNOWN); /* says nothing */
	const char *out = capture_end(&c);
	assert_non_null(strstr(out, "\nkvm_collector_host_pid_namespace 0\n"));
	assert_null(strstr(out, "\nkvm_collector_host_pid_namespace 1\n"));
	capture_free(&c);
	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	kvm_pidns_emit(&c.em.pub, KVM_PIDNS_HOST);
	out = capture_end(&c);
	assert_non_null(strstr(out, "\nkvm_collector_host_pid_namespace 1\n"));
	capture_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat_is_kthread),
	    cmocka_unit_test(test_look),
	    cmocka_unit_test(test_emit),
	};
	return cmocka_run_group_tests_name("kvm_pidns", tests, NULL, NULL);
}
