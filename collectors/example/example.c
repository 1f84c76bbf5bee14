/* The example collector: one family of every metric type, plus knobs the
 * tests and benchmarks use. Copy this file to start a new collector. */
#include <binstat/collector.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct example {
	const struct bs_host *host;
	uint64_t scrapes;
	uint64_t bench_series; /* extra gauge series, for benchmarks */
	uint64_t bench_per_family;
	double sleep_s; /* delay each collect, for deadline tests */
	bool fail;	/* make collect fail */
	bool hostile;	/* emit invalid items, to show they are counted */
};

/* Each option: absent keeps the default, present and wrong fails init. */
static int example_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	const struct bs_conf_ops *c = conf->ops;
	struct example *ex = calloc(1, sizeof(*ex));
	int rc = 0;

	if (!ex)
		return -ENOMEM;
	ex->host = host;
	ex->bench_per_family = 1000;
	if ((rc = c->get_u64(conf, "bench_series", 0, 100000000, &ex->bench_series)) == -EINVAL ||
	    (rc = c->get_u64(conf, "bench_series_per_family", 1, 100000000,
			     &ex->bench_per_family)) == -EINVAL ||
	    (rc = c->get_f64(conf, "sleep_seconds", 0, 3600, &ex->sleep_s)) == -EINVAL ||
	    (rc = c->get_bool(conf, "fail", &ex->fail)) == -EINVAL ||
	    (rc = c->get_bool(conf, "hostile", &ex->hostile)) == -EINVAL) {
		free(ex);
		return rc;
	}
	*state = ex;
	return 0;
}

static void emit_types(struct example *ex, struct bs_emitter *em)
{
	static const double upper[] = {0.001, 0.01, 0.1, 1};
	static const uint64_t count[] = {3, 5, 0, 2, 1}; /* last: above 1 */
	static const double bounds_inf[] = {0.001, 0.01, 0.1, 1, INFINITY};
	static const double q[] = {0.5, 0.9, 0.99};
	static const double qv[] = {0.002, 0.05, 0.8};
	static const char *const states[] = {"running", "paused", "stopped"};
	static const bool active[] = {true, false, false};
	struct bs_label dev[] = {{"device", "vda"}};
	struct bs_label info[] = {{"version", "1.0"}, {"host", "example"}};

	bs_family(em, "example_events_total", BS_COUNTER, NULL,
		  "Events seen; one series sits at 2^64-1 to prove exact integers.");
	bs_sample_u64(em, dev, 1, ++ex->scrapes);
	dev[0].value = "max";
	bs_sample_u64(em, dev, 1, UINT64_MAX);

	bs_family(em, "example_temperature_celsius", BS_GAUGE, "celsius",
		  "A gauge with a unit, and the special float values.");
	struct bs_label which = {"which", "current"};
	bs_sample_f64(em, &which, 1, 21.5);
	which.value = "nan";
	bs_sample_f64(em, &which, 1, NAN);
	which.value = "high";
	bs_sample_f64(em, &which, 1, INFINITY);
	which.value = "low";
	bs_sample_f64(em, &which, 1, -INFINITY);

	struct bs_histogram h = {4, upper, count, true, {.kind = BS_VAL_F64, .f = 3.25}};
	struct bs_histogram h_inf = {5, bounds_inf, count, false, {.kind = BS_VAL_U64}};
	bs_family(em, "example_latency_seconds", BS_HISTOGRAM, "seconds",
		  "A histogram with a sum, and one without (the last bound +Inf).");
	dev[0].value = "vda";
	em->ops->histogram(em, dev, 1, &h);
	dev[0].value = "vdb";
	em->ops->histogram(em, dev, 1, &h_inf);

	struct bs_summary s = {3, q, qv, 11, {.kind = BS_VAL_F64, .f = 4.5}};
	bs_family(em, "example_rpc_seconds", BS_SUMMARY, "seconds", "A summary with quantiles.");
	em->ops->summary(em, NULL, 0, &s);

	bs_family(em, "example_build", BS_INFO, NULL, "An info metric.");
	bs_info(em, info, 2);

	bs_family(em, "example_state", BS_STATESET, NULL, "A state set.");
	em->ops->stateset(em, NULL, 0, states, active, 3);

	bs_family(em, "example_mystery", BS_UNKNOWN, NULL, "Of unknown type.");
	bs_sample_i64(em, NULL, 0, -42);
}

/* Things a careless collector might write: each is refused and counted. */
static void emit_hostile(struct bs_emitter *em)
{
	struct bs_label bad_utf8 = {"value", "ok\xff\xfe"};
	struct bs_label dup = {"n", "1"};

	bs_family(em, "example_hostile", BS_GAUGE, NULL, "Invalid input, repaired or dropped.");
	bs_sample_u64(em, &bad_utf8, 1, 1);
	bs_sample_u64(em, &dup, 1, 1);
	bs_sample_u64(em, &dup, 1, 2);				   /* duplicate series */
	bs_family(em, "example_hostile", BS_GAUGE, NULL, "twice"); /* duplicate family */
	bs_family(em, "0bad name", BS_GAUGE, NULL, "invalid name");
	bs_drop(em, "example_reason", 3);
}

static void emit_bench(struct example *ex, struct bs_emitter *em)
{
	char fam[64], a[24], b[24];
	struct bs_label l[3] = {{"instance", a}, {"device", b}, {"mode", "user"}};

	for (uint64_t i = 0; i < ex->bench_series; i++) {
		if (i % ex->bench_per_family == 0) {
			snprintf(fam, sizeof(fam), "example_bench_%llu_bytes",
				 (unsigned long long)(i / ex->bench_per_family));
			bs_family(em, fam, BS_GAUGE, "bytes", "Benchmark series.");
			if (em->ops->expired(em))
				return;
		}
		snprintf(a, sizeof(a), "host-%llu", (unsigned long long)(i % 97));
		snprintf(b, sizeof(b), "dev%llu", (unsigned long long)i);
		if (i & 1)
			bs_sample_u64(em, l, 3, i * 4096);
		else
			bs_sample_f64(em, l, 3, (double)i / 8.0);
	}
}

static int example_collect(void *state, struct bs_emitter *em)
{
	struct example *ex = state;

	if (ex->sleep_s > 0) {
		struct timespec ts = {(time_t)ex->sleep_s,
				      (long)((ex->sleep_s - floor(ex->sleep_s)) * 1e9)};
		nanosleep(&ts, NULL);
	}
	if (ex->fail)
		return -EIO;
	emit_types(ex, em);
	if (ex->hostile)
		emit_hostile(em);
	emit_bench(ex, em);
	return 0;
}

static void example_shutdown(void *state)
{
	free(state);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_example = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "example",
    .description = "one family of every metric type, for tests and as a model",
    .init = example_init,
    .collect = example_collect,
    .shutdown = example_shutdown,
};
