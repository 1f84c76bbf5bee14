/* Test helpers of the processing's suites: a processing made from a YAML
 * configuration, scraped, and asked through its /statistics/ interface. */
#ifndef BS_TEST_PROCESSING_HELPERS_H
#define BS_TEST_PROCESSING_HELPERS_H

#include "helpers.h"

#include "config.h"
#include "feed.h"
#include "processing.h"
#include "sampler.h"
#include "srctab.h"
#include "stage_priv.h"

#define S(sec) ((uint64_t)((sec)*1e9 + 0.5))

static struct config *cfg;

/* What a suite does to each processing it makes (its own clock, say). */
#ifndef PROCESSING_TEST_MADE
#define PROCESSING_TEST_MADE(p) ((void)(p))
#endif

static inline struct processing *make(const char *yaml)
{
	char err[CONF_ERR_MAX];
	struct processing *p;

	cfg = config_load("t.yml", yaml, "/plugins", err, sizeof(err));
	if (!cfg)
		fail_msg("config: %s", err);
	assert_non_null(cfg->processing);
	assert_int_equal(processing_new(cfg->processing, &p), 0);
	PROCESSING_TEST_MADE(p);
	return p;
}

static inline void done(struct processing *p)
{
	processing_free(p);
	config_free(cfg);
}

/* A scrape of the processing, and the emitter's drops that are not the
 * type conflicts a test may make on purpose. */
static inline char *metrics_dropping(struct processing *p, uint64_t *invalid)
{
	struct capture c;
	capture_begin(&c, EXPO_TEXT, 1 << 24);
	assert_int_equal(processing_collector()->collect(p, &c.em.pub), 0);
	char *text = strdup(capture_end(&c));
	*invalid = 0;
	for (size_t i = 0; i < c.em.ndrops; i++)
		if (strcmp(c.em.drops[i].reason, "type_conflict") != 0)
			*invalid += c.em.drops[i].n;
	capture_free(&c);
	return text;
}

static inline char *metrics(struct processing *p)
{
	uint64_t dropped;
	return metrics_dropping(p, &dropped);
}

static inline char *iface_as(struct processing *p, const char *method, const char *path,
			     const char *body, bool may_write, uint64_t now, int *status)
{
	struct stage_reply r;
	processing_iface(p, method, path, body, may_write, now, &r);
	*status = r.status;
	char *text = strdup(r.text.p ? r.text.p : "");
	textbuf_free(&r.text);
	return text;
}

static inline void has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing '%s' in:\n%s", want, text);
}

#endif
