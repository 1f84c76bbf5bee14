/* The DCI4 statistics wire format on Linux (docs/dci4-transport.md).
 * Framing is little-endian; integer values follow their format's byte order. */
#include "dci4_wire.h"

#include <errno.h>
#include <string.h>

static const uint8_t magic[4] = {'D', 'C', 'I', '4'};

void dci4_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint32_t dci4_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void dci4_put_header(uint8_t out[DCI4_HEADER_LEN], uint16_t op, uint32_t length)
{
	memcpy(out, magic, 4);
	out[4] = DCI4_VERSION;
	out[5] = 0;
	out[6] = (uint8_t)op;
	out[7] = (uint8_t)(op >> 8);
	dci4_put32(out + 8, length);
}

int dci4_get_header(const uint8_t *buf, size_t len, struct dci4_header *h)
{
	if (len < DCI4_HEADER_LEN || memcmp(buf, magic, 4) != 0)
		return -EPROTO;
	h->version = (uint16_t)(buf[4] | buf[5] << 8);
	h->op = (uint16_t)(buf[6] | buf[7] << 8);
	h->length = dci4_get32(buf + 8);
	if (h->version != DCI4_VERSION)
		return -EPROTO;
	return h->length > DCI4_BODY_MAX ? -EMSGSIZE : 0;
}

/* A string field: length with NUL at most DCI4_STRING_MAX, NUL last, none before. */
static int get_string(const uint8_t *p, size_t avail, uint32_t n, char *out)
{
	if (n == 0 || n > DCI4_STRING_MAX || n > avail)
		return -EPROTO;
	if (p[n - 1] != '\0' || memchr(p, '\0', n - 1))
		return -EBADMSG; /* a name without its NUL, or with one inside */
	memcpy(out, p, n);
	return 0;
}

#define INFO_FIXED 44 /* status .. description_len, before the strings */

int dci4_encode_info(const struct dci4_info *info, uint8_t *out, size_t cap)
{
	uint32_t ml = (uint32_t)strnlen(info->module, DCI4_STRING_MAX - 1) + 1;
	uint32_t tl = (uint32_t)strnlen(info->title, DCI4_STRING_MAX - 1) + 1;
	uint32_t dl = (uint32_t)strnlen(info->description, DCI4_STRING_MAX - 1) + 1;
	size_t n = INFO_FIXED + ml + tl + dl;

	if (n > cap)
		return -ENOSPC;
	dci4_put32(out, DCI4_OK);
	dci4_put32(out + 4, info->i_version);
	dci4_put32(out + 8, info->features);
	dci4_put32(out + 12, info->max_stat);
	dci4_put32(out + 16, info->type);
	dci4_put32(out + 20, info->s_version);
	memcpy(out + 24, info->reset, 8);
	dci4_put32(out + 32, ml);
	dci4_put32(out + 36, tl);
	dci4_put32(out + 40, dl);
	memcpy(out + INFO_FIXED, info->module, ml - 1);
	out[INFO_FIXED + ml - 1] = '\0';
	memcpy(out + INFO_FIXED + ml, info->title, tl - 1);
	out[INFO_FIXED + ml + tl - 1] = '\0';
	memcpy(out + INFO_FIXED + ml + tl, info->description, dl - 1);
	out[n - 1] = '\0';
	return (int)n;
}

int dci4_decode_info(const uint8_t *body, size_t len, struct dci4_info *info)
{
	if (len < INFO_FIXED || dci4_get32(body) != DCI4_OK)
		return -EPROTO;
	info->i_version = dci4_get32(body + 4);
	info->features = dci4_get32(body + 8);
	info->max_stat = dci4_get32(body + 12);
	info->type = dci4_get32(body + 16);
	info->s_version = dci4_get32(body + 20);
	memcpy(info->reset, body + 24, 8);
	uint32_t ml = dci4_get32(body + 32), tl = dci4_get32(body + 36), dl = dci4_get32(body + 40);
	const uint8_t *p = body + INFO_FIXED, *end = body + len;
	int rc;
	if ((rc = get_string(p, (size_t)(end - p), ml, info->module)) < 0)
		return rc;
	p += ml;
	if ((rc = get_string(p, (size_t)(end - p), tl, info->title)) < 0)
		return rc;
	p += tl;
	if ((rc = get_string(p, (size_t)(end - p), dl, info->description)) < 0)
		return rc;
	if (p + dl != end)
		return -EPROTO;
	return 0;
}

#define DESC_FIXED 32

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

size_t dci4_desc_record_len(const struct dci4_desc *d)
{
	if (d->type == ST_UNUSED)
		return DESC_FIXED;
	return DESC_FIXED + pad4(strnlen(d->name, DCI4_STRING_MAX - 1) + 1);
}

