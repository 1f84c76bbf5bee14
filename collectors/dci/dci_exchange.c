/* The DCI collector's scrape engine. Every supplier's requests go out at
 * once and replies are taken as they come, so N suppliers cost about the
 * slowest one, and a supplier that never answers costs the timeout once,
 * whatever N. A supplier is trusted with nothing: each reply is checked
 * against its request, and any fault fails that supplier alone. */
#include "dci_exchange.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "monoclock.h"

#define DESCRIBE_BUFFER (64 * 1024)
#define EVENTS_MAX 64
/* How often the emitter is asked whether to stop (the scrape's deadline,
 * or a scrape waiting while the processing's sampler collects). */
#define WAIT_SLICE_MS 10

struct exchange {
	struct dci_set *set;
	const struct dci_config *cfg;
	struct bs_emitter *em;
	size_t busy;
	uint64_t now_ns;
};

static void fail(struct exchange *x, struct dci_sup *s, const char *reason)
{
	bs_drop(x->em, reason, 1);
	dci_link_close(&s->link); /* its stream may be out of step: start afresh */
	dci_sup_unbuild(x->set, s);
	s->must_describe = true; /* the connection is lost: describe again */
	if (s->state == DCI_BUSY)
		x->busy--;
	s->state = DCI_FAILED;
}

static const char *reason_of(int rc)
{
	switch (rc) {
	case -EPIPE:
		return "disconnected";
	case -EMSGSIZE:
		return "oversized_reply";
	case -EREMOTEIO:
		return "error_status";
	case -EBUSY:
		return "busy";
	case -EBADMSG:
		return "name_unterminated";
	case -ERANGE:
		return "bad_size";
	case -ENOMEM:
		return "no_memory";
	case -ENOBUFS:
		return "memory_budget";
	case -ENOSPC:
		return "too_many_requests";
	}
	return "protocol";
}

static int queue(struct dci_sup *s, uint16_t op, uint32_t first, uint32_t last, uint32_t bufsize)
{
	struct dci_req r = {op, first, last, bufsize, s->gen};
	return dci_link_queue(&s->link, &r);
}

/* Bytes of the values of first..last, capped at what one request takes. */
static uint32_t range_bytes(const struct dci_layout *l, uint32_t first, uint32_t last)
{
	size_t n = l->stat[last].offset + l->stat[last].size - l->stat[first].offset;
	return n > DCI4_BUFFER_MAX ? DCI4_BUFFER_MAX : (uint32_t)n;
}

static int queue_read(struct dci_sup *s, uint32_t first, uint32_t last)
{
	return queue(s, SA_READ, first, last, range_bytes(s->layout, first, last));
}

/* Everything after a describe (statics included); the planned ranges after. */
static int queue_reads(struct dci_sup *s)
{
	const struct dci_layout *l = s->layout;
	int rc = 0;

	if (!s->statics_read)
		return l->value_bytes ? queue_read(s, 0, l->nstats - 1) : 0;
	for (unsigned i = 0; i < l->nrun && rc == 0; i++)
		rc = queue_read(s, l->run[i].first, l->run[i].last);
	return rc;
}

static int start_describe(struct exchange *x, struct dci_sup *s)
{
	uint32_t max = s->info.max_stat;
	int rc = dci_sup_build(x->set, s, max, x->cfg->max_stats_total);

	if (rc < 0)
		return rc;
	s->gen++; /* reads already asked for describe the old layout */
	return queue(s, SA_DESCRIBE, 0, max, DESCRIBE_BUFFER);
}

static int on_info(struct exchange *x, struct dci_sup *s, const uint8_t *b, uint32_t len)
{
	struct dci4_info info;
	int rc = dci4_decode_info(b, len, &info);
	if (rc < 0)
		return rc;
	s->info = info;
	s->have_info = true;
	if (info.features != 0) /* DCI4 defines none: the value must be 0 */
		bs_drop(x->em, "features_set", 1);
	if ((uint64_t)s->info.max_stat + 1 > x->cfg->max_stats)
		return -E2BIG; /* "a billion statistics": nothing allocated */
	double age = (double)(x->now_ns - s->described_ns) / 1e9;
	if (!s->layout || s->must_describe || memcmp(s->layout->reset, s->info.reset, 8) != 0 ||
	    (x->cfg->describe_interval_s > 0 && age >= x->cfg->describe_interval_s))
		return start_describe(x, s);
	return 0;
}

