/* One scrape: every selected collector runs in its own thread against the
 * scrape's deadline; what finished in time is assembled into the response.
 * A collector that overruns is reported failed and its thread left to finish
 * on its own: the thread holds a reference, so the last one out frees. */
#include "scrape.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collset_priv.h"
#include "jobworker.h"
#include "log.h"
#include "memtrim.h"
#include "monoclock.h"
#include "procmetrics.h"
#include "sink.h"

struct scrape_job {
	struct scrape *sc;
	struct instance *inst;
	struct sink sink;
	struct emitter em;
	int rc;
	const char *why; /* a failure the exporter names itself, else strerror(-rc) */
	bool done;
	double seconds;
};

struct scrape {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int refs;
	size_t pending;
	struct collset *set;
	enum expo_format format;
	bool gzip;
	bool no_exporter_metrics;
	uint64_t start_ns, deadline_ns;
	size_t limit;
	struct famreg reg;
	struct scrape_job *job;
	size_t njobs;
	struct sink out; /* the assembled body, chunks taken from the jobs */
	unsigned char gz_head[GZIP_HEADER_LEN], gz_trail[GZIP_TRAILER_LEN];
	struct iovec *iov;
	size_t niov, total;
	bool has_deflated; /* some chunk is deflated in an uncompressed response */
	/* scrape_read's place */
	struct sink_chunk *rd_chunk;
	size_t rd_off;
	struct zcodec_inflate *rd_z;
	bool rd_in_run;
};

static void scrape_free(struct scrape *sc)
{
	for (size_t i = 0; i < sc->njobs; i++) {
		emitter_free(&sc->job[i].em);
		sink_free(&sc->job[i].sink);
	}
	free(sc->job);
	sink_free(&sc->out);
	famreg_free(&sc->reg);
	free(sc->iov);
	zcodec_inflate_free(sc->rd_z);
	collset_put(sc->set);
	pthread_cond_destroy(&sc->cond);
	pthread_mutex_destroy(&sc->lock);
	free(sc);
}

void scrape_put(struct scrape *sc)
{
	pthread_mutex_lock(&sc->lock);
	int left = --sc->refs;
	pthread_mutex_unlock(&sc->lock);
	if (left != 0)
		return;
	size_t size = scrape_held_bytes(sc);
	scrape_free(sc);
	memtrim_scrape_end(size);
}

/* What the collector found, for the landing page: asked while collect_lock
 * is still held, as the ABI promises. */
static void describe(struct instance *in)
{
	char line[SELFSTATS_FOUND_MAX];

	if (in->ops->abi_version < 3 || !in->ops->describe)
		return;
	line[0] = '\0';
	in->ops->describe(in->state, line, sizeof(line));
	line[sizeof(line) - 1] = '\0';
	selfstats_found(in->stats, line);
}

static void *job_main(void *arg)
{
	struct scrape_job *job = arg;
	struct scrape *sc = job->sc;
	struct instance *in = job->inst;

	if (!in->ops) {
		job->rc = in->init_rc ? in->init_rc : -ENODEV;
	} else if (!instance_lock_for_scrape(in, sc->deadline_ns)) {
		job->rc = -ETIMEDOUT;
		job->why = "deadline exceeded: its previous collect still runs";
	} else {
		emitter_adopt(&job->em, &in->series);
		job->rc = in->ops->collect(in->state, &job->em.pub);
		emitter_release(&job->em, &in->series);
		describe(in);
		pthread_mutex_unlock(&in->collect_lock);
	}
	/* A collector whose output hit the cap is failed, not cut short silently. */
	if (emitter_join_forks(&job->em) < 0 && job->rc == 0) {
		job->rc = -ENOBUFS;
		job->why = "its output passed max_response_bytes";
	}
	selfstats_add_drops(in->stats, &job->em);

	pthread_mutex_lock(&sc->lock);
	job->seconds = (monoclock_ns() - sc->start_ns) / 1e9;
	job->done = true;
	sc->pending--;
	pthread_cond_broadcast(&sc->cond);
	pthread_mutex_unlock(&sc->lock);
	scrape_put(sc);
	return NULL;
}

static void job_run(void *job)
{
	job_main(job);
}

/* On the collector's kept thread, or a new one while it is busy. */
static int job_start(struct scrape *sc, struct scrape_job *job)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc = 0;

	sc->refs++;
	sc->pending++;
	if (jobworker_run(&job->inst->worker, job_run, job) < 0) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, job_main, job);
		pthread_attr_destroy(&attr);
	}
	if (rc) {
		sc->refs--;
		sc->pending--;
		job->rc = -rc;
		job->done = true;
	}
	return -rc;
}

static struct scrape *scrape_new(const struct scrape_request *req)
{
	struct scrape *sc = calloc(1, sizeof(*sc));
	pthread_condattr_t ca;

