/* The provider library. Keys are written in the order the specification
 * asks (refs first, event-channel last), and values are written only when
 * the agent asks, so each sample it takes is self-consistent. A withdrawal
 * learns that the agent closed its port from the port's own state, which
 * a guest may ask Xen for (EVTCHNOP_status on DOMID_SELF). */
#include "pvstats.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* The current hypercall interface: without this, xen-compat.h picks the
 * oldest, whose event_channel_op is another hypercall (the _compat one). */
#define __XEN_TOOLS__ 1
#include <xencall.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>
#include <xen/event_channel.h>
#include <xen/xen.h>

#define PAGES_MAX 16
#define TOOLSTACK_DOMID 0

struct pvstats_set {
	struct pvstats *p;
	char path[512];
	uint32_t npages, port;
	uint8_t *names, *values;
	uint32_t name_refs[PAGES_MAX], value_refs[PAGES_MAX];
	pvstats_update_fn *update;
	void *ctx;
	struct pvstats_set *next;
};

struct pvstats {
	char base[256];
	struct xs_handle *xs;
	xengntshr_handle *gnt;
	xenevtchn_handle *evt;
	xencall_handle *call; /* NULL: Xen cannot be asked (no privcmd): withdrawals wait */
	struct pvstats_set *sets;
};

static int err_or(int fallback)
{
	return errno ? -errno : fallback;
}

/* libxenevtchn opens the device blocking: pvstats_dispatch's last
 * pending would wait for the next request instead of returning. */
static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

struct pvstats *pvstats_open(const char *domain_path, int *err)
{
	struct pvstats *p = calloc(1, sizeof(*p));
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(p->base, sizeof(p->base), "%s%sstats", domain_path ? domain_path : "",
		 domain_path ? "/" : "");
	errno = 0;
	if (!(p->xs = xs_open(0)) || !(p->gnt = xengntshr_open(NULL, 0)) ||
	    !(p->evt = xenevtchn_open(NULL, 0)) || set_nonblocking(xenevtchn_fd(p->evt)) < 0) {
		*err = err_or(-EIO);
		pvstats_close(p);
		return NULL;
	}
	return p;
}

void pvstats_close(struct pvstats *p)
{
	if (!p)
		return;
	while (p->sets)
		pvstats_set_withdraw(p->sets, 0);
	if (p->evt)
		xenevtchn_close(p->evt);
	if (p->call)
		xencall_close(p->call);
	if (p->gnt)
		xengntshr_close(p->gnt);
	if (p->xs)
		xs_close(p->xs);
	free(p);
}

static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 62)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			return false;
	return true;
}

/* xenstore node names allow only [A-Za-z0-9_@-] (cxenstored refuses the
 * specification's own example, "Network #0", with EINVAL). */
static bool node_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 62)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '@'))
			return false;
	return true;
}

static int write_key(struct pvstats_set *s, const char *key, const char *fmt, unsigned v)
{
	char path[600], val[16];
	snprintf(path, sizeof(path), "%s/%s", s->path, key);
	snprintf(val, sizeof(val), fmt, v);
	return xs_write(s->p->xs, XBT_NULL, path, val, (unsigned)strlen(val)) ? 0 : err_or(-EIO);
}

static int advertise(struct pvstats_set *s)
{
	char key[32];
	int rc = 0;
	for (uint32_t i = 0; i < s->npages && rc == 0; i++) {
		snprintf(key, sizeof(key), "name-type-ref%u", i);
		rc = write_key(s, key, "%u", s->name_refs[i]);
		snprintf(key, sizeof(key), "val-ref%u", i);
		if (rc == 0)
			rc = write_key(s, key, "%u", s->value_refs[i]);
	}
	/* Last: the agent may read everything above once it sees this. */
	return rc ? rc : write_key(s, "event-channel", "%u", s->port);
}

static void set_free(struct pvstats_set *s)
{
	if (s->names)
		xengntshr_unshare(s->p->gnt, s->names, s->npages);
	if (s->values)
		xengntshr_unshare(s->p->gnt, s->values, s->npages);
	if (s->port)
		xenevtchn_unbind(s->p->evt, s->port);
	free(s);
}

struct pvstats_set *pvstats_set_open(struct pvstats *p, const char *provider, const char *set,
				     const struct pvstats_stat *stats, size_t n,
				     pvstats_update_fn *update, void *ctx, int *err)
{
	struct pvstats_set *s = calloc(1, sizeof(*s));
	int rc = -EINVAL;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->p = p;
	s->update = update;
	s->ctx = ctx;
	s->npages = (uint32_t)((n + PVSTATS_PER_PAGE - 1) / PVSTATS_PER_PAGE);
	if (s->npages == 0)
		s->npages = 1;
	if (!node_ok(provider) || !node_ok(set))
		goto err_free;
	if (s->npages > PAGES_MAX) {
		rc = -E2BIG;
		goto err_free;
	}
	for (size_t i = 0; i < n; i++)
		if (stats[i].type < PVSTATS_S64 || stats[i].type > PVSTATS_ASCII ||
		    !name_ok(stats[i].name))
			goto err_free;
	snprintf(s->path, sizeof(s->path), "%s/%s/%s", p->base, provider, set);
	errno = 0;
	if (!(s->names = xengntshr_share_pages(p->gnt, TOOLSTACK_DOMID, (int)s->npages,
					       s->name_refs, 0)) ||
	    !(s->values = xengntshr_share_pages(p->gnt, TOOLSTACK_DOMID, (int)s->npages,
						s->value_refs, 0))) {
		rc = err_or(-ENOMEM);
		goto err_free;
	}
	memset(s->names, 0, (size_t)s->npages * PVSTATS_PAGE_SIZE); /* type 0 ends the list */
	memset(s->values, 0, (size_t)s->npages * PVSTATS_PAGE_SIZE);
	for (size_t i = 0; i < n; i++) {
		s->names[i * PVSTATS_TUPLE_SIZE] = stats[i].type;
		memcpy(s->names + i * PVSTATS_TUPLE_SIZE + 1, stats[i].name, strlen(stats[i].name));
	}
	int port = xenevtchn_bind_unbound_port(p->evt, TOOLSTACK_DOMID);
	if (port <= 0) {
		rc = err_or(-EIO);
		goto err_free;
	}
	s->port = (uint32_t)port;
	if ((rc = advertise(s)) < 0)
		goto err_free;
	s->next = p->sets;
	p->sets = s;
	return s;
err_free:
	set_free(s);
	*err = rc;
	return NULL;
}

