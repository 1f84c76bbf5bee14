/* The fds a process holds, each with what its /proc link says
 * ("anon_inode:kvm-vm-stats"), with or without read access to /proc/PID/fd. */
#ifndef KVM_PROCFD_H
#define KVM_PROCFD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The number a /proc directory entry names (a pid, tid or fd), or -1 for
 * any other entry. */
int kvm_proc_number(const char *name);

/* The value of the `key:` line of /proc/PID/status (tabs and all) into
 * val; false when the process or the line is not there. */
bool kvm_proc_status(const char *proc, pid_t pid, const char *key, char *val, size_t len);
/* The process's real, effective and saved uids; false when not known. */
bool kvm_proc_uids(const char *proc, pid_t pid, uid_t uid[3]);

/* Called for each fd; returns false to stop. */
typedef bool kvm_procfd_fn(void *ctx, int fd, const char *link);

/* Calls `each` for every fd of `pid` that is an anon inode (the only kind a
 * KVM fd is). /proc/PID/fd needs search permission on a directory owned by
 * the process's user, which CAP_SYS_PTRACE alone does not give; when it is
 * refused, the fds come from /proc/PID/fdinfo (a ptrace check only), each
 * anon-inode one copied with pidfd_getfd and named by our own /proc link.
 * Never copies anything else, so no close of ours can wait on a FUSE
 * server or a device. Returns 0 or -errno (-EACCES or -EPERM: no ptrace
 * right over it, its links or its fds). */
int kvm_procfd_each(const char *proc, pid_t pid, kvm_procfd_fn *each, void *ctx);

#endif
