/* Fuzzes the parsing of guest pages: name/type tuples and value slots. */
#include <stdint.h>
#include <string.h>

#include "xen_page.h"

static void reject(void *ctx, const char *reason)
{
	(void)ctx;
	(void)reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t pages[4 * PVSTATS_PAGE_SIZE];
	static struct xen_tuple out[4 * PVSTATS_PER_PAGE];
	const char *text;

	size_t n = size > sizeof(pages) ? sizeof(pages) : size;
	memset(pages, 0, sizeof(pages));
	memcpy(pages, data, n);
	size_t npages = (n + PVSTATS_PAGE_SIZE - 1) / PVSTATS_PAGE_SIZE;
	size_t got = xen_parse_names(pages, npages, out, reject, NULL);
	for (size_t i = 0; i < got; i++) {
		const uint8_t *slot = pages + (size_t)out[i].slot * PVSTATS_TUPLE_SIZE;
		if (out[i].type == PVSTATS_ASCII)
			xen_value_ascii(slot, &text);
		else
			xen_value_u64(slot);
	}
	return 0;
}
