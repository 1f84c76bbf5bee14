/* What the processing stage and the daemon hand each other: how the
 * sampler reaches the collectors, and a reply of the /statistics/
 * interface. Types only, shared by the public header and the stage's
 * insides. */
#ifndef BS_STAGE_H
#define BS_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include <binstat/collector.h>

#include "textbuf.h"

/* How the sampler reaches the collectors, which it never sees: n of them,
 * collector i collected into e by collect(ctx, i, e, wait_ns), which
 * returns STAGE_INPUT_BUSY when a scrape held it past wait_ns, -ENODEV
 * when it does not run, else what the collector's collect returned. */
#define STAGE_INPUT_MAX 64
#define STAGE_INPUT_BUSY 1
struct stage_input {
	size_t n;
	int (*collect)(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns);
	void *ctx;
};

struct stage_reply {
	int status; /* HTTP status */
	struct textbuf text;
	const char *type; /* NULL: text/plain; else its bytes are text.len, of this type */
};

#endif
