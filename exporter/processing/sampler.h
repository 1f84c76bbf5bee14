/* The sampler thread and its passes (sampler.c). */
#ifndef BS_SAMPLER_H
#define BS_SAMPLER_H

#include <stdint.h>

#include "stage.h"

struct processing;

int sampler_start(struct processing *p, const struct stage_input *in);
/* Stops the thread (joined); nothing when it never started. */
void sampler_stop(struct processing *p);
/* One sampling pass due at due_ns, run at now_ns (the sampler's; tests
 * call it directly): values are read at now, and the Linux statistics
 * infrastructure takes them at the time they were due. sampler_tick:
 * due when it runs. */
void sampler_tick_at(struct processing *p, uint64_t due_ns, uint64_t now_ns);
void sampler_tick(struct processing *p, uint64_t now_ns);

#endif
