/* The bcrypt pool. Requests wait in one queue; a worker takes those of
 * clients that passed a verification before first, and of the others the
 * oldest of those whose address holds the fewest places (waiting or
 * running).
 * A user name at an address holds at most AUTHPOOL_SHARE places in the
 * queue and the workers together; when the queue is full, a newcomer whose address
 * holds fewer than the address holding the most takes the place of that
 * address's newest (refused), so that many addresses together cannot keep
 * one more out. A waiter looks at its socket every 100 ms: a connection
 * the guard shut down (or one that failed) leaves the queue, and one whose
 * bcrypt already runs is left to the worker, which frees it. */
#include "authpool.h"

#include <crypt.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "monoclock.h"

#define POLL_NS 100000000ull

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_DROPPED };

struct job {
	struct job *next; /* in the queue */
	unsigned char addr[16];
	enum job_state state;
	bool match, abandoned;
	bool known; /* its client passed a verification before */
	char user[64];
	char hash[64];
	char *password; /* owned, zeroed when freed */
};

struct authpool {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	pthread_t thread[AUTHPOOL_WORKERS];
	size_t nthreads;
	bool stopping;
	struct job *head, **tail;
	size_t nqueued;
	struct job *running[AUTHPOOL_WORKERS];
	uint32_t warned_costs; /* bit c: a slow verification at cost c logged */
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	if (j->password) {
		explicit_bzero(j->password, strlen(j->password));
		free(j->password);
	}
	free(j);
}

bool authpool_bcrypt_matches(const char *hash, const char *password)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd)); /* 32 KiB: not on the stack */
	size_t n = strlen(hash);
	unsigned char diff = 0;

	if (!cd)
		return false;
	const char *out = crypt_rn(password, hash, cd, (int)sizeof(*cd));
	bool ok = out && strlen(out) == n;
	for (size_t i = 0; ok && i < n; i++) /* the same time whatever differs */
		diff |= (unsigned char)(out[i] ^ hash[i]);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok && diff == 0;
}

static size_t held_by(const struct authpool *p, const unsigned char addr[16])
{
	size_t n = 0;

	for (const struct job *j = p->head; j; j = j->next)
		n += memcmp(j->addr, addr, 16) == 0;
	for (size_t w = 0; w < AUTHPOOL_WORKERS; w++)
		n += p->running[w] && memcmp(p->running[w]->addr, addr, 16) == 0;
	return n;
}

static bool same_user(const struct job *j, const unsigned char addr[16], const char *user)
{
	return j && memcmp(j->addr, addr, 16) == 0 && strncmp(j->user, user, sizeof(j->user)) == 0;
}

/* The places (waiting or running) of one user at one address: its share.
 * A user's checks do not wait on those of other names guessed from its
 * address (every unknown name is checked as the same decoy user). */
static size_t held_by_user(const struct authpool *p, const unsigned char addr[16], const char *user)
{
	size_t n = 0;

	for (const struct job *j = p->head; j; j = j->next)
		n += same_user(j, addr, user);
	for (size_t w = 0; w < AUTHPOOL_WORKERS; w++)
		n += same_user(p->running[w], addr, user);
	return n;
}

static void unlink_job(struct authpool *p, struct job *j)
{
	struct job **at = &p->head;

	while (*at && *at != j)
		at = &(*at)->next;
	if (!*at)
		return;
	*at = j->next;
	if (p->tail == &j->next)
		p->tail = at;
	j->next = NULL;
	p->nqueued--;
}

/* With the lock held: the next job for a worker, out of the queue: of
 * the known clients' jobs if any, else of all, the oldest of those whose
 * address holds the fewest places. A newcomer (one place) goes before the
 * addresses that keep two. */
static struct job *pick(struct authpool *p)
{
	struct job *best = NULL;
	size_t best_n = 0;

	for (struct job *j = p->head; j; j = j->next) {
		size_t n = held_by(p, j->addr);
		if (!best || (j->known && !best->known) ||
		    (j->known == best->known && n < best_n)) {
			best = j;
			best_n = n;
		}
	}
	if (best)
		unlink_job(p, best);
	return best;
}

static void warn_slow(struct authpool *p, const struct job *j, uint64_t ns)
{
	int cost = (j->hash[4] - '0') * 10 + (j->hash[5] - '0');
	char secs[32], c[8];

	if (ns < AUTHPOOL_SLOW_NS || cost < 0 || cost > 31)
		return;
	pthread_mutex_lock(&p->lock);
	bool first = !(p->warned_costs & (1u << cost));
	p->warned_costs |= 1u << cost;
	pthread_mutex_unlock(&p->lock);
	if (!first)
		return;
	snprintf(secs, sizeof(secs), "%.3f", (double)ns / 1e9);
	snprintf(c, sizeof(c), "%d", cost);
	log_warn("a bcrypt verification took this long: each request of a user of this cost "
		 "that is not cached yet costs as much; a cost of 10 to 12 is enough",
		 "user", j->user, "cost", c, "seconds", secs);
}

