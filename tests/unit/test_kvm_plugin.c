/* The KVM plugin's init, collect and shutdown under the mock host, without
 * /dev/kvm: every option's errors with their positions, --check-config
 * touching nothing, no VMM in a /proc of its own, discovery over a
 * synthetic /proc whose "VMM" claims a stats fd it cannot hand over (and
 * passive: false not looking at it), and the hand-over socket's life. */
#include "mockhost.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
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
	    /* every other option, a wrong value each */
	    {"mode: [per_vm]\n", "t.yml:1:7: 'mode' must be a single value"},
	    {"host_view: maybe\n", "t.yml:1:12: 'host_view' must be true or false, not 'maybe'"},
	    {"passive: 2\n", "t.yml:1:10: 'passive' must be true or false, not '2'"},
	    {"attach: [yes]\n", "t.yml:1:9: 'attach' must be a single value"},
	    {"proc: {a: b}\n", "t.yml:1:7: 'proc' must be a single value"},
	    {"max_vms: 0\n", "t.yml:1:10: 'max_vms' must be between 1 and 1000000, not 0"},
	    {"max_vcpus_per_vm: 4097\n",
	     "t.yml:1:19: 'max_vcpus_per_vm' must be between 1 and 4096, not 4097"},
	    {"stats: [a]\n", "t.yml:1:8: must be a mapping with include and exclude lists"},
	    {"vms:\n  exclude: test-*\n", "t.yml:2:12: must be a list of at most 64 glob"},
	    {"handover: /tmp/x.sock\n", "t.yml:1:11: handover must be a mapping (socket, "},
	    {"handover:\n  allow_uids: [0]\n", "t.yml:2:3: handover needs a socket path"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [root]\n",
	     "t.yml:3:15: ids must be numbers"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [4294967296]\n",
	     "t.yml:3:15: ids must be numbers"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_gids: 100\n",
	     "t.yml:3:15: must be a list of at most 64 numeric ids"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [0]\n  max_vms: 0\n",
	     "t.yml:4:12: 'max_vms' must be between 1 and 1000000, not 0"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [0]\n  max_fds: 1000001\n",
	     "t.yml:4:12: 'max_fds' must be between 1 and 1000000, not 1000001"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [0]\n  max_fds_per_peer: x\n",
	     "t.yml:4:21: 'max_fds_per_peer' must be a whole number, not 'x'"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [0]\n  idle_timeout_seconds: 50ms\n",
	     "t.yml:4:25: 'idle_timeout_seconds' must be between 0.1 and 3600, not '50ms'"},
	    {"libvirt: off\n", "t.yml:1:10: libvirt must be a mapping (status_dir, namespaces, "},
	    {"libvirt:\n  status_dir: [a]\n", "t.yml:2:15: 'status_dir' must be a single value"},
	    {"libvirt:\n  max_label_length: 15\n",
	     "t.yml:2:21: 'max_label_length' must be between 16 and 1024, not 15"},
	    {"libvirt:\n  namespaces: x\n", "t.yml:2:15: must be a list of at most 8 namespaces"},
	    {"libvirt:\n  namespaces:\n    - prefix: ex\n",
	     "t.yml:3:7: a namespace is a mapping with a uri"},
	    {"libvirt:\n  namespaces:\n    - uri: http://example.com/x\n      prefix: 1x\n",
	     "t.yml:3:7: a namespace other than Nova's needs a prefix for its labels"},
	    {"trusted_users: root\n",
	     "t.yml:1:16: must be a list of at most 64 user names or uids"},
	    {"trusted_users: [root, [a]]\n",
	     "t.yml:1:16: trusted_users must be user names or uids"},
	    {"trusted_users: [root, '']\n", "t.yml:1:16: trusted_users must be user names or uids"},
	    /* unknown keys below the top */
	    {"stats:\n  exlcude: [a]\n", "t.yml:2:3: unknown key 'exlcude'"},
	    {"handover:\n  socket: /tmp/x.sock\n  allow_uids: [0]\n  idle_timeout: 1s\n",
	     "t.yml:4:3: unknown key 'idle_timeout'"},
	    {"libvirt:\n  statusdir: /run/libvirt/qemu\n", "t.yml:2:3: unknown key 'statusdir'"},
	    {"libvirt:\n  namespaces:\n    - uri: http://example.com/x\n      prefix: ex\n"
	     "      label: 1\n",
	     "t.yml:5:7: unknown key 'label'"},
	};
	(void)state;
	mock_expect_conf_errors(&binstat_collector_kvm, BS_HOST_CHECK_ONLY, bad,
				sizeof(bad) / sizeof(bad[0]));
}

