/* A source's own labels (a Xen set's, a DCI supplier's) handed once to an
 * emitter that takes a label prefix (ABI 4), or with every series to one
 * that does not. */
#ifndef LABELPREFIX_H
#define LABELPREFIX_H

#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

struct labelprefix {
	bool able;	   /* the host's emitters may take a prefix */
	const void *owner; /* whose labels the emitter holds now; NULL: none */
};

void labelprefix_init(struct labelprefix *p, const struct bs_host *host);
/* Makes l[0..n), the labels of `owner`, the emitter's prefix unless they
 * already are. Returns how many labels at the front of each of owner's
 * series the caller now leaves out: n, or 0 for an emitter without
 * prefixes. `owner` must not change its labels before labelprefix_end. */
size_t labelprefix_use(struct labelprefix *p, struct bs_emitter *em, const void *owner,
		       const struct bs_label *l, size_t n);
/* Ends the prefix: before series that do not share it, and before the
 * collect returns. */
void labelprefix_end(struct labelprefix *p, struct bs_emitter *em);

#endif
