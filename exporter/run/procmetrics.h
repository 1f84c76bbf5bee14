/* The standard process_* metrics every Prometheus exporter serves. */
#ifndef BS_PROCMETRICS_H
#define BS_PROCMETRICS_H

#include <binstat/collector.h>

void procmetrics_emit(struct bs_emitter *em);
/* Parses /proc/self/stat text; exposed for tests. */
int procmetrics_parse_stat(const char *text, double ticks, double *cpu_s,
			   double *start_since_boot_s, unsigned long long *vsize,
			   long long *rss_pages);

#endif
