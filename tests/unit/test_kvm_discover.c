/* The pure parts of KVM discovery: VMM command lines, uevent messages, and
 * the /proc lines of the host view. */
#include "helpers.h"

#include "kvm_denied.h"
#include "kvm_discover.h"
#include "kvm_handover.h"
#include "kvm_handover_serve.h"
#include "kvm_hostview.h"
#include "kvm_nostats.h"
#include "kvm_uevent.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

static void ident(const char *const *argv, size_t argc, struct kvm_identity *id)
{
	char buf[1024];
	size_t n = 0;
	for (size_t i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;
		memcpy(buf + n, argv[i], l);
		n += l;
	}
	kvm_cmdline_identity(buf, n, id);
}

static void test_exe_name(void **state)
{
	char out[64];
	(void)state;

	kvm_exe_name("/usr/bin/qemu-system-x86_64", false, out, sizeof(out));
	assert_string_equal(out, "qemu-system-x86_64");
	/* A package upgrade under the running VMM: the same VMM, one label. */
	kvm_exe_name("/usr/bin/qemu-system-x86_64 (deleted)", true, out, sizeof(out));
	assert_string_equal(out, "qemu-system-x86_64");
	kvm_exe_name("qemu (deleted)", true, out, sizeof(out));
	assert_string_equal(out, "qemu");
	/* A binary really named so, not deleted: its whole name. */
	kvm_exe_name("/opt/qemu (deleted)", false, out, sizeof(out));
	assert_string_equal(out, "qemu (deleted)");
	kvm_exe_name("/opt/ (deleted)", true, out, sizeof(out)); /* a name of the suffix alone */
	assert_string_equal(out, " (deleted)");
	kvm_exe_name("/opt/vmm (deleted) (deleted)", true, out, sizeof(out)); /* the kernel's one */
	assert_string_equal(out, "vmm (deleted)");
	kvm_exe_name("/opt/deleted", true, out, sizeof(out));
	assert_string_equal(out, "deleted");
	char small[4];
	kvm_exe_name("/usr/bin/qemu (deleted)", true, small, sizeof(small)); /* cut to fit */
	assert_string_equal(small, "qem");
}

/* The thread stat lines an unprivileged reader sees of a root VMM. */
static void test_task_is_kvm(void **state)
{
	(void)state;
#define IS_KVM(line) kvm_task_stat_is_kvm(line, strlen(line))
	/* KVM's worker, as read here from a fixture VMM (flags 0x404040). */
	assert_true(IS_KVM("28577 (kvm-nx-lpage-re) S 28549 28549 17426 0 -1 4210752 0 0"));
	/* A user thread may take the name, not the kernel's flag. */
	assert_false(IS_KVM("28578 (kvm-nx-lpage-re) S 28549 28549 17426 0 -1 4194304 0 0"));
	assert_false(IS_KVM("28573 (kvm_fixture) S 28549 28549 17426 0 -1 4194304 130 0"));
	/* io_uring's worker renamed through /proc/self/task/TID/comm: the
	 * user flag too, and PF_IO_WORKER (0x404042). */
	assert_false(IS_KVM("28579 (kvm-nx-lpage-re) S 28549 28549 17426 0 -1 4210754 0 0"));
	/* QEMU's vCPU threads: a name any user's thread may take (prctl). */
	assert_false(IS_KVM("4100 (CPU 0/KVM) S 1 4090 4090 0 -1 4194368 0 0"));
	assert_false(IS_KVM("4101 (CPU 12/KVM) R 1 4090 4090 0 -1 4194368 0 0"));
	assert_false(IS_KVM("4102 (CPU 0/TCG) S 1 4090 4090 0 -1 4194368 0 0"));
	/* A comm with parentheses and spaces; cut or broken lines. */
	assert_false(IS_KVM("9 (a) b) (c) S 1 1 1 0 -1 16384 0"));
	assert_false(IS_KVM("28577 (kvm-nx-lpage-re) S 28549"));
	assert_false(IS_KVM("28577 (kvm-nx-lpage-re"));
	assert_false(IS_KVM("28577 kvm-nx-lpage-re) S 1 1 1 0 -1 16384"));
	assert_false(IS_KVM(")("));
	assert_false(IS_KVM(""));
#undef IS_KVM
}

