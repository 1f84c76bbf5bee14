/* A plugin built for ABI 1, the oldest this exporter loads: it uses only
 * the operations version 1 had, as a binary built then would. */
#include <binstat/collector.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct abi1 {
	uint64_t value;
};

static int abi1_init(const struct bs_host *h, const struct bs_conf *c, void **s)
{
	struct abi1 *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->value = 1;
	/* "abi1:" with nothing after it must arrive as an empty map */
	if (c->ops->kind(c) != BS_CONF_MAP ||
	    c->ops->get_u64(c, "value", 0, 1000, &a->value) == -EINVAL) {
		free(a);
		return -EINVAL;
	}
	/* bs_host.log as ABI 1 had it: its pairs must arrive as fields. */
	char v[24];
	snprintf(v, sizeof(v), "%llu", (unsigned long long)a->value);
	h->log(BS_LOG_INFO, "abi1", "abi1 ready", "value", v, (char *)NULL);
	/* Keys the line writes itself: they must not be duplicated or
	 * overridden by the collector's pairs. */
	h->log(BS_LOG_INFO, "abi1", "odd keys", "msg", "INJECTED", "level", "debug", "collector",
	       "other", (char *)NULL);
	*s = a;
	return 0;
}

static int abi1_collect(void *s, struct bs_emitter *em)
{
	const struct abi1 *a = s;

	bs_family(em, "abi1_value", BS_GAUGE, NULL, "The value option of an ABI 1 plugin.");
	return bs_sample_u64(em, NULL, 0, a->value);
}

static void abi1_shutdown(void *s)
{
	free(s);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_abi1 = {
    .abi_version = 1,
    .name = "abi1",
    .init = abi1_init,
    .collect = abi1_collect,
    .shutdown = abi1_shutdown,
};
