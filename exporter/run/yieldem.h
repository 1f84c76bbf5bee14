/* The emitter a sampler's collect writes through (collset_sample): it
 * passes everything on to the sampler's own emitter, and tells the
 * collector to stop (expired) as soon as a scrape waits for the
 * collector's lock, so that no scrape waits for the processing. */
#ifndef BS_YIELDEM_H
#define BS_YIELDEM_H

#include <stdbool.h>

#include <binstat/collector.h>

struct yieldem {
	struct bs_emitter pub;
	struct bs_emitter_ops ops;
	struct bs_emitter *inner;
	const int *waiting; /* scrapes waiting for the lock (atomic) */
	/* expired() said true for a waiting scrape: the pass is given up, and
	 * nothing more is passed on, since what a collector writes after
	 * stopping early (a source it no longer waited for, shown down) is no
	 * sample of it. */
	bool yielded;
};

/* Wraps `inner` (kept by the caller); `waiting` outlives the collect. The
 * wrapper never forks, and takes a prefix only where inner does. */
void yieldem_init(struct yieldem *y, struct bs_emitter *inner, const int *waiting);

#endif
