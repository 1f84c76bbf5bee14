/* The DCI4 supplier library. Reads of a range are atomic by the
 * specification's three-buffer scheme: updaters add deltas to a live
 * buffer; a read swaps the live and merge buffers (the only step under the
 * lock updaters take), adds the merge buffer into the accumulated values,
 * zeroes it, and answers the whole range from the accumulated values. */
#include "dci4_supplier.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "monoclock.h"
#include "unixsock.h"
#include "worker.h"

#define CONNS_MAX 32
#define CONNS_PER_UID 4 /* one local user cannot take every slot */
#define REQUEST_MAX (DCI4_HEADER_LEN + 12)
#define SEND_TIMEOUT_MS 1000

struct conn {
	int fd; /* -1: free */
	uid_t uid;
	uint64_t last_ns; /* when it last sent a request */
	uint8_t in[REQUEST_MAX];
	size_t got;
};

struct dci4_supplier {
	struct dci4_info info;
	struct dci4_desc *desc; /* one per statistic, names copied */
	size_t n;
	size_t *offset;		     /* of each value in the SA_READ layout */
	pthread_mutex_t update_lock; /* updaters; a reader only swaps under it */
	pthread_mutex_t read_lock;   /* one reader (merge and answer) at a time */
	uint64_t *delta[2];	     /* live and merge */
	int live;
	uint64_t *accum;  /* integer statistics */
	uint8_t *current; /* the values of all others, in the SA_READ layout */
	size_t values_size;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int listen_fd, epfd;
	struct unixsock_id sockid;
	struct worker server; /* dci4_supplier_start's thread */
	struct conn conns[CONNS_MAX];
};

static bool is_integer(uint32_t type)
{
	return type >= ST_INTEGER8 && type <= ST_INTEGER64;
}

static int declare(struct dci4_supplier *s, const struct dci4_stat *stats, size_t n)
{
	s->desc = calloc(n, sizeof(*s->desc));
	s->offset = calloc(n, sizeof(*s->offset));
	if (!s->desc || !s->offset)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct dci4_stat *st = &stats[i];
		struct dci4_desc *d = &s->desc[i];
		if (st->size % 4 || st->size > DCI4_VALUE_MAX || st->type > ST_TIME ||
		    (st->type == ST_UNUSED) != (st->size == 0) ||
		    (st->type != ST_UNUSED && (!st->name || strlen(st->name) >= DCI4_STRING_MAX)))
			return -EINVAL;
		*d = (struct dci4_desc){
		    st->type, st->format, st->presentation, st->size, st->volatility, 0, 0, ""};
		if (st->name)
			memcpy(d->name, st->name, strlen(st->name) + 1);
		s->offset[i] = s->values_size;
		s->values_size += st->size;
	}
	s->n = n;
	s->accum = calloc(n, sizeof(uint64_t));
	s->delta[0] = calloc(n, sizeof(uint64_t));
	s->delta[1] = calloc(n, sizeof(uint64_t));
	s->current = calloc(1, s->values_size ? s->values_size : 1);
	return s->accum && s->delta[0] && s->delta[1] && s->current ? 0 : -ENOMEM;
}

static int listen_at(struct dci4_supplier *s, const struct dci4_supplier_conf *c)
{
	const char *dir = c->dir ? c->dir : getenv("DCI4_SUPPLIER_DIR");
	size_t nl = c->name ? strlen(c->name) : 0;

	if (!dir)
		dir = DCI4_DEFAULT_DIR;
	if (nl == 0 || nl > 64 ||
	    strspn(c->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-") != nl)
		return -EINVAL;
	if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s.sock", dir, c->name) >=
	    sizeof(s->path))
		return -ENAMETOOLONG;
	mkdir(dir, 0755);
	s->listen_fd = unixsock_listen(s->path, SOCK_STREAM, 0666, 16, &s->sockid);
	if (s->listen_fd < 0)
		return s->listen_fd;
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = CONNS_MAX};
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0)
		return -errno;
	return 0;
}

struct dci4_supplier *dci4_supplier_open(const struct dci4_supplier_conf *c,
					 const struct dci4_stat *stats, size_t n, int *err)
{
	struct dci4_supplier *s = calloc(1, sizeof(*s));
	struct timespec now;
	int rc = -EINVAL;

	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	s->listen_fd = s->epfd = -1;
	worker_init(&s->server);
	for (size_t i = 0; i < CONNS_MAX; i++)
		s->conns[i].fd = -1;
	pthread_mutex_init(&s->update_lock, NULL);
	pthread_mutex_init(&s->read_lock, NULL);
	if (n == 0 || n > DCI4_STATS_MAX || (rc = declare(s, stats, n)) < 0 ||
	    (rc = listen_at(s, c)) < 0)
		goto err_close;
	/* reset: the start time, unique per invocation as the specification asks */
	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	memcpy(s->info.reset, &ns, 8);
	s->info.i_version = 101;
	s->info.max_stat = (uint32_t)n - 1;
	s->info.type = c->type;
	s->info.s_version = c->s_version;
	snprintf(s->info.module, sizeof(s->info.module), "%s", c->module ? c->module : "");
	snprintf(s->info.title, sizeof(s->info.title), "%s", c->title ? c->title : "");
	snprintf(s->info.description, sizeof(s->info.description), "%s",
		 c->description ? c->description : "");
	return s;
err_close:
	*err = rc;
	dci4_supplier_close(s);
	return NULL;
}

