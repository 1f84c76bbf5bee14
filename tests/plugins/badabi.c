/* A plugin built for another ABI version: the loader must refuse it by name. */
#include <binstat/collector.h>

static int nop_init(const struct bs_host *h, const struct bs_conf *c, void **s)
{
	(void)h;
	(void)c;
	*s = 0;
	return 0;
}

static int nop_collect(void *s, struct bs_emitter *em)
{
	(void)s;
	(void)em;
	return 0;
}

static void nop_shutdown(void *s)
{
	(void)s;
}

const struct bs_collector binstat_collector_badabi = {
    .abi_version = BS_COLLECTOR_ABI_VERSION + 1,
    .name = "badabi",
    .init = nop_init,
    .collect = nop_collect,
    .shutdown = nop_shutdown,
};
