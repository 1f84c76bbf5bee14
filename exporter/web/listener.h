/* The listen addresses, parsed, resolved and bound at start; then the
 * accepting of HTTP connections, done here rather than by libmicrohttpd
 * (started without a listen socket), so that running out of fds is
 * survived: a reserve of fds kept for it, a back-off instead of a spin,
 * and a count. */
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

/* Splits "host:port", "[v6]:port" or ":port" and checks the port is a
 * number from 1 to 65535. */
int listener_parse_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen);
/* What listener_parse_address's error means. */
const char *listener_address_error(int rc);
/* Resolves a listen address as a start does (getaddrinfo, no socket):
 * *out is the caller's to freeaddrinfo. -EINVAL with the reason in err. */
struct addrinfo;
int listener_resolve(const char *addr, struct addrinfo **out, char *err, size_t errlen);
/* Binds and listens on one address (":port" means every address, IPv6 and
 * IPv4): the socket, its family in *family; -errno with the reason in err. */
int listener_bind(const char *addr, int *family, char *err, size_t errlen);
/* "127.0.0.1:9100" or "[::]:9100", for logs, in out of LISTENER_DESCRIBE_MAX. */
#define LISTENER_DESCRIBE_MAX 64
void listener_describe(int fd, char *out, size_t len);

#endif
