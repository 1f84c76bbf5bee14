/* The raise of CAP_SYS_PTRACE. A file capability with the effective bit
 * ("+ep") makes execve fail with EPERM wherever the runtime's bounding set
 * lacks the capability (a container given none), so the image sets it
 * permitted only ("+p"), as a capability-aware program's, and the KVM
 * collector raises it here. Docker and Kubernetes give a non-root user no
 * ambient capabilities: the file's permitted bit is how that user gets it.
 * Under no-new-privileges execve grants a file capability only within the
 * permitted set the runtime gave (Docker gives a non-root user none): then
 * there is nothing to raise, and the collector counts the VMMs it cannot
 * read. */
#include "kvm_caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

int kvm_caps_raise_ptrace(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct c[2] = {0};
	const unsigned i = CAP_TO_INDEX(CAP_SYS_PTRACE), bit = CAP_TO_MASK(CAP_SYS_PTRACE);

	if (syscall(SYS_capget, &h, c) < 0)
		return -errno;
	if ((c[i].effective & bit) || !(c[i].permitted & bit))
		return 0;
	c[i].effective |= bit;
	if (syscall(SYS_capset, &h, c) < 0)
		return -errno;
	return 1;
}
