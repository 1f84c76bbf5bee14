/* stats(3)'s templates and blobs as text: the template hash, the three
 * forms a template is named in, stats_tpl_sample_rates' spec=pct list and
 * stats_blob_visit. The parsers take outside input (an HTTP body): pure
 * functions over bytes, bounded, refusing anything they do not fully
 * understand. */
#include "vstats.h"

#include <errno.h>
#include <string.h>

/* FreeBSD's sys/hash.h: HASHSTEP(x, c) = x * 33 + c. */
static uint32_t hash32_buf(const void *buf, size_t len, uint32_t hash)
{
	const unsigned char *p = buf;

	while (len--)
		hash = (hash << 5) + hash + *p++;
	return hash;
}

/* A number as 8 little-endian bytes: the same hash on any host. */
static uint32_t hash_u64(uint64_t v, uint32_t hash)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	return hash32_buf(b, sizeof(b), hash);
}

static uint32_t hash_f64(double v, uint32_t hash)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return hash_u64(bits, hash);
}

static uint32_t hash_value(struct vstats_value v, uint32_t hash)
{
	hash = hash_u64((uint64_t)v.dtype, hash);
	return v.dtype == VSTATS_FLOAT ? hash_f64(v.f, hash) : hash_u64(v.u, hash);
}

static uint32_t hash_hist(const struct vstats_hist_spec *h, uint32_t hash)
{
	hash = hash_u64(h->scheme, hash);
	hash = hash_value(h->lb, hash);
	hash = hash_value(h->ub, hash);
	hash = hash_f64(h->stepinc, hash);
	hash = hash_f64(h->stepbase, hash);
	hash = hash_f64(h->stepexp, hash);
	hash = hash_u64(h->nlinsteps, hash);
	hash = hash_u64(h->flags, hash);
	if (h->counts32) /* folded in only when set: 64-bit histograms hash as before */
		hash = hash_u64(32, hash);
	hash = hash_u64(h->nusr, hash);
	for (uint32_t i = 0; h->scheme == VSTATS_USR && i < h->nusr; i++)
		hash = hash_value(h->usr[i].ub, hash_value(h->usr[i].lb, hash));
	return hash;
}

uint32_t vstats_tpl_hash(const char *tplname, const char *voiname, enum vstats_dtype dtype,
			 bool relupdate, const struct vstats_spec *specs, uint32_t n)
{
	uint32_t hash = hash32_buf(tplname, strlen(tplname), 0);

	hash = hash32_buf(voiname, strlen(voiname), hash);
	hash = hash_u64(dtype, hash);
	hash = hash_u64(relupdate, hash);
	for (uint32_t i = 0; i < n; i++) {
		hash = hash_u64(specs[i].stype, hash);
		if (specs[i].stype >= VSTATS_CRHIST && specs[i].stype <= VSTATS_DVHIST)
			hash = hash_hist(&specs[i].hist, hash);
		else if (specs[i].stype == VSTATS_TDGST) {
			hash = hash_f64(specs[i].compression, hash);
			if (specs[i].tdgst_counts32) /* only when set: 64-bit ones hash as before */
				hash = hash_u64(32, hash);
		}
	}
	return hash;
}

/* A decimal u32 of s[0..len): at least one digit, nothing else. */
static bool parse_u32(const char *s, size_t len, uint32_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = (uint32_t)v;
	return v <= UINT32_MAX;
}

int vstats_tplspec_parse(const char *s, size_t len, struct vstats_tplspec *out, const char **why)
{
	const char *colon = memchr(s, ':', len);
	size_t nlen = colon ? (size_t)(colon - s) : len;

	memset(out, 0, sizeof(*out));
	if (colon && !parse_u32(colon + 1, len - nlen - 1, &out->hash)) {
		*why = "a template's hash is a decimal number below 2^32";
		return -EINVAL;
	}
	if (nlen >= 2 && s[0] == '"' && s[nlen - 1] == '"') /* the quotes are optional */
		s++, nlen -= 2;
	if (nlen == 0 && !colon) {
		*why = "a template is \"name\":hash, \"name\" or :hash";
		return -EINVAL;
	}
	if (nlen > VSTATS_TPL_NAME_MAX || memchr(s, '"', nlen) || memchr(s, '\0', nlen)) {
		*why = "a template's name is at most 128 bytes, without quotes inside";
		return -EINVAL;
	}
	memcpy(out->name, s, nlen);
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One spec=pct pair of s[0..len), blanks around it allowed. */
static int parse_rate(const char *s, size_t len, struct vstats_rate *r, const char **why)
{
	while (len && blank(s[0]))
		s++, len--;
	while (len && blank(s[len - 1]))
		len--;
	const char *eq = len ? memchr(s, '=', len) : NULL;
	if (!eq) {
		*why = "a sample rate is template=percent";
		return -EINVAL;
	}
	size_t slen = (size_t)(eq - s);
	while (slen && blank(s[slen - 1]))
		slen--;
	const char *pct = eq + 1;
	size_t plen = len - (size_t)(pct - s);
	while (plen && blank(pct[0]))
		pct++, plen--;
	if (vstats_tplspec_parse(s, slen, &r->spec, why) < 0)
		return -EINVAL;
	if (!parse_u32(pct, plen, &r->pct) || r->pct > 100) {
		*why = "a sample rate is a whole percentage, 0 to 100";
		return -EINVAL;
	}
	return 0;
}

int vstats_rates_parse(const char *s, struct vstats_rate *out, size_t max, size_t *n,
		       const char **why)
{
	size_t len = strlen(s), i = 0;

	*n = 0;
	*why = NULL;
	while (i < len && blank(s[i]))
		i++;
	if (i == len)
		return 0; /* nothing to change */
	while (i <= len) {
		const char *comma = memchr(s + i, ',', len - i);
		size_t end = comma ? (size_t)(comma - s) : len;
		if (*n == max) {
			*why = "more sample rates than there are templates";
			return -EFBIG;
		}
		if (parse_rate(s + i, end - i, &out[*n], why) < 0)
			return -EINVAL;
		(*n)++;
		i = end + 1;
		while (comma && i < len && blank(s[i]))
			i++;
		if (comma && i == len)
			break; /* a last comma, as stats_tpl_sample_rates takes it */
	}
	return 0;
}

static uint32_t first_last(size_t i, size_t n, uint32_t first, uint32_t last)
{
	return (i == 0 ? first : 0) | (i + 1 == n ? last : 0);
}

int vstats_blob_visit(const struct vstats_voi *vois, size_t nvoi, uint32_t tplhash,
		      vstats_visit_cb cb, void *ctx)
{
	bool first = true;
	int rc;

	for (size_t v = 0; v < nvoi; v++) {
		const struct vstats_voi *voi = &vois[v];
		for (uint32_t k = 0; k < voi->nstats; k++) {
			struct vstats_visit vis = {
			    .tplhash = tplhash,
			    .voi_id = (int16_t)v,
			    .voi = voi,
			    .stat = &voi->stat[k],
			    .valid = voi->updates > 0,
			};
			vis.flags = first_last(v, nvoi, VSTATS_IT_FIRST_VOI, VSTATS_IT_LAST_VOI) |
				    first_last(k, voi->nstats, VSTATS_IT_FIRST_VOISTAT,
					       VSTATS_IT_LAST_VOISTAT) |
				    (first ? VSTATS_IT_FIRST_CB : 0) |
				    (v + 1 == nvoi && k + 1 == voi->nstats ? VSTATS_IT_LAST_CB : 0);
			first = false;
			if ((rc = cb(&vis, ctx)) != 0)
				return rc;
		}
	}
	return 0;
}
