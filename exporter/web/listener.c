/* Connections accepted on a thread of their own and handed to
 * libmicrohttpd. When the process runs out of fds, libmicrohttpd's own
 * accept spins on EMFILE (a core at 100 %) and every client waits in the
 * backlog until an fd frees, which a collector may never give back. Here
 * a few fds are held in reserve: on EMFILE they are given up, the client
 * is accepted and served, and the reserve is taken again once fds free
 * up. With the reserve spent, the connection that made least progress
 * for its age, whatever its phase (httpguard.c), is evicted for its fd. With neither,
 * the listener backs off for 100 ms, counts it
 * (http_refused_total{reason="no_free_fd"}) and says so in the log, whose
 * limit on repeated lines keeps that to a few a second. */
#include "listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpguard.h"
#include "log.h"
#include "selfstats.h"

#define BACKOFF_MS 100
#define EVICTED_WAIT_MS 5

struct listener {
	int fd[LISTENER_SOCKETS_MAX];
	struct MHD_Daemon *daemon[LISTENER_SOCKETS_MAX];
	size_t n;
	int reserve[LISTENER_RESERVE];
	size_t nreserve;
	int stopfd;
	pthread_t thread;
	struct httpguard *guard;
};

static void reserve_take(struct listener *l)
{
	while (l->nreserve < LISTENER_RESERVE) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		l->reserve[l->nreserve++] = fd;
	}
}

static bool reserve_give_up(struct listener *l)
{
	bool had = l->nreserve > 0;

	while (l->nreserve)
		close(l->reserve[--l->nreserve]);
	return had;
}

/* Accepts what waits on listening socket i. False: out of fds, wait a
 * little (an evicted connection's thread closes its fd in a moment) or
 * back off. */
