/* A blocking gatherer of DCI4 (docs/dci4-transport.md): describe one
 * supplier's statistics and read their values, trusting nothing. dci4stat
 * uses it; the DCI collector asks every supplier at once instead
 * (collectors/dci/dci_exchange.c), and both find suppliers with dci4_dir.h. */
#ifndef DCI4_GATHERER_H
#define DCI4_GATHERER_H

#include <stddef.h>
#include <stdint.h>

#include "dci4_wire.h"

#define DCI4_GATHER_STATS_MAX 65535 /* max_stat + 1 a gatherer accepts */

struct dci4_conn {
	int fd;
	int timeout_ms; /* for each reply */
};

/* Connects to the socket at path; -errno (ECONNREFUSED: a supplier gone). */
int dci4_connect(struct dci4_conn *c, const char *path, int timeout_ms);
void dci4_disconnect(struct dci4_conn *c);

int dci4_info(struct dci4_conn *c, struct dci4_info *info);
/* Describes statistics 0..max_stat into descs (room for max_stat + 1),
 * asking again where a reply stopped short. -EPROTO on a malformed reply. */
int dci4_describe_all(struct dci4_conn *c, uint32_t max_stat, struct dci4_desc *descs);
/* Reads first..last into values (their sizes added up), at offsets[i] for
 * statistic i; several requests if one does not hold them. */
int dci4_read_range(struct dci4_conn *c, const struct dci4_desc *descs, uint32_t first,
		    uint32_t last, uint8_t *values, const size_t *offsets);

#endif
