/* A collector's kept thread for its scrape jobs: a new thread per collect
 * costs about as much as a small collector's whole collect (clone, stack,
 * exit: with the connection's own, 16% of a 10-VM KVM scrape's CPU), so
 * one waits for the next. A job it cannot take at once (it still runs the
 * last, perhaps hung) goes to a new thread, as every job did before. */
#ifndef BS_JOBWORKER_H
#define BS_JOBWORKER_H

#include <stdbool.h>

struct jobworker;

typedef void jobworker_fn(void *arg);

/* Runs fn(arg) on the worker in *slot, made on the first call: 0, or
 * -EBUSY while it runs another job (or stops), -errno if it cannot be
 * made; the caller then runs the job otherwise. */
int jobworker_run(struct jobworker **slot, jobworker_fn *fn, void *arg);
/* Whether w (NULL: none made yet) has a job that has not returned. */
bool jobworker_busy(struct jobworker *w);
/* Tells the worker to end once its job, if any, returns; it frees itself.
 * May be called from that job, on the worker's own thread. */
void jobworker_stop(struct jobworker *w);

#endif