void dci4_add(struct dci4_supplier *s, size_t n, const uint32_t *stats, const uint64_t *deltas)
{
	pthread_mutex_lock(&s->update_lock);
	uint64_t *live = s->delta[s->live];
	for (size_t k = 0; k < n; k++)
		if (stats[k] < s->n)
			live[stats[k]] += deltas[k];
	pthread_mutex_unlock(&s->update_lock);
}

void dci4_set(struct dci4_supplier *s, uint32_t stat, const void *value, size_t len)
{
	if (stat >= s->n)
		return;
	pthread_mutex_lock(&s->read_lock);
	if (is_integer(s->desc[stat].type)) {
		uint64_t v = 0;
		memcpy(&v, value, len < 8 ? len : 8);
		s->accum[stat] = v;
	} else {
		size_t size = s->desc[stat].size;
		uint8_t *slot = s->current + s->offset[stat];
		memset(slot, 0, size);
		memcpy(slot, value, len < size ? len : size);
	}
	pthread_mutex_unlock(&s->read_lock);
}

/* The three-buffer step; call with read_lock held. */
static void merge(struct dci4_supplier *s)
{
	pthread_mutex_lock(&s->update_lock);
	int m = s->live;
	s->live = !m;
	pthread_mutex_unlock(&s->update_lock);
	uint64_t *d = s->delta[m];
	for (size_t i = 0; i < s->n; i++) {
		s->accum[i] += d[i];
		d[i] = 0;
	}
}

static void put_value(const struct dci4_supplier *s, uint32_t i, uint8_t *out)
{
	const struct dci4_desc *d = &s->desc[i];
	static const unsigned width[] = {
	    [ST_INTEGER8] = 1, [ST_INTEGER16] = 2, [ST_INTEGER32] = 4, [ST_INTEGER64] = 8};
	if (!is_integer(d->type)) {
		memcpy(out, s->current + s->offset[i], d->size);
		return;
	}
	unsigned w = width[d->type];
	uint64_t v = s->accum[i];
	memset(out, 0, d->size);
	for (unsigned k = 0; k < w; k++)
		out[d->format & SIF_BIGENDIAN ? w - 1 - k : k] = (uint8_t)(v >> (8 * k));
}

/* Builds the reply body of SA_DESCRIBE or SA_READ into out (room for
 * 12 + bufsize); returns its length. */
static size_t answer_range(struct dci4_supplier *s, uint16_t op, uint32_t first, uint32_t last,
			   uint32_t bufsize, uint8_t *out)
{
	uint32_t processed = 0, used = 0;
	uint8_t *rec = out + 12;

	if (op == SA_READ) {
		pthread_mutex_lock(&s->read_lock);
		merge(s);
	}
	for (uint32_t i = first; i <= last; i++) {
		const struct dci4_desc *d = &s->desc[i];
		size_t len = op == SA_READ ? d->size : dci4_desc_record_len(d);
		if (used + len > bufsize)
			break; /* the partial-buffer rule: the next one does not fit */
		if (op == SA_READ)
			put_value(s, i, rec + used);
		else
			dci4_encode_desc(d, rec + used, len);
		used += (uint32_t)len;
		processed++;
	}
	if (op == SA_READ)
		pthread_mutex_unlock(&s->read_lock);
	dci4_put32(out, DCI4_OK);
	dci4_put32(out + 4, processed);
	dci4_put32(out + 8, used);
	return 12 + used;
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {fd, POLLOUT, 0};
			if (poll(&pfd, 1, SEND_TIMEOUT_MS) <= 0)
				return -ETIMEDOUT; /* a gatherer that does not read */
			continue;
		}
		if (w <= 0)
			return -EPIPE;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int reply_status(int fd, uint16_t op, uint32_t status)
{
	uint8_t b[DCI4_HEADER_LEN + 4];
	dci4_put_header(b, op | DCI4_REPLY, 4);
	dci4_put32(b + DCI4_HEADER_LEN, status);
	return send_all(fd, b, sizeof(b));
}

/* Answers one complete request in c->in. */
static int answer(struct dci4_supplier *s, struct conn *c, const struct dci4_header *h)
{
	if (h->op == SP_INFO) {
		uint8_t b[DCI4_HEADER_LEN + 44 + 3 * DCI4_STRING_MAX];
		int n =
		    dci4_encode_info(&s->info, b + DCI4_HEADER_LEN, sizeof(b) - DCI4_HEADER_LEN);
		dci4_put_header(b, SP_INFO | DCI4_REPLY, (uint32_t)n);
		return send_all(c->fd, b, DCI4_HEADER_LEN + (size_t)n);
	}
	uint32_t first = dci4_get32(c->in + 12), last = dci4_get32(c->in + 16),
		 bufsize = dci4_get32(c->in + 20);
	if (first > last || last > s->info.max_stat || bufsize > DCI4_BUFFER_MAX)
		return reply_status(c->fd, h->op, DCI4_BAD_REQUEST);
	uint8_t *b = malloc(DCI4_HEADER_LEN + 12 + bufsize);
	if (!b)
		return reply_status(c->fd, h->op, DCI4_BUSY);
	size_t n = answer_range(s, h->op, first, last, bufsize, b + DCI4_HEADER_LEN);
	dci4_put_header(b, h->op | DCI4_REPLY, (uint32_t)n);
	int rc = send_all(c->fd, b, DCI4_HEADER_LEN + n);
	free(b);
	return rc;
}

