/* A sink's second thread: full buffers handed to it are consumed in order
 * (deflated) while the writer goes on, so a compressed scrape takes about
 * the longer of writing and deflating instead of their sum. */
#ifndef BS_SINKTHREAD_H
#define BS_SINKTHREAD_H

#include <stdbool.h>
#include <stddef.h>

/* Buffers waiting at most; a writer ahead of the thread waits for room,
 * so a sink holds at most this many stages more than it would inline. */
#define SINKTHREAD_QUEUE 4

typedef int sinkthread_fn(void *ctx, const char *buf, size_t len);
typedef void sinkthread_release_fn(char *buf);

struct sinkthread;

/* Starts a thread that calls fn(ctx, buf, len) for each buffer handed
 * over, in order, then release(buf). NULL if no thread can be made: the
 * caller goes on inline. */
struct sinkthread *sinkthread_start(sinkthread_fn *fn, sinkthread_release_fn *release, void *ctx);
/* Hands `buf` over: the thread releases it. Returns 0, or the first error
 * fn returned (then buf is released and nothing more is consumed). */
int sinkthread_push(struct sinkthread *t, char *buf, size_t len);
/* Waits until every buffer handed over is consumed (`discard`: released
 * unread), ends the thread and frees it. Returns the first error of fn. */
int sinkthread_stop(struct sinkthread *t, bool discard);

#endif
