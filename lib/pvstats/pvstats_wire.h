/* The page layout of Xen PV statistics sets (docs/xen-pv-stats.md), the
 * one definition the provider library and the collector share: name pages of
 * 64-byte {uint8_t type; char name[63];} tuples ending at type 0, and value
 * pages with each statistic's 64-byte value at its tuple's offset. */
#ifndef PVSTATS_WIRE_H
#define PVSTATS_WIRE_H

#define PVSTATS_PAGE_SIZE 4096
#define PVSTATS_TUPLE_SIZE 64
#define PVSTATS_PER_PAGE (PVSTATS_PAGE_SIZE / PVSTATS_TUPLE_SIZE)
#define PVSTATS_NAME_FIELD 63 /* bytes of a tuple's name, NUL included */

/* A tuple's type byte. */
#define PVSTATS_END 0 /* no more statistics */
#define PVSTATS_S64 1
#define PVSTATS_U64 2
#define PVSTATS_DOUBLE 3
#define PVSTATS_ASCII 4 /* a value of up to 63 bytes of text */

#endif