int dci4_encode_desc(const struct dci4_desc *d, uint8_t *out, size_t cap)
{
	size_t n = dci4_desc_record_len(d);
	uint32_t nl =
	    d->type == ST_UNUSED ? 0 : (uint32_t)strnlen(d->name, DCI4_STRING_MAX - 1) + 1;

	if (n > cap)
		return -ENOSPC;
	memset(out, 0, n);
	dci4_put32(out, d->type);
	dci4_put32(out + 4, d->format);
	dci4_put32(out + 8, d->presentation);
	dci4_put32(out + 12, d->type == ST_UNUSED ? 0 : d->size);
	dci4_put32(out + 16, d->volatility);
	dci4_put32(out + 20, 0); /* name_tag: must be zero */
	dci4_put32(out + 24, 0); /* spare */
	dci4_put32(out + 28, nl);
	if (nl)
		memcpy(out + DESC_FIXED, d->name, nl - 1);
	return (int)n;
}

int dci4_decode_desc(const uint8_t *buf, size_t len, struct dci4_desc *d)
{
	if (len < DESC_FIXED)
		return -EPROTO;
	memset(d, 0, sizeof(*d));
	d->type = dci4_get32(buf);
	d->format = dci4_get32(buf + 4);
	d->presentation = dci4_get32(buf + 8);
	d->size = dci4_get32(buf + 12);
	d->volatility = dci4_get32(buf + 16);
	d->name_tag = dci4_get32(buf + 20);
	d->spare = dci4_get32(buf + 24);
	uint32_t nl = dci4_get32(buf + 28);
	if (d->size % 4 || d->size > DCI4_VALUE_MAX)
		return -ERANGE;
	if (d->spare != 0 || d->name_tag != 0) /* both "must be zero" in DCI4 */
		return -EPROTO;
	if (d->type == ST_UNUSED)
		return d->size == 0 && nl == 0 ? DESC_FIXED : -EPROTO;
	int rc = get_string(buf + DESC_FIXED, len - DESC_FIXED, nl, d->name);
	if (rc < 0)
		return rc;
	if (DESC_FIXED + pad4(nl) > len)
		return -EPROTO;
	return (int)(DESC_FIXED + pad4(nl));
}

static const unsigned int_width[] = {
    [ST_INTEGER8] = 1, [ST_INTEGER16] = 2, [ST_INTEGER32] = 4, [ST_INTEGER64] = 8};

int dci4_value_int(const struct dci4_desc *d, const uint8_t *slot, bool *is_signed, uint64_t *u,
		   int64_t *i)
{
	if (d->type < ST_INTEGER8 || d->type > ST_INTEGER64 || (d->format & ~3u))
		return -EPROTO;
	unsigned w = int_width[d->type];
	if (d->size < w)
		return -EPROTO;
	uint64_t v = 0;
	for (unsigned k = 0; k < w; k++) {
		unsigned byte = d->format & SIF_BIGENDIAN ? k : w - 1 - k;
		v = v << 8 | slot[byte];
	}
	*is_signed = !(d->format & SIF_UNSIGNED);
	*u = v;
	/* Sign-extend from the value's own width. */
	unsigned shift = 64 - 8 * w;
	*i = shift ? (int64_t)(v << shift) >> shift : (int64_t)v;
	return 0;
}

static uint64_t le_bytes(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* 1900-01-01 to 1970-01-01, in seconds. */
#define EPOCH_1900_TO_1970 2208988800.0

int dci4_value_time(const struct dci4_desc *d, const uint8_t *slot, double *seconds)
{
	if (d->type != ST_TIME)
		return -EPROTO;
	switch (d->format) {
	case STF_5BYTE:
		if (d->size < 8)
			return -EPROTO;
		*seconds = (double)le_bytes(slot, 5) / 100.0 -
			   (d->presentation == 0 ? EPOCH_1900_TO_1970 : 0);
		return 0;
	case STF_CTIME:
		if (d->size < 8)
			return -EPROTO;
		*seconds = (double)(int64_t)le_bytes(slot, 8);
		return 0;
	case STF_MONOTONIC:
		if (d->size != 4 && d->size != 8)
			return -EPROTO;
		*seconds = (double)le_bytes(slot, d->size) / 100.0;
		return 0;
	}
	return -EPROTO;
}

int dci4_parse_range(const uint8_t *body, size_t len, uint32_t first, uint32_t last,
		     uint32_t bufsize, dci4_take_fn *take, void *ctx, uint32_t *processed)
{
	if (len < 12 || first > last)
		return -EPROTO;
	uint32_t n = dci4_get32(body + 4), used = dci4_get32(body + 8);
	/* Nothing processed is a lie too: the next statistic fits any buffer
	 * this side asks with (its size was described). */
	if (n == 0 || n > last - first + 1 || used > bufsize || 12 + (size_t)used != len)
		return -EPROTO;
	size_t off = 12;
	for (uint32_t i = 0; i < n; i++) {
		int r = take(ctx, first + i, body + off, len - off);
		if (r < 0)
			return r;
		off += (size_t)r;
	}
	if (off != len)
		return -EPROTO;
	*processed = n;
	return 0;
}
