/* The built-in collector "processing" (emit.c). */
#ifndef BS_EMIT_H
#define BS_EMIT_H

#include <binstat/collector.h>

/* Its state is the struct processing. */
extern const struct bs_collector emit_collector;

#endif
