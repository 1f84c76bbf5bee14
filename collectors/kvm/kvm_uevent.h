/* KVM's uevents (EVENT=create|destroy, PID=) from the kobject netlink socket. */
#ifndef KVM_UEVENT_H
#define KVM_UEVENT_H

#include <stddef.h>
#include <sys/types.h>

enum kvm_uevent { KVM_UEVENT_NONE, KVM_UEVENT_CREATE, KVM_UEVENT_DESTROY };

/* Parses one message ("change@/devices/virtual/misc/kvm\0KEY=VALUE\0...").
 * PID is the thread that created the VM, not always the VMM's process. */
enum kvm_uevent kvm_uevent_parse(const char *buf, size_t len, pid_t *pid);
/* A non-blocking socket on the kernel's uevent group, or -errno. */
int kvm_uevent_open(void);
/* Reads one message; only ones sent by the kernel count. Returns the event
 * (KVM_UEVENT_NONE for any other message), -EAGAIN when none is waiting,
 * -ENOBUFS when messages were lost (time for a full rescan). */
int kvm_uevent_recv(int fd, pid_t *pid);

#endif
