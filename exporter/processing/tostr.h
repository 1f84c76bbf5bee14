/* FreeBSD stats(3)'s stats_blob_tostr and stats_voistatdata_tostr: a
 * blob, or one statistic's data, as the text FreeBSD's
 * sys/kern/subr_stats.c writes (tostr.c). The renderers are pure over
 * the VOIs given; tostr_get runs under the processing's lock. */
#ifndef BS_TOSTR_H
#define BS_TOSTR_H

#include <stdint.h>

#include "processing_conf.h"
#include "stage.h"
#include "textbuf.h"
#include "vstats.h"

/* SB_STRFMT_FREEFORM, SB_STRFMT_JSON. */
enum tostr_fmt { TOSTR_FREEFORM, TOSTR_JSON };

/* stats_blob_tostr's flags: SB_TOSTR_META names the template, its VOIs
 * and its statistics (else ids and numbers); SB_TOSTR_OBJDUMP adds the
 * binary layout's fields, read from the blob format=blob serves. */
#define TOSTR_META 0x1u
#define TOSTR_OBJDUMP 0x2u

/* A blob: VOIs vois[0..n) of template tpl (the names), with its hash,
 * and its creation and last reset times as sbintime_t (a template's: 0). */
struct tostr_blob {
	const struct processing_template_conf *tpl;
	const struct vstats_voi *vois;
	uint32_t n;
	uint32_t hash;
	int64_t created, lastrst;
};

/* stats_blob_tostr(b, fmt, flags) appended to t, and a newline after it
 * (the reply's end). Each VOI's statistics come in stats(3)'s slot order
 * (SUM, MAX, MIN, HIST, TDGST), as FreeBSD's iterator walks a blob. With
 * TOSTR_OBJDUMP the blob is encoded as format=blob serves it and the text
 * is read from its bytes: then the encoder's refusals (-EOPNOTSUPP,
 * -EFBIG with *why: nothing written), -ENOMEM, or -EIO for bytes that
 * do not walk. 0 otherwise. */
int tostr_blob(struct textbuf *t, const struct tostr_blob *b, enum tostr_fmt fmt, uint32_t flags,
	       const char **why);

/* tostr_blob with TOSTR_OBJDUMP (tostr_dump.c): its returns. */
int tostr_objdump(struct textbuf *t, const struct tostr_blob *b, enum tostr_fmt fmt, uint32_t flags,
		  const char **why);

/* stats_voistatdata_tostr of statistic st of voi, without object dump:
 * the statistic's data as stored, valid or not. */
void tostr_voistatdata(struct textbuf *t, const struct vstats_voi *voi,
		       const struct vstats_stat *st, enum tostr_fmt fmt);

/* One value as stats_voistatdata_tostr prints its dtype (the one place
 * a dtype's printing is chosen). */
void tostr_value(struct textbuf *t, struct vstats_value v, enum tostr_fmt fmt);

struct processing;
struct source;

/* GET <group>/<id>/data/<voi id>/<stat>: stats_voistatdata_tostr of one
 * statistic (vs_stype2name's SUM, MAX, MIN, HIST, TDGST) of one VOI of
 * the source's blob, and a newline. `what` is what follows data/. */
void tostr_get(struct processing *p, struct source *s, const char *what, enum tostr_fmt fmt,
	       struct stage_reply *r);

#endif
