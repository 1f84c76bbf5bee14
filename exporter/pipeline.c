/* One configuration generation: the collectors, then the processing stage
 * that samples them through a callback and is scraped as a source. */
#include "pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "processing.h"

static int sample(void *set, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	return collset_sample(set, i, e, wait_ns);
}

static int attach_processing(struct collset *set, const struct bs_host *host)
{
	const struct config *cfg = collset_config(set);
	struct stage_input in = {.n = collset_count(set), .collect = sample, .ctx = set};
	struct processing *p;
	int rc;

	if ((rc = processing_new(cfg->processing, &p)) < 0)
		return rc;
	if ((rc = collset_add_builtin(set, processing_collector(), p, processing_release)) < 0) {
		processing_free(p);
		return rc;
	}
	/* The set owns p now; a sampler that cannot start leaves the
	 * interface and the scrape's figures, without new samples. */
	if (!(host->flags & BS_HOST_CHECK_ONLY) && (rc = processing_start(p, &in)) < 0)
		log_error("processing sampler failed to start", "err", strerror(-rc));
	return 0;
}

int pipeline_build(struct config *cfg, const struct bs_host *host, struct collset **out, char *err,
		   size_t errlen)
{
	bool processing = cfg->processing != NULL;
	struct collset *set;
	int rc;

	if ((rc = collset_build(cfg, host, &set, err, errlen)) < 0)
		return rc;
	if (processing && (rc = attach_processing(set, host)) < 0) {
		snprintf(err, errlen, "cannot start the processing: %s", strerror(-rc));
		collset_put(set);
		return rc;
	}
	*out = set;
	return 0;
}

void pipeline_hand_over(struct collset *set, struct collset *old)
{
	const char *name = processing_collector()->name;
	struct processing *p = collset_builtin(set, name),
			  *o = old ? collset_builtin(old, name) : NULL;

	if (p && o)
		processing_take_over(p, o);
}
