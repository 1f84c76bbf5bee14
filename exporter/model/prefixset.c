/* The series of one family by prefix: a table of the distinct prefixes
 * (open addressing over their keyed hashes), each with a small table of its
 * series' own labels (8-byte slots: a tag, and where the labels are),
 * all in three arrays that are kept from one family and one scrape to the
 * next. Equal tags compare the texts, as in the flat set: a collision
 * never drops a genuine series. */
#include "prefixset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The most labels a series held here has: the emitter allows fewer. */
#define PREFIXSET_LABELS_MAX 128
#define OWN_FIRST_CAP 16
#define OWN_HINT_MAX 4096

/* What the texts hold before each block. */
struct text_head {
	uint64_t hash;
	uint32_t n, len;
};

static size_t text_size(uint32_t len)
{
	return (sizeof(struct text_head) + len + 7) & ~(size_t)7;
}

static struct text_head head_at(const struct prefixset *p, uint32_t at8)
{
	struct text_head t;
	memcpy(&t, p->text + (size_t)at8 * 8, sizeof(t));
	return t;
}

static const char *block_at(const struct prefixset *p, uint32_t at8)
{
	return p->text + (size_t)at8 * 8 + sizeof(struct text_head);
}

/* Array a of `size`-byte items with room for used + more of them, its
 * capacity doubled from `first` as needed; NULL when out of memory (a is
 * then as it was). Indexes into it are 32 bits. Not lib/collkit's growarr:
 * the set's three arrays keep their counts beside the hash table the
 * writer's hot path reads, and are capped by those 32-bit indexes. */
static void *room(void *a, size_t *cap, size_t used, size_t more, size_t size, size_t first)
{
	size_t want = *cap ? *cap : first;

	if (a && used + more <= *cap)
		return a;
	while (want < used + more)
		want *= 2;
	if (want > UINT32_MAX / 2 || want > SIZE_MAX / size)
		return NULL;
	void *b = realloc(a, want * size);
	if (b)
		*cap = want;
	return b;
}

/* Appends a block of n labels, from l[0].text, after its head. */
static int text_put(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n,
		    uint32_t *at8)
{
	size_t len = n ? (size_t)(l[n - 1].text + l[n - 1].len - l[0].text) : 0;
	if (len > UINT32_MAX || n > PREFIXSET_LABELS_MAX)
		return -ENOMEM;
	size_t need = text_size((uint32_t)len);
	char *text = room(p->text, &p->tcap, p->tlen, need, 1, 4096);
	if (!text)
		return -ENOMEM;
	p->text = text;
	struct text_head t = {h, (uint32_t)n, (uint32_t)len};
	*at8 = (uint32_t)(p->tlen / 8);
	memcpy(p->text + p->tlen, &t, sizeof(t));
	if (len)
		memcpy(p->text + p->tlen + sizeof(t), l[0].text, len);
	p->tlen += need;
	return 0;
}

/* `count` zeroed slots at the end of the slots: their first index. */
static int slots_take(struct prefixset *p, uint32_t count, uint32_t *first)
{
	struct prefixset_slot *slot =
	    room(p->slot, &p->scap, p->nslots, count, sizeof(*slot), 1024);
	if (!slot)
		return -ENOMEM;
	p->slot = slot;
	memset(p->slot + p->nslots, 0, count * sizeof(*p->slot));
	*first = (uint32_t)p->nslots;
	p->nslots += count;
	return 0;
}

static int byhash_grow(struct prefixset *p)
{
	size_t cap = p->hcap ? p->hcap * 2 : 64;
	uint32_t *t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t k = 0; k < p->nnodes; k++) {
		size_t i = (size_t)p->node[k].hash & (cap - 1);
		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = (uint32_t)(k + 1);
		p->node[k].home = (uint32_t)i;
	}
	free(p->byhash);
	p->byhash = t;
	p->hcap = cap;
	return 0;
}

static int node_new(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n,
		    size_t home)
{
	struct prefixset_node nd = {.hash = h, .home = (uint32_t)home, .cap = OWN_FIRST_CAP};

	/* Sized for as many series as the prefix before it came to: a
	 * family's prefixes mostly have the same, so no table grows twice,
	 * and none leaves its smaller ones unused behind it. */
	if (p->nnodes)
		while (nd.cap < 2 * p->node[p->nnodes - 1].used && nd.cap < OWN_HINT_MAX)
			nd.cap *= 2;
	struct prefixset_node *node = room(p->node, &p->ncap, p->nnodes, 1, sizeof(*node), 64);
	if (!node)
		return -ENOMEM;
	p->node = node;
	if (text_put(p, h, l, n, &nd.text) < 0 || slots_take(p, nd.cap, &nd.slot) < 0)
		return -ENOMEM;
	nd.nlabels = (uint32_t)n;
	p->node[p->nnodes++] = nd;
	p->byhash[home] = (uint32_t)p->nnodes;
	p->cur = p->nnodes;
	return 0;
}

int prefixset_enter(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n)
{
	if ((p->nnodes + 1) * 2 > p->hcap && byhash_grow(p) < 0)
		return -ENOMEM;
	size_t i = (size_t)h & (p->hcap - 1);
	for (; p->byhash[i]; i = (i + 1) & (p->hcap - 1)) {
		const struct prefixset_node *nd = &p->node[p->byhash[i] - 1];
		if (nd->hash != h)
			continue;
		struct text_head t = head_at(p, nd->text);
		if (seriesset_block_holds(block_at(p, nd->text), t.len, t.n, l, n)) {
			p->cur = p->byhash[i];
			return 0;
		}
	}
	return node_new(p, h, l, n, i);
}

