/* The set of series (label sets) already written in one family: open
 * addressing over 64-bit label-set hashes, kept at most half full, with
 * each series' label texts kept beside it in an arena. A slot's control byte
 * holds 7 bits of its series' hash, and slots are probed eight at a time as
 * one word (a SwissTable's layout without SIMD): a new series, the common
 * case, costs one load of a table small enough to stay in the first-level
 * cache and no branch on how far a probe goes. A control byte that matches
 * sends to the series' full hash and texts, so two label sets that collide
 * are still two series. The hash is keyed with a per-process random seed
 * (hash_seed), so label values a guest or a supplier chooses cannot be made
 * to collide on purpose and turn every insert into a long probe. */
#include "seriesset.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define GROUP 8
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* What the arena holds before each series' label block. */
struct kept {
	uint64_t hash;
	uint32_t slot;
	uint32_t n, len;
	uint32_t pad;
};

static size_t kept_size(const struct kept *k)
{
	return (sizeof(*k) + k->len + 7) & ~(size_t)7;
}

static struct kept kept_at(const struct seriesset *s, size_t at)
{
	struct kept k;
	memcpy(&k, s->arena + at, sizeof(k));
	return k;
}

/* A used slot's control byte: never 0, which is a free one. */
static uint8_t ctrl_of(uint64_t h)
{
	return (uint8_t)(0x80 | (h >> 57));
}