/* --check-config reads every option and opens nothing: no fd, no
 * hand-over socket, and nothing logged. The values are valid ones, many
 * at their limits. */
static void test_check_only_touches_nothing(void **state)
{
	char dir[] = "/tmp/kvmplugin.XXXXXX", yaml[1024], sock[64];
	struct mock m;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/handover.sock", dir);
	snprintf(yaml, sizeof(yaml),
		 "mode: per_vcpu\nrescan_interval_seconds: 1s\nhost_view: off\npassive: no\n"
		 "attach: true\nproc: %s\nmax_vms: 1000000\nmax_vcpus_per_vm: 4096\n"
		 "stats: {include: ['*'], exclude: ['*_hist']}\nvms: {exclude: [test-*]}\n"
		 "handover:\n  socket: %s\n  allow_uids: [0, 4294967295]\n  allow_gids: []\n"
		 "  max_vms: 1\n  max_fds: 1000000\n  max_fds_per_peer: 1\n"
		 "  idle_timeout_seconds: 100ms\n"
		 "libvirt:\n  status_dir: ''\n  max_label_length: 1024\n"
		 "  namespaces: [{uri: 'http://example.com/x', prefix: ex}]\n"
		 "trusted_users: [root, 0, 4294967294]\n",
		 dir, sock);
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, BS_HOST_CHECK_ONLY), 0);
	assert_int_equal(mock_open_fds(), fds);
	assert_int_equal(stat(sock, &st), -1);
	assert_string_equal(mock_log, "");
	mock_shutdown(&m);
	/* and the defaults */
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, "", BS_HOST_CHECK_ONLY), 0);
	assert_int_equal(mock_open_fds(), fds);
	mock_shutdown(&m);
	/* a trusted owner no user is here: left out, and said so */
	assert_int_equal(mock_init(&m, &binstat_collector_kvm,
				   "trusted_users: [binstat-no-such-user, root]\n",
				   BS_HOST_CHECK_ONLY),
			 0);
	assert_int_equal(mock_open_fds(), fds);
	assert_string_equal(mock_log, "info kvm trusted VMM owner not found here: skipped "
				      "user=binstat-no-such-user\n");
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

/* A synthetic /proc at root: a process that is gone, and a live child
 * whose "stats fd" is really /dev/null. */
struct impostor {
	char root[32];
	pid_t child;
};