static void conn_close(struct dci4_supplier *s, struct conn *c)
{
	(void)s;
	close(c->fd); /* leaves the epoll set with it */
	c->fd = -1;
	c->got = 0;
}

/* Reads what the gatherer sent; answers each whole request. */
static void conn_read(struct dci4_supplier *s, struct conn *c)
{
	for (;;) {
		size_t want = DCI4_HEADER_LEN;
		struct dci4_header h;
		if (c->got >= DCI4_HEADER_LEN) {
			int hr = dci4_get_header(c->in, c->got, &h);
			if (hr < 0 || h.op > SP_INFO || h.length != (h.op == SP_INFO ? 0u : 12u)) {
				reply_status(c->fd, hr < 0 ? 0 : h.op, DCI4_UNSUPPORTED);
				conn_close(s, c);
				return;
			}
			want += h.length;
		}
		if (c->got == want && c->got >= DCI4_HEADER_LEN) {
			int rc = answer(s, c, &h);
			c->got = 0;
			if (rc < 0) {
				conn_close(s, c);
				return;
			}
			continue;
		}
		ssize_t r = recv(c->fd, c->in + c->got, want - c->got, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			conn_close(s, c);
			return;
		}
		c->got += (size_t)r;
		c->last_ns = monoclock_ns();
	}
}

static size_t conns_of(const struct dci4_supplier *s, uid_t uid)
{
	size_t n = 0;
	for (size_t i = 0; i < CONNS_MAX; i++)
		n += s->conns[i].fd >= 0 && s->conns[i].uid == uid;
	return n;
}

/* A free slot; when all are taken, the longest idle connection of the uid
 * holding the most makes room, so no set of users can shut a gatherer out
 * for longer than one request of its own. */
static size_t free_slot(struct dci4_supplier *s)
{
	size_t i, victim = 0, most = 0;

	for (i = 0; i < CONNS_MAX && s->conns[i].fd >= 0; i++)
		;
	if (i < CONNS_MAX)
		return i;
	for (i = 0; i < CONNS_MAX; i++) {
		size_t n = conns_of(s, s->conns[i].uid);
		if (n > most || (n == most && s->conns[i].last_ns < s->conns[victim].last_ns)) {
			most = n;
			victim = i;
		}
	}
	conn_close(s, &s->conns[victim]);
	return victim;
}

static void accept_all(struct dci4_supplier *s)
{
	int fd;
	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    conns_of(s, cred.uid) >= CONNS_PER_UID) {
			close(fd);
			continue;
		}
		size_t i = free_slot(s);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		s->conns[i] = (struct conn){.fd = fd, .uid = cred.uid, .last_ns = monoclock_ns()};
	}
}

int dci4_supplier_fd(const struct dci4_supplier *s)
{
	return s->epfd;
}

int dci4_supplier_dispatch(struct dci4_supplier *s)
{
	struct epoll_event ev[16];
	int n = epoll_wait(s->epfd, ev, 16, 0);

	for (int i = 0; i < n; i++) {
		uint32_t tag = ev[i].data.u32;
		if (tag == CONNS_MAX)
			accept_all(s);
		else if (tag < CONNS_MAX && s->conns[tag].fd >= 0)
			conn_read(s, &s->conns[tag]);
		else
			return 1; /* the stop event */
	}
	return 0;
}

static void *serve(void *arg)
{
	struct dci4_supplier *s = arg;
	struct pollfd pfd = {s->epfd, POLLIN, 0};
	while (poll(&pfd, 1, -1) >= 0)
		if (dci4_supplier_dispatch(s) == 1)
			break;
	return NULL;
}

int dci4_supplier_start(struct dci4_supplier *s)
{
	int rc = worker_open(&s->server, s->epfd, (epoll_data_t){.u32 = CONNS_MAX + 1});

	return rc < 0 ? rc : worker_start(&s->server, serve, s);
}

void dci4_supplier_close(struct dci4_supplier *s)
{
	if (!s)
		return;
	worker_stop(&s->server);
	for (size_t i = 0; i < CONNS_MAX; i++)
		if (s->conns[i].fd >= 0)
			close(s->conns[i].fd);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unixsock_unlink(s->path, &s->sockid);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	pthread_mutex_destroy(&s->update_lock);
	pthread_mutex_destroy(&s->read_lock);
	free(s->desc);
	free(s->offset);
	free(s->accum);
	free(s->delta[0]);
	free(s->delta[1]);
	free(s->current);
	free(s);
}
