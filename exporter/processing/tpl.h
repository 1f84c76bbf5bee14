/* stats(3)'s template list as interface verbs (tpl.c). Under the lock. */
#ifndef BS_TPL_H
#define BS_TPL_H

#include <stdbool.h>
#include <stdint.h>

#include "stage.h"
#include "tostr.h"
#include "vstats.h"

struct processing;
struct source;

/* The template list (slot ids, hashes) and the rates in force, from conf. */
void tpl_init(struct processing *p);
/* Template id's name. */
const char *tpl_name(const struct processing *p, uint32_t id);
/* stats_tpl_fetch_allocid: the last template matching the name (and the
 * hash, when given), or the hash alone; -ESRCH for none. */
int tpl_find(const struct processing *p, const struct vstats_tplspec *spec);
/* How the template list and a template are written: lines of slot id and
 * spec; a template's schema as JSON or freeform text (stats_tpl_fetch); the list in the
 * form of FreeBSD's kern.stats.templates sysctl. */
enum tpl_format {
	TPL_TEXT,
	TPL_JSON,
	TPL_SYSCTL,
	TPL_FREEFORM,
	TPL_BLOB, /* a source's blob as V1 bytes (blobreply.c) */
};
/* A request's query: the format, and stats_blob_tostr's flags
 * (TOSTR_META, TOSTR_OBJDUMP) for the two it writes. */
struct tpl_query {
	enum tpl_format f;
	uint32_t flags;
};

/* Whether f is one of stats_blob_tostr's (SB_STRFMT_JSON, _FREEFORM). */
static inline bool tpl_is_tostr(enum tpl_format f)
{
	return f == TPL_JSON || f == TPL_FREEFORM;
}

static inline enum tostr_fmt tpl_tostr_fmt(enum tpl_format f)
{
	return f == TPL_JSON ? TOSTR_JSON : TOSTR_FREEFORM;
}

/* GET templates[/<id or spec>]. */
void tpl_get(struct processing *p, const char *what, const struct tpl_query *q,
	     struct stage_reply *r);
/* A source's blob as stats_blob_tostr writes it in q's format. */
void tpl_tostr(struct processing *p, struct source *s, const struct tpl_query *q,
	       struct stage_reply *r);

#endif
