/* The host's PID namespace or a container's own. The sign: the kernel's
 * threads belong to the initial PID namespace and appear in no other, and
 * PID 2 there is kthreadd, flagged PF_KTHREAD, a flag no user process can
 * set (a name it can: prctl). In a container's own namespace PID 2 is one
 * of its processes, or absent. Our own /proc/self/ns/pid would not do: a
 * /proc of the host's mounted with --pid=host is what the walk reads. A
 * /proc that hides other users' processes (hidepid) may hide PID 2 too:
 * then nothing is concluded. */
#include "kvm_pidns.h"

#include "kvm_denied.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

bool kvm_pidns_stat_is_kthread(const char *buf, size_t len)
{
	const char *close = NULL;
	char line[256];
	unsigned long flags;

	/* The comm is the process's to choose, ')' and spaces included: the
	 * fields start after the last ')'. */
	for (size_t i = len; i > 0 && !close; i--)
		if (buf[i - 1] == ')')
			close = buf + i - 1;
	if (!close)
		return false;
	size_t n = len - (size_t)(close + 1 - buf);
	snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
		 close + 1);
	/* Fields after comm: state ppid pgrp session tty_nr tpgid flags. */
	return sscanf(line, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & PF_KTHREAD);
}

enum kvm_pidns kvm_pidns_look(const char *proc)
{
	char path[96], buf[512], hp[32];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/2/stat", proc);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT || kvm_proc_hidepid(proc, hp, sizeof(hp)))
			return KVM_PIDNS_UNKNOWN;
		return KVM_PIDNS_OWN;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return KVM_PIDNS_UNKNOWN;
	return kvm_pidns_stat_is_kthread(buf, (size_t)n) ? KVM_PIDNS_HOST : KVM_PIDNS_OWN;
}

void kvm_pidns_emit(struct bs_emitter *em, enum kvm_pidns ns)
{
	if (ns == KVM_PIDNS_UNKNOWN)
		return;
	bs_family(em, "kvm_collector_host_pid_namespace", BS_GAUGE, NULL,
		  "1 when the collector sees the host's processes; 0 when it runs in a PID "
		  "namespace of its own (a container without --pid=host or hostPID: true), "
		  "where it finds no VMM but those of that namespace.");
	bs_sample_u64(em, NULL, 0, ns == KVM_PIDNS_HOST);
}
