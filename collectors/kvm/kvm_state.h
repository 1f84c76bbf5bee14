/* The KVM collector's state, shared by its three files: the plugin's entry
 * points (kvm_collector.c), the configuration readers (kvm_config.c) and
 * the watcher thread that keeps the held stats fds current (kvm_watch.c). */
#ifndef KVM_STATE_H
#define KVM_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <binstat/collector.h>

#include "kvm_denied.h"
#include "kvm_emit.h"
#include "kvm_handover_serve.h"
#include "kvm_libvirt.h"
#include "kvm_pidns.h"
#include "kvm_vmset.h"
#include "droptab.h"
#include "growarr.h"
#include "worker.h"

#define PENDING_MAX 256 /* processes a create uevent named, looked at again */

struct kvm_pending {
	pid_t tid;
	unsigned tries;
	uint64_t due_ns;
};

struct kvm_watch {
	pid_t pid;
	int pidfd;
};

struct kvm_collector {
	const struct bs_host *host;
	bool check_only;      /* --check-config: the options are read, nothing is touched */
	pthread_mutex_t lock; /* the set, the watches and wdrops */
	pthread_cond_t scanned;
	bool first_scan_done;
	struct kvm_vmset set;
	enum kvm_mode mode;
	struct kvm_filter stats, vms;
	const char *proc;
	double rescan_s;
	bool passive;
	bool attach; /* inject KVM_GET_STATS_FD into stock VMMs (ptrace) */
	bool attach_eperm_logged, attach_traced_logged;
	struct kvm_denied denied;	  /* VMMs seen but not readable */
	size_t denied_watch_cap;	  /* of them watched by a pidfd (kvm_denied_watch_cap) */
	bool denied_logged;		  /* this episode (since the count left 0) counted */
	struct kvm_denied_say denied_say; /* the warn line's bound */
	const char *missing;		  /* what the exporter lacks to read them */
	char hidepid[32];		  /* /proc's hidepid= without CAP_SYS_PTRACE, or "" */
	enum kvm_pidns pidns;		  /* the host's PID namespace or a container's */
	bool host_view;	   /* vCPU threads' schedstat and VMMs' memory (kvm_hostview.c) */
	bool hostview_due; /* a hand-over brought vCPUs whose threads are not known */
	struct kvm_libvirt_conf libvirt;
	bool libvirt_denied_logged;

	struct worker watcher; /* the watcher thread */
	int epfd, wakefd, ueventfd;
	GROWARR_OF(struct kvm_watch, watch, watches); /* the VMMs' pidfds */
	struct kvm_pending pending[PENDING_MAX];
	size_t npending;
	uint64_t next_rescan_ns;

	/* The hand-over socket (off without handover.socket), served in the
	 * watcher thread, and the caps of what it may bring. */
	struct kvm_handover_server handover;
	uint64_t handover_max_fds, handover_max_fds_per_peer;

	struct droptab wdrops; /* found between scrapes, reported by the next collect */
	uint64_t no_fds_unsaid, no_fds_said_ns; /* handover_no_fds since the last log line */
};

#endif