static void impostor_start(struct impostor *im)
{
	pid_t ghost = 4194301; /* above any pid this machine hands out */
	int ready[2];
	char byte;

	if (kill(ghost, 0) == 0)
		skip();
	assert_int_equal(pipe(ready), 0);
	im->child = fork();
	if (im->child == 0) { /* holds /dev/null as fd 7 until killed */
		dup2(open("/dev/null", O_RDONLY), 7);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_true(im->child > 0);
	/* A loaded machine may not have run the child's dup2 yet. */
	assert_int_equal(read(ready[0], &byte, 1), 1);
	close(ready[0]);
	close(ready[1]);
	snprintf(im->root, sizeof(im->root), "/tmp/kvmproc.XXXXXX");
	assert_non_null(mkdtemp(im->root));
	fake_vmm(im->root, ghost);
	fake_vmm(im->root, im->child);
}

static void impostor_stop(struct impostor *im)
{
	kill(im->child, SIGKILL);
	waitpid(im->child, NULL, 0);
	mock_rmtree(im->root);
}

/* One collect over the synthetic /proc with options `opts` besides proc:
 * the impostor is gone again before anything is checked. */
static void impostor_collect(const char *opts, struct mock *m, struct capture *cap)
{
	char yaml[256];
	struct impostor im;

	impostor_start(&im);
	snprintf(yaml, sizeof(yaml), "proc: %s\n%s", im.root, opts);
	int init_rc = mock_init(m, &binstat_collector_kvm, yaml, 0);
	int collect_rc = init_rc == 0 ? mock_collect(m, cap) : init_rc;
	impostor_stop(&im);
	assert_int_equal(init_rc, 0);
	assert_int_equal(collect_rc, 0);
}

/* Discovery over the synthetic /proc: neither process becomes a VM; the
 * impostor is refused before any read and counted. */
static void test_synthetic_proc(void **state)
{
	struct mock m;
	struct capture cap;
	(void)state;

	impostor_collect("rescan_interval_seconds: 1h\n", &m, &cap);
	assert_non_null(strstr(cap.text, "\nkvm_collector_vms 0\n"));
	assert_non_null(strstr(cap.text, "\nkvm_collector_stats_fds 0\n"));
	assert_null(strstr(cap.text, "ghost"));
	assert_int_equal(capture_drops(&cap, "not_kvm_stats"), 1);
	capture_free(&cap);
	mock_shutdown(&m);
}

/* passive: false with neither attach nor a hand-over socket: /proc is
 * never walked, so the impostor is not even looked at. */
static void test_passive_off_walks_nothing(void **state)
{
	struct mock m;
	struct capture cap;
	(void)state;

	impostor_collect("passive: false\n", &m, &cap);
	mock_expect_in("collect", cap.text, "\nkvm_collector_vms 0\n", false);
	mock_expect_no_drops(&cap);
	mock_expect_in("log", mock_log, "info kvm first scan done vms=0 stats_fds=0", false);
	capture_free(&cap);
	mock_shutdown(&m);
}

/* An empty /proc of its own: no VMM visible. init starts the watcher,
 * collect writes the totals at 0 and counts nothing, shutdown closes
 * every fd init opened. */
static void test_no_vmms(void **state)
{
	char root[] = "/tmp/kvmproc.XXXXXX", yaml[128];
	struct mock m;
	struct capture cap;
	(void)state;

	assert_non_null(mkdtemp(root));
	/* A host's /proc: its PID 2 is the kernel's kthreadd. */
	char kthreadd[64], stat[80];
	snprintf(kthreadd, sizeof(kthreadd), "%s/2", root);
	snprintf(stat, sizeof(stat), "%s/stat", kthreadd);
	assert_int_equal(mkdir(kthreadd, 0755), 0);
	FILE *f = fopen(stat, "w");
	assert_non_null(f);
	fputs("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 24\n", f);
	fclose(f);
	snprintf(yaml, sizeof(yaml), "proc: %s\n", root);
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, 0), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mock_collect(&m, &cap), 0);
		mock_expect_in("collect", cap.text, "\nkvm_collector_vms 0\n", false);
		mock_expect_in("collect", cap.text, "\nkvm_collector_host_pid_namespace 1\n",
			       false);
		mock_expect_in("collect", cap.text, "\nkvm_collector_stats_fds 0\n", false);
		mock_expect_in("collect", cap.text, "\nkvm_collector_vcpus_of_unknown_vm 0\n",
			       false);
		mock_expect_in("collect", cap.text, "{vm=", true);
		mock_expect_no_drops(&cap);
		capture_free(&cap);
	}
	mock_expect_describe(&m, "0 VMs (0 handed over), 0 vCPUs, 0 stats fds");
	mock_expect_in("log", mock_log,
		       "info kvm first scan done vms=0 stats_fds=0 duration_ms=", false);
	mock_shutdown(&m);
	assert_int_equal(mock_open_fds(), fds);
	unlink(stat);
	rmdir(kthreadd);
	rmdir(root);
}