/* The free slot for hash h in a table of cap slots at t. */
static size_t own_free(const struct prefixset_slot *t, size_t cap, uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);
	while (t[i].at)
		i = (i + 1) & (cap - 1);
	return i;
}

/* A node's own table twice as large, at the end of the slots (the old one
 * stays unused until the next clear). */
static int own_grow(struct prefixset *p, struct prefixset_node *nd)
{
	uint32_t cap = nd->cap * 2, first;

	if (nd->cap > UINT32_MAX / 4 || slots_take(p, cap, &first) < 0)
		return -ENOMEM;
	const struct prefixset_slot *old = p->slot + nd->slot;
	struct prefixset_slot *t = p->slot + first;
	for (uint32_t k = 0; k < nd->cap; k++)
		if (old[k].at)
			t[own_free(t, cap, head_at(p, old[k].at - 1).hash)] = old[k];
	nd->slot = first;
	nd->cap = cap;
	return 0;
}

int prefixset_add(struct prefixset *p, uint64_t h, const struct seriesset_label *l, size_t n)
{
	struct prefixset_node *nd = &p->node[p->cur - 1];
	uint32_t tag = (uint32_t)(h >> 32), at;

	if ((nd->used + 1) * 2 > nd->cap && own_grow(p, nd) < 0)
		return -ENOMEM;
	struct prefixset_slot *t = p->slot + nd->slot;
	size_t i = (size_t)h & (nd->cap - 1);
	for (; t[i].at; i = (i + 1) & (nd->cap - 1)) {
		if (t[i].tag != tag)
			continue;
		struct text_head th = head_at(p, t[i].at - 1);
		if (seriesset_block_holds(block_at(p, t[i].at - 1), th.len, th.n, l, n))
			return 0;
	}
	if (text_put(p, h, l, n, &at) < 0)
		return -ENOMEM;
	t[i] = (struct prefixset_slot){tag, at + 1};
	nd->used++;
	p->series++;
	return 1;
}

/* One series as the emitter would have written it whole: its prefix's
 * labels, a comma, its own. */
static int move_one(const struct prefixset *p, const struct prefixset_node *nd, uint32_t own8,
		    char **buf, size_t *cap, struct seriesset *into)
{
	struct text_head pre = head_at(p, nd->text), own = head_at(p, own8);
	struct seriesset_label l[PREFIXSET_LABELS_MAX];
	size_t len = pre.len + (own.len ? 1 + own.len : 0);

	char *b = room(*buf, cap, 0, len ? len : 1, 1, 4096);
	if (!b)
		return -ENOMEM;
	*buf = b;
	memcpy(*buf, block_at(p, nd->text), pre.len);
	if (own.len) {
		(*buf)[pre.len] = ',';
		memcpy(*buf + pre.len + 1, block_at(p, own8), own.len);
	}
	size_t n = seriesset_split(*buf, len, l, PREFIXSET_LABELS_MAX);
	uint64_t h = (nd->hash + own.hash) ^ (uint64_t)(pre.n + own.n);
	return seriesset_add(into, h, l, n) < 0 ? -ENOMEM : 0;
}

int prefixset_move(struct prefixset *p, struct seriesset *into)
{
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (size_t k = 0; k < p->nnodes && rc == 0; k++) {
		const struct prefixset_node *nd = &p->node[k];
		const struct prefixset_slot *t = p->slot + nd->slot;
		for (uint32_t i = 0; i < nd->cap && rc == 0; i++)
			if (t[i].at)
				rc = move_one(p, nd, t[i].at - 1, &buf, &cap, into);
	}
	free(buf);
	/* Cleared only once all are in: a move cut short by memory is tried
	 * again whole (what is there already stays once). */
	if (rc == 0)
		prefixset_clear(p);
	return rc;
}

void prefixset_clear(struct prefixset *p)
{
	for (size_t k = 0; k < p->nnodes; k++)
		p->byhash[p->node[k].home] = 0;
	if (p->nnodes > p->peak_nodes)
		p->peak_nodes = p->nnodes;
	if (p->nslots > p->peak_slots)
		p->peak_slots = p->nslots;
	if (p->tlen > p->peak_text)
		p->peak_text = p->tlen;
	p->nnodes = p->nslots = p->tlen = 0;
	p->cur = 0;
	p->series = 0;
}

void prefixset_trim(struct prefixset *p)
{
	prefixset_clear(p);
	if (p->hcap > 4096 && p->peak_nodes * 2 < p->hcap / 8) {
		free(p->byhash);
		free(p->node);
		p->byhash = NULL;
		p->node = NULL;
		p->hcap = p->ncap = 0;
	}
	if (p->scap > 65536 && p->peak_slots < p->scap / 8) {
		free(p->slot);
		p->slot = NULL;
		p->scap = 0;
	}
	if (p->tcap > 65536 && p->peak_text < p->tcap / 8) {
		free(p->text);
		p->text = NULL;
		p->tcap = 0;
	}
	p->peak_nodes = p->peak_slots = p->peak_text = 0;
}

void prefixset_free(struct prefixset *p)
{
	free(p->byhash);
	free(p->node);
	free(p->slot);
	free(p->text);
	memset(p, 0, sizeof(*p));
}
