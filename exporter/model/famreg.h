/* Every metric name claimed in one scrape, across collectors: a family
 * emitted twice, or one whose names clash with another's, is refused. */
#ifndef BS_FAMREG_H
#define BS_FAMREG_H

#include <pthread.h>
#include <stddef.h>

#include <binstat/collector.h>

struct famreg {
	pthread_mutex_t lock;
	char **name;
	size_t cap;
	size_t used;
};

int famreg_init(struct famreg *r);
/* Claims the family `base` of `type` and every name its samples use.
 * Returns 0, -EEXIST when any is taken, -ENOMEM. */
int famreg_claim(struct famreg *r, const char *base, size_t len, enum bs_metric_type type);
void famreg_free(struct famreg *r);

#endif