/* EVTCHNOP_status of one of this domain's ports: EVTCHNSTAT_*, or -errno
 * when Xen cannot be asked. */
static int port_status(struct pvstats *p, uint32_t port)
{
	if (!p->call && !(p->call = xencall_open(NULL, XENCALL_OPENFLAG_NON_REENTRANT)))
		return errno ? -errno : -ENOSYS;
	struct evtchn_status *st = xencall_alloc_buffer(p->call, sizeof(*st));
	if (!st)
		return -ENOMEM;
	*st = (struct evtchn_status){.dom = DOMID_SELF, .port = port};
	int rc = xencall2(p->call, __HYPERVISOR_event_channel_op, EVTCHNOP_status,
			  (uint64_t)(uintptr_t)st);
	rc = rc < 0 ? -errno : (int)st->status;
	xencall_free_buffer(p->call, st);
	return rc;
}

static uint64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Until the agent has closed its end of the set's port (ours is unbound
 * again), for at most grace_ms; the whole grace period where Xen cannot
 * be asked. Returns whether the agent was seen to close it. */
static bool await_agent_close(struct pvstats *p, uint32_t port, unsigned grace_ms)
{
	uint64_t until = now_ms() + grace_ms;

	for (;;) {
		int st = port_status(p, port);
		if (st == EVTCHNSTAT_unbound || st == EVTCHNSTAT_closed)
			return true;
		uint64_t now = now_ms();
		if (now >= until)
			return false;
		/* Poll every 5 ms; sleep out the grace period when we cannot ask. */
		uint64_t ms = st < 0 ? until - now : (until - now < 5 ? until - now : 5);
		nanosleep(&(struct timespec){(time_t)(ms / 1000), (long)(ms % 1000) * 1000000},
			  NULL);
	}
}

int pvstats_set_withdraw(struct pvstats_set *s, unsigned grace_ms)
{
	struct pvstats *p = s->p;
	char path[600];

	snprintf(path, sizeof(path), "%s/event-channel", s->path);
	xs_rm(p->xs, XBT_NULL, path);
	bool closed = await_agent_close(p, s->port, grace_ms);
	xs_rm(p->xs, XBT_NULL, s->path);
	*strrchr(s->path, '/') = '\0'; /* the provider's key, if no set is left */
	unsigned n = 0;
	char **left = xs_directory(p->xs, XBT_NULL, s->path, &n);
	if (left && n == 0)
		xs_rm(p->xs, XBT_NULL, s->path);
	free(left);
	for (struct pvstats_set **sp = &p->sets; *sp; sp = &(*sp)->next)
		if (*sp == s) {
			*sp = s->next;
			break;
		}
	set_free(s);
	return closed;
}

static uint8_t *slot(struct pvstats_set *s, size_t i)
{
	return s->values + i * PVSTATS_TUPLE_SIZE;
}

void pvstats_set_u64(struct pvstats_set *s, size_t i, uint64_t v)
{
	uint8_t *p = slot(s, i);
	for (int k = 0; k < 8; k++, v >>= 8)
		p[k] = (uint8_t)v;
}

void pvstats_set_s64(struct pvstats_set *s, size_t i, int64_t v)
{
	pvstats_set_u64(s, i, (uint64_t)v);
}

void pvstats_set_double(struct pvstats_set *s, size_t i, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	pvstats_set_u64(s, i, u);
}

void pvstats_set_ascii(struct pvstats_set *s, size_t i, const char *text)
{
	uint8_t *p = slot(s, i);
	size_t k;
	for (k = 0; k < PVSTATS_NAME_FIELD && text[k]; k++)
		p[k] = text[k] >= 0x20 && text[k] < 0x7f ? (uint8_t)text[k] : '?';
	memset(p + k, 0, PVSTATS_TUPLE_SIZE - k);
}

int pvstats_fd(const struct pvstats *p)
{
	return xenevtchn_fd(p->evt);
}

int pvstats_dispatch(struct pvstats *p)
{
	int port, n = 0;
	while ((port = xenevtchn_pending(p->evt)) > 0) {
		for (struct pvstats_set *s = p->sets; s; s = s->next) {
			if (s->port != (uint32_t)port)
				continue;
			s->update(s->ctx, s);
			__atomic_thread_fence(__ATOMIC_RELEASE); /* values before the signal */
			xenevtchn_notify(p->evt, s->port);
			n++;
		}
		xenevtchn_unmask(p->evt, (uint32_t)port);
	}
	return n;
}
