/* KVM's uevents from the kobject netlink socket: they tell when a VM is
 * created (and by which thread), so discovery looks at one process instead
 * of walking /proc. Messages not from the kernel (nl_pid != 0) are ignored. */
#include "kvm_uevent.h"

#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum kvm_uevent kvm_uevent_parse(const char *buf, size_t len, pid_t *pid)
{
	const char *end = buf + len;
	bool kvm = false;
	enum kvm_uevent ev = KVM_UEVENT_NONE;
	long p = -1;

	for (const char *s = buf; s < end; s += strnlen(s, (size_t)(end - s)) + 1) {
		size_t n = strnlen(s, (size_t)(end - s));
		if (n == 11 && strncmp(s, "DEVNAME=kvm", 11) == 0)
			kvm = true;
		else if (n == 12 && strncmp(s, "EVENT=create", 12) == 0)
			ev = KVM_UEVENT_CREATE;
		else if (n == 13 && strncmp(s, "EVENT=destroy", 13) == 0)
			ev = KVM_UEVENT_DESTROY;
		else if (n > 4 && n < 16 && strncmp(s, "PID=", 4) == 0) {
			char num[16];
			char *e;
			memcpy(num, s + 4, n - 4);
			num[n - 4] = '\0';
			p = strtol(num, &e, 10);
			if (*e || p <= 0)
				p = -1;
		}
	}
	if (!kvm || p < 0)
		return KVM_UEVENT_NONE;
	*pid = (pid_t)p;
	return ev;
}

int kvm_uevent_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = 1};
	int fd =
	    socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int kvm_uevent_recv(int fd, pid_t *pid)
{
	char buf[8192];
	struct sockaddr_nl from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

	if (n < 0)
		return errno == ENOBUFS ? -ENOBUFS : -EAGAIN;
	if (from.nl_pid != 0)
		return KVM_UEVENT_NONE; /* not the kernel's */
	return kvm_uevent_parse(buf, (size_t)n, pid);
}
