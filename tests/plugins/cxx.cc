/* A collector written in C++: the header must give its table C linkage
 * and export it although it is const (tests/integration/cli.sh builds it). */
#include <binstat/collector.h>
#include <cerrno>
static int init(const struct bs_host *, const struct bs_conf *, void **state) { *state = nullptr; return 0; }
static int collect(void *, struct bs_emitter *em)
{
	bs_family(em, "cxx_up", BS_GAUGE, nullptr, "A collector written in C++.");
	bs_sample_u64(em, nullptr, 0, 1);
	return 0;
}
static void shutdown_(void *) {}
BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_cxx = {
    BS_COLLECTOR_ABI_VERSION, "cxx", "C++ test", init, collect, shutdown_, nullptr,
};