/* The warn line on VMMs not permitted: once per 10 minutes at most, the
 * episodes between stated in the next line. */
static void test_denied_say(void **state)
{
	struct kvm_denied_say s = {0};
	uint64_t e = 0, min = 60000000000ull;
	(void)state;

	assert_true(kvm_denied_say_due(&s, 5 * min, &e));
	assert_int_equal(e, 1);
	/* A start-and-kill loop: every episode within the 10 minutes is quiet. */
	for (int i = 1; i <= 50; i++)
		assert_false(kvm_denied_say_due(&s, 5 * min + (uint64_t)i * 1000000000u, &e));
	assert_false(kvm_denied_say_due(&s, 15 * min - 1, &e));
	assert_true(kvm_denied_say_due(&s, 15 * min, &e));
	assert_int_equal(e, 52); /* the 51 unsaid and this one */
	assert_false(kvm_denied_say_due(&s, 16 * min, &e));
	assert_true(kvm_denied_say_due(&s, 40 * min, &e));
	assert_int_equal(e, 2);
	/* A clock at 0 (the first instant) still bounds the next. */
	struct kvm_denied_say z = {0};
	assert_true(kvm_denied_say_due(&z, 0, &e));
	assert_false(kvm_denied_say_due(&z, 1, &e));
}

/* Past the watch cap, unreadable VMMs are counted unwatched, and a walk
 * that does not see one again forgets it; watched ones leave by pidfd. */
static void test_denied_unwatched(void **state)
{
	struct kvm_denied d;
	(void)state;

	assert_int_equal(kvm_denied_watch_cap(1024), 256);
	assert_int_equal(kvm_denied_watch_cap(48), 12);
	assert_int_equal(kvm_denied_watch_cap(1048576), KVM_DENIED_WATCH_MAX);
	kvm_denied_init(&d);
	assert_int_equal(kvm_denied_add(&d, 10, true), 1);
	assert_int_equal(kvm_denied_add(&d, 11, false), 1);
	assert_int_equal(kvm_denied_add(&d, 12, false), 1);
	assert_int_equal(kvm_denied_add(&d, 12, false), 0);
	assert_int_equal(d.nwatched, 1);
	kvm_denied_walk_start(&d);
	kvm_denied_find(&d, 12)->seen = true;
	assert_int_equal(kvm_denied_walk_end(&d), 1); /* 11 gone; 10 is watched */
	assert_true(kvm_denied_has(&d, 10) && kvm_denied_has(&d, 12) && !kvm_denied_has(&d, 11));
	assert_true(kvm_denied_remove(&d, 10));
	assert_int_equal(d.nwatched, 0);
	kvm_denied_free(&d);
}

static void test_mountinfo_hidepid(void **state)
{
	char h[32];
	(void)state;
	const char *plain = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
			    "23 1 0:22 / /sys rw - sysfs sysfs rw\n";
	const char *hidden = "22 1 0:21 / /proc rw,nosuid - proc proc rw,hidepid=invisible\n"
			     "30 1 0:40 / /srv/p rw - proc proc rw,hidepid=2,gid=4\n"
			     "31 1 0:41 / /srv/q rw - proc proc rw,hidepid=0\n"
			     "32 1 0:42 / /srv/t rw - tmpfs tmpfs rw,hidepid=2\n";

	assert_null(kvm_mountinfo_hidepid(plain, "/proc", h, sizeof(h)));
	assert_string_equal(kvm_mountinfo_hidepid(hidden, "/proc", h, sizeof(h)), "invisible");
	assert_string_equal(kvm_mountinfo_hidepid(hidden, "/srv/p", h, sizeof(h)), "2");
	assert_null(kvm_mountinfo_hidepid(hidden, "/srv/q", h, sizeof(h)));
	assert_null(kvm_mountinfo_hidepid(hidden, "/srv/t", h, sizeof(h))); /* not a proc */
	assert_null(kvm_mountinfo_hidepid(hidden, "/nowhere", h, sizeof(h)));
	assert_null(kvm_mountinfo_hidepid("22 1 0:21 / /proc", "/proc", h, sizeof(h)));
	assert_null(kvm_mountinfo_hidepid("", "/proc", h, sizeof(h)));
}

