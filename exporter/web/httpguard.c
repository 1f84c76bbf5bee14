/* The guard of HTTP connections: each is tracked from its start to its
 * close, under one mutex, with its phase (httpguard.h) and its progress as
 * its socket shows it (TCP_INFO: bytes received and acknowledged;
 * SIOCOUTQ: bytes not yet acknowledged). A thread looks four times a
 * second and shuts down (shutdown(2), not close: the fd stays
 * libmicrohttpd's) the socket of any connection past its phase's bound
 * (httpguard_rule.c), so its thread wakes from recv or send and closes it.
 * The entry leaves the list in the close notification, before
 * libmicrohttpd closes the fd, so a shutdown never hits a number reused by
 * another connection. Once more connections are open than the guard
 * keeps, each new one evicts the one that made the least progress for its
 * age, whatever its phase, from the address holding the most. Any local
 * user can bind every 127.0.0.0/8 address (and an IPv6 /64 gives anyone
 * as many), so a cap per address alone lets enough addresses take every
 * slot; this way a scraper always gets one. */
#include "httpguard.h"

#include <errno.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "hash.h"
#include "monoclock.h"
#include "selfstats.h"

/* Larger than the connections libmicrohttpd takes (HTTP_CONNECTIONS_MAX
 * and its slack, per listening address): a table of their addresses. */
#define PEERS_SLOTS 4096
#define TICK_NS 250000000u

struct tracked {
	struct tracked *prev, *next;
	struct httpguard *g;
	int fd;
	struct httpguard_conn c;
	unsigned char addr[16]; /* the client's, IPv4 mapped; zeros if unknown */
	void *held;		/* httpguard_hold's */
	void (*release)(void *);
	void *request; /* httpguard_request_ctx's */
	void (*request_release)(void *);
};

struct httpguard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	pthread_t thread;
	struct tracked list;  /* sentinel, newest first */
	size_t n, keep;	      /* tracked; more than keep: evict */
	size_t most;	      /* tracked at most: past it, no more are admitted */
	unsigned per_address; /* connections of one address at most */
	struct httpguard_rules rules;
	/* under lock: count_peers' table, and the list as an array for pick */
	unsigned char peer_addr[PEERS_SLOTS][16];
	unsigned peer_count[PEERS_SLOTS];
	struct httpguard_conn **view;
	struct tracked **view_of;
	size_t view_cap;
};

/* An address as 16 bytes, IPv4 mapped. */
static void mapped(const struct sockaddr *sa, unsigned char out[16])
{
	memset(out, 0, 16);
	if (sa->sa_family == AF_INET) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

bool httpguard_client_addr(struct MHD_Connection *c, unsigned char out[16])
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (!sa) {
		memset(out, 0, 16);
		return false;
	}
	mapped(sa, out);
	return sa->sa_family == AF_INET || sa->sa_family == AF_INET6;
}

static struct tracked *tracked_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* With the lock held: what the socket shows now. */
static void look(struct tracked *t, uint64_t now)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int unsent = 0;

	memset(&ti, 0, sizeof(ti));
	t->c.blind = getsockopt(t->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
		     len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(uint64_t);
	if (ioctl(t->fd, SIOCOUTQ, &unsent) != 0 || unsent < 0)
		unsent = 0;
	httpguard_observe(&t->c, ti.tcpi_bytes_received, ti.tcpi_bytes_acked, (uint64_t)unsent,
			  now);
}

/* Sets each connection's `peers`: how many come from its address, counted
 * in an open-addressing table of the addresses themselves (no hash an
 * attacker could make collide with a scraper's address). */
static void count_peers(struct httpguard *g)
{
	unsigned char(*addr)[16] = g->peer_addr;
	unsigned *count = g->peer_count;

	memset(g->peer_count, 0, sizeof(g->peer_count));
	for (int pass = 0; pass < 2; pass++)
		for (struct tracked *t = g->list.next; t != &g->list; t = t->next) {
			/* a per-process key: no run of addresses lands on one slot by choice */
			size_t k = hash_bytes(t->addr, 16, hash_seed()) & (PEERS_SLOTS - 1);
			while (count[k] && memcmp(addr[k], t->addr, 16) != 0)
				k = (k + 1) & (PEERS_SLOTS - 1);
			if (pass == 0) {
				memcpy(addr[k], t->addr, 16);
				count[k]++;
			} else {
				t->c.peers = count[k];
			}
		}
}

static void cut(struct tracked *t, enum selfstats_cut why)
{
	shutdown(t->fd, SHUT_RDWR);
	t->c.cut = true; /* once is enough: its thread closes it */
	selfstats_http_cut(why);
}