static bool accept_all(struct listener *l, size_t i, int *wait_ms)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int c = accept4(l->fd[i], (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
		if (c < 0 && (errno == EMFILE || errno == ENFILE) && reserve_give_up(l))
			c = accept4(l->fd[i], (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
		enum httpguard_admission a =
		    c >= 0 ? httpguard_admit(l->guard, (struct sockaddr *)&ss) : HTTPGUARD_ADMITTED;
		if (a != HTTPGUARD_ADMITTED) {
			close(c); /* counted as what happened to this client */
			selfstats_http_refused(a == HTTPGUARD_ADDRESS_FULL
						   ? SELFSTATS_REFUSED_ADDRESS_LIMIT
						   : SELFSTATS_REFUSED_NO_SLOT);
			continue;
		}
		if (c >= 0) {
			/* libmicrohttpd closes it, also when it cannot take it */
			MHD_add_connection(l->daemon[i], c, (struct sockaddr *)&ss, len);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return true;
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if ((errno == EMFILE || errno == ENFILE) && httpguard_evict(l->guard)) {
			*wait_ms = EVICTED_WAIT_MS;
			return false;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			*wait_ms = BACKOFF_MS;
			selfstats_http_refused(SELFSTATS_REFUSED_NO_FDS);
			log_warn("cannot accept a connection: no fd free, retrying in 100 ms",
				 "err", strerror(errno));
			return false;
		}
		log_error("cannot accept a connection", "err", strerror(errno));
		*wait_ms = BACKOFF_MS;
		return false;
	}
}

static void *listener_main(void *arg)
{
	struct listener *l = arg;
	struct pollfd p[LISTENER_SOCKETS_MAX + 1];

	for (;;) {
		int wait_ms = 0;
		reserve_take(l);
		for (size_t i = 0; i < l->n; i++)
			p[i] = (struct pollfd){.fd = l->fd[i], .events = POLLIN};
		p[l->n] = (struct pollfd){.fd = l->stopfd, .events = POLLIN};
		if (poll(p, l->n + 1, -1) < 0)
			wait_ms = errno == EINTR ? 0 : BACKOFF_MS;
		else if (p[l->n].revents)
			return NULL;
		for (size_t i = 0; i < l->n && !wait_ms; i++)
			if (p[i].revents)
				accept_all(l, i, &wait_ms);
		if (wait_ms) /* no fd for a client: give the others time to close some */
			poll(&p[l->n], 1, wait_ms);
	}
}

int listener_start(struct listener **out, const int *fds, struct MHD_Daemon *const *daemon,
		   size_t n, struct httpguard *guard)
{
	struct listener *l = calloc(1, sizeof(*l));

	if (!l || n > LISTENER_SOCKETS_MAX || (l->stopfd = eventfd(0, EFD_CLOEXEC)) < 0) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		free(l);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		l->fd[i] = fds[i];
		l->daemon[i] = daemon[i];
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
	}
	l->n = n;
	l->guard = guard;
	reserve_take(l);
	if (pthread_create(&l->thread, NULL, listener_main, l) != 0) {
		l->thread = 0;
		listener_stop(l);
		return -EAGAIN;
	}
	*out = l;
	return 0;
}

void listener_stop(struct listener *l)
{
	uint64_t one = 1;

	if (!l)
		return;
	if (l->thread) {
		ssize_t w = write(l->stopfd, &one, sizeof(one));
		(void)w;
		pthread_join(l->thread, NULL);
	}
	for (size_t i = 0; i < l->n; i++)
		close(l->fd[i]);
	reserve_give_up(l);
	close(l->stopfd);
	free(l);
}

/* ---- listen addresses: parsed, resolved and bound at start ---- */

int listener_parse_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s;
	size_t hl;

	if (!colon || !colon[1] || strlen(colon + 1) >= portlen)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl && s[0] == '[') {
		if (s[hl - 1] != ']')
			return -EINVAL;
		h = s + 1;
		hl -= 2;
	} else if (memchr(s, ':', hl)) {
		return -EINVAL; /* a bare IPv6 address needs brackets */
	}
	if (hl >= hostlen)
		return -EINVAL;
	const char *p = colon + 1;
	char *end;
	long n = strtol(p, &end, 10);
	if (*end || p[0] < '0' || p[0] > '9' || n < 1 || n > 65535)
		return -ERANGE;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, p, strlen(p) + 1); /* fits: checked above */
	return 0;
}

const char *listener_address_error(int rc)
{
	return rc == -ERANGE ? "the port must be a number from 1 to 65535"
			     : "want host:port, [v6]:port or :port";
}

int listener_resolve(const char *addr, struct addrinfo **out, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	int rc;

	*out = NULL;
	if ((rc = listener_parse_address(addr, host, sizeof(host), port, sizeof(port))) < 0) {
		snprintf(err, errlen, "bad listen address '%s': %s", addr,
			 listener_address_error(rc));
		return -EINVAL;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, out);
	if (rc != 0 && !host[0]) {
		hints.ai_family = AF_INET; /* a host without IPv6 */
		rc = getaddrinfo(NULL, port, &hints, out);
	}
	if (rc != 0) {
		*out = NULL;
		snprintf(err, errlen, "listen address '%s': %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

/* Binds one listen address; ":port" means every address, IPv6 and IPv4. */
int listener_bind(const char *addr, int *family, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo *ai = NULL;
	int fd = -1, one = 1, zero = 0, rc;

	if ((rc = listener_resolve(addr, &ai, err, errlen)) < 0)
		return rc;
	listener_parse_address(addr, host, sizeof(host), port, sizeof(port)); /* it passed above */
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		goto err_close;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6 && !host[0])
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0)
		goto err_close;
	*family = ai->ai_family;
	freeaddrinfo(ai);
	return fd;
err_close:
	snprintf(err, errlen, "cannot listen on '%s': %s", addr, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return -errno;
}

/* "127.0.0.1:9100" or "[::]:9100", for logs. */
void listener_describe(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(out, len, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}