static int take_desc(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct dci4_desc d;
	int n = dci4_decode_desc(p, left, &d);
	if (n < 0)
		return n;
	int rc = dci_layout_set(ctx, stat, &d);
	return rc < 0 ? rc : n;
}

static void drop_cb(void *ctx, const char *reason)
{
	bs_drop(ctx, reason, 1);
}

/* The new description replaces the old one. */
static int adopt(struct exchange *x, struct dci_sup *s)
{
	struct dci_layout *l = s->building;
	int rc = dci_layout_finish(l, &x->cfg->map, s->info.module, s->info.title, s->name, drop_cb,
				   x->em);
	if (rc < 0)
		return rc == -E2BIG ? -EFBIG : rc;
	size_t vbytes = l->value_bytes ? l->value_bytes : 1;
	if (!dci_budget_take(&x->set->budget, vbytes))
		return -ENOBUFS;
	uint8_t *values = calloc(1, vbytes);
	if (!values) {
		dci_budget_give(&x->set->budget, vbytes);
		return -ENOMEM;
	}
	if (s->layout && memcmp(s->layout->reset, l->reset, 8) == 0 &&
	    !dci_layout_same(s->layout, l))
		bs_drop(x->em, "description_changed", 1); /* without a new reset: a fault */
	dci_sup_built(x->set, s);
	dci_sup_forget(x->set, s);
	s->layout = l;
	s->values = values;
	x->set->stats_total += l->nstats;
	x->set->epoch++;
	s->must_describe = false;
	s->describes++;
	s->described_ns = x->now_ns;
	s->gen++;
	return queue_reads(s);
}

static int on_describe(struct exchange *x, struct dci_sup *s, const struct dci_req *r,
		       const uint8_t *b, uint32_t len)
{
	uint32_t done;
	int rc;

	if (!s->building)
		return -EPROTO;
	rc = dci4_parse_range(b, len, r->first, r->last, r->bufsize, take_desc, s->building, &done);
	if (rc < 0)
		return rc;
	if (r->first + done <= r->last)
		return queue(s, SA_DESCRIBE, r->first + done, r->last, DESCRIBE_BUFFER);
	return adopt(x, s);
}

static int take_value(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct dci_sup *s = ctx;
	const struct dci_stat *st = &s->layout->stat[stat];
	if (st->size > left)
		return -EPROTO;
	memcpy(s->values + st->offset, p, st->size);
	return (int)st->size;
}

static int on_read(struct exchange *x, struct dci_sup *s, const struct dci_req *r, const uint8_t *b,
		   uint32_t len)
{
	uint32_t done;

	if (r->gen != s->gen)
		return 0; /* asked for under a description since replaced */
	int rc = dci4_parse_range(b, len, r->first, r->last, r->bufsize, take_value, s, &done);
	if (rc == -EPROTO && !s->retried) {
		/* The values do not fit the description: describe again once
		 * within this scrape before calling it a fault. */
		s->retried = true;
		bs_drop(x->em, "read_mismatch", 1);
		return start_describe(x, s);
	}
	if (rc < 0)
		return rc;
	if (r->first + done <= r->last)
		return queue_read(s, r->first + done, r->last);
	return 0;
}

static int on_reply(struct exchange *x, struct dci_sup *s, const struct dci_req *r,
		    const uint8_t *b, uint32_t len)
{
	switch (r->op) {
	case SP_INFO:
		return on_info(x, s, b, len);
	case SA_DESCRIBE:
		return on_describe(x, s, r, b, len);
	default:
		return on_read(x, s, r, b, len);
	}
}

static const char *info_reason(int rc)
{
	if (rc == -E2BIG)
		return "too_many_stats";
	if (rc == -EFBIG)
		return "too_large";
	if (rc == -EDQUOT)
		return "too_many_stats_total";
	return reason_of(rc);
}

/* Sends what is queued, watching for room when the socket is full. */
static int flush(struct exchange *x, struct dci_sup *s)
{
	int rc = dci_link_flush(&s->link);
	if (rc < 0)
		return rc;
	if ((rc == 1) != s->want_out) {
		struct epoll_event ev = {.events = EPOLLIN | (rc == 1 ? EPOLLOUT : 0),
					 .data.ptr = s};
		if (epoll_ctl(x->set->epfd, EPOLL_CTL_MOD, s->link.fd, &ev) < 0)
			return -errno;
		s->want_out = rc == 1;
	}
	return 0;
}

