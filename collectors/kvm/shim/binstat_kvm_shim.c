/* LD_PRELOAD shim for a VMM: keeps a KVM stats fd open for every VM and vCPU
 * the VMM creates, so the exporter's passive discovery can copy it. Nothing
 * else in the VMM changes. A stats fd holds a reference on its VM, so each is
 * closed when the VMM closes the VM or vCPU it belongs to. */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SHIM_FDS 65536 /* VM and vCPU fd numbers tracked; beyond, no stats fd */

static int (*real_ioctl)(int, unsigned long, ...); /* checksrc: varargs libc's ioctl */
static int (*real_close)(int);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int stats_of[SHIM_FDS]; /* stats fd + 1 of the VM or vCPU fd at that index */

static void resolve(void)
{
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
}

/* Opens and remembers the stats fd of a VM or vCPU fd the VMM just got. */
static void keep_stats_fd(int owner)
{
	if (owner < 0 || owner >= SHIM_FDS)
		return;
	int s = real_ioctl(owner, KVM_GET_STATS_FD, 0);
	if (s < 0)
		return; /* an old kernel: nothing to keep */
	fcntl(s, F_SETFD, FD_CLOEXEC);
	pthread_mutex_lock(&lock);
	int old = stats_of[owner];
	stats_of[owner] = s + 1;
	pthread_mutex_unlock(&lock);
	if (old)
		real_close(old - 1);
}

int ioctl(int fd, unsigned long req, ...) /* checksrc: varargs libc's own prototype */
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	resolve();
	int rc = real_ioctl(fd, req, arg);
	if (rc >= 0 && (req == KVM_CREATE_VM || req == KVM_CREATE_VCPU))
		keep_stats_fd(rc);
	return rc;
}

int close(int fd)
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
