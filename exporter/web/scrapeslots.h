/* The scrape slots (--web.max-requests), shared out by client address: a
 * slot is held while the exporter works on a scrape, and when all are
 * held, an address holding few still gets one and the request of the
 * address holding the most is refused. One pool for everyone let a
 * flood from many addresses answer half a scraper's scrapes 503. */
#ifndef BS_SCRAPESLOTS_H
#define BS_SCRAPESLOTS_H

#include <stdbool.h>

struct scrapeslots;

/* max slots; UINT_MAX: no limit. NULL: out of memory. */
struct scrapeslots *scrapeslots_new(unsigned max);
void scrapeslots_free(struct scrapeslots *p);
/* Takes a slot for a client at addr (16 bytes, IPv4 mapped); false:
 * refuse (503). Each slot taken is given back with scrapeslots_put. */
bool scrapeslots_take(struct scrapeslots *p, const unsigned char addr[16]);
void scrapeslots_put(struct scrapeslots *p, const unsigned char addr[16]);
/* The rule, pure: whether a request is given a slot while `total` are
 * held of `max`, its address holding `mine` and the address holding the
 * most `most`. Within max, always; past it, if its address holds none or
 * fewer than the most but one (the biggest holder pays for it with its
 * next request), up to twice max, which bounds the work at once. */
bool scrapeslots_admit(unsigned total, unsigned max, unsigned mine, unsigned most);

#endif