/* Takes every reply that has arrived; the supplier is done when nothing
 * it was asked is outstanding. */
static void service(struct exchange *x, struct dci_sup *s)
{
	struct dci_req r;
	const uint8_t *b;
	uint32_t len;
	int rc;

	for (;;) {
		rc = dci_link_recv(&s->link, &r, &b, &len);
		/* A read asked for under a description since replaced (a new
		 * reset came back first) may well be refused: the supplier may
		 * have fewer statistics now. That answer means nothing. */
		if (rc == -EREMOTEIO && r.op == SA_READ && r.gen != s->gen)
			continue;
		if (rc != 1 || (rc = on_reply(x, s, &r, b, len)) < 0)
			break;
	}
	if (rc == 0)
		rc = flush(x, s);
	if (rc < 0) {
		fail(x, s, info_reason(rc));
		return;
	}
	if (s->link.qn == 0) {
		s->state = DCI_DONE;
		s->statics_read = true;
		x->busy--;
	}
}

static int connect_sup(struct exchange *x, struct dci_sup *s)
{
	int rc = dci_link_connect(&s->link, s->path);
	if (rc < 0)
		return rc;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
	s->want_out = false;
	s->must_describe = true; /* a new connection: describe again */
	if (epoll_ctl(x->set->epfd, EPOLL_CTL_ADD, s->link.fd, &ev) < 0) {
		rc = -errno;
		dci_link_close(&s->link);
	}
	return rc;
}

static void start(struct exchange *x, struct dci_sup *s)
{
	int rc = 0;

	s->retried = false;
	if (s->link.fd < 0 && (rc = connect_sup(x, s)) < 0) {
		s->state = rc == -ECONNREFUSED || rc == -ENOENT ? DCI_GONE : DCI_FAILED;
		bs_drop(x->em, s->state == DCI_GONE ? "stale_socket" : "connect_failed", 1);
		return;
	}
	s->state = DCI_BUSY;
	x->busy++;
	/* SP_INFO and the reads go together: one round trip when nothing changed. */
	rc = queue(s, SP_INFO, 0, 0, 0);
	if (rc == 0 && s->layout && !s->must_describe)
		rc = queue_reads(s);
	if (rc == 0)
		rc = flush(x, s);
	if (rc < 0)
		fail(x, s, reason_of(rc));
}

/* Anything on an idle connection is its close (or noise): reconnect. */
static void drop_idle_events(struct exchange *x)
{
	struct epoll_event ev[EVENTS_MAX];
	int n;

	while ((n = epoll_wait(x->set->epfd, ev, EVENTS_MAX, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			struct dci_sup *s = ev[i].data.ptr;
			dci_link_close(&s->link);
			s->must_describe = true;
		}
		if (n < EVENTS_MAX)
			break;
	}
}

void dci_exchange(struct dci_set *set, const struct dci_config *cfg, struct bs_emitter *em)
{
	struct exchange x = {set, cfg, em, 0, monoclock_ns()};
	uint64_t deadline = x.now_ns + (uint64_t)(cfg->timeout_s * 1e9);
	struct epoll_event ev[EVENTS_MAX];

	drop_idle_events(&x);
	for (size_t i = 0; i < set->n; i++) {
		if (em->ops->expired(em)) { /* not asked at all: down, connection kept */
			set->sup[i]->state = DCI_IDLE;
			bs_drop(em, "timeout", 1);
			continue;
		}
		start(&x, set->sup[i]);
	}
	while (x.busy > 0 && !em->ops->expired(em)) {
		uint64_t now = monoclock_ns();
		if (now >= deadline)
			break;
		uint64_t left_ms = (deadline - now) / 1000000 + 1;
		int n = epoll_wait(set->epfd, ev, EVENTS_MAX,
				   left_ms < WAIT_SLICE_MS ? (int)left_ms : WAIT_SLICE_MS);
		for (int i = 0; i < n; i++) {
			struct dci_sup *s = ev[i].data.ptr;
			if (s->state == DCI_BUSY) {
				service(&x, s);
			} else { /* talking out of turn: hang up rather than spin */
				dci_link_close(&s->link);
				s->must_describe = true;
			}
		}
	}
	for (size_t i = 0; i < set->n; i++)
		if (set->sup[i]->state == DCI_BUSY)
			fail(&x, set->sup[i], "timeout");
}
