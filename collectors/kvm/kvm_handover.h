/* The hand-over socket: a VMM or a privileged helper passes stats fds to an
 * exporter that has no capability of its own (SCM_RIGHTS, one fd a message). */
#ifndef KVM_HANDOVER_H
#define KVM_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kvm_vmset.h"

#define KVM_HANDOVER_MSG_MAX 1024
#define KVM_HANDOVER_MAGIC "BINSTAT-KVM 1\n"

/* One message's identity text:
 *   BINSTAT-KVM 1\n name=NAME\n uuid=UUID\n pid=VMM_PID\n vcpu=N\n
 * every line but the first optional; no vcpu line: the VM's stats fd.
 * A message with no fd and `no_stats_fd=TOKEN` (kvm_nostats.h) instead
 * reports a stats fd the sender could not get from KVM. */
struct kvm_handover_msg {
	struct kvm_identity ident;
	pid_t pid;   /* the VMM, watched for the fd's lifetime; 0: the sender */
	int vcpu;    /* -1: the VM's stats fd */
	int nostats; /* -1, or the enum kvm_nostats a report names */
};

/* Parses the text part; -EINVAL for a bad magic, line, key or number. */
int kvm_handover_parse(const char *buf, size_t len, struct kvm_handover_msg *m);
/* Receives one message: its fd in *fd (-1 for a report, m->nostats, which
 * carries none). Returns 1 for a message, 0 when none is waiting, -EPIPE
 * at end of stream, -EINVAL for a malformed one, -EMFILE for one whose fds
 * the kernel could not give us (no fd left). Whatever fds a refused
 * message carried are closed. */
int kvm_handover_recv(int conn, struct kvm_handover_msg *m, int *fd);

struct kvm_handover_peer {
	pid_t pid;
	uid_t uid;
};

/* The connected peer's credentials, if its uid, primary group or any of
 * its supplementary groups (SO_PEERGROUPS: as they were at connect, so no
 * race with a reused pid) is on the allow-lists. -EACCES when none is. */
int kvm_handover_peer(int conn, const uint64_t *uids, size_t nuids, const uint64_t *gids,
		      size_t ngids, struct kvm_handover_peer *peer);
/* Whether `peer` may name VMM `pid` as the owner of what it hands over:
 * itself always; another process only as root or as the owner of every
 * uid of that process (real, effective, saved: ptrace's own test), so no
 * peer can attach numbers to, or pin, a VMM it has no power over. */
bool kvm_handover_may_name(const char *proc, const struct kvm_handover_peer *peer, pid_t pid);

#endif
