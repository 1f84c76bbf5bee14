/* The KVM collector's watcher thread (kvm_watch.c): the VMMs' pidfds,
 * KVM's uevents, the /proc walks and the hand-over socket, all served in
 * one thread that takes what it finds into the set under the lock. */
#ifndef KVM_WATCH_H
#define KVM_WATCH_H

#include "kvm_state.h"

#define KVM_WATCH_MAX 65536 /* VMMs watched by a pidfd at once */

/* The watcher's fds, before its thread starts (uevents arriving meanwhile
 * are queued), and the hand-over socket when one is configured. */
int kvm_watch_open(struct kvm_collector *k);
/* Starts the thread; its first walk of /proc runs there, never on the
 * start path. */
int kvm_watch_start(struct kvm_collector *k);
/* Stops the thread and the hand-over server (its fds handed to the next
 * generation on a reload); the set is the caller's to free after. */
void kvm_watch_stop(struct kvm_collector *k);
/* Closes the pidfds and the watcher's own fds, after kvm_watch_stop. */
void kvm_watch_close(struct kvm_collector *k);

#endif
