/* Start and stop of a collector's thread, with one failure rule. */
#include "worker.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

void worker_init(struct worker *w)
{
	w->stopfd = -1;
	w->started = false;
}

int worker_open(struct worker *w, int epfd, epoll_data_t tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data = tag};

	w->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* a stop never blocks */
	if (w->stopfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, w->stopfd, &ev) < 0)
		return -errno;
	return 0;
}

int worker_start(struct worker *w, void *(*fn)(void *), void *arg)
{
	int rc = pthread_create(&w->thread, NULL, fn, arg);

	if (rc != 0)
		return -rc;
	w->started = true;
	return 0;
}

void worker_stop(struct worker *w)
{
	uint64_t one = 1;

	if (w->started) {
		if (write(w->stopfd, &one, sizeof(one)) != sizeof(one))
			pthread_cancel(w->thread);
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	if (w->stopfd >= 0)
		close(w->stopfd);
	w->stopfd = -1;
}
