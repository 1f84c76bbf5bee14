/* The DCI4 supplier library: an application declares statistics, updates
 * them from any thread, and serves gatherers on a socket in the supplier
 * directory (docs/dci4-transport.md). */
#ifndef DCI4_SUPPLIER_H
#define DCI4_SUPPLIER_H

#include <stddef.h>
#include <stdint.h>

#include "dci4_wire.h"

#define DCI4_DEFAULT_DIR "/run/dci4"
#define DCI4_STATS_MAX 65536

/* One statistic as the application declares it; `size` is its value's
 * bytes in SA_READ (a multiple of 4; 0 for ST_UNUSED). */
struct dci4_stat {
	uint32_t type, format, presentation, size, volatility;
	const char *name;
};

struct dci4_supplier_conf {
	const char *dir;  /* NULL: $DCI4_SUPPLIER_DIR, else /run/dci4 */
	const char *name; /* the socket's name: [A-Za-z0-9._-]{1,64} */
	uint32_t type, s_version;
	const char *module, *title, *description;
};

struct dci4_supplier;

/* Creates the supplier and its socket; `stats` is copied. NULL with *err
 * set (-errno) on failure. */
struct dci4_supplier *dci4_supplier_open(const struct dci4_supplier_conf *conf,
					 const struct dci4_stat *stats, size_t n, int *err);
/* Stops serving, removes the socket, frees everything. */
void dci4_supplier_close(struct dci4_supplier *s);

/* Adds to integer statistics, atomically as a group: a read sees all of
 * these deltas or none. Any thread; waits at most for a pointer swap. */
void dci4_add(struct dci4_supplier *s, size_t n, const uint32_t *stats, const uint64_t *deltas);
/* Sets a statistic's value: for an integer statistic the host-order integer
 * (len up to 8), for any other its bytes as SA_READ lays them out. */
void dci4_set(struct dci4_supplier *s, uint32_t stat, const void *value, size_t len);

/* Serving from the application's event loop: poll this fd for input, then
 * call dispatch, which handles what is ready without blocking for long. */
int dci4_supplier_fd(const struct dci4_supplier *s);
int dci4_supplier_dispatch(struct dci4_supplier *s);
/* Or from the library's own thread. */
int dci4_supplier_start(struct dci4_supplier *s);

#endif
