/* A collector's kept thread for its scrape jobs. The worker and whoever
 * made it each hold a reference, so that the last to let go frees it: a
 * job may end its own collector's set (the scrape it drops was the set's
 * last user), and with it the worker it runs on. */
#include "jobworker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct jobworker {
	pthread_mutex_t lock; /* all below */
	pthread_cond_t wake;
	jobworker_fn *fn; /* the job handed over, not yet taken */
	void *arg;
	bool busy; /* from hand-over until the job returns */
	bool stop;
	int refs;
};

static void worker_free(struct jobworker *w)
{
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Drops a reference, with the lock held; the last one frees w. */
static void unref_unlock(struct jobworker *w)
{
	bool last = --w->refs == 0;

	pthread_mutex_unlock(&w->lock);
	if (last)
		worker_free(w);
}

static void *worker_main(void *arg)
{
	struct jobworker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->fn && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		if (!w->fn)
			break;
		jobworker_fn *fn = w->fn;
		void *job = w->arg;
		w->fn = NULL;
		pthread_mutex_unlock(&w->lock);
		fn(job);
		pthread_mutex_lock(&w->lock);
		w->busy = false;
	}
	unref_unlock(w);
	return NULL;
}

static int worker_new(struct jobworker **out)
{
	struct jobworker *w = calloc(1, sizeof(*w));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	w->refs = 2; /* the maker's and the thread's */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, worker_main, w);
	pthread_attr_destroy(&attr);
	if (rc) {
		worker_free(w);
		return -rc;
	}
	*out = w;
	return 0;
}

int jobworker_run(struct jobworker **slot, jobworker_fn *fn, void *arg)
{
	struct jobworker *w = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *made = NULL;
	int rc;

	/* Two scrapes may make one at once: the first kept wins. */
	if (!w) {
		if ((rc = worker_new(&made)) < 0)
			return rc;
		if (__atomic_compare_exchange_n(slot, &w, made, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			w = made;
		else
			jobworker_stop(made);
	}
	pthread_mutex_lock(&w->lock);
	if (w->busy || w->stop) {
		pthread_mutex_unlock(&w->lock);
		return -EBUSY;
	}
	w->busy = true;
	w->fn = fn;
	w->arg = arg;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

bool jobworker_busy(struct jobworker *w)
{
	bool busy;

	if (!w)
		return false;
	pthread_mutex_lock(&w->lock);
	busy = w->busy;
	pthread_mutex_unlock(&w->lock);
	return busy;
}

void jobworker_stop(struct jobworker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	unref_unlock(w);
}
