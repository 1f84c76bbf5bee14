/* A minimal VMM for the KVM tests and benchmark: creates VMs and vCPUs on
 * /dev/kvm, runs real guest code that makes a known number of port I/O
 * exits and then halts, and keeps every stats fd open as the preload shim
 * would, until SIGTERM. Each VM is created (with its vCPUs) by its own
 * short-lived thread, as a one-VM-per-thread VMM would; FIXTURE_ONE_THREAD=1
 * creates them all in the main thread instead (KVM then gives them one
 * stats id), and FIXTURE_EXITS_STEP=K makes VM i exit IO_EXITS + i*K times.
 * FIXTURE_SPIN=1 gives each vCPU a thread of its own that creates it and
 * runs it for good, spinning after its exits, as QEMU's vCPU threads do.
 * SIGUSR1 closes the last vCPU's stats fd, as an unplug would.
 *   fixture VMS VCPUS IO_EXITS READY_FILE [-name guest=NAME] [-uuid UUID]
 * (the trailing options are only there for the exporter to read, as QEMU's)
 * With FIXTURE_HANDOVER=PATH it also passes every stats fd to the exporter's
 * hand-over socket, as a VMM that cooperates would. FIXTURE_NO_STATS=1
 * closes every stats fd, as stock QEMU 7.2 does (for attach mode);
 * FIXTURE_VFORK=1 then parks the main thread in vfork(), which no ptrace
 * stop can interrupt (a hostile VMM for attach mode). FIXTURE_NOFILE=N
 * lowers RLIMIT_NOFILE, once each VM is made, to leave N fds free for its
 * vCPUs and their stats fds, and goes on without a stats fd KVM would not
 * give (the preload shim's fail the same way and are reported). */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int kvm;

/* Every stats fd made, for the hand-over: fd, VM number, vCPU (-1: the VM's). */
static struct held {
	int fd, vm, vcpu;
} held[40000];
static int nheld, nvms;

static void die(const char *what)
{
	fprintf(stderr, "fixture: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Flat 32-bit protected-mode guest: io_exits times `out dx, al` to port
 * 0x3f8, then hlt. (Real mode would be emulated by KVM where the CPU cannot
 * run it directly, and emulated port I/O is not counted in io_exits.) */
static bool spin;

static size_t guest_code(unsigned char *p, int io_exits)
{
	size_t n = 0;
	p[n++] = 0x66; /* mov dx, 0x3f8 */
	p[n++] = 0xBA;
	p[n++] = 0xF8;
	p[n++] = 0x03;
	p[n++] = 0xB0; /* mov al, 'x' */
	p[n++] = 'x';
	for (int i = 0; i < io_exits; i++)
		p[n++] = 0xEE; /* out dx, al */
	if (spin) {
		p[n++] = 0xEB; /* jmp $ */
		p[n++] = 0xFE;
	} else {
		p[n++] = 0xF4; /* hlt */
	}
	return n;
}

static void run_vcpu(int vcpu, int run_size)
{
	struct kvm_run *run =
	    mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	struct kvm_sregs sregs;
	struct kvm_regs regs = {.rip = 0x1000, .rflags = 0x2};

	if (run == MAP_FAILED)
		die("mmap kvm_run");
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	struct kvm_segment flat = {.base = 0,
				   .limit = 0xFFFFFFFF,
				   .selector = 0x10,
				   .type = 3,
				   .present = 1,
				   .dpl = 0,
				   .db = 1,
				   .s = 1,
				   .l = 0,
				   .g = 1};
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = flat;
	flat.type = 11; /* execute/read, accessed */
	flat.selector = 0x08;
	sregs.cs = flat;
	sregs.cr0 |= 1; /* PE */
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0 || ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");
	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0)
			die("KVM_RUN");
		if (run->exit_reason == KVM_EXIT_HLT)
			break;
		if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, "fixture: unexpected exit %u\n", run->exit_reason);
			exit(1);
		}
	}
	munmap(run, (size_t)run_size);
}

