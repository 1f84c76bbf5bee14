/* The DCI benchmark's suppliers: N effective suppliers of S 64-bit counters
 * each, in one process, every counter moving ten times a second.
 *   bench_dci_suppliers DIR N S */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dci4_supplier.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = (int)strtol(argv[2], NULL, 10), ns = (int)strtol(argv[3], NULL, 10), err = 0;
	struct dci4_supplier **sup = calloc((size_t)n, sizeof(*sup));
	struct dci4_stat *stats = calloc((size_t)ns, sizeof(*stats));
	char(*names)[32] = calloc((size_t)ns, 32);
	uint32_t *ids = calloc((size_t)ns, sizeof(*ids));
	uint64_t *ones = calloc((size_t)ns, sizeof(*ones));

	signal(SIGTERM, on_term);
	for (int k = 0; k < ns; k++) {
		snprintf(names[k], 32, "counter_%03d", k);
		stats[k] =
		    (struct dci4_stat){ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, names[k]};
		ids[k] = (uint32_t)k;
		ones[k] = 1;
	}
	for (int i = 0; i < n; i++) {
		char name[32], title[32];
		snprintf(name, sizeof(name), "bench.%03d", i);
		snprintf(title, sizeof(title), "unit %d", i);
		struct dci4_supplier_conf c = {argv[1], name,  SPT_GENERAL_SUPPLIER,  100,
					       "bench", title, "A benchmark supplier"};
		if (!(sup[i] = dci4_supplier_open(&c, stats, (size_t)ns, &err)) ||
		    dci4_supplier_start(sup[i]) < 0) {
			fprintf(stderr, "bench_dci_suppliers: supplier %d: %s\n", i,
				strerror(-err));
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		for (int i = 0; i < n; i++)
			dci4_add(sup[i], (size_t)ns, ids, ones);
		nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	for (int i = 0; i < n; i++)
		dci4_supplier_close(sup[i]);
	free(sup);
	free(stats);
	free(names);
	free(ids);
	free(ones);
	return 0;
}
