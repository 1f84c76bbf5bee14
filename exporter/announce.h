/* What the operator is told of what runs: the collectors and their
 * state in --help, and the start-up log's collectors and web settings. */
#ifndef BS_ANNOUNCE_H
#define BS_ANNOUNCE_H

#include "cli.h"
#include "collset.h"

/* After the flags in --help: each collector the configuration names or
 * the plugin folder holds, whether it would run, and why. */
void announce_help_collectors(const struct cli *cli);

/* Each --collector.NAME and --no-collector.NAME names a collector the
 * configuration, the plugin folder or the built-ins know (what --help
 * lists); else -1 with err naming the flag and the known ones. 0 when the
 * configuration cannot be read: loading it says why. */
int announce_check_collector_flags(const struct cli *cli, char *err, size_t errlen);

/* Logs, once started, the collectors that run, failed or are off, and
 * whether TLS, client certificates, basic auth and rate limits are on. */
void announce_start(const struct cli *cli, struct collset *set);

#endif
