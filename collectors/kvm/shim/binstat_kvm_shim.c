/* LD_PRELOAD shim for a VMM: keeps a KVM stats fd open for every VM and vCPU
 * the VMM creates, so the exporter's passive discovery can copy it. Nothing
 * else in the VMM changes. A stats fd holds a reference on its VM, so each is
 * closed when the VMM closes the VM or vCPU it belongs to.
 *
 * With BINSTAT_KVM_HANDOVER=SOCKET it also hands every stats fd over to the
 * exporter's hand-over socket, from a thread of its own that keeps the
 * connection: when the connection ends (the exporter restarted), it
 * connects again, with a backoff of 0.1 s doubling to 5 s, and sends every
 * stats fd again. The backoff starts again from 0.1 s only after a
 * connection that lasted 10 s: the exporter refuses a peer by accepting and
 * closing it, so a refused shim waits 5 s between tries, not 0.1 s. The
 * VMM's own threads never wait on the exporter.
 * BINSTAT_KVM_NAME and BINSTAT_KVM_UUID, when set, name the VM (name=,
 * uuid=): libvirt sets them per domain with <qemu:env>.
 *
 * It asks KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) before each
 * KVM_GET_STATS_FD, and a stats fd not made (no capability, EMFILE,
 * ENOMEM...) is reported over the same connection, as a message with no fd
 * (`no_stats_fd=`, kvm_nostats.h): the exporter counts it. Only counts wait
 * for the connection, so a VMM that keeps failing costs no memory. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../kvm_nostats.h" /* the collector's own table of why */

#define SHIM_API __attribute__((visibility("default"))) /* all else stays out of the VMM's view */

#define SHIM_FDS 65536 /* VM and vCPU fd numbers tracked; beyond, no stats fd */
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define STEADY_MS 10000 /* a connection this long was served: the backoff starts again */

static int (*real_ioctl)(int, unsigned long, ...); /* checksrc: varargs libc's ioctl */
static int (*real_close)(int);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int stats_of[SHIM_FDS]; /* stats fd + 1 of the VM or vCPU fd at that index */
static int vcpu_of[SHIM_FDS];  /* vCPU id + 1 of the vCPU fd at that index; 0 for a VM */
static bool sent[SHIM_FDS];    /* its stats fd went over the current connection */
static int wake = -1;	       /* eventfd: a stats fd to send */
static pthread_once_t sender_once = PTHREAD_ONCE_INIT;
static char ident[200];			    /* "name=...\nuuid=...\n" from the environment, or "" */
static unsigned nostats[KVM_NOSTATS_KINDS]; /* stats fds not made, not reported yet */
static int first_sock = -1; /* made before the first stats fd is asked for: the report's way out */

static void resolve(void)
{
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

/* ---- the hand-over sender ---- */

/* "KEY=VALUE\n" at the end of ident for an environment variable that is
 * set, printable and short enough for the exporter (which refuses more). */
static void ident_add(const char *key, const char *var, size_t max)
{
	const char *v = getenv(var);
	size_t n = strlen(ident);

	if (!v || !*v || strlen(v) > max)
		return;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20)
			return;
	snprintf(ident + n, sizeof(ident) - n, "%s=%s\n", key, v);
}

/* One stats fd with its text (the protocol: collectors/kvm/README.md), or
 * with fd -1 the report of one not made (`why`); never waits. Returns 0,
 * -EAGAIN (the socket is full) or -errno (the connection is over). The
 * caller holds the lock, so the fd stays open. */
static int send_one(int sock, int fd, int vcpu, enum kvm_nostats why)
{
	char text[96 + sizeof(ident)]; /* the longest: 18 + 32 + 1 + ident + 19 bytes */
	int n = snprintf(text, sizeof(text), "BINSTAT-KVM 1\nvmm=%.32s\n%s",
			 program_invocation_short_name, ident);
	if (fd < 0)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "no_stats_fd=%s\n",
			      kvm_nostats_token(why));
	else if (vcpu >= 0)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "vcpu=%d\n", vcpu);
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
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (fd < 0) { /* a report: text alone */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
	}
	return sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}

/* Sends every stats fd not sent over this connection yet, and the reports
 * of those not made: 0, -EAGAIN, or -errno when the connection is over. */
static int send_pending(int sock)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SHIM_FDS && rc == 0; i++) {
		if (!stats_of[i] || sent[i])
			continue;
		rc = send_one(sock, stats_of[i] - 1, vcpu_of[i] - 1, KVM_NOSTATS_FAILED);
		sent[i] = rc == 0;
	}
	for (int k = 0; k < KVM_NOSTATS_KINDS && rc == 0; k++)
		while (nostats[k] && (rc = send_one(sock, -1, -1, (enum kvm_nostats)k)) == 0)
			nostats[k]--;
	pthread_mutex_unlock(&lock);
	return rc;
}

/* Connects `s` (a new socket when -1) to the exporter; the socket, or -1. */
static int connect_to(const char *path, int s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (s < 0)
		s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (s < 0 || strlen(path) >= sizeof(sa.sun_path))
		goto err_close;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto err_close;
	pthread_mutex_lock(&lock);
	memset(sent, 0, sizeof(sent)); /* a new exporter holds nothing of ours */
	pthread_mutex_unlock(&lock);
	return s;
err_close:
	if (s >= 0)
		real_close(s);
	return -1;
}