static void *worker_main(void *arg)
{
	struct authpool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping) {
		size_t w = 0;
		while (w < AUTHPOOL_WORKERS && p->running[w])
			w++;
		struct job *j = w < AUTHPOOL_WORKERS ? pick(p) : NULL;
		if (!j) {
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		j->state = JOB_RUNNING;
		p->running[w] = j;
		pthread_mutex_unlock(&p->lock);
		uint64_t t0 = monoclock_ns();
		bool match = authpool_bcrypt_matches(j->hash, j->password);
		warn_slow(p, j, monoclock_ns() - t0);
		pthread_mutex_lock(&p->lock);
		p->running[w] = NULL;
		j->match = match;
		j->state = JOB_DONE;
		if (j->abandoned)
			job_free(j);
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct authpool *authpool_new(void)
{
	struct authpool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->work, &ca);
	pthread_cond_init(&p->done, &ca);
	pthread_condattr_destroy(&ca);
	p->tail = &p->head;
	return p;
}

/* With the lock held. */
static int start_locked(struct authpool *p)
{
	while (p->nthreads < AUTHPOOL_WORKERS) {
		if (pthread_create(&p->thread[p->nthreads], NULL, worker_main, p) != 0)
			return p->nthreads ? 0 : -EAGAIN;
		p->nthreads++;
	}
	return 0;
}

int authpool_start(struct authpool *p)
{
	pthread_mutex_lock(&p->lock);
	int rc = start_locked(p);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void authpool_free(struct authpool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->nthreads; i++)
		pthread_join(p->thread[i], NULL);
	while (p->head) {
		struct job *j = p->head;
		p->head = j->next;
		job_free(j);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* With the lock held and the queue full: makes room for a client holding
 * `mine` places by refusing the newest job of the address holding the
 * most, if that is more than mine + 1; for a known client, the newest job
 * of a client not known, if there is one. */
static bool make_room(struct authpool *p, size_t mine, bool known)
{
	struct job *victim = NULL;
	size_t most = 0;

	for (struct job *j = p->head; j; j = j->next) {
		size_t n = held_by(p, j->addr);
		if (j->known)
			continue;
		if (known || n >= most) { /* the later of equals: the newest */
			most = n;
			victim = j;
		}
	}
	if (!victim || (!known && most <= mine + 1))
		return false;
	unlink_job(p, victim);
	victim->state = JOB_DROPPED;
	pthread_cond_broadcast(&p->done);
	return true;
}

static bool connection_cut(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = 0};

	return fd >= 0 && poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static struct job *job_new(const unsigned char addr[16], const char *user, const char *hash,
			   const char *password)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j || strlen(hash) >= sizeof(j->hash) || !(j->password = strdup(password))) {
		job_free(j);
		return NULL;
	}
	memcpy(j->addr, addr, 16);
	snprintf(j->user, sizeof(j->user), "%s", user);
	memcpy(j->hash, hash, strlen(hash) + 1);
	return j;
}

/* With the lock held: waits for j's verdict, or gives it up. */
static enum authpool_result wait_job(struct authpool *p, struct job *j, int fd)
{
	uint64_t give_up = monoclock_ns() + (uint64_t)(AUTHPOOL_WAIT_S * 1e9);

	while (j->state == JOB_QUEUED || j->state == JOB_RUNNING) {
		struct timespec until = monoclock_timespec(monoclock_ns() + POLL_NS);
		pthread_cond_timedwait(&p->done, &p->lock, &until);
		/* A bcrypt under way is waited for (a slow cost's first check
		 * must be able to finish and be cached) unless the connection
		 * is cut; a place in the queue is given up after the bound. */
		if ((j->state != JOB_QUEUED && j->state != JOB_RUNNING) ||
		    (!connection_cut(fd) && (j->state == JOB_RUNNING || monoclock_ns() < give_up)))
			continue;
		if (j->state == JOB_RUNNING) {
			j->abandoned = true; /* the worker frees it */
			return AUTHPOOL_GONE;
		}
		unlink_job(p, j);
		job_free(j);
		return connection_cut(fd) ? AUTHPOOL_GONE : AUTHPOOL_LATE;
	}
	enum authpool_result r = j->state == JOB_DROPPED ? AUTHPOOL_BUSY
				 : j->match		 ? AUTHPOOL_MATCH
							 : AUTHPOOL_MISMATCH;
	job_free(j);
	return r;
}

enum authpool_result authpool_verify(struct authpool *p, const unsigned char addr[16], int fd,
				     bool known, const char *user, const char *hash,
				     const char *password)
{
	struct job *j = job_new(addr, user, hash, password);
	enum authpool_result r = AUTHPOOL_BUSY;

	if (!j)
		return AUTHPOOL_BUSY;
	j->known = known;
	pthread_mutex_lock(&p->lock);
	size_t mine = held_by(p, addr);
	if (start_locked(p) < 0 || p->stopping ||
	    held_by_user(p, addr, j->user) >= AUTHPOOL_SHARE ||
	    (p->nqueued >= AUTHPOOL_QUEUE && !make_room(p, mine, known))) {
		pthread_mutex_unlock(&p->lock);
		job_free(j);
		return AUTHPOOL_BUSY;
	}
	*p->tail = j;
	p->tail = &j->next;
	p->nqueued++;
	pthread_cond_signal(&p->work);
	r = wait_job(p, j, fd);
	pthread_mutex_unlock(&p->lock);
	return r;
}
