/* Where bcrypt runs: a small pool of threads with a bounded queue, each
 * client address holding a share of it. A request past the queue is
 * refused at once rather than kept waiting in a connection slot, and
 * a waiting request whose connection is cut (evicted by the guard, or
 * closed) leaves the queue at once. */
#ifndef BS_AUTHPOOL_H
#define BS_AUTHPOOL_H

#include <stdbool.h>
#include <stdint.h>

#define AUTHPOOL_WORKERS 2
#define AUTHPOOL_QUEUE 32    /* verifications waiting for a worker, at most */
#define AUTHPOOL_SHARE 2     /* of the queue and workers together, per address and user */
#define AUTHPOOL_WAIT_S 10.0 /* a wait past this is given up (503) */
/* A verification slower than this is warned about, with its time. */
#define AUTHPOOL_SLOW_NS 1000000000ull

enum authpool_result {
	AUTHPOOL_MATCH,
	AUTHPOOL_MISMATCH,
	AUTHPOOL_BUSY, /* the user's share at its address, or the queue, is full: refuse now */
	AUTHPOOL_LATE, /* waited AUTHPOOL_WAIT_S in the queue: refuse */
	AUTHPOOL_GONE, /* the connection was cut while it waited */
};

struct authpool;

/* Workers start at the first verification. */
struct authpool *authpool_new(void);
void authpool_free(struct authpool *p);
/* Whether password matches the bcrypt hash, computed by a worker. fd: the
 * client's socket, watched for a cut while waiting (-1: none). `user`
 * names the user in a warning about a slow hash. `known`: the client has
 * passed a verification before, so it goes before those who have not. */
enum authpool_result authpool_verify(struct authpool *p, const unsigned char addr[16], int fd,
				     bool known, const char *user, const char *hash,
				     const char *password);
/* Starts the workers if they are not yet. */
int authpool_start(struct authpool *p);
/* One bcrypt, in the caller's thread; compared in a time that does not
 * depend on where the result differs. */
bool authpool_bcrypt_matches(const char *hash, const char *password);

#endif
