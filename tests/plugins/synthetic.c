/* A collector for the tests and benchmarks: as many series as asked
 * (bench_series), a delay (sleep_seconds), a failure (fail), invalid
 * items the emitter must repair or count (hostile), and a first collect
 * that waits until its emitter says expired (linger_seconds at most),
 * and gauges whose rates pass the largest double once summed (huge). The model to copy is
 * collectors/example; this carries the knobs it should not. */
#include <binstat/collector.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The bench series' instance label cycles through this many values. */
#define SYNTHETIC_INSTANCES 97

struct synthetic {
	/* Made once, as a real collector makes its label values when it finds
	 * a source: per collect, formatting them would cost more than the
	 * processing the bench measures (61 % of a pass's instructions). */
	char instance[SYNTHETIC_INSTANCES][12];
	uint64_t scrapes;
	uint64_t bench_series;
	uint64_t bench_per_family;
	double sleep_s;
	double linger_s; /* the first collect: until expired, this long at most */
	bool fail;
	bool hostile;
	bool huge;
};

static int synthetic_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	const struct bs_conf_ops *c = conf->ops;
	struct synthetic *s = calloc(1, sizeof(*s));

	(void)host;
	if (!s)
		return -ENOMEM;
	s->bench_per_family = 1000;
	if (c->get_u64(conf, "bench_series", 0, 100000000, &s->bench_series) == -EINVAL ||
	    c->get_u64(conf, "bench_series_per_family", 1, 100000000, &s->bench_per_family) ==
		-EINVAL ||
	    c->get_duration(conf, "sleep_seconds", 0, 3600, &s->sleep_s) == -EINVAL ||
	    c->get_duration(conf, "linger_seconds", 0, 3600, &s->linger_s) == -EINVAL ||
	    c->get_bool(conf, "fail", &s->fail) == -EINVAL ||
	    c->get_bool(conf, "hostile", &s->hostile) == -EINVAL ||
	    c->get_bool(conf, "huge", &s->huge) == -EINVAL) {
		free(s);
		return -EINVAL;
	}
	for (unsigned i = 0; i < SYNTHETIC_INSTANCES; i++)
		snprintf(s->instance[i], sizeof(s->instance[i]), "host-%u", i);
	*state = s;
	return 0;
}

/* Things a careless collector might write: each is refused and counted. */
static void emit_hostile(struct bs_emitter *em)
{
	struct bs_label bad_utf8 = {"value", "ok\xff\xfe"};
	struct bs_label dup = {"n", "1"};

	bs_family(em, "synthetic_hostile", BS_GAUGE, NULL, "Invalid input, repaired or dropped.");
	bs_sample_u64(em, &bad_utf8, 1, 1);
	bs_sample_u64(em, &dup, 1, 1);
	bs_sample_u64(em, &dup, 1, 2);				     /* duplicate series */
	bs_family(em, "synthetic_hostile", BS_GAUGE, NULL, "twice"); /* duplicate family */
	bs_family(em, "0bad name", BS_GAUGE, NULL, "invalid name");
	bs_drop(em, "synthetic_reason", 3);
}

/* Gauges 5e288 a collect apart, one rising, one falling: the processing's
 * double VOIs of their rates reach +Inf and -Inf once summed. */
static void emit_huge(struct synthetic *s, struct bs_emitter *em)
{
	struct bs_label sign = {"sign", "up"};

	bs_family(em, "synthetic_huge", BS_GAUGE, NULL, "Values near the largest double.");
	bs_sample_f64(em, &sign, 1, (double)s->scrapes * 5e288);
	sign.value = "down";
	bs_sample_f64(em, &sign, 1, -(double)s->scrapes * 5e288);
}

/* Counts a decimal string up by one in place: "dev9" -> "dev10". */
static void decimal_increment(char *s, size_t prefix)
{
	size_t n = strlen(s);
	size_t i = n;

	while (i > prefix && s[i - 1] == '9')
		s[--i] = '0';
	if (i > prefix) {
		s[i - 1]++;
		return;
	}
	memmove(s + prefix + 1, s + prefix, n - prefix + 1);
	s[prefix] = '1';
}

static void emit_bench(struct synthetic *s, struct bs_emitter *em)
{
	char fam[64], dev[24] = "dev0";
	struct bs_label l[3] = {{"instance", NULL}, {"device", dev}, {"mode", "user"}};

	for (uint64_t i = 0; i < s->bench_series; i++, decimal_increment(dev, 3)) {
		if (i % s->bench_per_family == 0) {
			snprintf(fam, sizeof(fam), "synthetic_bench_%llu_bytes",
				 (unsigned long long)(i / s->bench_per_family));
			bs_family(em, fam, BS_GAUGE, "bytes", "Benchmark series.");
			if (em->ops->expired(em))
				return;
		}
		l[0].value = s->instance[i % SYNTHETIC_INSTANCES];
		if (i & 1)
			bs_sample_u64(em, l, 3, i * 4096);
		else
			bs_sample_f64(em, l, 3, (double)i / 8.0);
	}
}

/* A slow source that stops when asked: polls expired every millisecond,
 * then writes one more family (which an emitter that said expired may
 * swallow). */
static void linger(struct bs_emitter *em, double seconds)
{
	struct timespec ms = {0, 1000000};

	for (double waited = 0; waited < seconds && !em->ops->expired(em); waited += 0.001)
		nanosleep(&ms, NULL);
	bs_family(em, "synthetic_lingered", BS_GAUGE, NULL, "Written after lingering.");
	bs_sample_u64(em, NULL, 0, 1);
}

static int synthetic_collect(void *state, struct bs_emitter *em)
{
	struct synthetic *s = state;

	if (s->sleep_s > 0) {
		struct timespec ts = {(time_t)s->sleep_s,
				      (long)((s->sleep_s - floor(s->sleep_s)) * 1e9)};
		nanosleep(&ts, NULL);
	}
	if (s->fail)
		return -EIO;
	bs_family(em, "synthetic_scrapes_total", BS_COUNTER, NULL, "Collects so far.");
	bs_sample_u64(em, NULL, 0, ++s->scrapes);
	if (s->scrapes == 1 && s->linger_s > 0)
		linger(em, s->linger_s);
	if (s->hostile)
		emit_hostile(em);
	if (s->huge)
		emit_huge(s, em);
	emit_bench(s, em);
	return 0;
}

static void synthetic_shutdown(void *state)
{
	free(state);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_synthetic = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "synthetic",
    .description = "series, delays, failures and invalid items on demand, for tests",
    .init = synthetic_init,
    .collect = synthetic_collect,
    .shutdown = synthetic_shutdown,
};
