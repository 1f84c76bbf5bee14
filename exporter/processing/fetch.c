/* stats_voistat_fetch_<dtype>: one statistic of one VOI of a source's
 * blob, read as the data type the caller names. As in FreeBSD, a VOI id
 * past the blob's or a statistic the VOI does not have is EINVAL, and a
 * data type other than the statistic's is EFTYPE; the value is the one
 * held, even before any update (a MAX of nothing is its type's lowest). */
#include "fetch.h"
#include "reply.h"
#include "stage_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* stats(3)'s dtypes a fetch may name (vsd_dtype2name's, in lower case
 * as the fetch functions' suffixes), and this project's double. */
static const char *const dtype_names[] = {"s32", "u32", "s64", "u64", "slong", "ulong", "double"};

/* The name of the dtype a statistic holds: its VOI's for SUM, MAX and
 * MIN; a histogram's or digest's own. */
static const char *stat_dtype(const struct vstats_voi *voi, const struct vstats_stat *st)
{
	static const char *const hist[] = {"crhist64", "drhist64", "dvhist64"};

	if (st->stype >= VSTATS_CRHIST && st->stype <= VSTATS_DVHIST)
		return hist[st->stype - VSTATS_CRHIST];
	if (st->stype == VSTATS_TDGST)
		return "tdgstclust64";
	return voi->dtype == VSTATS_INT ? "s64" : voi->dtype == VSTATS_UINT ? "u64" : "double";
}

int fetch_stat_of(const struct vstats_voi *voi, const char *name)
{
	static const char *const names[] = {"SUM", "MAX", "MIN", "HIST", "TDGST"};
	size_t k = 0;

	while (k < 5 && strcmp(names[k], name) != 0)
		k++;
	for (uint32_t i = 0; k < 5 && i < voi->nstats; i++) {
		enum vstats_stype t = voi->stat[i].stype;
		if ((k < 3 && t == (enum vstats_stype)k) ||
		    (k == 3 && t >= VSTATS_CRHIST && t <= VSTATS_DVHIST) ||
		    (k == 4 && t == VSTATS_TDGST))
			return (int)i;
	}
	return -1;
}

/* <voi id>/<stat>/<dtype>, the id a decimal without a leading 0: the
 * three parts, or false. */
static bool split(const char *what, unsigned long *voi, char *stat, size_t ssize, char *dtype,
		  size_t dsize)
{
	const char *a = strchr(what, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	char *end;

	if (!b || strchr(b + 1, '/') || what[0] < '0' || what[0] > '9' ||
	    (what[0] == '0' && a != what + 1))
		return false;
	*voi = strtoul(what, &end, 10);
	if (end != a || (size_t)(b - a - 1) >= ssize || strlen(b + 1) >= dsize)
		return false;
	memcpy(stat, a + 1, (size_t)(b - a - 1));
	stat[b - a - 1] = '\0';
	memcpy(dtype, b + 1, strlen(b + 1) + 1); /* checked above: it fits */
	return true;
}

static void say(struct stage_reply *r, struct vstats_value v)
{
	if (v.dtype == VSTATS_INT)
		textbuf_printf(&r->text, "%" PRId64 "\n", v.i);
	else if (v.dtype == VSTATS_UINT)
		textbuf_printf(&r->text, "%" PRIu64 "\n", v.u);
	else
		textbuf_printf(&r->text, "%.17g\n", v.f);
}

void fetch_get(struct processing *p, struct source *s, const char *what, struct stage_reply *r)
{
	char stat[8], dtype[8], why[128];
	unsigned long v;
	size_t k = 0;
	int i;
	(void)p;

	if (!split(what, &v, stat, sizeof(stat), dtype, sizeof(dtype))) {
		reply_fail(r, 400, -EINVAL, "fetch/<voi id>/<SUM|MAX|MIN|HIST|TDGST>/<dtype>");
		return;
	}
	while (k < 7 && strcmp(dtype_names[k], dtype) != 0)
		k++;
	if (k == 7) {
		reply_fail(r, 400, -EINVAL,
			   "a dtype is s32, u32, s64, u64, slong, ulong or double");
	} else if (!s->sampled) {
		reply_fail(r, 404, -EINVAL, "this source has no blob (no template, or sample_pct)");
	} else if (v > s->nmore) {
		reply_fail(r, 400, -EINVAL, "no VOI of that id in the blob");
	} else if ((i = fetch_stat_of(source_voi(s, (uint32_t)v), stat)) < 0) {
		reply_fail(r, 400, -EINVAL, "the VOI has no statistic of that type");
	} else {
		const struct vstats_voi *voi = source_voi(s, (uint32_t)v);
		const char *held = stat_dtype(voi, &voi->stat[i]);
		if (strcmp(held, dtype) != 0) {
			snprintf(why, sizeof(why), "the statistic's data type is %s, not %s", held,
				 dtype);
			reply_fail(r, 400, REPLY_EFTYPE, why);
		} else {
			say(r, voi->stat[i].v);
		}
	}
}
