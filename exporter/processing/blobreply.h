/* A source's blob in stats(3)'s V1 bytes as an interface verb
 * (blobreply.c). Under the lock. */
#ifndef BS_BLOBREPLY_H
#define BS_BLOBREPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "stage.h"

struct processing;
struct source;

/* GET data?format=blob and POST snapshot?format=blob: the source's blob
 * cloned as stats_blob_clone (snapshot: stats_blob_snapshot) clones it,
 * with the clone= and dstmaxsz= options of query (the request's, "a=b&c=d"
 * with format=blob among them). */
void blobreply(struct processing *p, struct source *s, const char *query, bool snapshot,
	       uint64_t now_ns, struct stage_reply *r);

#endif
