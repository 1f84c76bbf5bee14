/* The sampler: a thread that runs, at the configured interval, every
 * collector that produces selected series with a probe emitter, which
 * formats nothing: it only matches series against the groups' selectors
 * and feeds the values (feed.c). A collector busy with a scrape is
 * skipped, not waited for past the pass; sources not seen for their ttl
 * are freed. */
#include "sampler.h"
#include "feed.h"
#include "srctab.h"
#include "stage_priv.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "emitter.h"
#include "famreg.h"
#include "monoclock.h"
#include "names.h"
#include "serieskey.h"

#define TAG_STOP 1
/* A collector without selected series is run again after 1 s, then 2,
 * 4, ... and at most every 30 s: series that appear soon after a start or
 * a reload (a guest's set, a VM) are found in seconds, and a collector
 * that never has any costs a pass every 30 s. */
#define DISCOVERY_FIRST_NS 1000000000ull
#define DISCOVERY_MAX_NS 30000000000ull

/* A collector's family that claims a name a family of the processing
 * could claim: that family is no longer served. Takes the lock. */
static void family_lost(struct processing *p, const char *family, enum bs_metric_type type)
{
	const char *clash;
	uint32_t other;

	pthread_mutex_lock(&p->lock);
	if (!processing_names_clashes(&p->lost, family, type))
		processing_names_family(&p->lost, family, type, 0, &clash,
					&other); /* ENOMEM: next time */
	pthread_mutex_unlock(&p->lock);
}

struct probe {
	struct bs_emitter pub;
	struct processing *p;
	uint64_t due_ns, now_ns;	 /* when the pass was due, when it runs */
	char name[NAMES_METRIC_MAX + 8]; /* the open family as exposed */
	uint64_t candidates;		 /* groups whose name matchers allow it */
	uint64_t more;			 /* groups with a VOI past the first of that name */
	bool histogram;			 /* the open family is a histogram */
	bool matched;			 /* a series of this collector was selected */
	struct famreg reg;		 /* the families claimed in this collect */
	/* Per group, the source this pass fed last: the next series is
	 * looked for after it (its next_fed) first. */
	struct source *last[PROCESSING_GROUPS_MAX];
};

/* A counter is exposed with _total: that is the name selectors use; a
 * histogram is selected by its family's name. */
static int probe_family(struct bs_emitter *em, const struct bs_family *f)
{
	struct probe *pr = (struct probe *)em;
	size_t n = strnlen(f->name, NAMES_METRIC_MAX + 1);

	pr->candidates = pr->more = 0;
	if (!serieskey_family_valid(f)) /* what a scrape refuses is not sampled */
		return 0;
	if (processing_names_clashes(&pr->p->ours, f->name, f->type))
		family_lost(pr->p, f->name, f->type);
	/* Claimed as the scrape's emitter claims it: a family the collect
	 * wrote before (or one whose names clash) is refused, its series
	 * with it. Every family is claimed, selected or not. */
	int rc =
	    famreg_claim(&pr->reg, f->name, emitter_family_base_len(f->name, n, f->type), f->type);
	memcpy(pr->name, f->name, n + 1);
	if (f->type == BS_COUNTER && !names_has_suffix(f->name, n, "_total"))
		memcpy(pr->name + n, "_total", 7);
	if (f->type != BS_COUNTER && f->type != BS_GAUGE && f->type != BS_UNKNOWN &&
	    f->type != BS_HISTOGRAM)
		return 0;
	pr->histogram = f->type == BS_HISTOGRAM;
	pr->candidates = feed_groups(pr->p, pr->name);
	pr->more = feed_voi_groups(pr->p, pr->name);
	if (rc < 0 && (pr->candidates || pr->more)) {
		pthread_mutex_lock(&pr->p->lock);
		pr->p->count.duplicate_family += rc == -EEXIST;
		pr->p->count.too_many_sources += rc != -EEXIST; /* no memory */
		pthread_mutex_unlock(&pr->p->lock);
	}
	if (rc < 0)
		pr->candidates = pr->more = 0;
	return 0;
}

/* Each kind of series only in its kind of family, as a scrape takes it. */
static int probe_sample(struct bs_emitter *em, const struct bs_label *l, size_t n,
			struct bs_value v)
{
	struct probe *pr = (struct probe *)em;
	struct feed_sample s = {v, NULL};

	if (pr->histogram)
		return 0;
	/* A NaN too: it is the series' first write if it comes first, and a
	 * scrape serves it (feed_series counts it, feeds nothing). */
	if (pr->candidates)
		pr->matched |= feed_series(pr->p, pr->candidates, pr->name, l, n, &s, pr->last,
					   pr->due_ns, pr->now_ns);
	if (pr->more)
		pr->matched |=
		    feed_voi_series(pr->p, pr->more, pr->name, l, n, &s, true, pr->now_ns);
	return 0;
}

static int probe_histogram(struct bs_emitter *em, const struct bs_label *l, size_t n,
			   const struct bs_histogram *h)
{
	struct probe *pr = (struct probe *)em;

	struct feed_sample s = {{.kind = BS_VAL_F64}, h};

	if (pr->candidates && pr->histogram)
		pr->matched |= feed_hist_series(pr->p, pr->candidates, pr->name, l, n, h, pr->last,
						pr->due_ns, pr->now_ns);
	if (pr->more && pr->histogram && feed_hist_valid(pr->p, h))
		pr->matched |=
		    feed_voi_series(pr->p, pr->more, pr->name, l, n, &s, true, pr->now_ns);
	return 0;
}