/* With the lock held: room in the view for every tracked connection. */
static bool grow_view(struct httpguard *g)
{
	if (g->view_cap >= g->n)
		return true;
	size_t cap = g->n * 2;
	void *v = realloc(g->view, cap * sizeof(*g->view));
	if (v)
		g->view = v;
	void *o = realloc(g->view_of, cap * sizeof(*g->view_of));
	if (o)
		g->view_of = o;
	if (!v || !o)
		return false;
	g->view_cap = cap;
	return true;
}

/* With the lock held: the connection that made the least progress for
 * its age (httpguard_pick), other than `fresh`, is cut. */
static bool evict_least_progress(struct httpguard *g, struct tracked *fresh)
{
	size_t n = 0;

	if (!grow_view(g))
		return false;
	count_peers(g);
	for (struct tracked *t = g->list.next; t != &g->list && n < g->view_cap; t = t->next) {
		t->c.pinned = t == fresh;
		g->view_of[n] = t;
		g->view[n++] = &t->c;
	}
	long i = httpguard_pick(g->view, n, &g->rules, monoclock_ns());
	if (i < 0)
		return false;
	cut(g->view_of[i], SELFSTATS_CUT_EVICTED);
	return true;
}

/* With the lock held: a connection of the address addr, which holds its
 * share, makes room for a newcomer from it (httpguard_pick_own): a same-host
 * scraper shares 127.0.0.1 with every local user, so the cap alone would
 * let any of them take its place with idle connections. */
static bool evict_own(struct httpguard *g, const unsigned char addr[16])
{
	size_t n = 0;

	if (!grow_view(g))
		return false;
	for (struct tracked *t = g->list.next; t != &g->list && n < g->view_cap; t = t->next) {
		if (memcmp(t->addr, addr, 16) != 0)
			continue;
		t->c.pinned = false;
		g->view_of[n] = t;
		g->view[n++] = &t->c;
	}
	long i = httpguard_pick_own(g->view, n, &g->rules, monoclock_ns());
	if (i < 0)
		return false;
	cut(g->view_of[i], SELFSTATS_CUT_EVICTED);
	return true;
}

/* With the lock held: connections not cut (cut ones close in a moment). */
static size_t live(const struct httpguard *g)
{
	size_t n = 0;

	for (const struct tracked *t = g->list.next; t != &g->list; t = t->next)
		n += !t->c.cut;
	return n;
}

enum httpguard_admission httpguard_admit(struct httpguard *g, const struct sockaddr *sa)
{
	unsigned char addr[16];
	unsigned same = 0;
	enum httpguard_admission a = HTTPGUARD_ADMITTED;

	mapped(sa, addr);
	pthread_mutex_lock(&g->lock);
	for (struct tracked *t = g->list.next; t != &g->list; t = t->next)
		same += !t->c.cut && memcmp(t->addr, addr, 16) == 0;
	/* Every slot taken: one with least progress makes room, so a client
	 * within its address's share is never turned away. Evicted ones close
	 * at once; twice `most` bounds those still closing. At its address's
	 * share, one of that address's own makes room, if one may. */
	if (same >= g->per_address && (g->n >= 2 * g->most || !evict_own(g, addr)))
		a = HTTPGUARD_ADDRESS_FULL;
	else if (live(g) >= g->most && (g->n >= 2 * g->most || !evict_least_progress(g, NULL)))
		a = HTTPGUARD_NO_SLOT;
	pthread_mutex_unlock(&g->lock);
	return a;
}

bool httpguard_evict(struct httpguard *g)
{
	pthread_mutex_lock(&g->lock);
	bool done = evict_least_progress(g, NULL);
	pthread_mutex_unlock(&g->lock);
	return done;
}

static void track(struct httpguard *g, struct MHD_Connection *c, void **socket_ctx)
{
	const union MHD_ConnectionInfo *fi =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct tracked *t;
	uint64_t now = monoclock_ns();

	if (!fi || !(t = calloc(1, sizeof(*t))))
		return; /* untracked: only libmicrohttpd's idle timeout applies */
	t->g = g;
	t->fd = fi->connect_fd;
	t->c.phase = HTTPGUARD_HEAD;
	t->c.born_ns = t->c.phase_ns = now;
	httpguard_client_addr(c, t->addr);
	pthread_mutex_lock(&g->lock);
	t->next = g->list.next;
	t->prev = &g->list;
	g->list.next->prev = t;
	g->list.next = t;
	if (++g->n > g->keep && live(g) > g->keep) /* one eviction for one newcomer */
		evict_least_progress(g, t);
	pthread_mutex_unlock(&g->lock);
	*socket_ctx = t;
}

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code)
{
	struct httpguard *g = cls;
	struct tracked *t = *socket_ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		track(g, c, socket_ctx);
	} else if (t) { /* MHD_CONNECTION_NOTIFY_CLOSED */
		pthread_mutex_lock(&g->lock);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		g->n--;
		pthread_mutex_unlock(&g->lock);
		if (t->release)
			t->release(t->held);
		if (t->request_release)
			t->request_release(t->request);
		free(t);
		*socket_ctx = NULL;
	}
}

