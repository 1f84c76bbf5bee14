/* Presents a DCI4 value the way its description asks: booleans in five
 * vocabularies, integers in hex, decimal or dotted octets, addresses in their
 * usual notation, times absolute (UTC) or relative. */
#include "dci4_format.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const boolean_words[][2] = {
    {"off", "on"}, {"no", "yes"}, {"false", "true"}, {"never", "always"}, {"0", "1"},
};

static int format_boolean(const struct dci4_desc *d, const uint8_t *slot, char *out)
{
	if (d->size < 4 || d->format > SBF_INVERTED || d->presentation > 4)
		return -EPROTO;
	int on = (slot[0] & 1) ^ (d->format == SBF_INVERTED);
	snprintf(out, DCI4_TEXT_MAX, "%s", boolean_words[d->presentation][on]);
	return 0;
}

static int format_string(const struct dci4_desc *d, const uint8_t *slot, char *out)
{
	size_t i;
	if (d->format != 0 || d->presentation != 0 || !memchr(slot, '\0', d->size))
		return -EPROTO;
	for (i = 0; slot[i] && i + 1 < DCI4_TEXT_MAX; i++)
		out[i] = slot[i] >= 0x20 && slot[i] < 0x7f ? (char)slot[i] : '?';
	out[i] = '\0';
	return 0;
}

static int format_integer(const struct dci4_desc *d, const uint8_t *slot, char *out)
{
	bool sgn;
	uint64_t u;
	int64_t i;
	if (dci4_value_int(d, slot, &sgn, &u, &i) < 0)
		return -EPROTO;
	unsigned width = d->type == ST_INTEGER8	   ? 1
			 : d->type == ST_INTEGER16 ? 2
			 : d->type == ST_INTEGER32 ? 4
						   : 8;
	switch (d->presentation) {
	case 0: /* SIP_HEXADECIMAL: the value's own width, so 0x00ff for a 16-bit 255 */
		snprintf(out, DCI4_TEXT_MAX, "0x%0*" PRIx64, (int)(2 * width),
			 width == 8 ? u : u & (((uint64_t)1 << (8 * width)) - 1));
		return 0;
	case 1: /* SIP_DECIMAL */
		if (sgn)
			snprintf(out, DCI4_TEXT_MAX, "%" PRId64, i);
		else
			snprintf(out, DCI4_TEXT_MAX, "%" PRIu64, u);
		return 0;
	case 2: { /* SIP_DOTTED: octets, most significant first */
		size_t n = 0;
		for (int k = (int)width - 1; k >= 0; k--)
			n += (size_t)snprintf(out + n, DCI4_TEXT_MAX - n, "%s%u", n ? "." : "",
					      (unsigned)((u >> (8 * k)) & 0xff));
		return 0;
	}
	}
	return -EPROTO;
}

static int format_address(const struct dci4_desc *d, const uint8_t *a, char *out)
{
	if (d->presentation != 0)
		return -EPROTO;
	if (d->format == SAF_ETHERNET && d->size >= 6)
		snprintf(out, DCI4_TEXT_MAX, "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2],
			 a[3], a[4], a[5]);
	else if (d->format == SAF_IP && d->size >= 4)
		snprintf(out, DCI4_TEXT_MAX, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	else if (d->format == SAF_ECONET && d->size >= 2)
		snprintf(out, DCI4_TEXT_MAX, "%u.%u", a[0], a[1]);
	else
		return -EPROTO;
	return 0;
}

static int format_time(const struct dci4_desc *d, const uint8_t *slot, char *out)
{
	double s;
	if (dci4_value_time(d, slot, &s) < 0 || d->presentation > 1)
		return -EPROTO;
	/* Monotonic time counts from boot: only a duration makes sense of it. */
	if (d->presentation == 1 || d->format == STF_MONOTONIC) {
		snprintf(out, DCI4_TEXT_MAX, "%.2f seconds", s);
		return 0;
	}
	time_t t = (time_t)s;
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(out, DCI4_TEXT_MAX, "%Y-%m-%d %H:%M:%S UTC", &tm))
		return -EPROTO;
	return 0;
}

int dci4_format_value(const struct dci4_desc *d, const uint8_t *slot, char *out)
{
	int rc = -EPROTO;
	switch (d->type) {
	case ST_BOOLEAN:
		rc = format_boolean(d, slot, out);
		break;
	case ST_STRING:
		rc = format_string(d, slot, out);
		break;
	case ST_INTEGER8:
	case ST_INTEGER16:
	case ST_INTEGER32:
	case ST_INTEGER64:
		rc = format_integer(d, slot, out);
		break;
	case ST_ADDRESS:
		rc = format_address(d, slot, out);
		break;
	case ST_TIME:
		rc = format_time(d, slot, out);
		break;
	}
	if (rc < 0)
		snprintf(out, DCI4_TEXT_MAX, "?");
	return rc;
}