/* The group's control bytes, the byte of its first slot lowest. */
static uint64_t group_at(const uint8_t *ctrl)
{
	uint64_t w;
	memcpy(&w, ctrl, sizeof(w));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* High bit of each byte of w that is 0: exact for the lowest such byte,
 * and above it perhaps set for one that is not (a borrow). */
static uint64_t zero_bytes(uint64_t w)
{
	return (w - ONES) & ~w & HIGHS;
}

static size_t byte_at(uint64_t mask)
{
	return (size_t)__builtin_ctzll(mask) / 8;
}

void seriesset_clear(struct seriesset *s)
{
	if (s->used > s->peak)
		s->peak = s->used;
	if (s->alen > s->apeak)
		s->apeak = s->alen;
	/* A table grown by one large family costs the small ones after it
	 * only what they hold. */
	if (s->ctrl && s->cap <= s->used * 64) {
		memset(s->ctrl, 0, s->cap);
	} else {
		for (size_t at = 0; at < s->alen;) {
			struct kept k = kept_at(s, at);
			s->ctrl[k.slot] = 0;
			at += kept_size(&k);
		}
	}
	s->used = 0;
	s->alen = 0;
}

void seriesset_trim(struct seriesset *s)
{
	seriesset_clear(s);
	if (s->cap > 4096 && s->peak < s->cap / 8) {
		free(s->ctrl);
		s->ctrl = NULL;
		s->at = NULL;
		s->cap = 0;
	}
	if (s->acap > 65536 && s->apeak < s->acap / 8) {
		free(s->arena);
		s->arena = NULL;
		s->acap = 0;
	}
	s->peak = 0;
	s->apeak = 0;
}

/* The free slot for hash h (which the table does not hold). */
static size_t free_slot(const struct seriesset *s, uint64_t h)
{
	for (size_t g = (size_t)h & (s->cap - GROUP);; g = (g + GROUP) & (s->cap - 1)) {
		uint64_t empty = ~group_at(s->ctrl + g) & HIGHS;
		if (empty)
			return g + byte_at(empty);
	}
}

/* A table twice as large, refilled from the arena. */
static int grow(struct seriesset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	uint8_t *ctrl = malloc(cap * (1 + sizeof(*s->at)));
	if (!ctrl)
		return -ENOMEM;
	memset(ctrl, 0, cap);
	free(s->ctrl);
	s->ctrl = ctrl;
	s->at = (uint32_t *)(void *)(ctrl + cap);
	s->cap = cap;
	for (size_t at = 0; at < s->alen;) {
		struct kept k = kept_at(s, at);
		k.slot = (uint32_t)free_slot(s, k.hash);
		s->ctrl[k.slot] = ctrl_of(k.hash);
		s->at[k.slot] = (uint32_t)(at / 8);
		memcpy(s->arena + at, &k, sizeof(k));
		at += kept_size(&k);
	}
	return 0;
}

/* Appends the series to the arena: its hash, its slot, its label count
 * and the label block. The arena is bytes of records of any length,
 * addressed in 8-byte units by 32-bit offsets: not a growarr of elements. */
static int keep(struct seriesset *s, uint64_t h, size_t slot, const struct seriesset_label *l,
		size_t n)
{
	size_t len = n ? (size_t)(l[n - 1].text + l[n - 1].len - l[0].text) : 0;
	uint32_t slot32 = (uint32_t)slot, n32 = (uint32_t)n, len32 = (uint32_t)len;
	size_t need = (sizeof(struct kept) + len + 7) & ~(size_t)7;
	if (s->alen / 8 >= UINT32_MAX - 1 || len > UINT32_MAX)
		return -ENOMEM; /* 32 GiB of labels in one family */
	if (s->alen + need > s->acap) {
		size_t cap = s->acap ? s->acap : 4096;
		while (cap < s->alen + need)
			cap *= 2;
		char *a = realloc(s->arena, cap);
		if (!a)
			return -ENOMEM;
		s->arena = a;
		s->acap = cap;
	}
	s->at[slot] = (uint32_t)(s->alen / 8);
	/* Field by field: a struct built on the stack and copied whole is read
	 * back before its stores retire, and stalls. */
	char *d = s->arena + s->alen;
	memcpy(d + offsetof(struct kept, hash), &h, sizeof(h));
	memcpy(d + offsetof(struct kept, slot), &slot32, sizeof(slot32));
	memcpy(d + offsetof(struct kept, n), &n32, sizeof(n32));
	memcpy(d + offsetof(struct kept, len), &len32, sizeof(len32));
	if (len)
		memcpy(d + sizeof(struct kept), l[0].text, len);
	s->alen += need;
	return 0;
}

/* The length of the label at the start of `p` as the emitter writes it:
 * name, =, then the value in quotes, where a quote or backslash inside is
 * always escaped by a backslash. */
static size_t label_len(const char *p, const char *end)
{
	const char *q = memchr(p, '"', (size_t)(end - p));
	for (q = q ? q + 1 : end; q < end && *q != '"'; q++)
		if (*q == '\\')
			q++;
	return q < end ? (size_t)(q + 1 - p) : (size_t)(end - p);
}

bool seriesset_block_holds(const char *block, size_t len, size_t nblock,
			   const struct seriesset_label *l, size_t n)
{
	const char *end = block + len;

	if (nblock != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (const char *p = block; p < end && !found;) {
			size_t k = label_len(p, end);
			found = k == l[i].len && memcmp(p, l[i].text, k) == 0;
			p += k + 1; /* and its comma */
		}
		if (!found)
			return false;
	}
	return true;
}

size_t seriesset_split(const char *block, size_t len, struct seriesset_label *l, size_t max)
{
	const char *end = block + len;
	size_t n = 0;

	for (const char *p = block; p < end && n < max; n++) {
		l[n] = (struct seriesset_label){p, label_len(p, end)};
		p += l[n].len + 1;
	}
	return n;
}

/* Whether the series in slot i is the one of hash h and labels l[0..n). */
static bool same_series(const struct seriesset *s, size_t i, uint64_t h,
			const struct seriesset_label *l, size_t n)
{
	size_t at = (size_t)s->at[i] * 8;
	struct kept k = kept_at(s, at);

	return k.hash == h && seriesset_block_holds(s->arena + at + sizeof(k), k.len, k.n, l, n);
}

int seriesset_add(struct seriesset *s, uint64_t h, const struct seriesset_label *l, size_t n)
{
	uint8_t c = ctrl_of(h);

	if ((s->used + 1) * 2 > s->cap && grow(s) < 0)
		return -ENOMEM;
	for (size_t g = (size_t)h & (s->cap - GROUP);; g = (g + GROUP) & (s->cap - 1)) {
		uint64_t w = group_at(s->ctrl + g);
		for (uint64_t m = zero_bytes(w ^ (ONES * c)); m; m &= m - 1) {
			size_t i = g + byte_at(m);
			if (s->ctrl[i] == c && same_series(s, i, h, l, n))
				return 0;
		}
		/* The series would be in this group if it had been added
		 * while it had room: nothing is ever taken out. */
		uint64_t empty = ~w & HIGHS;
		if (empty) {
			size_t i = g + byte_at(empty);
			if (keep(s, h, i, l, n) < 0)
				return -ENOMEM;
			s->ctrl[i] = c;
			s->used++;
			return 1;
		}
	}
}

void seriesset_free(struct seriesset *s)
{
	free(s->ctrl);
	free(s->arena);
	memset(s, 0, sizeof(*s));
}
