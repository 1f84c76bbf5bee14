/* The guard's rules, pure (no socket, no clock, no lock): which phase a
 * connection is in from what its socket shows, when it is cut, and which
 * one makes room for a new client. The principle: a scraper always gets
 * through. Every phase has a bound, and every phase can be evicted: a
 * connection that holds a slot without progress loses it to one that
 * needs it. */
#include "httpguard.h"

#include <math.h>

/* A response is still being sent while the client has not acknowledged
 * all of it, even once libmicrohttpd handed its last byte to the kernel. */
static bool sending(const struct httpguard_conn *c)
{
	return c->phase == HTTPGUARD_SEND || (c->phase == HTTPGUARD_IDLE && c->unsent);
}

/* The run of responses began long enough ago, and the client has read
 * less than min_rate bytes a second of it on average since. */
static bool too_slow(const struct httpguard_conn *c, const struct httpguard_rules *r,
		     uint64_t elapsed)
{
	double read = (double)(c->bytes_out - c->out_at_send);

	return !c->blind && elapsed > r->grace_ns &&
	       read < (double)r->min_rate * (double)elapsed / 1e9;
}

enum httpguard_verdict httpguard_judge(const struct httpguard_conn *c,
				       const struct httpguard_rules *r, uint64_t now)
{
	bool past_life = now - c->born_ns > r->life_ns;

	if (c->cut)
		return HTTPGUARD_KEEP;
	if (sending(c)) {
		/* from the first response of a run: pipelining does not restart it */
		uint64_t elapsed = now - (c->send_ns ? c->send_ns : c->phase_ns);
		if (elapsed > r->send_ns)
			return HTTPGUARD_CUT_WRITE;
		return too_slow(c, r, elapsed) ? HTTPGUARD_CUT_SLOW : HTTPGUARD_KEEP;
	}
	switch (c->phase) {
	case HTTPGUARD_IDLE:
		if (past_life)
			return HTTPGUARD_CUT_LIFE; /* between requests: nothing lost */
		return now - c->phase_ns > r->idle_ns ? HTTPGUARD_CUT_IDLE : HTTPGUARD_KEEP;
	case HTTPGUARD_HEAD:
	case HTTPGUARD_BODY:
	case HTTPGUARD_AUTH:
		if (now - c->phase_ns > r->head_ns)
			return HTTPGUARD_CUT_HEAD;
		break;
	default: /* work: bounded by the scrape's own deadline */
		break;
	}
	/* past its life in the middle of a request: that request's bound more */
	return now - c->born_ns > r->life_ns + r->send_ns ? HTTPGUARD_CUT_LIFE : HTTPGUARD_KEEP;
}

void httpguard_observe(struct httpguard_conn *c, uint64_t bytes_in, uint64_t bytes_out,
		       uint64_t unsent, uint64_t now)
{
	c->bytes_in = bytes_in;
	c->bytes_out = bytes_out;
	c->unsent = unsent;
	if (c->phase != HTTPGUARD_IDLE)
		return;
	if (!unsent) /* everything read: the run of responses is over */
		c->send_ns = c->queued = 0;
	if (bytes_in != c->in_at_phase) { /* a new request head is arriving */
		c->phase = HTTPGUARD_HEAD;
		c->phase_ns = now;
	}
}

/* Bytes moved either way for each second of its age. The exporter's own
 * work is progress: the client waits for it. */
static double pace(const struct httpguard_conn *c, uint64_t now)
{
	double age = (double)(now > c->born_ns ? now - c->born_ns : 1) / 1e9;

	if (c->phase == HTTPGUARD_WORK)
		return INFINITY;
	return (double)(c->bytes_in + c->bytes_out) / (age > 1e-3 ? age : 1e-3);
}

/* Whether a is to be evicted before b: an established connection before a
 * young one (a new client needs a moment to send its head), then one from
 * the address holding the most connections, then the slowest for its age,
 * then the oldest. */
static bool before(const struct httpguard_conn *a, const struct httpguard_conn *b,
		   const struct httpguard_rules *r, uint64_t now)
{
	bool ya = now - a->born_ns < r->protect_ns, yb = now - b->born_ns < r->protect_ns;

	if (ya != yb)
		return yb;
	if (a->peers != b->peers)
		return a->peers > b->peers;
	double pa = pace(a, now), pb = pace(b, now);
	if (pa != pb)
		return pa < pb;
	return a->born_ns < b->born_ns;
}

long httpguard_pick(struct httpguard_conn *const *conns, size_t n, const struct httpguard_rules *r,
		    uint64_t now)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (!conns[i]->cut && !conns[i]->pinned &&
		    (best < 0 || before(conns[i], conns[best], r, now)))
			best = (long)i;
	return best;
}

/* An idle keep-alive connection whose responses were all read: its
 * client loses nothing but a reconnect. */
static bool spare(const struct httpguard_conn *c)
{
	return c->phase == HTTPGUARD_IDLE && !c->unsent;
}

/* Whether c may make room for a newcomer from its own address: not one
 * the exporter works on, nor a young one whose head may still be on its
 * way. An idle one may go at any age: else a client reconnecting each one
 * it loses would keep all of them young. */
static bool own_evictable(const struct httpguard_conn *c, const struct httpguard_rules *r,
			  uint64_t now)
{
	if (c->cut || c->pinned || c->phase == HTTPGUARD_WORK)
		return false;
	return spare(c) || now - c->born_ns >= r->protect_ns;
}

long httpguard_pick_own(struct httpguard_conn *const *conns, size_t n,
			const struct httpguard_rules *r, uint64_t now)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		const struct httpguard_conn *c = conns[i];
		if (!own_evictable(c, r, now))
			continue;
		if (best < 0 || spare(c) > spare(conns[best]) ||
		    (spare(c) == spare(conns[best]) && before(c, conns[best], r, now)))
			best = (long)i;
	}
	return best;
}
