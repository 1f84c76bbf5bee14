/* The deadlines libmicrohttpd lacks, and room for a new client. Each
 * connection is tracked from its start to its close, under one mutex; a
 * thread looks twice a second and shuts down (shutdown(2), not close: the
 * fd stays libmicrohttpd's) the socket of any connection past its
 * deadline, so its thread wakes from recv or send and closes it. The entry
 * leaves the list in the close notification, before libmicrohttpd closes
 * the fd, so a shutdown never hits a number reused by another connection.
 * Once more connections are open than the guard keeps, each new one
 * evicts one that has made the least progress: still without a complete
 * request head (connecting slowly, idle between requests, or in an
 * unfinished TLS handshake), from the address holding the most
 * connections, the oldest of those. Any local user can bind every
 * 127.0.0.0/8 address, so a cap per address alone lets enough addresses
 * take every slot; this way a scraper, holding one connection while an
 * attacker holds many, always gets one. */
#include "httpguard.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "hash.h"
#include "monoclock.h"
#include "selfstats.h"

/* Larger than the connections libmicrohttpd takes (HTTP_CONNECTIONS_MAX
 * and its slack, per listening address): a table of their addresses. */
#define PEERS_SLOTS 4096

enum phase { PHASE_HEAD, PHASE_WORK, PHASE_SEND };

struct tracked {
	struct tracked *prev, *next;
	struct httpguard *g;
	int fd;
	enum phase phase;
	uint64_t since_ns;
	bool cut;		/* shut down already: its thread closes it */
	unsigned char addr[16]; /* the client's, IPv4 mapped; zeros if unknown */
	unsigned peers;		/* connections from addr, at the last eviction's count */
	void *held;		/* httpguard_hold's */
	void (*release)(void *);
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
	uint64_t head_ns, send_ns;
	/* count_peers' table, under lock */
	unsigned char peer_addr[PEERS_SLOTS][16];
	unsigned peer_count[PEERS_SLOTS];
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

static void set_phase(struct tracked *t, enum phase p)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->g->lock);
	t->phase = p;
	t->since_ns = monoclock_ns();
	pthread_mutex_unlock(&t->g->lock);
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
			/* seeded: no run of addresses lands on one slot by choice */
			size_t k = hash_bytes(t->addr, 16, hash_seed()) & (PEERS_SLOTS - 1);
			while (count[k] && memcmp(addr[k], t->addr, 16) != 0)
				k = (k + 1) & (PEERS_SLOTS - 1);
			if (pass == 0) {
				memcpy(addr[k], t->addr, 16);
				count[k]++;
			} else {
				t->peers = count[k];
			}
		}
}

/* With the lock held: of the connections still waiting for a complete
 * head, other than `fresh`, one from the address holding the most
 * connections, the longest waiting of those (since_ns), is cut. */
static bool evict_least_progress(struct httpguard *g, const struct tracked *fresh)
{
	struct tracked *victim = NULL;

	count_peers(g);
	for (struct tracked *t = g->list.next; t != &g->list; t = t->next)
		if (t != fresh && t->phase == PHASE_HEAD && !t->cut &&
		    (!victim || t->peers > victim->peers ||
		     (t->peers == victim->peers && t->since_ns < victim->since_ns)))
			victim = t;
	if (!victim)
		return false; /* every other one is being served: libmicrohttpd's cap holds */
	shutdown(victim->fd, SHUT_RDWR);
	victim->cut = true;
	selfstats_http_cut(SELFSTATS_CUT_EVICTED);
	return true;
}

bool httpguard_admit(struct httpguard *g, const struct sockaddr *sa)
{
	unsigned char addr[16];
	unsigned same = 0;

	mapped(sa, addr);
	pthread_mutex_lock(&g->lock);
	for (struct tracked *t = g->list.next; t != &g->list; t = t->next)
		same += !t->cut && memcmp(t->addr, addr, 16) == 0;
	/* Every slot taken: one with least progress makes room, so a client
	 * within its address's share is never turned away. Evicted ones close
	 * at once; twice `most` bounds those still closing. */
	bool ok = same < g->per_address &&
		  (g->n < g->most || (g->n < 2 * g->most && evict_least_progress(g, NULL)));
	pthread_mutex_unlock(&g->lock);
	return ok;
}

bool httpguard_evict(struct httpguard *g)
{
	pthread_mutex_lock(&g->lock);
	bool cut = evict_least_progress(g, NULL);
	pthread_mutex_unlock(&g->lock);
	return cut;
}

void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code)
{
	struct httpguard *g = cls;
	struct tracked *t = *socket_ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!fi || !(t = calloc(1, sizeof(*t))))
			return; /* untracked: only libmicrohttpd's idle timeout applies */
		*t = (struct tracked){
		    .g = g, .fd = fi->connect_fd, .phase = PHASE_HEAD, .since_ns = monoclock_ns()};
		httpguard_client_addr(c, t->addr);
		pthread_mutex_lock(&g->lock);
		t->next = g->list.next;
		t->prev = &g->list;
		g->list.next->prev = t;
		g->list.next = t;
		if (++g->n > g->keep)
			evict_least_progress(g, t);
		pthread_mutex_unlock(&g->lock);
		*socket_ctx = t;
	} else if (t) { /* MHD_CONNECTION_NOTIFY_CLOSED */
		pthread_mutex_lock(&g->lock);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		g->n--;
		pthread_mutex_unlock(&g->lock);
		if (t->release)
			t->release(t->held);
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

void httpguard_completed(void *cls, struct MHD_Connection *c, void **req_ctx,
			 enum MHD_RequestTerminationCode code)
{
	(void)cls;
	(void)req_ctx;
	(void)code;
	set_phase(tracked_of(c), PHASE_HEAD);
}

void httpguard_working(struct MHD_Connection *c)
{
	set_phase(tracked_of(c), PHASE_WORK);
}

void httpguard_auth_waiting(struct MHD_Connection *c)
{
	set_phase(tracked_of(c), PHASE_HEAD);
}

void httpguard_sending(struct MHD_Connection *c)
{
	set_phase(tracked_of(c), PHASE_SEND);
}

static void cut_late(struct httpguard *g)
{
	uint64_t now = monoclock_ns();

	for (struct tracked *t = g->list.next; t != &g->list; t = t->next) {
		uint64_t limit = t->phase == PHASE_HEAD ? g->head_ns : g->send_ns;
		if (t->phase == PHASE_WORK || t->cut || now - t->since_ns <= limit)
			continue;
		shutdown(t->fd, SHUT_RDWR);
		selfstats_http_cut(t->phase == PHASE_HEAD ? SELFSTATS_CUT_HEAD
							  : SELFSTATS_CUT_WRITE);
		t->cut = true; /* once is enough: its thread closes it */
	}
}

static void *guard_main(void *arg)
{
	struct httpguard *g = arg;
	struct timespec until;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		cut_late(g);
		until = monoclock_timespec(monoclock_ns() + 500000000u);
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int httpguard_start(struct httpguard **out, const struct httpguard_limits *lim, double head_s,
		    double send_s)
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
	g->head_ns = (uint64_t)(head_s * 1e9);
	g->send_ns = (uint64_t)(send_s * 1e9);
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
	free(g);
}