	if (!sc)
		return NULL;
	pthread_mutex_init(&sc->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sc->cond, &ca);
	pthread_condattr_destroy(&ca);
	sc->refs = 1;
	sc->set = collset_get(req->set);
	sc->format = req->format;
	sc->gzip = req->gzip;
	sc->no_exporter_metrics = req->no_exporter_metrics;
	sc->start_ns = monoclock_ns();
	sc->deadline_ns = sc->start_ns + (uint64_t)(req->timeout_s * 1e9);
	sc->limit = req->set->config->max_response_bytes;
	if (famreg_init(&sc->reg) < 0 || sink_init(&sc->out, false, SIZE_MAX) < 0) {
		scrape_free(sc);
		return NULL;
	}
	memtrim_scrape_begin();
	return sc;
}

static int jobs_start(struct scrape *sc, const struct scrape_request *req)
{
	size_t n = req->only ? req->nonly : req->set->n;

	sc->job = calloc(n ? n : 1, sizeof(*sc->job));
	if (!sc->job)
		return -ENOMEM;
	pthread_mutex_lock(&sc->lock);
	for (size_t i = 0; i < n; i++) {
		struct scrape_job *job = &sc->job[i];
		job->sc = sc;
		job->inst = req->only ? req->only[i] : &req->set->inst[i];
		if (sink_init(&job->sink, sc->gzip, sc->limit) < 0) {
			job->rc = -ENOMEM;
			job->done = true;
			sc->njobs++;
			continue;
		}
		/* Uncompressed responses keep their text while all of them hold
		 * less than spill_after, and the rest deflated, inflated as it is
		 * sent. */
		if (!sc->gzip)
			sink_spill_budget(&job->sink, req->set->config->spill_after);
		emitter_init(&job->em, sc->format, &job->sink, &sc->reg, sc->deadline_ns);
		sc->njobs++;
		job_start(sc, job);
	}
	pthread_mutex_unlock(&sc->lock);
	return 0;
}