static void test_cmdline(void **state)
{
	struct kvm_identity id;
	(void)state;
	const char *libvirt[] = {"/usr/bin/qemu-system-x86_64",
				 "-name",
				 "guest=web1,debug-threads=on",
				 "-S",
				 "-uuid",
				 "8f3c1d2e-0000-4000-8000-123456789abc",
				 "-smp",
				 "2"};
	ident(libvirt, 8, &id);
	assert_string_equal(id.name, "web1");
	assert_string_equal(id.uuid, "8f3c1d2e-0000-4000-8000-123456789abc");

	const char *plain[] = {"qemu", "-name", "db,process=qemu-db"};
	ident(plain, 3, &id);
	assert_string_equal(id.name, "db");
	assert_string_equal(id.uuid, "");

	const char *comma[] = {"qemu", "--name", "guest=a,,b,debug-threads=on"};
	ident(comma, 3, &id);
	assert_string_equal(id.name, "a,b"); /* ",," is a literal comma */

	/* A command line cut short: the uuid's value has no NUL in the buffer. */
	static const char cut[] = {0, '-', 'u', 'u', 'i', 'd', 0, (char)0xb9, 4};
	kvm_cmdline_identity(cut, sizeof(cut), &id);
	assert_string_equal(id.uuid, "");

	const char *dangling[] = {"qemu", "-m", "64", "-name"}; /* no value: no name */
	ident(dangling, 4, &id);
	assert_string_equal(id.name, "");

	char longname[600] = "guest=";
	memset(longname + 6, 'x', 500);
	longname[506] = '\0';
	const char *big[] = {"qemu", "-name", longname};
	ident(big, 3, &id);
	assert_true(strlen(id.name) < sizeof(id.name));

	/* A name of two-byte characters longer than the field: cut before
	 * the character that does not fit, not inside it. */
	char wide[300] = "guest=";
	for (size_t i = 0; i < 120; i++)
		memcpy(wide + 6 + 2 * i, "\xc3\xa9", 3);
	const char *accents[] = {"qemu", "-name", wide};
	ident(accents, 3, &id);
	assert_int_equal(strlen(id.name), sizeof(id.name) - 2); /* 126: 63 whole characters */
	assert_int_equal((unsigned char)id.name[strlen(id.name) - 2], 0xc3);
}

