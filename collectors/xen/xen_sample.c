/* Sampling per the specification's handshake: notify, wait for the
 * provider's signal, read. A port is unmasked once per scrape, just before
 * its request, so a guest flooding its channel (XSA-332) gets at most a
 * few deliveries per scrape, and its flood costs only its own answer. */
#include "xen_sample.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "monoclock.h"

#define WAIT_SLICE_MS 50
#define GATHER_NS 1000000
#define GATHER_FROM 64 /* answers still awaited */

/* Delivered ports: at most budget, and a batch. */
static int next_ports(struct xen_registry *r, uint32_t *port, size_t budget)
{
	return xen_evt_pending(r->seam, port, budget < XEN_EVT_BATCH ? budget : XEN_EVT_BATCH);
}

/* Takes what has been delivered; returns how many awaited answers came. */
static size_t take_pending(struct xen_registry *r, size_t budget, uint64_t *spurious)
{
	uint32_t port[XEN_EVT_BATCH];
	size_t answered = 0;
	int got;

	while (budget > 0 && (got = next_ports(r, port, budget)) > 0) {
		budget -= (size_t)got;
		for (int i = 0; i < got; i++) {
			struct xen_set *s = port[i] < XEN_PORTS_MAX ? r->by_port[port[i]] : NULL;
			if (s && s->awaiting) {
				s->awaiting = false;
				s->fresh = true;
				answered++;
			} else {
				(*spurious)++;
			}
		}
	}
	return answered;
}

/* Unmasks every live port, a batch at a time. */
static size_t unmask_all(struct xen_registry *r)
{
	uint32_t port[XEN_EVT_BATCH];
	size_t n = 0, live = 0;

	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			struct xen_set *s = r->dom[i]->set[k];
			s->fresh = s->awaiting = false;
			port[n++] = s->port;
			live++;
			if (n == XEN_EVT_BATCH) {
				xen_evt_unmask(r->seam, port, n);
				n = 0;
			}
		}
	if (n > 0)
		xen_evt_unmask(r->seam, port, n);
	return live;
}

/* Unmasks every live port and clears what was raised before this scrape
 * asked, so that no old signal passes for an answer. */
static size_t ask_all(struct xen_registry *r, uint64_t *spurious)
{
	uint32_t port[XEN_EVT_BATCH];
	size_t asked = 0;
	int got;

	for (size_t budget = 2 * unmask_all(r) + 16;
	     budget > 0 && (got = next_ports(r, port, budget)) > 0; budget -= (size_t)got) {
		*spurious += (size_t)got;
		xen_evt_unmask(r->seam, port, (size_t)got);
	}
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			struct xen_set *s = r->dom[i]->set[k];
			if (xen_evt_notify(r->seam, s->port) == 0) {
				s->awaiting = true;
				asked++;
			}
		}
	return asked;
}

static size_t count_awaiting(const struct xen_registry *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++)
			n += r->dom[i]->set[k]->awaiting;
	return n;
}

/* Each value read from the guest's page once, into the set's own copy: a
 * guest rewriting its page meanwhile changes nothing the scrape shows, and
 * a text is checked on the copy. A set whose statistics are its tuples in
 * order, all numbers (the usual one), is read without its statistics,
 * whose array a scrape of many sets would otherwise fetch from memory
 * twice (here and to write them). */
static void copy_values(struct xen_set *s)
{
	const uint8_t *values = s->values;

	if (s->dense) {
		for (size_t j = 0; j < s->nstats; j++)
			s->num[j] = xen_value_u64(values + j * PVSTATS_TUPLE_SIZE);
		return;
	}
	for (size_t j = 0; j < s->nstats; j++) {
		const struct xen_stat *st = &s->stat[j];
		const uint8_t *slot = values + (size_t)st->slot * PVSTATS_TUPLE_SIZE;
		if (st->type == PVSTATS_ASCII)
			memcpy(s->text[st->sampled], slot, PVSTATS_TUPLE_SIZE);
		else
			s->num[st->sampled] = xen_value_u64(slot);
	}
}

/* Sets that answered get their values copied; the others time out. */
static void finish(struct xen_registry *r, struct bs_emitter *em)
{
	for (size_t i = 0; i < r->ndom; i++)
		for (size_t k = 0; k < r->dom[i]->nsets; k++) {
			struct xen_set *s = r->dom[i]->set[k];
			if (s->fresh) {
				copy_values(s);
			} else if (s->awaiting) {
				s->awaiting = false;
				s->timeouts++;
				bs_drop(em, "timeout", 1);
			}
		}
}

/* While many answers are still to come, they are let gather a while
 * before the next look: a wake-up per answer or two costs more CPU than
 * taking the answers (180 to 520 wake-ups in a scrape of 4,000 sets
 * without the wait, 10 to 20 with it, which adds at most 1 ms).
 * The last few are taken as they come, so a small host waits no longer. */
static void gather(uint64_t now, uint64_t deadline)
{
	uint64_t ns = deadline - now < GATHER_NS ? deadline - now : GATHER_NS;
	struct timespec ts = {0, (long)ns};

	nanosleep(&ts, NULL);
}

void xen_sample(struct xen_registry *r, double timeout_s, struct bs_emitter *em)
{
	uint64_t deadline = monoclock_ns() + (uint64_t)(timeout_s * 1e9), spurious = 0;
	struct pollfd pfd;

	pthread_mutex_lock(&r->lock);
	size_t left = ask_all(r, &spurious);
	pfd = (struct pollfd){xen_evt_fd(r->seam), POLLIN, 0};
	while (left > 0 && !em->ops->expired(em)) {
		uint64_t now = monoclock_ns();
		if (now >= deadline)
			break;
		uint64_t ms = (deadline - now) / 1000000 + 1;
		uint64_t epoch = r->epoch;
		/* The lock is let go while waiting: withdrawals are not held up. */
		pthread_mutex_unlock(&r->lock);
		if (left >= GATHER_FROM)
			gather(now, deadline);
		poll(&pfd, 1, ms < WAIT_SLICE_MS ? (int)ms : WAIT_SLICE_MS);
		pthread_mutex_lock(&r->lock);
		size_t got = take_pending(r, 4 * left + 64, &spurious);
		left = got > left ? 0 : left - got;
		if (r->epoch != epoch)
			left = count_awaiting(r); /* a set withdrawn while asked */
	}
	finish(r, em);
	if (spurious)
		bs_drop(em, "spurious_event", spurious);
}
