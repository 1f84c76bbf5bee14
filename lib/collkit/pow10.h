/* Powers of ten, exact: as integers (KVM's units scaled exactly, the
 * exposition's digit counts) and as doubles (a division by one is
 * correctly rounded, as strtod rounds a decimal). */
#ifndef POW10_H
#define POW10_H

#include <stdint.h>

#define POW10_U64_MAX 19 /* 10^19 is the last below 2^64 */

/* pow10_u64[k] = 10^k, for k <= POW10_U64_MAX. */
extern const uint64_t pow10_u64[POW10_U64_MAX + 1];

#define POW10_F64_MAX 22 /* 10^22 is the last a double holds exactly */

/* pow10_f64[k] = 10^k, exactly, for k <= POW10_F64_MAX. */
extern const double pow10_f64[POW10_F64_MAX + 1];

#endif
