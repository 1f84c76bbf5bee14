/* A reload's hand-over of the processing's data (takeover.c). */
#ifndef BS_TAKEOVER_H
#define BS_TAKEOVER_H

struct processing;

/* p, built from the new configuration (its sampler running or not),
 * takes old's sources for every group whose selection is the same, each
 * keeping the statistics and template whose definitions are; old's
 * sampler is stopped for good. Changed definitions are logged. */
void takeover_apply(struct processing *p, struct processing *old);

#endif