struct vm_args {
	int vcpus;
	int run_size;
	int io_exits; /* -1: do not run */
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold(int fd, int vm, int vcpu)
{
	pthread_mutex_lock(&held_lock);
	held[nheld++] = (struct held){fd, vm, vcpu};
	pthread_mutex_unlock(&held_lock);
}

/* Creates vCPU `i` of VM fd `vm` and keeps its stats fd; returns its fd. */
static int make_vcpu(int vm, int me, int i)
{
	int vcpu = ioctl(vm, KVM_CREATE_VCPU, i);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	int st = ioctl(vcpu, KVM_GET_STATS_FD, 0);
	if (st < 0 && getenv("FIXTURE_NOFILE"))
		return vcpu; /* no fd left: as asked */
	if (st < 0)
		die("KVM_GET_STATS_FD (vcpu)");
	hold(st, me, i);
	return vcpu;
}

struct spinner {
	int vm, me, index, run_size;
	sem_t *made;
};

/* A spin-mode vCPU thread: creates its vCPU, says so, runs it for good. */
static void *spin_vcpu(void *arg)
{
	struct spinner *sp = arg;
	int vcpu = make_vcpu(sp->vm, sp->me, sp->index);
	sem_post(sp->made);
	run_vcpu(vcpu, sp->run_size);
	return NULL;
}

/* Lowers RLIMIT_NOFILE to the lowest free fd + n: n more fds, no more. */
static void leave_free_fds(int n)
{
	int lowest = fcntl(kvm, F_DUPFD_CLOEXEC, 0);
	struct rlimit rl;

	if (lowest < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("leave_free_fds");
	close(lowest);
	rl.rlim_cur = (rlim_t)(lowest + n);
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit");
}

/* Creates one VM and its vCPUs, runs the guest on each, keeps stats fds. */
static void *make_vm(void *arg)
{
	struct vm_args *a = arg;
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	void *mem = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");
	if (a->io_exits >= 0)
		guest_code((unsigned char *)mem + 0x1000, a->io_exits);
	struct kvm_userspace_memory_region region = {
	    .slot = 0,
	    .guest_phys_addr = 0,
	    .memory_size = 0x2000,
	    .userspace_addr = (unsigned long)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");
	int vmstats = ioctl(vm, KVM_GET_STATS_FD, 0);
	if (vmstats < 0)
		die("KVM_GET_STATS_FD (vm)");
	int me = nvms++; /* VMs are made one at a time */
	hold(vmstats, me, -1);
	if (getenv("FIXTURE_NOFILE"))
		leave_free_fds((int)strtol(getenv("FIXTURE_NOFILE"), NULL, 10));
	for (int i = 0; i < a->vcpus; i++) {
		if (spin) {
			static sem_t made;
			struct spinner *sp = malloc(sizeof(*sp));
			pthread_t t;
			if (!sp || sem_init(&made, 0, 0) < 0)
				die("spinner");
			*sp = (struct spinner){vm, me, i, a->run_size, &made};
			if (pthread_create(&t, NULL, spin_vcpu, sp) != 0)
				die("pthread_create");
			sem_wait(&made);
			continue;
		}
		int vcpu = make_vcpu(vm, me, i);
		if (a->io_exits >= 0)
			run_vcpu(vcpu, a->run_size);
	}
	return NULL;
}

/* Sends each stats fd with its identity, one SCM_RIGHTS message each. */
static void hand_over(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("hand-over connect");
	for (int i = 0; i < nheld; i++) {
		char text[256];
		int n = snprintf(text, sizeof(text), "BINSTAT-KVM 1\nname=handed-%d\nvmm=fixture\n",
				 held[i].vm);
		if (held[i].vcpu >= 0)
			n +=
			    snprintf(text + n, sizeof(text) - (size_t)n, "vcpu=%d\n", held[i].vcpu);
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = {text, (size_t)n};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &held[i].fd, sizeof(int));
		if (sendmsg(s, &msg, MSG_NOSIGNAL) < 0) {
			/* refused by the exporter: a test of exactly that */
			fprintf(stderr, "fixture: hand-over refused: %s\n", strerror(errno));
			break;
		}
	}
	close(s);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: fixture VMS VCPUS IO_EXITS(-1: do not run) READY_FILE\n");
		return 2;
	}
	/* Blocked before any thread starts, so that only sigwait takes them. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	int vms = (int)strtol(argv[1], NULL, 10);
	struct vm_args a = {.vcpus = (int)strtol(argv[2], NULL, 10)};
	int io_exits = (int)strtol(argv[3], NULL, 10);
	spin = getenv("FIXTURE_SPIN") != NULL;
	const char *step_env = getenv("FIXTURE_EXITS_STEP");
	int step = step_env ? (int)strtol(step_env, NULL, 10) : 0;
	struct rlimit rl; /* 1,000 VMs of 8 vCPUs take 18,000 fds */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	FILE *f = fopen(argv[4], "w"); /* before any RLIMIT_NOFILE of FIXTURE_NOFILE */
	if (!f)
		die("ready file");
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("/dev/kvm");
	a.run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	for (int i = 0; i < vms; i++) {
		pthread_t t;
		a.io_exits = io_exits < 0 ? -1 : io_exits + i * step;
		if (getenv("FIXTURE_ONE_THREAD"))
			make_vm(&a);
		else if (pthread_create(&t, NULL, make_vm, &a) != 0)
			die("pthread_create");
		else
			pthread_join(t, NULL);
	}
	if (getenv("FIXTURE_HANDOVER"))
		hand_over(getenv("FIXTURE_HANDOVER"));
	if (getenv("FIXTURE_NO_STATS"))
		for (int i = 0; i < nheld; i++)
			close(held[i].fd);
	fprintf(f, "%d\n", getpid());
	fclose(f);
	if (getenv("FIXTURE_VFORK"))
		sigprocmask(SIG_UNBLOCK, &s, NULL); /* parked in vfork, SIGTERM must still kill */
	if (getenv("FIXTURE_VFORK") && vfork() == 0) {
		/* The child runs on the parent's stack: only syscalls here. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	int sig;
	/* SIGUSR1 unplugs the last vCPU as a VMM does: it closes that vCPU's
	 * stats fd (KVM itself never destroys a vCPU before its VM). */
	while (sigwait(&s, &sig) == 0 && sig == SIGUSR1)
		for (int i = nheld - 1; i >= 0; i--)
			if (held[i].vcpu >= 0 && held[i].fd >= 0) {
				close(held[i].fd);
				held[i].fd = -1;
				break;
			}
	return 0;
}
