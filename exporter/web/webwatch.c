/* The watchdog of the HTTP servers. Every WEBWATCH_PERIOD_S it gives each
 * libmicrohttpd daemon one end of a socketpair with MHD_add_connection,
 * shuts its own end for writing, and waits for the daemon to close the
 * other: that takes the daemon's listen thread (which takes queued
 * connections and joins finished ones) and a connection thread of its
 * own, so it proves both still run. No request is sent, so no response
 * is counted; TLS or not, the connection ends at the end of file.
 * libmicrohttpd 0.9.75 has left its listen thread waiting for ever on a
 * lock it held itself (a connection limit reached: http.c sets none
 * now); if that or a like fault ever comes back, nothing would answer
 * again and no clean stop is possible, since stopping joins the stuck
 * threads. So after WEBWATCH_MISSES probes in a row without an answer
 * the watchdog logs an error and exits with status 1, and systemd's
 * Restart=on-failure starts the exporter again. */
#include "webwatch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "monoclock.h"

struct webwatch {
	struct MHD_Daemon *const *daemon;
	size_t n;
	unsigned misses[WEBWATCH_N_MAX];
	int stopfd;
	pthread_t thread;
};

/* Waits until fd is readable or the stop fd is, for ms at most: 1 fd,
 * 0 neither, -ECANCELED a stop. */
static int wait_readable(int fd, int stopfd, int ms)
{
	struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = stopfd, .events = POLLIN}};
	uint64_t end = monoclock_ns() + (uint64_t)ms * 1000000u;

	for (;;) {
		uint64_t now = monoclock_ns();
		if (now >= end)
			return 0;
		int rc = poll(p, 2, (int)((end - now) / 1000000u) + 1);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc > 0 && p[1].revents)
			return -ECANCELED;
		if (rc > 0 && p[0].revents)
			return 1;
	}
}

/* One probe of d: 1 the daemon closed its end within the bound, 0 it did
 * not or refused it, a negative errno when no probe could be made (out
 * of fds: no verdict) or the watchdog stops. */
static int probe(struct MHD_Daemon *d, int stopfd)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	uint64_t end = monoclock_ns() + WEBWATCH_BOUND_S * 1000000000ull;
	char buf[256];
	int sv[2], rc = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	shutdown(sv[0], SHUT_WR);
	/* it closes sv[1], also when it refuses it: a daemon that refuses
	 * connections serves no one either (0.9.75 once wedged refuses all) */
	if (MHD_add_connection(d, sv[1], (struct sockaddr *)&un, sizeof(un.sun_family)) !=
	    MHD_YES) {
		close(sv[0]);
		return 0;
	}
	for (;;) { /* a TLS daemon may answer an alert before it closes */
		uint64_t now = monoclock_ns();
		rc = now < end ? wait_readable(sv[0], stopfd, (int)((end - now) / 1000000u)) : 0;
		if (rc != 1 || read(sv[0], buf, sizeof(buf)) <= 0)
			break;
	}
	close(sv[0]);
	return rc;
}

static void *watch_main(void *arg)
{
	struct webwatch *w = arg;

	for (;;) {
		if (wait_readable(w->stopfd, w->stopfd, WEBWATCH_PERIOD_S * 1000) != 0)
			return NULL;
		for (size_t i = 0; i < w->n; i++) {
			int rc = probe(w->daemon[i], w->stopfd);
			if (rc == -ECANCELED)
				return NULL;
			if (rc != 0) {
				w->misses[i] = 0;
				continue;
			}
			char probes[16], bound[16];
			snprintf(probes, sizeof(probes), "%u", ++w->misses[i]);
			snprintf(bound, sizeof(bound), "%ds", WEBWATCH_BOUND_S);
			log_error(
			    "the HTTP server refused a probe connection or kept it open too long",
			    "bound", bound, "probes_missed", probes);
			if (w->misses[i] < WEBWATCH_MISSES)
				continue;
			log_error("the HTTP server no longer serves: exiting with status 1 for "
				  "the service manager to start the exporter again");
			_exit(EXIT_FAILURE); /* a clean stop would join its stuck threads */
		}
	}
}

int webwatch_start(struct webwatch **out, struct MHD_Daemon *const *daemon, size_t n)
{
	struct webwatch *w = calloc(1, sizeof(*w));

	if (!w || n > WEBWATCH_N_MAX) {
		free(w);
		return -EINVAL;
	}
	w->daemon = daemon;
	w->n = n;
	if ((w->stopfd = eventfd(0, EFD_CLOEXEC)) < 0) {
		free(w);
		return -errno;
	}
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		close(w->stopfd);
		free(w);
		return -EAGAIN;
	}
	*out = w;
	return 0;
}

void webwatch_stop(struct webwatch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	ssize_t wr = write(w->stopfd, &one, sizeof(one));
	(void)wr;
	pthread_join(w->thread, NULL);
	close(w->stopfd);
	free(w);
}
