/* A sink's second thread: a bounded queue of full buffers, consumed in
 * order. The lock guards only the queue; fn runs outside it. */
#include "sinkthread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct sinkthread {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* queue changed, or stopping */
	char *buf[SINKTHREAD_QUEUE];
	size_t len[SINKTHREAD_QUEUE];
	size_t first, count;
	bool stopping, discard;
	int rc; /* fn's first error */
	sinkthread_fn *fn;
	sinkthread_release_fn *release;
	void *ctx;
};

static void *sinkthread_main(void *arg)
{
	struct sinkthread *t = arg;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		while (t->count == 0 && !t->stopping)
			pthread_cond_wait(&t->cond, &t->lock);
		if (t->count == 0)
			break;
		char *buf = t->buf[t->first];
		size_t len = t->len[t->first];
		bool skip = t->rc < 0 || t->discard;
		pthread_mutex_unlock(&t->lock);
		int rc = skip ? 0 : t->fn(t->ctx, buf, len);
		t->release(buf);
		pthread_mutex_lock(&t->lock);
		if (rc < 0 && t->rc == 0)
			t->rc = rc;
		t->first = (t->first + 1) % SINKTHREAD_QUEUE;
		t->count--;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

struct sinkthread *sinkthread_start(sinkthread_fn *fn, sinkthread_release_fn *release, void *ctx)
{
	struct sinkthread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->fn = fn;
	t->release = release;
	t->ctx = ctx;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	if (pthread_create(&t->thread, NULL, sinkthread_main, t) != 0) {
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		free(t);
		return NULL;
	}
	return t;
}

int sinkthread_push(struct sinkthread *t, char *buf, size_t len)
{
	pthread_mutex_lock(&t->lock);
	while (t->count == SINKTHREAD_QUEUE && t->rc == 0)
		pthread_cond_wait(&t->cond, &t->lock);
	int rc = t->rc;
	if (rc == 0) {
		size_t at = (t->first + t->count) % SINKTHREAD_QUEUE;
		t->buf[at] = buf;
		t->len[at] = len;
		t->count++;
		pthread_cond_broadcast(&t->cond);
	}
	pthread_mutex_unlock(&t->lock);
	if (rc < 0)
		t->release(buf);
	return rc;
}

int sinkthread_stop(struct sinkthread *t, bool discard)
{
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	t->discard = discard;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	int rc = t->rc;
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
	return rc;
}
