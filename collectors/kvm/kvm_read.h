/* Each scrape's reads of the held stats fds, on several threads. */
#ifndef KVM_READ_H
#define KVM_READ_H

#include <binstat/collector.h>

#include "kvm_emit.h"
#include "kvm_vmset.h"

/* Threads that read at most, the collect's own among them. */
#define KVM_READERS_MAX 4
/* Below this many fds one thread reads them all: starting a thread costs
 * about as much as a few hundred reads. */
#define KVM_READ_SPLIT_FDS 1024
/* VMs a reader takes at a time: few enough that the threads end together,
 * enough that they seldom meet on the counter. */
#define KVM_READ_RUN 8

/* One pread per held fd of every VM the vms filter lets through (marking
 * which those are); a failed read leaves that fd out of this scrape, and
 * is counted. Per VM, each VM's vCPUs are folded as soon as they are read.
 * Up to one thread per CPU take runs of KVM_READ_RUN VMs until all are
 * taken: every VM is read and folded by one thread alone, and the set does
 * not change meanwhile (the caller holds the collector's lock). */
void kvm_read_all(struct kvm_vmset *set, const struct kvm_filter *vms, enum kvm_mode mode,
		  struct bs_emitter *em);

#endif
