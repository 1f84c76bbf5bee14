/* The /statistics/ interface (iface.c). */
#ifndef BS_IFACE_H
#define BS_IFACE_H

#include <stdbool.h>
#include <stdint.h>

#include "stage.h"

struct processing;

/* processing_iface's work: takes the lock, answers in r. */
void iface_request(struct processing *p, const char *method, const char *path, const char *body,
		   bool may_write, uint64_t now_ns, struct stage_reply *r);

#endif
