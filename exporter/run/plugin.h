/* Loads collector plugins (shared objects) and checks their ABI. */
#ifndef BS_PLUGIN_H
#define BS_PLUGIN_H

#include <stddef.h>

#include <binstat/collector.h>

/* Finds <dir>/<name>.so and its binstat_collector_<name>. Loaded plugins
 * stay loaded for the process' life: a timed-out collect may still run in
 * one. Returns 0, or -errno with a message naming the file in err. */
int plugin_load(const char *dir, const char *name, const struct bs_collector **out, char *err,
		size_t errlen);

#endif
