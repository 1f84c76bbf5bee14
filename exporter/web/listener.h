/* The accepting of HTTP connections, done here rather than by
 * libmicrohttpd (started without a listen socket), so that running out of
 * fds is survived: a reserve of fds kept for it, a back-off instead of a
 * spin, and a count. */
#ifndef BS_LISTENER_H
#define BS_LISTENER_H

#include <microhttpd.h>
#include <stddef.h>

#define LISTENER_RESERVE 8 /* fds held back for the next client */
#define LISTENER_SOCKETS_MAX 16

struct listener;

struct httpguard;

/* Accepts on fds[i] (listening sockets, which it owns from now on, also
 * on failure) and hands each connection to daemon[i]; out of fds, it has
 * the guard evict a connection that made no progress. */
int listener_start(struct listener **out, const int *fds, struct MHD_Daemon *const *daemon,
		   size_t n, struct httpguard *guard);
/* Stops accepting and closes the listening sockets; the daemons' own
 * connections are theirs to close. */
void listener_stop(struct listener *l);

#endif
