/* rate_limit, one token bucket per client address and identity: what a
 * stranger sends cannot use up the tokens of a scraper that authenticated,
 * nor those of another address. */
#ifndef BS_WEBRATE_H
#define BS_WEBRATE_H

#include <stdbool.h>
#include <stdint.h>

struct webrate;

struct webrate *webrate_new(void);
void webrate_free(struct webrate *r);
/* Takes a token from the bucket of (addr, who), refilled at one per
 * interval seconds up to burst; false: none left, refuse. `who` is the
 * user that authenticated, "" for the address's requests without one, or
 * the caller's own key (webauth.c: the guesses at a name). */
bool webrate_take(struct webrate *r, const unsigned char addr[16], const char *who, double interval,
		  unsigned burst, uint64_t now_ns);

enum webrate_op {
	WEBRATE_TAKE,  /* as webrate_take */
	WEBRATE_HAS,   /* whether a token is left, none taken */
	WEBRATE_FULL,  /* whether the bucket is full: nothing charged lately */
	WEBRATE_DEBIT, /* a token owed after the fact: taken, or the bucket emptied */
};
/* One of the operations above on the bucket of (addr, who). */
bool webrate_do(struct webrate *r, const unsigned char addr[16], const char *who, double interval,
		unsigned burst, uint64_t now_ns, enum webrate_op op);

#endif
