/* stats(3)'s template list as interface verbs (tpl.c). Under the lock. */
#ifndef BS_TPL_H
#define BS_TPL_H

#include <stdint.h>

#include "stage.h"
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
 * spec; a template's schema as JSON (stats_tpl_fetch); the list in the
 * form of FreeBSD's kern.stats.templates sysctl. */
enum tpl_format { TPL_TEXT, TPL_JSON, TPL_SYSCTL, TPL_BLOB /* a source's, blobreply.c */ };
/* GET templates[/<id or spec>]. */
void tpl_get(struct processing *p, const char *what, enum tpl_format f, struct stage_reply *r);
/* A source's blob as stats_blob_tostr's JSON. */
void tpl_json(struct processing *p, struct source *s, struct stage_reply *r);

#endif
