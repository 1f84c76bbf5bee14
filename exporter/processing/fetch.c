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
static const char *const dtype_names[] = {"s32",   "u32",   "s64",   "u64",   "slong", "ulong",
					  "q_s32", "q_u32", "q_s64", "q_u64", "double"};
#define NDTYPES (sizeof(dtype_names) / sizeof(dtype_names[0]))

/* The name of the dtype a statistic holds: its VOI's for SUM, MAX and
 * MIN; a histogram's or digest's own, by its counts' width. */
static const char *stat_dtype(const struct vstats_voi *voi, const struct vstats_stat *st)
{
	static const char *const hist[2][3] = {{"crhist64", "drhist64", "dvhist64"},
					       {"crhist32", "drhist32", "dvhist32"}};

	if (st->stype >= VSTATS_CRHIST && st->stype <= VSTATS_DVHIST)
		return hist[st->hist.counts32][st->stype - VSTATS_CRHIST];
	if (st->stype == VSTATS_TDGST)
		return st->tdgst_counts32 ? "tdgstclust32" : "tdgstclust64";
	return vstats_dtype_name(voi->dtype);
}

/* vs_stype2name's name as a number from 0 (HIST: any histogram), or 5
 * for a word that names none. */
static size_t stat_kind(const char *name)
{
	static const char *const names[] = {"SUM", "MAX", "MIN", "HIST", "TDGST"};
	size_t k = 0;

	while (k < 5 && strcmp(names[k], name) != 0)
		k++;
	return k;
}

/* The index of the VOI's statistic of kind k, or -1. */
static int stat_of(const struct vstats_voi *voi, size_t k)
{
	for (uint32_t i = 0; i < voi->nstats; i++) {
		enum vstats_stype t = voi->stat[i].stype;
		if ((k < 3 && t == (enum vstats_stype)k) ||
		    (k == 3 && t >= VSTATS_CRHIST && t <= VSTATS_DVHIST) ||
		    (k == 4 && t == VSTATS_TDGST))
			return (int)i;
	}
	return -1;
}

const struct vstats_stat *fetch_locate(struct source *s, unsigned long voi, const char *name,
				       struct stage_reply *r)
{
	int i;

	if (!s->sampled) {
		reply_fail(r, 404, -EINVAL, "this source has no blob (no template, or sample_pct)");
	} else if (voi > s->nmore) {
		reply_fail(r, 400, -EINVAL, "no VOI of that id in the blob");
	} else if (stat_kind(name) == 5) {
		/* a word that names no statistic is not one the VOI lacks */
		reply_fail(r, 400, -EINVAL,
			   "a statistic is SUM, MAX, MIN, HIST or TDGST, in capitals");
	} else if ((i = stat_of(source_voi(s, (uint32_t)voi), stat_kind(name))) < 0) {
		reply_fail(r, 400, -EINVAL, "the VOI has no statistic of that type");
	} else {
		return &source_voi(s, (uint32_t)voi)->stat[i];
	}
	return NULL;
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
	char buf[VSTATS_VALUE_STR_MAX];

	vstats_value_tostr(v, buf, sizeof(buf));
	textbuf_printf(&r->text, "%s\n", buf);
}

void fetch_get(struct processing *p, struct source *s, const char *what, struct stage_reply *r)
{
	char stat[8], dtype[8], why[128];
	const struct vstats_stat *st;
	unsigned long v;
	size_t k = 0;
	(void)p;

	if (!split(what, &v, stat, sizeof(stat), dtype, sizeof(dtype))) {
		reply_fail(r, 400, -EINVAL, "fetch/<voi id>/<SUM|MAX|MIN|HIST|TDGST>/<dtype>");
		return;
	}
	while (k < NDTYPES && strcmp(dtype_names[k], dtype) != 0)
		k++;
	if (k == NDTYPES) {
		reply_fail(
		    r, 400, -EINVAL,
		    "a dtype is s32, u32, s64, u64, slong, ulong, q_s32, q_u32, q_s64, q_u64 "
		    "or double");
	} else if ((st = fetch_locate(s, v, stat, r)) != NULL) {
		const struct vstats_voi *voi = source_voi(s, (uint32_t)v);
		const char *held = stat_dtype(voi, st);
		if (strcmp(held, dtype) != 0) {
			snprintf(why, sizeof(why), "the statistic's data type is %s, not %s", held,
				 dtype);
			reply_fail(r, 400, REPLY_EFTYPE, why);
		} else {
			say(r, st->v);
		}
	}
}
