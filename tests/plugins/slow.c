/* A collector that takes `sleep_seconds` before writing one gauge: the
 * integration tests use it to overrun a scrape's deadline beside a fast one. */
#include <binstat/collector.h>

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct slow {
	double sleep_s;
};

static int slow_init(const struct bs_host *h, const struct bs_conf *c, void **state)
{
	struct slow *s = calloc(1, sizeof(*s));
	(void)h;
	if (!s)
		return -ENOMEM;
	if (c->ops->get_f64(c, "sleep_seconds", 0, 600, &s->sleep_s) == -EINVAL) {
		free(s);
		return -EINVAL;
	}
	*state = s;
	return 0;
}

static int slow_collect(void *state, struct bs_emitter *em)
{
	struct slow *s = state;
	struct timespec ts = {(time_t)s->sleep_s,
			      (long)((s->sleep_s - (double)(time_t)s->sleep_s) * 1e9)};
	nanosleep(&ts, NULL);
	bs_family(em, "slow_done", BS_GAUGE, NULL, "Written after the sleep.");
	return bs_sample_u64(em, NULL, 0, 1);
}

static void slow_shutdown(void *state)
{
	free(state);
}

const struct bs_collector binstat_collector_slow = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "slow",
    .init = slow_init,
    .collect = slow_collect,
    .shutdown = slow_shutdown,
};