static int probe_ignore_summary(struct bs_emitter *em, const struct bs_label *l, size_t n,
				const struct bs_summary *s)
{
	(void)em, (void)l, (void)n, (void)s;
	return 0;
}

static int probe_ignore_states(struct bs_emitter *em, const struct bs_label *l, size_t n,
			       const char *const *st, const bool *a, size_t ns)
{
	(void)em, (void)l, (void)n, (void)st, (void)a, (void)ns;
	return 0;
}

static void probe_drop(struct bs_emitter *em, const char *reason, uint64_t n)
{
	(void)em, (void)reason, (void)n; /* the scrapes count the collectors' drops */
}

static bool probe_expired(struct bs_emitter *em)
{
	(void)em;
	return false;
}

/* No prefix and no fork: the probe sees every series' whole label set,
 * on the sampler's thread (the ABI's fallback for both). */
static const struct bs_emitter_ops probe_ops = {
    .family = probe_family,
    .sample = probe_sample,
    .histogram = probe_histogram,
    .summary = probe_ignore_summary,
    .stateset = probe_ignore_states,
    .drop = probe_drop,
    .expired = probe_expired,
};

/* When collector i is next run whatever its relevance. One with
 * selected series is run at every pass anyway: its discovery only asks
 * whether it still has them, and the one after it turned irrelevant
 * comes soon again. */
static void discovery_schedule(struct processing *p, size_t i, uint64_t now_ns)
{
	uint64_t *gap = &p->discovery_gap_ns[i];

	if (p->relevant[i])
		*gap = 0;
	else if (*gap == 0)
		*gap = DISCOVERY_FIRST_NS;
	else if ((*gap *= 2) > DISCOVERY_MAX_NS)
		*gap = DISCOVERY_MAX_NS;
	p->next_discovery_ns[i] = now_ns + (*gap ? *gap : DISCOVERY_MAX_NS);
}

static void sample_collector(struct processing *p, size_t i, uint64_t due_ns, uint64_t now_ns)
{
	struct probe pr = {.pub = {&probe_ops}, .p = p, .due_ns = due_ns, .now_ns = now_ns};
	uint64_t wait_ns = (uint64_t)(p->conf->interval_s * 1e9);
	bool discovery = now_ns >= p->next_discovery_ns[i];
	int rc;

	if (!discovery && !p->relevant[i])
		return;
	if (famreg_init(&pr.reg) < 0)
		return;
	p->pass++; /* written by this thread alone; read under the lock as fed_pass */
	rc = p->in.collect(p->in.ctx, i, &pr.pub, wait_ns);
	famreg_free(&pr.reg);
	if (rc == STAGE_INPUT_BUSY) {
		/* A scrape has it: sample it next time, and if this was its
		 * discovery, that stays due, so it is the next pass's. */
		p->count.busy++;
		return;
	}
	if (!discovery) {
		p->relevant[i] |= pr.matched;
		return;
	}
	p->relevant[i] = pr.matched;
	discovery_schedule(p, i, now_ns);
}

void sampler_tick_at(struct processing *p, uint64_t due_ns, uint64_t now_ns)
{
	for (size_t i = 0; i < p->in.n; i++)
		sample_collector(p, i, due_ns, now_ns);
	if (now_ns >= p->next_expiry_ns) { /* a walk over every source: once a second */
		srctab_expire(p, now_ns);
		p->next_expiry_ns = now_ns + 1000000000u;
	}
	p->count.ticks++;
	p->count.tick_ns_total += monoclock_ns() - now_ns;
}

void sampler_tick(struct processing *p, uint64_t now_ns)
{
	sampler_tick_at(p, now_ns, now_ns);
}

/* Passes at a fixed rate: the next one is due one interval after the last
 * was due, so a slow pass does not shift the ones after it; far behind, it
 * skips whole intervals, so the times passes are due keep one lattice. */
static void *sampler_main(void *arg)
{
	struct processing *p = arg;
	uint64_t interval = (uint64_t)(p->conf->interval_s * 1e9), due = monoclock_ns();
	struct epoll_event ev;

	for (;;) {
		uint64_t now = monoclock_ns();
		if (now >= due) {
			sampler_tick_at(p, due, now);
			due += interval;
			uint64_t after = monoclock_ns();
			if (due < after) /* far behind: skip, do not catch up */
				due += (after - due) / interval * interval + interval;
			continue;
		}
		int ms = (int)((due - now + 999999) / 1000000);
		if (epoll_wait(p->epfd, &ev, 1, ms) == 1 && ev.data.u32 == TAG_STOP)
			return NULL;
	}
}

int sampler_start(struct processing *p, const struct stage_input *in)
{
	int rc;

	if (in->n > STAGE_INPUT_MAX)
		return -E2BIG;
	p->in = *in;
	if ((p->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	if ((rc = worker_open(&p->sampler, p->epfd, (epoll_data_t){.u32 = TAG_STOP})) < 0)
		return rc;
	return worker_start(&p->sampler, sampler_main, p);
}

void sampler_stop(struct processing *p)
{
	worker_stop(&p->sampler);
	if (p->epfd >= 0)
		close(p->epfd);
	p->epfd = -1;
}
