/* A collector's background thread and how it is told to stop: an eventfd
 * in the thread's own epoll set. */
#ifndef WORKER_H
#define WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/epoll.h>

struct worker {
	pthread_t thread;
	int stopfd; /* -1 until worker_open */
	bool started;
};

/* Before worker_open, so worker_stop is safe on any path. */
void worker_init(struct worker *w);
/* Creates the stop eventfd and adds it to `epfd` with `tag`: the thread
 * returns when epoll gives it that tag. */
int worker_open(struct worker *w, int epfd, epoll_data_t tag);
int worker_start(struct worker *w, void *(*fn)(void *), void *arg);
/* Stops and joins the thread, then closes the stop fd. It always joins
 * before returning, so the caller may free what the thread used: if the
 * stop cannot be written, the thread is cancelled (its waits are
 * cancellation points) and joined. */
void worker_stop(struct worker *w);

#endif