int httpguard_hold(struct MHD_Connection *c, void *obj, void (*release)(void *))
{
	struct tracked *t = tracked_of(c);
	if (!t || t->release)
		return -1;
	t->held = obj;
	t->release = release;
	return 0;
}

void httpguard_request_ctx(struct MHD_Connection *c, void *rq, void (*release)(void *))
{
	struct tracked *t = tracked_of(c);

	if (t) {
		t->request = rq;
		t->request_release = rq ? release : NULL;
	}
}

void httpguard_completed(void *cls, struct MHD_Connection *c, void **req_ctx,
			 enum MHD_RequestTerminationCode code)
{
	(void)cls;
	(void)req_ctx;
	(void)code;
	httpguard_phase(c, HTTPGUARD_IDLE);
}

bool httpguard_request(struct MHD_Connection *c)
{
	struct tracked *t = tracked_of(c);
	bool ok;

	if (!t)
		return true;
	pthread_mutex_lock(&t->g->lock);
	look(t, monoclock_ns());
	if (!t->c.unsent) /* the client read every response before asking again */
		t->c.send_ns = t->c.queued = 0;
	else
		t->c.queued++;
	ok = t->c.queued <= t->g->rules.pipeline_max;
	pthread_mutex_unlock(&t->g->lock);
	return ok;
}

void httpguard_phase(struct MHD_Connection *c, enum httpguard_phase p)
{
	struct tracked *t = tracked_of(c);
	uint64_t now = monoclock_ns();

	if (!t)
		return;
	pthread_mutex_lock(&t->g->lock);
	if (p == HTTPGUARD_SEND || p == HTTPGUARD_IDLE)
		look(t, now);
	if (p == HTTPGUARD_SEND && !t->c.send_ns) { /* the first response of a run */
		t->c.send_ns = now;
		t->c.out_at_send = t->c.bytes_out;
	}
	t->c.phase = p;
	t->c.phase_ns = now;
	t->c.in_at_phase = t->c.bytes_in;
	pthread_mutex_unlock(&t->g->lock);
}

bool httpguard_is_cut(struct MHD_Connection *c)
{
	struct tracked *t = tracked_of(c);
	bool is;

	if (!t)
		return false;
	pthread_mutex_lock(&t->g->lock);
	is = t->c.cut;
	pthread_mutex_unlock(&t->g->lock);
	return is;
}

static const enum selfstats_cut cut_reason[] = {
    [HTTPGUARD_CUT_HEAD] = SELFSTATS_CUT_HEAD,	      [HTTPGUARD_CUT_WRITE] = SELFSTATS_CUT_WRITE,
    [HTTPGUARD_CUT_SLOW] = SELFSTATS_CUT_SLOW_READER, [HTTPGUARD_CUT_IDLE] = SELFSTATS_CUT_IDLE,
    [HTTPGUARD_CUT_LIFE] = SELFSTATS_CUT_LIFETIME,
};

static void cut_late(struct httpguard *g)
{
	uint64_t now = monoclock_ns();

	for (struct tracked *t = g->list.next; t != &g->list; t = t->next) {
		if (t->c.cut)
			continue;
		look(t, now);
		enum httpguard_verdict v = httpguard_judge(&t->c, &g->rules, now);
		if (v != HTTPGUARD_KEEP)
			cut(t, cut_reason[v]);
	}
}

static void *guard_main(void *arg)
{
	struct httpguard *g = arg;
	struct timespec until;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		cut_late(g);
		until = monoclock_timespec(monoclock_ns() + TICK_NS);
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int httpguard_start(struct httpguard **out, const struct httpguard_limits *lim,
		    const struct httpguard_rules *rules)
{
	struct httpguard *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;

	if (!g)
		return -ENOMEM;
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	g->list.next = g->list.prev = &g->list;
	g->keep = lim->keep;
	g->most = lim->most;
	g->per_address = lim->per_address;
	g->rules = *rules;
	if (pthread_create(&g->thread, NULL, guard_main, g) != 0) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return -EAGAIN;
	}
	*out = g;
	return 0;
}

/* After every daemon using it stopped (their connections are all closed). */
void httpguard_stop(struct httpguard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->thread, NULL);
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g->view);
	free(g->view_of);
	free(g);
}
