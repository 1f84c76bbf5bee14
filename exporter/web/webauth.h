/* basic_auth_users and rate_limit: who a request comes from, and whether
 * it may go on. bcrypt verification runs in a pool (authpool.c); a
 * success is cached, so a scraper's later requests never wait for it. */
#ifndef BS_WEBAUTH_H
#define BS_WEBAUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "webconf.h"

enum webauth_verdict {
	WEBAUTH_PASS,
	WEBAUTH_DENIED,	      /* 401 */
	WEBAUTH_RATE_LIMITED, /* 429 */
	WEBAUTH_BUSY,	      /* 429: the bcrypt pool has no room for this address now */
	WEBAUTH_GONE,	      /* the connection was cut while it waited: no answer */
};

struct webauth_request {
	unsigned char addr[16];	   /* the client's, IPv4 mapped */
	int fd;			   /* its socket, watched while it waits; -1: none */
	bool certified;		   /* its certificate was verified in the handshake */
	const char *authorization; /* the header's value; NULL: none */
	/* The connection guard has the request in its auth phase, which it may
	 * cut: the wait watches fd and gives up once the socket is shut. */
};

struct webauth;

struct webauth *webauth_new(void);
void webauth_free(struct webauth *a);
/* Whether the request may go on under w. On PASS with w's users, *user is
 * the user it authenticated as (the caller frees it; NULL when out of
 * memory). The rate limit is a bucket per client (an IPv4 address, an
 * IPv6 /64) and identity: the authenticated user, or a verified client
 * certificate, or neither; the pool's share is per client too. */
enum webauth_verdict webauth_admit(struct webauth *a, const struct webconf *w,
				   const struct webauth_request *rq, uint64_t now_ns, char **user);
/* After each load of a web config: warns about users whose bcrypt cost
 * this host cannot check in reasonable time, with the time estimated
 * from one low-cost hash timed once. Never waits for a user's hash. */
void webauth_configure(struct webauth *a, const struct webconf *w);
/* The parts of a Basic Authorization header value, in buf (of at least
 * strlen(value) bytes); false if malformed or holding a NUL byte. */
bool webauth_parse_basic(const char *value, char *buf, size_t buflen, const char **user,
			 const char **password);

#endif
