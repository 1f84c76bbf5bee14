/* Reading the pages of the PV statistics interface (their layout:
 * lib/pvstats/pvstats_wire.h). Pure functions over copies of guest pages. */
#ifndef XEN_PAGE_H
#define XEN_PAGE_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pvstats_wire.h"

#define XEN_NAME_MAX PVSTATS_NAME_FIELD

/* A statistic as its name page gives it. */
struct xen_tuple {
	uint8_t type;
	uint32_t slot; /* tuple index over all pages: the value's place too */
	char name[XEN_NAME_MAX + 1];
};

/* True for a NUL-terminated name of (isalnum || ispunct || ' ') within
 * `max` bytes, in the C locale; *len gets its length. */
bool xen_name_valid(const char *s, size_t max, size_t *len);

typedef void xen_reject_fn(void *ctx, const char *reason);

/* Reads the tuples of `npages` copied name pages into out (room for
 * npages * 64), stopping at type 0. A tuple with an unknown type or a bad
 * name is left out and reported (unknown_type, bad_name). Returns how many
 * statistics were taken. */
size_t xen_parse_names(const uint8_t *pages, size_t npages, struct xen_tuple *out,
		       xen_reject_fn *reject, void *ctx);

/* A value slot (64 bytes of a value page). A number is its first 8 bytes,
 * little-endian, read once (from the guest's page itself: nothing is
 * checked); an ASCII value is checked like a name (false if bad), on a
 * copy. */
static inline uint64_t xen_value_u64(const uint8_t *slot)
{
	uint64_t v;
	memcpy(&v, slot, sizeof(v));
	return le64toh(v);
}
bool xen_value_ascii(const uint8_t *slot, const char **text);

#endif
