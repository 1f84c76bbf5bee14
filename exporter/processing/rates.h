/* stats(3)'s sample rates as interface verbs (rates.c). Under the lock. */
#ifndef BS_RATES_H
#define BS_RATES_H

#include "stage.h"

struct processing;

/* GET sample_rates, and POST: all or nothing, within max_memory_bytes. */
void rates_get(struct processing *p, struct stage_reply *r);
void rates_post(struct processing *p, const char *body, struct stage_reply *r);

#endif
