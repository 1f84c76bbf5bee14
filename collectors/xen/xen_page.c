/* Parsing of guest pages. The caller copies a page out of guest memory
 * once and hands the copy here, so a guest rewriting its page meanwhile
 * cannot make a check and a use see different bytes (XSA-155). */
#include "xen_page.h"

#include <string.h>

static bool name_char(unsigned char c)
{
	/* isalnum || ispunct || ' ' in the C locale: printable ASCII. */
	return c >= 0x20 && c < 0x7f;
}

bool xen_name_valid(const char *s, size_t max, size_t *len)
{
	size_t i;
	for (i = 0; i < max && s[i]; i++)
		if (!name_char((unsigned char)s[i]))
			return false;
	if (i == max || i == 0)
		return false; /* no NUL within the field, or empty */
	*len = i;
	return true;
}

size_t xen_parse_names(const uint8_t *pages, size_t npages, struct xen_tuple *out,
		       xen_reject_fn *reject, void *ctx)
{
	size_t n = 0;

	for (size_t slot = 0; slot < npages * PVSTATS_PER_PAGE; slot++) {
		const uint8_t *t = pages + slot * PVSTATS_TUPLE_SIZE;
		size_t len;
		if (t[0] == 0)
			break; /* the end of the list */
		if (t[0] > PVSTATS_ASCII) {
			reject(ctx, "unknown_type");
			continue;
		}
		if (!xen_name_valid((const char *)t + 1, XEN_NAME_MAX, &len)) {
			reject(ctx, "bad_name");
			continue;
		}
		out[n].type = t[0];
		out[n].slot = (uint32_t)slot;
		memcpy(out[n].name, t + 1, len);
		out[n].name[len] = '\0';
		n++;
	}
	return n;
}

bool xen_value_ascii(const uint8_t *slot, const char **text)
{
	size_t len;
	if (!xen_name_valid((const char *)slot, PVSTATS_TUPLE_SIZE, &len) && slot[0] != '\0')
		return false;
	*text = (const char *)slot;
	return true;
}
