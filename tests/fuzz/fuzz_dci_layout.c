/* Fuzzes the DCI collector's path from a hostile supplier's describe and
 * read replies to decoded values: parse, lay out, name, read, convert. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dci4_format.h"
#include "dci_layout.h"

static const char *const keys[] = {"module", "title", "supplier", "stat"};

static int take_desc(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct dci4_desc d;
	int n = dci4_decode_desc(p, left, &d);
	if (n < 0)
		return n;
	return dci_layout_set(ctx, stat, &d) < 0 ? -1 : n;
}

struct reading {
	struct dci_layout *l;
	uint8_t *values;
};

static int take_value(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct reading *r = ctx;
	const struct dci_stat *s = &r->l->stat[stat];
	if (s->size > left)
		return -1;
	memcpy(r->values + s->offset, p, s->size);
	return (int)s->size;
}

static void drop(void *ctx, const char *reason)
{
	(void)ctx;
	(void)reason;
}

static void convert(const struct dci_layout *l, const uint8_t *values)
{
	char text[DCI4_TEXT_MAX];
	struct dci4_desc d;
	bool sgn;
	uint64_t u;
	int64_t i;
	double t;

	for (uint32_t k = 0; k < l->nstats; k++) {
		dci_layout_desc(&l->stat[k], &d);
		const uint8_t *slot = values + l->stat[k].offset;
		if (l->stat[k].kind == DCI_INT)
			dci4_value_int(&d, slot, &sgn, &u, &i);
		else if (l->stat[k].kind == DCI_TIME)
			dci4_value_time(&d, slot, &t);
		else if (l->stat[k].kind == DCI_TEXT)
			dci4_format_value(&d, slot, text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct statmap map = {.keys = keys, .nkeys = 4, .fallback = {.scale = 1}};
	static const uint8_t reset[8];
	uint32_t done;

	if (size < 4)
		return 0;
	uint32_t max = data[0] % 64, split = data[1] | (uint32_t)data[2] << 8;
	uint32_t i_version = data[0] & 0x80 ? 100 : DCI_IVERSION_ADDRESS_TIME;
	data += 3;
	size -= 3;
	if (split > size)
		split = (uint32_t)size;
	struct dci_layout *l = dci_layout_new(max, reset, i_version);
	if (!l)
		return 0;
	if (dci4_parse_range(data, split, 0, max, 65536, take_desc, l, &done) == 0 &&
	    done == max + 1 && dci_layout_finish(l, &map, "m", "t", "s", drop, NULL) == 0) {
		struct reading r = {l, calloc(1, l->value_bytes + 1)};
		if (r.values &&
		    dci4_parse_range(data + split, size - split, 0, max, (uint32_t)l->value_bytes,
				     take_value, &r, &done) == 0)
			convert(l, r.values);
		free(r.values);
	}
	dci_layout_free(l);
	return 0;
}
