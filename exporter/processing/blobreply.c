/* A source's blob as stats(3)'s statsblob V1 bytes: encoded by
 * lib/vstats' vstats_sbv1, then cloned into the destination the query
 * names with stats_blob_clone's semantics, as FreeBSD's TCP_STATS socket
 * option hands a snapshot to user space. The query is an HTTP client's:
 * every option checked, anything unknown refused. */
#include "blobreply.h"
#include "reply.h"
#include "stage_priv.h"
#include "vstats_sbv1.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The clone options: stats_blob_clone's flags and the destination's size
 * (0: none given). */
struct blob_opts {
	uint32_t flags;
	size_t dstmaxsz;
	bool got_clone;
};

static const struct {
	const char *name;
	uint32_t flag;
} clone_flags[] = {
    {"rstsrc", VSTATS_SBV1_CLONE_RSTSRC},
    {"allocdst", VSTATS_SBV1_CLONE_ALLOCDST},
};

/* clone=<flag>[,<flag>]: the flags of s[0..len). */
static int parse_flags(const char *s, size_t len, uint32_t *flags)
{
	*flags = 0;
	for (;;) { /* every name between commas a flag's: none empty */
		size_t n = 0, i;
		while (n < len && s[n] != ',')
			n++;
		for (i = 0; i < sizeof(clone_flags) / sizeof(clone_flags[0]); i++)
			if (strlen(clone_flags[i].name) == n &&
			    memcmp(s, clone_flags[i].name, n) == 0)
				break;
		if (i == sizeof(clone_flags) / sizeof(clone_flags[0]))
			return -EINVAL;
		*flags |= clone_flags[i].flag;
		if (n == len)
			return 0;
		s += n + 1, len -= n + 1;
	}
}

/* dstmaxsz=<decimal>: at most 10 digits, nothing else. */
static int parse_size(const char *s, size_t len, size_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = (size_t)v;
	return 0;
}

/* One name=value option of s[0..len) into o; each at most once. */
static int parse_opt(const char *s, size_t len, struct blob_opts *o, bool *got_size)
{
	if (len > 6 && memcmp(s, "clone=", 6) == 0 && !o->got_clone) {
		o->got_clone = true;
		return parse_flags(s + 6, len - 6, &o->flags);
	}
	if (len > 9 && memcmp(s, "dstmaxsz=", 9) == 0 && !*got_size) {
		*got_size = true;
		return parse_size(s + 9, len - 9, &o->dstmaxsz);
	}
	return -EINVAL;
}

/* The options in query (the request's, "a=b&c=d", format= among them),
 * checked together; the defaults: ALLOCDST without a dstmaxsz, RSTSRC
 * for a snapshot. */
static int parse_opts(const char *query, bool snapshot, struct blob_opts *o, const char **why)
{
	bool got_size = false;

	memset(o, 0, sizeof(*o));
	*why = "the options of format=blob are clone=<rstsrc,allocdst> and dstmaxsz=<bytes>, "
	       "each once";
	for (const char *at = query; at;) {
		size_t n = strcspn(at, "&");
		if (strncmp(at, "format=", 7) != 0 && parse_opt(at, n, o, &got_size) < 0)
			return -EINVAL;
		at = at[n] ? at + n + 1 : NULL;
	}
	if (!o->got_clone)
		o->flags = (got_size ? 0 : VSTATS_SBV1_CLONE_ALLOCDST) |
			   (snapshot ? VSTATS_SBV1_CLONE_RSTSRC : 0);
	if ((o->flags & VSTATS_SBV1_CLONE_RSTSRC) && !snapshot) {
		*why = "clone=rstsrc resets the source: a POST to snapshot, not a GET of data";
		return -EINVAL;
	}
	if ((o->flags & VSTATS_SBV1_CLONE_ALLOCDST) && got_size) {
		*why = "clone=allocdst sizes the copy to the blob: no dstmaxsz with it";
		return -EINVAL;
	}
	if (!(o->flags & VSTATS_SBV1_CLONE_ALLOCDST) && !got_size) {
		*why = "without clone=allocdst the destination's size, dstmaxsz, is needed";
		return -EINVAL;
	}
	if (got_size && o->dstmaxsz < VSTATS_SBV1_PUB_SIZE) {
		*why = "a destination smaller than the 8-byte header (stats_blob_clone's EINVAL)";
		return -EINVAL;
	}
	return 0;
}

/* The reply's body becomes the n bytes at b. */
static void reply_bytes(struct stage_reply *r, const uint8_t *b, size_t n)
{
	char *p = realloc(r->text.p, n ? n : 1);

	if (!p) {
		r->text.failed = true;
		return;
	}
	memcpy(p, b, n);
	r->text.p = p;
	r->text.len = r->text.cap = n;
	r->type = "application/octet-stream";
}

/* The source's blob as its template lays it out, encoded into out
 * (VSTATS_SBV1_MAXSZ bytes): 0 with *len, or refused in r. */
static int encode(struct processing *p, struct source *s, uint8_t *out, size_t *len,
		  struct stage_reply *r)
{
	const struct processing_group_conf *g = &p->conf->group[s->group];
	struct vstats_voi vois[PROCESSING_VOIS_MAX]; /* shallow copies, read only */
	struct vstats_sbv1_blob b = {.vois = vois, .nvoi = s->nmore + 1};
	const char *why;
	int rc;

	if (!g->has_template) {
		reply_fail(r, 404, -EINVAL, "this interface has no template: no blob");
		return -EINVAL;
	}
	if (!s->sampled) {
		reply_fail(r, 404, -EINVAL, "this source was not sampled (sample_pct)");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < p->ntpl; i++)
		if (p->tpl[i].group == s->group)
			b.tplhash = p->tpl[i].hash;
	for (uint32_t v = 0; v <= s->nmore; v++)
		vois[v] = *source_voi(s, v);
	b.created = vstats_sbv1_sbintime(s->created_ns);
	b.lastrst = vstats_sbv1_sbintime(s->lastrst_ns);
	if ((rc = vstats_sbv1_encode(&b, out, VSTATS_SBV1_MAXSZ, len, &why)) < 0)
		reply_fail(r, 409, rc, why); /* the template's, not the request's */
	return rc;
}

void blobreply(struct processing *p, struct source *s, const char *query, bool snapshot,
	       uint64_t now_ns, struct stage_reply *r)
{
	struct blob_opts o;
	const char *why;
	size_t len, n;
	uint8_t *blob = NULL, *dst = NULL;
	int rc;

	if (parse_opts(query, snapshot, &o, &why) < 0) {
		reply_fail(r, 400, -EINVAL, why);
		return;
	}
	blob = malloc(VSTATS_SBV1_MAXSZ);
	dst = malloc(VSTATS_SBV1_MAXSZ);
	if (!blob || !dst) {
		r->text.failed = true;
		goto out_free;
	}
	if (encode(p, s, blob, &len, r) < 0)
		goto out_free;
	/* dst has room for any blob: a clone copies at most its cursz */
	rc = vstats_sbv1_clone(blob, dst, o.dstmaxsz, o.flags, &n);
	reply_bytes(r, dst, n);
	if (rc == -EOVERFLOW) {
		r->status = 416; /* the header alone: its cursz is the size to ask for */
	} else if (snapshot && (o.flags & VSTATS_SBV1_CLONE_RSTSRC) && !r->text.failed) {
		source_vois_reset(s); /* stats_blob_snapshot resets only what it cloned */
		s->lastrst_ns = now_ns;
	}
out_free:
	free(dst);
	free(blob);
}