static void jobs_wait(struct scrape *sc)
{
	struct timespec until = monoclock_timespec(sc->deadline_ns);

	pthread_mutex_lock(&sc->lock);
	while (sc->pending > 0 && pthread_cond_timedwait(&sc->cond, &sc->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&sc->lock);
}

static void emit_collector_status(struct scrape *sc, struct bs_emitter *em)
{
	bs_family(em, "binstat_scrape_timeout_seconds", BS_GAUGE, "seconds",
		  "The deadline of this scrape: Prometheus' timeout less scrape_timeout_offset, "
		  "or scrape_timeout.");
	bs_sample_f64(em, NULL, 0, (double)(sc->deadline_ns - sc->start_ns) / 1e9);
	bs_family(em, "binstat_scrape_collector_duration_seconds", BS_GAUGE, "seconds",
		  "How long a collector took in this scrape.");
	for (size_t i = 0; i < sc->njobs; i++) {
		struct scrape_job *j = &sc->job[i];
		struct bs_label l = {"collector", j->inst->name};
		double s = j->done ? j->seconds : (monoclock_ns() - sc->start_ns) / 1e9;
		bs_sample_f64(em, &l, 1, s);
	}
	bs_family(em, "binstat_scrape_collector_success", BS_GAUGE, NULL,
		  "Whether a collector succeeded in this scrape.");
	for (size_t i = 0; i < sc->njobs; i++) {
		struct scrape_job *j = &sc->job[i];
		struct bs_label l = {"collector", j->inst->name};
		bs_sample_u64(em, &l, 1, j->done && j->rc == 0);
	}
}

/* Why a job failed, or NULL: the landing page shows it, the log says it. */
static const char *failure(const struct scrape_job *j)
{
	if (!j->done)
		return "deadline exceeded";
	if (j->rc == 0)
		return NULL;
	return j->why ? j->why : strerror(-j->rc);
}

/* Takes the output of every job that finished in time and succeeded; the
 * others are logged. Jobs still running keep their sinks. Under sc->lock. */
static void collect_results(struct scrape *sc)
{
	for (size_t i = 0; i < sc->njobs; i++) {
		struct scrape_job *j = &sc->job[i];
		double s = j->done ? j->seconds : (monoclock_ns() - sc->start_ns) / 1e9;
		const char *why = failure(j);
		selfstats_scraped(j->inst->stats, why, s);
		if (!why) {
			sink_append(&sc->out, &j->sink);
			continue;
		}
		if (!j->inst->ops)
			continue; /* never started: logged once, at load */
		log_warn("collector failed", "collector", j->inst->name, "err", why);
	}
}

static int self_part(struct scrape *sc)
{
	struct sink s;
	struct emitter em;
	int rc;

	if ((rc = sink_init(&s, sc->gzip, sc->limit)) < 0)
		return rc;
	emitter_init(&em, sc->format, &s, &sc->reg, 0);
	emit_collector_status(sc, &em.pub);
	if (!sc->no_exporter_metrics) {
		selfstats_emit(&em.pub);
		procmetrics_emit(&em.pub);
	}
	if (em.ndrops)
		log_warn("self-metrics dropped", "reason", em.drops[0].reason);
	expo_eof(&s, sc->format);
	rc = sink_finish(&s);
	sink_append(&sc->out, &s);
	sink_free(&s);
	emitter_free(&em);
	return rc;
}

static int body_vector(struct scrape *sc)
{
	size_t n = 2;
	for (struct sink_chunk *c = sc->out.head; c; c = c->next)
		n++;
	sc->iov = calloc(n, sizeof(*sc->iov));
	if (!sc->iov)
		return -ENOMEM;
	if (sc->gzip) {
		gzip_header(sc->gz_head);
		sc->iov[sc->niov++] = (struct iovec){sc->gz_head, GZIP_HEADER_LEN};
	}
	for (struct sink_chunk *c = sc->out.head; c; c = c->next) {
		if (c->len)
			sc->iov[sc->niov++] = (struct iovec){c->data, c->len};
		sc->has_deflated |= c->deflated && !sc->gzip;
	}
	sc->rd_chunk = sc->out.head;
	if (sc->gzip) {
		gzip_trailer(sc->gz_trail, sc->out.crc, sc->out.raw_bytes);
		sc->iov[sc->niov++] = (struct iovec){sc->gz_trail, GZIP_TRAILER_LEN};
	}
	for (size_t i = 0; i < sc->niov; i++)
		sc->total += sc->iov[i].iov_len;
	return 0;
}

struct scrape *scrape_run(const struct scrape_request *req)
{
	struct scrape *sc = scrape_new(req);

	if (!sc)
		return NULL;
	if (jobs_start(sc, req) < 0)
		goto err_put;
	jobs_wait(sc);
	pthread_mutex_lock(&sc->lock);
	collect_results(sc);
	int rc = self_part(sc);
	pthread_mutex_unlock(&sc->lock);
	if (rc < 0 || body_vector(sc) < 0)
		goto err_put;
	return sc;
err_put:
	scrape_put(sc);
	return NULL;
}

bool scrape_body_is_text(const struct scrape *sc)
{
	return !sc->has_deflated;
}

/* Inflates from the current deflated chunk into out; a run of deflated
 * chunks is one stream (each part ends with a sync flush, so parts chain). */
static ssize_t read_deflated(struct scrape *sc, char *out, size_t max)
{
	struct sink_chunk *c = sc->rd_chunk;
	if (!sc->rd_z) {
		if (!(sc->rd_z = zcodec_inflate_new()))
			return -1;
	} else if (!sc->rd_in_run) {
		zcodec_inflate_reset(sc->rd_z);
	}
	sc->rd_in_run = true;
	struct zcodec_buf b = {(const unsigned char *)c->data + sc->rd_off, c->len - sc->rd_off,
			       (unsigned char *)out, max};
	if (zcodec_inflate_step(sc->rd_z, &b) < 0)
		return -1;
	sc->rd_off = c->len - b.in_len;
	size_t made = max - b.out_len;
	/* Move on only once this chunk is used up and inflate holds nothing
	 * back (it filled less than it was given). */
	if (sc->rd_off == c->len && b.out_len > 0) {
		sc->rd_chunk = c->next;
		sc->rd_off = 0;
		if (!sc->rd_chunk || !sc->rd_chunk->deflated)
			sc->rd_in_run = false;
	}
	return (ssize_t)made;
}

ssize_t scrape_read(struct scrape *sc, char *buf, size_t max)
{
	size_t done = 0;

	while (done < max && sc->rd_chunk) {
		struct sink_chunk *c = sc->rd_chunk;
		if (c->deflated) {
			ssize_t n = read_deflated(sc, buf + done, max - done);
			if (n < 0)
				return -1;
			done += (size_t)n;
			continue;
		}
		size_t n = c->len - sc->rd_off < max - done ? c->len - sc->rd_off : max - done;
		memcpy(buf + done, c->data + sc->rd_off, n);
		done += n;
		sc->rd_off += n;
		if (sc->rd_off == c->len) {
			sc->rd_chunk = c->next;
			sc->rd_off = 0;
		}
	}
	return (ssize_t)done;
}

size_t scrape_held_bytes(const struct scrape *sc)
{
	return sc->total;
}

size_t scrape_body(struct scrape *sc, const struct iovec **iov, size_t *total)
{
	*iov = sc->iov;
	*total = sc->total;
	return sc->niov;
}
