/* The KVM plugin's init, collect and shutdown under the mock host, without
 * /dev/kvm: configuration errors with their positions, --check-config
 * touching nothing, and discovery over a synthetic /proc whose "VMM"
 * claims a stats fd it cannot hand over. */
#include "mockhost.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct bs_collector binstat_collector_kvm;

static void test_configuration_errors(void **state)
{
	static const struct mock_bad_conf bad[] = {
	    {"mode: bogus\n", "t.yml:1:7: mode must be per_vm or per_vcpu"},
	    {"rescan_interval_seconds: 500ms\n",
	     "t.yml:1:26: 'rescan_interval_seconds' must be between 1 and 86400"},
	    {"rescan_interval_seconds: soon\n", "must be a duration like 10s"},
	    {"handover:\n  socket: /tmp/x.sock\n", "handover needs allow_uids or allow_gids"},
	    {"stats:\n  include: [a, [b]]\n", "t.yml:2:12: patterns must be strings"},
	    {"vms:\n  include: [" /* 65 patterns */
	     "a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,"
	     "a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a]\n",
	     "must be a list of at most 64 glob patterns"},
	    {"mdoe: per_vm\n", "t.yml:1:1: unknown key 'mdoe'"},
	};
	(void)state;
	mock_expect_conf_errors(&binstat_collector_kvm, BS_HOST_CHECK_ONLY, bad,
				sizeof(bad) / sizeof(bad[0]));
}

/* --check-config reads everything and opens nothing: no hand-over socket. */
static void test_check_only_touches_nothing(void **state)
{
	char dir[] = "/tmp/kvmplugin.XXXXXX", yaml[1024], sock[64];
	struct mock m;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/handover.sock", dir);
	snprintf(yaml, sizeof(yaml),
		 "mode: per_vcpu\nrescan_interval_seconds: 2m\n"
		 "handover:\n  socket: %s\n  allow_uids: [0]\n  idle_timeout_seconds: 1500ms\n",
		 sock);
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, BS_HOST_CHECK_ONLY), 0);
	assert_int_equal(stat(sock, &st), -1);
	mock_shutdown(&m);
	rmdir(dir);
}

static void write_file(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	fclose(f);
}

/* A synthetic /proc entry: pid holds a VM (fd 6) and its stats fd (fd 7),
 * or so the links say. */
static void fake_vmm(const char *root, pid_t pid)
{
	char path[128], status[128];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/fd", root, pid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/fd/6", root, pid);
	assert_int_equal(symlink("anon_inode:kvm-vm", path), 0);
	snprintf(path, sizeof(path), "%s/%d/fd/7", root, pid);
	assert_int_equal(symlink("anon_inode:kvm-vm-stats", path), 0);
	snprintf(path, sizeof(path), "%s/%d/status", root, pid);
	int n = snprintf(status, sizeof(status), "Name:\tqemu\nTgid:\t%d\nTracerPid:\t0\n", pid);
	write_file(path, status, (size_t)n);
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	write_file(path, "qemu\0-name\0guest=ghost\0", 23);
}

/* Discovery over a synthetic /proc: a process that is gone, and a live one
 * whose "stats fd" is really /dev/null. Neither becomes a VM; the impostor
 * is refused before any read and counted. */
static void test_synthetic_proc(void **state)
{
	char root[] = "/tmp/kvmproc.XXXXXX", yaml[256], cmd[64];
	struct mock m;
	struct capture cap;
	pid_t ghost = 4194301; /* above any pid this machine hands out */
	(void)state;

	if (kill(ghost, 0) == 0)
		skip();
	int ready[2];
	char byte;
	assert_int_equal(pipe(ready), 0);
	pid_t child = fork();
	if (child == 0) { /* holds /dev/null as fd 7 until killed */
		dup2(open("/dev/null", O_RDONLY), 7);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_true(child > 0);
	/* A loaded machine may not have run the child's dup2 yet. */
	assert_int_equal(read(ready[0], &byte, 1), 1);
	close(ready[0]);
	close(ready[1]);
	assert_non_null(mkdtemp(root));
	fake_vmm(root, ghost);
	fake_vmm(root, child);
	snprintf(yaml, sizeof(yaml), "proc: %s\nrescan_interval_seconds: 1h\n", root);

	int init_rc = mock_init(&m, &binstat_collector_kvm, yaml, 0);
	int collect_rc = init_rc == 0 ? mock_collect(&m, &cap) : init_rc;
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(init_rc, 0);
	assert_int_equal(collect_rc, 0);
	assert_non_null(strstr(cap.text, "\nkvm_collector_vms 0\n"));
	assert_non_null(strstr(cap.text, "\nkvm_collector_stats_fds 0\n"));
	assert_null(strstr(cap.text, "ghost"));
	assert_int_equal(capture_drops(&cap, "not_kvm_stats"), 1);
	capture_free(&cap);
	mock_shutdown(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_configuration_errors),
	    cmocka_unit_test(test_check_only_touches_nothing),
	    cmocka_unit_test(test_synthetic_proc),
	};
	return cmocka_run_group_tests_name("kvm_plugin", tests, NULL, NULL);
}
