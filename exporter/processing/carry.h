/* A reload's hand-over of the processing's data (carry.c). */
#ifndef BS_CARRY_H
#define BS_CARRY_H

struct processing;

/* p, built from the new configuration (its sampler running or not),
 * takes old's sources for every group whose selection is the same, each
 * keeping the statistics and template whose definitions are; old's
 * sampler is stopped for good. Changed definitions are logged. */
void carry_over(struct processing *p, struct processing *old);

#endif
