/* The KVM collector plugin's entry points: init (the options read, the
 * watcher started), collect, which only reads the held stats fds and
 * writes, shutdown and the landing page's description. The watcher thread
 * is kvm_watch.c's, the options kvm_config.c's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <binstat/collector.h>

#include "kvm_caps.h"
#include "kvm_config.h"
#include "kvm_scrape.h"
#include "kvm_watch.h"
#include "monoclock.h"

#define FIRST_SCAN_WAIT_S 2 /* a scrape waits this long for the first walk */

static void kvm_shutdown(void *state);

static int kvm_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	struct kvm_collector *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	k->host = host;
	k->check_only = host->flags & BS_HOST_CHECK_ONLY;
	k->epfd = k->wakefd = k->ueventfd = -1;
	worker_init(&k->watcher);
	growarr_init(&k->watches, sizeof(struct kvm_watch), KVM_WATCH_MAX);
	kvm_denied_init(&k->denied);
	struct rlimit nofile;
	k->denied_watch_cap =
	    kvm_denied_watch_cap(getrlimit(RLIMIT_NOFILE, &nofile) == 0 ? nofile.rlim_cur : 1024);
	kvm_handover_init(&k->handover);
	pthread_mutex_init(&k->lock, NULL);
	pthread_condattr_t ca; /* its waits have monotonic deadlines */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->scanned, &ca);
	pthread_condattr_destroy(&ca);
	if ((rc = kvm_config_read(k, conf)) < 0)
		goto err_shutdown;
	if (k->check_only) { /* no socket, no scan, no ptrace: a check changes nothing */
		*state = k;
		return 0;
	}
	/* Before the watcher thread starts: it inherits the raised set. */
	(void)kvm_caps_raise_ptrace();
	if ((rc = kvm_watch_open(k)) < 0)
		goto err_shutdown;
	if ((rc = kvm_watch_start(k)) < 0)
		goto err_shutdown;
	*state = k;
	return 0;
err_shutdown:
	kvm_shutdown(k);
	return rc;
}

static void collect_totals(struct kvm_collector *k, struct bs_emitter *em)
{
	bs_family(em, "kvm_collector_vms", BS_GAUGE, NULL,
		  "VMs whose stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.vms.n);
	bs_family(em, "kvm_collector_stats_fds", BS_GAUGE, NULL, "Stats fds the collector holds.");
	bs_sample_u64(em, NULL, 0, k->set.nfds);
	size_t unowned = 0;
	for (size_t i = 0; i < k->set.vms.n; i++)
		unowned += k->set.vm[i]->thread_group ? k->set.vm[i]->vcpus.n : 0;
	bs_family(em, "kvm_collector_vcpus_of_unknown_vm", BS_GAUGE, NULL,
		  "vCPUs served in their creating thread's group (vm=\"NAME/kvm-TID/*\"): one "
		  "thread created several VMs and KVM names their vCPUs alike.");
	bs_sample_u64(em, NULL, 0, unowned);
	bs_family(em, "kvm_collector_vmms_not_permitted", BS_GAUGE, NULL,
		  "VMM processes seen holding VMs whose stats fds the collector may not read: "
		  "it lacks CAP_SYS_PTRACE over them (the log says what). Their VMs are not "
		  "served.");
	bs_sample_u64(em, NULL, 0, k->denied.pids.n);
	kvm_pidns_emit(em, k->pidns);
	if (!k->handover.path)
		return;
	bs_family(em, "kvm_collector_handover_senders", BS_GAUGE, NULL,
		  "Hand-over connections open whose sender handed over stats fds the collector "
		  "holds. 0 while VMMs run after a restart: their senders have not sent again.");
	bs_sample_u64(em, NULL, 0, kvm_handover_senders(&k->handover));
}

/* The first walk may still run when the first scrape comes. */
static void wait_first_scan(struct kvm_collector *k)
{
	struct timespec until =
	    monoclock_timespec(monoclock_ns() + (uint64_t)FIRST_SCAN_WAIT_S * 1000000000u);
	while (!k->first_scan_done &&
	       pthread_cond_timedwait(&k->scanned, &k->lock, &until) != ETIMEDOUT)
		;
}

/* Reads every held fd under the lock: each is a stats fd KVM made
 * (kvm_statsfd_identify), whose pread copies kernel memory and never waits. */
static int kvm_collect(void *state, struct bs_emitter *em)
{
	struct kvm_collector *k = state;

	pthread_mutex_lock(&k->lock);
	wait_first_scan(k);
	droptab_flush(&k->wdrops, em);
	kvm_scrape(&k->set, &k->vms, &k->stats, k->mode, k->host, em);
	collect_totals(k, em);
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static void kvm_shutdown(void *state)
{
	struct kvm_collector *k = state;

	kvm_watch_stop(k);
	kvm_vmset_free(&k->set);
	kvm_watch_close(k);
	kvm_denied_free(&k->denied);
	pthread_cond_destroy(&k->scanned);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

static void kvm_describe(void *state, char *buf, size_t len)
{
	struct kvm_collector *k = state;
	size_t vcpus = 0, handed = 0;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->set.vms.n; i++) {
		vcpus += k->set.vm[i]->vcpus.n;
		handed += k->set.vm[i]->from != 0;
	}
	int n = snprintf(buf, len, "%zu VMs (%zu handed over), %zu vCPUs, %zu stats fds",
			 k->set.vms.n, handed, vcpus, k->set.nfds);
	if (k->handover.path && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, ", %zu hand-over senders connected",
			      kvm_handover_senders(&k->handover));
	/* After a newline: a warning the landing page shows apart, in red. */
	if (k->pidns == KVM_PIDNS_OWN && !k->set.vms.n && !k->denied.pids.n && n >= 0 &&
	    (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "\nnot in the host's PID namespace: no VMM is seen; run the container "
			 "with --pid=host (Kubernetes: hostPID: true)");
	else if (k->denied.pids.n && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "\n%zu VMM process(es) not readable (missing %s): grant CAP_SYS_PTRACE, "
			 "AmbientCapabilities=CAP_SYS_PTRACE in the unit, --cap-add=SYS_PTRACE "
			 "in a container",
			 k->denied.pids.n, k->missing ? k->missing : "CAP_SYS_PTRACE");
	else if (k->hidepid[0] && n >= 0 && (size_t)n < len)
		snprintf(
		    buf + n, len - (size_t)n,
		    "\n/proc hides other users' processes (hidepid=%s): their VMMs are not "
		    "seen; grant CAP_SYS_PTRACE, AmbientCapabilities=CAP_SYS_PTRACE in the unit",
		    k->hidepid);
	pthread_mutex_unlock(&k->lock);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_kvm = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "kvm",
    .description = "KVM VM and vCPU statistics from binary stats fds",
    .init = kvm_init,
    .collect = kvm_collect,
    .shutdown = kvm_shutdown,
    .describe = kvm_describe,
};