/* A VMM names its threads and itself: comm may hold spaces and ')'. */
static void test_host_files(void **state)
{
	uint64_t flt = 0, rss = 0, v[3];
	(void)state;
#define STAT(comm)                                                                                 \
	"1234 (" comm ") S 1 1234 1234 0 -1 4194560 500 0 7 0 10 20 0 0 20 0 9 0 100 "             \
	"123456789 4321 18446744073709551615 1 1 0 0 0 0 0\n"
	const char *ok = STAT("qemu-system-x86");
	assert_int_equal(kvm_procstat_parse(ok, strlen(ok), &flt, &rss), 0);
	assert_int_equal(flt, 7);
	assert_int_equal(rss, 4321);
	const char *tricky = STAT("a) S 1 2 3 4 5 6 7 8 9 (b");
	assert_int_equal(kvm_procstat_parse(tricky, strlen(tricky), &flt, &rss), 0);
	assert_int_equal(flt, 7);
	assert_int_equal(rss, 4321);
	const char *bad[] = {
	    "",
	    "1234 (no close paren S 1 2",
	    "1234 (x) S 1 1234 1234 0 -1 4194560 500 0 7", /* cut before rss */
	    "1234 (x) S 1 1234 1234 0 -1 4194560 500 0 -7 0 10 20 0 0 20 0 9 0 100 1 2", /* negative
											  */
	    "1234 (x) S 1 1234 1234 0 -1 4194560 500 0 99999999999999999999999 0 1 2 3 4 5 6 7 8 9 "
	    "10 11 12", /* overflow */
	    "1234 (x) S 1 1234 1234 0 -1 4194560 500 0 7x 0 10 20 0 0 20 0 9 0 100 1 2",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(kvm_procstat_parse(bad[i], strlen(bad[i]), &flt, &rss), -EINVAL);
	const char *sched = "200488440 44294034 1095\n";
	assert_int_equal(kvm_schedstat_parse(sched, strlen(sched), v), 0);
	assert_int_equal(v[0], 200488440);
	assert_int_equal(v[1], 44294034);
	assert_int_equal(v[2], 1095);
	assert_int_equal(kvm_schedstat_parse("1 2", 3, v), -EINVAL);
	assert_int_equal(kvm_schedstat_parse("", 0, v), -EINVAL);
	char huge[300];
	memset(huge, '9', sizeof(huge));
	assert_int_equal(kvm_schedstat_parse(huge, sizeof(huge), v), -EINVAL);
#undef STAT
}

static void test_uevent(void **state)
{
	static const char create[] =
	    "change@/devices/virtual/misc/kvm\0ACTION=change\0"
	    "DEVPATH=/devices/virtual/misc/kvm\0SUBSYSTEM=misc\0"
	    "CREATED=3\0COUNT=1\0EVENT=create\0PID=13307\0"
	    "STATS_PATH=/kvm/13307-4\0MAJOR=10\0MINOR=232\0DEVNAME=kvm\0SEQNUM=819";
	static const char other[] = "add@/devices/x\0ACTION=add\0DEVNAME=sda\0PID=5";
	static const char badpid[] = "change@/x\0DEVNAME=kvm\0EVENT=create\0PID=12ab";
	static const char nonul[] = "change@/x\0DEVNAME=kvm\0EVENT=create\0PID=42";
	pid_t pid = 0;
	(void)state;
	assert_int_equal(kvm_uevent_parse(create, sizeof(create), &pid), KVM_UEVENT_CREATE);
	assert_int_equal(pid, 13307);
	assert_int_equal(kvm_uevent_parse(other, sizeof(other), &pid), KVM_UEVENT_NONE);
	assert_int_equal(kvm_uevent_parse(badpid, sizeof(badpid), &pid), KVM_UEVENT_NONE);
	/* The last field without its NUL still parses within the length. */
	assert_int_equal(kvm_uevent_parse(nonul, sizeof(nonul) - 1, &pid), KVM_UEVENT_CREATE);
	assert_int_equal(pid, 42);
	assert_int_equal(kvm_uevent_parse("", 0, &pid), KVM_UEVENT_NONE);
}

static int parse(const char *text, struct kvm_handover_msg *m)
{
	return kvm_handover_parse(text, strlen(text), m);
}

static void test_handover_messages(void **state)
{
	struct kvm_handover_msg m;
	(void)state;
	assert_int_equal(parse("BINSTAT-KVM 1\nname=web1\nuuid=abc\npid=77\nvcpu=3\n", &m), 0);
	assert_string_equal(m.ident.name, "web1");
	assert_string_equal(m.ident.uuid, "abc");
	assert_int_equal(m.pid, 77);
	assert_int_equal(m.vcpu, 3);
	assert_int_equal(parse("BINSTAT-KVM 1\n", &m), 0);
	assert_int_equal(m.vcpu, -1); /* the VM's own stats fd */
	assert_int_equal(m.pid, 0);   /* the sender is the VMM */
	assert_int_equal(parse("BINSTAT-KVM 2\nname=x\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\nnope=x\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\nname\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\nvcpu=-1\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\npid=99999999999\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\nname=a\tb\n", &m), -EINVAL);
	char big[400] = "BINSTAT-KVM 1\nname=";
	memset(big + strlen(big), 'x', 300);
	assert_int_equal(parse(big, &m), -EINVAL); /* longer than a name may be */
}

/* Why a stats fd was not made, from KVM_CHECK_EXTENSION's answer and the
 * errno: an old kernel (no capability, or a check that failed, as on a
 * kernel without KVM_CAP_CHECK_EXTENSION_VM) is told from no fds and no
 * memory, which no kernel here can be made to show. */
static void test_nostats_classify(void **state)
{
	(void)state;
	assert_int_equal(kvm_nostats_classify(0, EMFILE), KVM_NOSTATS_UNSUPPORTED);
	assert_int_equal(kvm_nostats_classify(-1, EINVAL), KVM_NOSTATS_UNSUPPORTED);
	assert_int_equal(kvm_nostats_classify(1, EMFILE), KVM_NOSTATS_NO_FDS);
	assert_int_equal(kvm_nostats_classify(1, ENFILE), KVM_NOSTATS_NO_FDS);
	assert_int_equal(kvm_nostats_classify(1, ENOMEM), KVM_NOSTATS_NO_MEMORY);
	assert_int_equal(kvm_nostats_classify(1, EIO), KVM_NOSTATS_FAILED);
	assert_string_equal(kvm_nostats_reason(KVM_NOSTATS_UNSUPPORTED), "stats_fd_unsupported");
	assert_string_equal(kvm_nostats_reason(KVM_NOSTATS_NO_FDS), "stats_fd_no_fds");
	assert_string_equal(kvm_nostats_reason(KVM_NOSTATS_NO_MEMORY), "stats_fd_no_memory");
	assert_string_equal(kvm_nostats_reason(KVM_NOSTATS_FAILED), "stats_fd_failed");
	for (int k = 0; k < KVM_NOSTATS_KINDS; k++) {
		const char *t = kvm_nostats_token((enum kvm_nostats)k);
		assert_int_equal(kvm_nostats_parse(t, strlen(t)), k);
	}
	assert_int_equal(kvm_nostats_parse("no_fd", 5), -1);
	assert_int_equal(kvm_nostats_parse("no_fds ", 7), -1);
	assert_int_equal(kvm_nostats_parse("", 0), -1);
}

/* Sends `text` with `fd` (-1: none) on a SOCK_SEQPACKET socket. */
static void send_text(int s, const char *text, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {(void *)text, strlen(text)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	assert_true(sendmsg(s, &msg, 0) >= 0);
}

/* Senders' connections: handover.max_vms, but no more than a quarter of
 * the fds the process may open, each also holding a stats fd and a pidfd. */
static void test_handover_senders_cap(void **state)
{
	(void)state;
	assert_int_equal(kvm_handover_senders_cap(1024, 1024), 256);
	assert_int_equal(kvm_handover_senders_cap(1024, 524288), 1024);
	assert_int_equal(kvm_handover_senders_cap(1000000, 1ull << 40), 1000000);
	assert_int_equal(kvm_handover_senders_cap(8, 3), 0);
}

/* A report of a stats fd not made carries no fd, and only a report may. */
static void test_handover_reports(void **state)
{
	struct kvm_handover_msg m;
	int sv[2], fd = 0;
	(void)state;
	assert_int_equal(parse("BINSTAT-KVM 1\nvmm=qemu\nno_stats_fd=no_fds\n", &m), 0);
	assert_int_equal(m.nostats, KVM_NOSTATS_NO_FDS);
	assert_int_equal(parse("BINSTAT-KVM 1\nvcpu=2\n", &m), 0);
	assert_int_equal(m.nostats, -1);
	assert_int_equal(parse("BINSTAT-KVM 1\nno_stats_fd=tired\n", &m), -EINVAL);
	assert_int_equal(parse("BINSTAT-KVM 1\nno_stats_fd=\n", &m), -EINVAL);

	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	send_text(sv[0], "BINSTAT-KVM 1\nno_stats_fd=unsupported\n", -1);
	assert_int_equal(kvm_handover_recv(sv[1], &m, &fd), 1);
	assert_int_equal(fd, -1);
	assert_int_equal(m.nostats, KVM_NOSTATS_UNSUPPORTED);
	/* A report that carries an fd, and a stats fd's message without one. */
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	send_text(sv[0], "BINSTAT-KVM 1\nno_stats_fd=no_memory\n", null);
	assert_int_equal(kvm_handover_recv(sv[1], &m, &fd), -EINVAL);
	send_text(sv[0], "BINSTAT-KVM 1\nvcpu=0\n", -1);
	assert_int_equal(kvm_handover_recv(sv[1], &m, &fd), -EINVAL);
	assert_int_equal(kvm_handover_recv(sv[1], &m, &fd), 0);
	close(null);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cmdline),	      cmocka_unit_test(test_exe_name),
	    cmocka_unit_test(test_denied_say),	      cmocka_unit_test(test_denied_unwatched),
	    cmocka_unit_test(test_mountinfo_hidepid), cmocka_unit_test(test_task_is_kvm),
	    cmocka_unit_test(test_host_files),	      cmocka_unit_test(test_uevent),
	    cmocka_unit_test(test_handover_messages), cmocka_unit_test(test_nostats_classify),
	    cmocka_unit_test(test_handover_reports),  cmocka_unit_test(test_handover_senders_cap),
	};
	return cmocka_run_group_tests_name("kvm_discover", tests, NULL, NULL);
}
