/* One scrape of the held VMs, its reads and its writing shared out among
 * threads. */
#ifndef KVM_SCRAPE_H
#define KVM_SCRAPE_H

#include <binstat/collector.h>

#include "kvm_emit.h"
#include "kvm_vmset.h"

/* Threads that read and write at most, the collect's own among them. */
#define KVM_READERS_MAX KVM_EMIT_PARTS_MAX
/* Below this many fds one thread does it all: starting a thread costs
 * about as much as a few hundred reads. */
#define KVM_READ_SPLIT_FDS 1024
/* VMs a reader takes at a time: few enough that the threads end together,
 * enough that they seldom meet on the counter. */
#define KVM_READ_RUN 8

/* One pread of each held fd of every VM the vms filter lets through
 * (marking which those are), and of their vCPU threads' schedstat; a
 * failed read leaves that fd out of this scrape, and is counted. Per VM,
 * each VM's vCPUs are folded as soon as they are read. Then writes what
 * was read, for the stats the stats filter lets through.
 *
 * Up to one thread per CPU the process may run on take runs of
 * KVM_READ_RUN VMs until all are taken: every VM is read and folded by one
 * thread alone. Once all are read, each thread takes parts of the families
 * to write (kvm_emit_plan), the first part into em, each other into a fork
 * of em (ABI 5; without forks em takes it all), until none is left. The set does not change
 * meanwhile (the caller holds the collector's lock). */
void kvm_scrape(struct kvm_vmset *set, const struct kvm_filter *vms, const struct kvm_filter *stats,
		enum kvm_mode mode, const struct bs_host *host, struct bs_emitter *em);

#endif
