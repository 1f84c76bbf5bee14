/* Why a stats fd the exporter asked KVM for (the preload shim, attach mode)
 * was not made: KVM_CHECK_EXTENSION's answer and KVM_GET_STATS_FD's errno,
 * told apart as drop reasons, and the token the shim sends them by. Shared
 * by the shim (which runs inside the VMM) and the collector. */
#ifndef KVM_NOSTATS_H
#define KVM_NOSTATS_H

#include <stddef.h>

enum kvm_nostats {
	KVM_NOSTATS_UNSUPPORTED, /* KVM_CAP_BINARY_STATS_FD absent: a kernel before 5.14 */
	KVM_NOSTATS_NO_FDS,	 /* EMFILE, ENFILE: the VMM's RLIMIT_NOFILE, or the system's */
	KVM_NOSTATS_NO_MEMORY,	 /* ENOMEM */
	KVM_NOSTATS_FAILED,	 /* any other errno */
	KVM_NOSTATS_KINDS
};

/* Classifies one attempt: `cap` is KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD)'s
 * result (<= 0: absent, or the check itself failed), `err` the errno
 * KVM_GET_STATS_FD failed with (ignored when the capability is absent). */
enum kvm_nostats kvm_nostats_classify(int cap, int err);
/* The drop reason: "stats_fd_unsupported", "stats_fd_no_fds",
 * "stats_fd_no_memory", "stats_fd_failed". */
const char *kvm_nostats_reason(enum kvm_nostats why);
/* The hand-over message's value for it (`no_stats_fd=TOKEN`). */
const char *kvm_nostats_token(enum kvm_nostats why);
/* A token of `n` bytes back to its kind; -1 for anything else. */
int kvm_nostats_parse(const char *s, size_t n);

#endif