/* Serves one connection until it ends: sends what is new, and waits for a
 * new stats fd, room in the socket, or the exporter's end (EOF, EPIPE). */
static void serve_connection(int sock)
{
	for (;;) {
		int rc = send_pending(sock);
		if (rc < 0 && rc != -EAGAIN)
			return;
		struct pollfd p[2] = {{sock, POLLIN | (rc == -EAGAIN ? POLLOUT : 0), 0},
				      {wake, POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			return; /* the exporter never writes: this is its end */
		uint64_t n;
		if (p[1].revents & POLLIN && read(wake, &n, sizeof(n)) < 0 && errno != EAGAIN)
			return;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void *sender(void *arg)
{
	const char *path = arg;
	unsigned backoff_ms = BACKOFF_MIN_MS;

	for (;;) {
		int sock = connect_to(path, first_sock);
		first_sock = -1; /* used (or closed) once */
		if (sock >= 0) {
			uint64_t t0 = now_ms();
			serve_connection(sock);
			real_close(sock);
			if (now_ms() - t0 >= STEADY_MS)
				backoff_ms = BACKOFF_MIN_MS;
		}
		struct timespec ts = {backoff_ms / 1000, (long)(backoff_ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		backoff_ms = backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff_ms * 2;
	}
	return NULL;
}

/* The sender's thread, started at the VMM's first stats fd when
 * BINSTAT_KVM_HANDOVER names a socket; it takes no signal of the VMM's. */
static void start_sender(void)
{
	const char *path = getenv("BINSTAT_KVM_HANDOVER");
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;

	if (!path || !*path || (wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return;
	char *copy = strdup(path);
	if (!copy)
		return;
	/* Made now, in the VMM's thread: a VMM at its fd limit can still say so. */
	first_sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ident_add("name", "BINSTAT_KVM_NAME", 127);
	ident_add("uuid", "BINSTAT_KVM_UUID", 36);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, sender, copy) != 0) {
		free(copy);
		if (first_sock >= 0)
			real_close(first_sock);
		first_sock = -1;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void wake_sender(void)
{
	uint64_t one = 1;
	if (wake >= 0 && write(wake, &one, sizeof(one)) < 0)
		return; /* the counter is full: the sender is awake anyway */
}

/* ---- the VMM's calls ---- */

/* Asks KVM for the stats fd of VM or vCPU fd `owner`; the fd, or -1 with
 * *why saying why not. `on` is the fd the VMM made it with: /dev/kvm for a
 * VM, the VM for a vCPU; KVM_CHECK_EXTENSION is valid on both (a VM ioctl
 * since KVM_CAP_CHECK_EXTENSION_VM), so the answer is the kernel's and the
 * VM's. */
static int get_stats_fd(int on, int owner, enum kvm_nostats *why)
{
	int cap = real_ioctl(on, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD);
	int s = cap > 0 ? real_ioctl(owner, KVM_GET_STATS_FD, 0) : -1;

	if (s < 0)
		*why = kvm_nostats_classify(cap, errno);
	return s;
}

/* Opens and remembers the stats fd of a VM or vCPU fd the VMM just got
 * through fd `on`; vcpu -1 for a VM. One not made is counted for the
 * exporter. The VMM's errno is left as its own ioctl set it. */
static void keep_stats_fd(int on, int owner, int vcpu)
{
	enum kvm_nostats why = KVM_NOSTATS_FAILED;
	int saved = errno;

	if (owner < 0 || owner >= SHIM_FDS)
		return;
	pthread_once(&sender_once, start_sender);
	int s = get_stats_fd(on, owner, &why);
	errno = saved;
	if (s < 0) {
		pthread_mutex_lock(&lock);
		if (nostats[why] < UINT_MAX)
			nostats[why]++;
		pthread_mutex_unlock(&lock);
		wake_sender();
		return;
	}
	fcntl(s, F_SETFD, FD_CLOEXEC);
	pthread_mutex_lock(&lock);
	int old = stats_of[owner];
	stats_of[owner] = s + 1;
	vcpu_of[owner] = vcpu + 1;
	sent[owner] = false;
	pthread_mutex_unlock(&lock);
	if (old)
		real_close(old - 1);
	wake_sender();
}

SHIM_API int ioctl(int fd, unsigned long req, ...) /* checksrc: varargs libc's own prototype */
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	int rc = real_ioctl(fd, req, arg);
	if (rc >= 0 && req == KVM_CREATE_VM)
		keep_stats_fd(fd, rc, -1);
	else if (rc >= 0 && req == KVM_CREATE_VCPU)
		keep_stats_fd(fd, rc, (int)(unsigned long)arg); /* the vCPU id KVM names it by */
	return rc;
}

SHIM_API int close(int fd)
{
	int stats = 0;

	resolve();
	if (fd >= 0 && fd < SHIM_FDS) {
		pthread_mutex_lock(&lock);
		stats = stats_of[fd];
		stats_of[fd] = 0;
		pthread_mutex_unlock(&lock);
	}
	if (stats)
		real_close(stats - 1);
	return real_close(fd);
}
