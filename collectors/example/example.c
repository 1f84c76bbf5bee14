/* The example collector: one family of every metric type, and the shape
 * every collector has (init reads options, collect writes, shutdown frees).
 * Copy this folder to start a new collector. */
#include <binstat/collector.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct example {
	const struct bs_host *host;
	uint64_t scrapes;
	char host_label[64]; /* the `host` label of example_build */
};

/* Each option: absent keeps the default, present and wrong fails init
 * (the host already holds a message with file, line and column). */
static int example_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	const struct bs_conf_ops *c = conf->ops;
	struct example *ex = calloc(1, sizeof(*ex));
	const char *name = "example";

	if (!ex)
		return -ENOMEM;
	ex->host = host;
	if (c->get_str(conf, "host_label", &name) == -EINVAL) {
		free(ex);
		return -EINVAL;
	}
	if (snprintf(ex->host_label, sizeof(ex->host_label), "%s", name) >=
	    (int)sizeof(ex->host_label)) {
		free(ex);
		return c->errorf(c->child(conf, "host_label"), "host_label: at most %zu bytes",
				 sizeof(ex->host_label) - 1);
	}
	*state = ex; /* set only on success: the host never reads it otherwise */
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
	struct bs_label info[] = {{"version", "1.0"}, {"host", ex->host_label}};

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

static int example_collect(void *state, struct bs_emitter *em)
{
	emit_types(state, em);
	return 0;
}

static void example_shutdown(void *state)
{
	free(state);
}

/* Optional (ABI 3): what the landing page says this collector found. */
static void example_describe(void *state, char *buf, size_t len)
{
	(void)state;
	snprintf(buf, len, "8 families, one of each metric type");
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_example = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "example",
    .description = "one family of every metric type, the model to copy",
    .init = example_init,
    .collect = example_collect,
    .shutdown = example_shutdown,
    .describe = example_describe,
};
