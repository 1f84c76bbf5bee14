/* A collector's kept job thread: jobs in turn run on one thread; one
 * handed over while it is busy is refused, for a thread of its own; a
 * stop, even from inside its job, ends the thread, which frees itself. */
#include "helpers.h"

#include <pthread.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jobworker.h"

struct job {
	pid_t tid;
	sem_t started, release, done;
	bool hold;		/* wait for release before returning */
	struct jobworker *stop; /* stopped from inside the job */
};

static void job_fn(void *arg)
{
	struct job *j = arg;

	j->tid = (pid_t)syscall(SYS_gettid);
	sem_post(&j->started);
	if (j->hold)
		sem_wait(&j->release);
	jobworker_stop(j->stop);
	sem_post(&j->done);
}

static void job_init(struct job *j, bool hold)
{
	memset(j, 0, sizeof(*j));
	sem_init(&j->started, 0, 0);
	sem_init(&j->release, 0, 0);
	sem_init(&j->done, 0, 0);
	j->hold = hold;
}

static int threads(void)
{
	char line[64];
	int n = 0;
	FILE *f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* The process's threads back to `want` within 2 s. */
static void threads_become(int want)
{
	for (int i = 0; i < 400 && threads() != want; i++)
		usleep(5000);
	assert_int_equal(threads(), want);
}

/* Hands j over once the worker is idle: a job's last post comes just
 * before it returns. */
static void run_when_idle(struct jobworker **w, struct job *j)
{
	int rc = -EBUSY;
	for (int i = 0; i < 400 && (rc = jobworker_run(w, job_fn, j)) == -EBUSY; i++)
		usleep(5000);
	assert_int_equal(rc, 0);
}

static void test_jobs_take_turns_on_one_thread(void **state)
{
	struct jobworker *w = NULL;
	struct job a, b, c;
	int before = threads();
	(void)state;

	job_init(&a, false);
	job_init(&b, true);
	job_init(&c, false);
	assert_int_equal(jobworker_run(&w, job_fn, &a), 0);
	assert_non_null(w);
	sem_wait(&a.done);
	assert_false(jobworker_busy(NULL));
	run_when_idle(&w, &b);
	sem_wait(&b.started);
	assert_true(jobworker_busy(w));
	/* Busy with b: c is refused, to run elsewhere. */
	assert_int_equal(jobworker_run(&w, job_fn, &c), -EBUSY);
	sem_post(&b.release);
	sem_wait(&b.done);
	assert_int_equal(b.tid, a.tid);
	assert_true(b.tid != (pid_t)syscall(SYS_gettid));
	assert_int_equal(threads(), before + 1);
	run_when_idle(&w, &c); /* idle again: it takes c */
	sem_wait(&c.done);
	assert_int_equal(c.tid, a.tid);
	jobworker_stop(w);
	threads_become(before);
}

/* The job drops the last user of what holds the worker, and so stops it
 * from its own thread: the thread ends after the job (ASan: nothing leaks). */
static void test_stop_from_its_own_job(void **state)
{
	struct jobworker *w = NULL;
	struct job a, b;
	int before = threads();
	(void)state;

	job_init(&a, false);
	assert_int_equal(jobworker_run(&w, job_fn, &a), 0);
	sem_wait(&a.done);
	job_init(&b, false);
	b.stop = w;
	run_when_idle(&w, &b);
	sem_wait(&b.done);
	threads_become(before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_jobs_take_turns_on_one_thread),
	    cmocka_unit_test(test_stop_from_its_own_job),
	};
	return cmocka_run_group_tests_name("jobworker", tests, NULL, NULL);
}