/* A /proc of a PID namespace of its own (no PID 2, no VMM): the collector
 * says so, in the gauge, the log and the landing page's line. */
static void test_own_pid_namespace(void **state)
{
	char root[] = "/tmp/kvmproc.XXXXXX", yaml[128];
	struct mock m;
	struct capture cap;
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(yaml, sizeof(yaml), "proc: %s\n", root);
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, 0), 0);
	assert_int_equal(mock_collect(&m, &cap), 0);
	mock_expect_in("collect", cap.text, "\nkvm_collector_host_pid_namespace 0\n", false);
	mock_expect_in("collect", cap.text, "\nkvm_collector_vms 0\n", false);
	capture_free(&cap);
	mock_expect_in("log", mock_log, "warn kvm this /proc shows a PID namespace of its own",
		       false);
	mock_expect_in("log", mock_log, "--pid=host (Kubernetes: hostPID: true)", false);
	mock_expect_describe(&m,
			     "0 VMs (0 handed over), 0 vCPUs, 0 stats fds\nnot in the host's PID "
			     "namespace: no VMM is seen; run the container with --pid=host "
			     "(Kubernetes: hostPID: true)");
	mock_shutdown(&m);
	rmdir(root);
}

static int dial(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc;
}

/* The hand-over socket: made at init (anyone may connect, credentials
 * decide), kept across a reload (a second instance on the same path
 * binds nothing and inherits it when the first shuts down), removed by
 * the last shutdown. */
static void test_handover_socket(void **state)
{
	char dir[] = "/tmp/kvmplugin.XXXXXX", yaml[256], sock[64];
	struct mock old, new;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/h.sock", dir);
	snprintf(yaml, sizeof(yaml), "proc: %s\nhandover:\n  socket: %s\n  allow_uids: [%u]\n", dir,
		 sock, (unsigned)getuid());
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&old, &binstat_collector_kvm, yaml, 0), 0);
	assert_int_equal(stat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0666);
	assert_int_equal(mock_init(&new, &binstat_collector_kvm, yaml, 0), 0);
	mock_shutdown(&old);
	assert_int_equal(dial(sock), 0);
	mock_shutdown(&new);
	assert_int_equal(stat(sock, &st), -1);
	assert_int_equal(mock_open_fds(), fds);
	rmdir(dir);
}

/* A socket that cannot be made fails init, logged, and not as a
 * configuration error; the path is free again for the next init. */
static void test_handover_cannot_listen(void **state)
{
	char dir[] = "/tmp/kvmplugin.XXXXXX", yaml[256], sub[64], sock[80], want[160];
	struct mock m;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/missing", dir);
	snprintf(sock, sizeof(sock), "%s/h.sock", sub);
	snprintf(yaml, sizeof(yaml), "proc: %s\nhandover:\n  socket: %s\n  allow_gids: [0]\n", dir,
		 sock);
	int fds = mock_open_fds();
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, 0), -ENOENT);
	assert_string_equal(mock_conf_error(&m), "");
	snprintf(want, sizeof(want),
		 "error kvm cannot listen for hand-over path=%s err=No such file or directory",
		 sock);
	mock_expect_in("log", mock_log, want, false);
	mock_shutdown(&m);
	assert_int_equal(mock_open_fds(), fds);

	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(mock_init(&m, &binstat_collector_kvm, yaml, 0), 0);
	assert_int_equal(stat(sock, &st), 0);
	mock_shutdown(&m);
	assert_int_equal(mock_open_fds(), fds);
	mock_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_configuration_errors),
	    cmocka_unit_test(test_check_only_touches_nothing),
	    cmocka_unit_test(test_synthetic_proc),
	    cmocka_unit_test(test_passive_off_walks_nothing),
	    cmocka_unit_test(test_no_vmms),
	    cmocka_unit_test(test_own_pid_namespace),
	    cmocka_unit_test(test_handover_socket),
	    cmocka_unit_test(test_handover_cannot_listen),
	};
	return cmocka_run_group_tests_name("kvm_plugin", tests, NULL, NULL);
}
