/* The deadlines libmicrohttpd lacks, and room for a new client. Each
 * connection is tracked from its start to its close, under one mutex; a
 * thread looks twice a second and shuts down (shutdown(2), not close: the
 * fd stays libmicrohttpd's) the socket of any connection past its
 * deadline, so its thread wakes from recv or send and closes it. The entry
 * leaves the list in the close notification, before libmicrohttpd closes
 * the fd, so a shutdown never hits a number reused by another connection.
 * Once more connections are open than the guard keeps, each new one
 * evicts the one that has made the least progress: the oldest still
 * without a complete request head (connecting slowly, idle between
 * requests, or in an unfinished TLS handshake). Any local user can bind
 * every 127.0.0.0/8 address, so a cap per address alone lets enough
 * addresses take every slot; this way a scraper always gets one. */
#include "httpguard.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "monoclock.h"
#include "selfstats.h"

enum phase { PHASE_HEAD, PHASE_WORK, PHASE_SEND };

struct tracked {
	struct tracked *prev, *next;
	struct httpguard *g;
	int fd;
	enum phase phase;
	uint64_t since_ns;
	bool cut;   /* shut down already: its thread closes it */
	void *held; /* httpguard_hold's */
	void (*release)(void *);
};

struct httpguard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
	pthread_t thread;
	struct tracked list; /* sentinel, newest first */
	size_t n, keep;	     /* tracked; more than keep: evict */
	uint64_t head_ns, send_ns;
};

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

/* With the lock held: the oldest connection still waiting for a complete
 * head (since_ns is when it began to wait), other than `fresh`, is cut. */
static void evict_least_progress(struct httpguard *g, const struct tracked *fresh)
{
	struct tracked *victim = NULL;

	for (struct tracked *t = g->list.next; t != &g->list; t = t->next)
		if (t != fresh && t->phase == PHASE_HEAD && !t->cut &&
		    (!victim || t->since_ns < victim->since_ns))
			victim = t;
	if (!victim)
		return; /* every other one is being served: libmicrohttpd's cap holds */
	shutdown(victim->fd, SHUT_RDWR);
	victim->cut = true;
	selfstats_http_cut(SELFSTATS_CUT_EVICTED);
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

int httpguard_start(struct httpguard **out, size_t keep, double head_s, double send_s)
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
	g->keep = keep;
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
