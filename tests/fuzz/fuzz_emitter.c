/* Fuzzes the emitter's label prefix against whole label sets: series made
 * of outside labels (names and values anything), each split at a point the
 * input chooses, must be written, refused and counted alike both ways. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "sink.h"

#define MAX_FIELDS 80

struct run {
	struct sink sink;
	struct famreg reg;
	struct emitter em;
};

/* Records split at 0x1e; in each, fields at 0x1f: the first field's first
 * byte says how many labels the prefix takes, the rest are name, value. */
static size_t fields(char *rec, char **f)
{
	size_t n = 0;
	for (char *p = rec; p && n < MAX_FIELDS; n++) {
		f[n] = p;
		p = strchr(p, 0x1f);
		if (p)
			*p++ = '\0';
	}
	return n;
}

static void emit_all(struct run *r, char *text, bool use_prefix)
{
	static const double up[] = {1, 2};
	static const uint64_t count[] = {1, 2};
	static const struct bs_histogram h = {2, up, count, false, {0}};
	static const char *const states[] = {"a", "b"};
	static const bool active[] = {true, false};
	static const enum bs_metric_type types[] = {BS_GAUGE, BS_HISTOGRAM, BS_STATESET};
	struct bs_label l[MAX_FIELDS / 2];
	char *f[MAX_FIELDS];
	int family = 0;

	for (char *rec = text, *next; rec; rec = next) {
		next = strchr(rec, 0x1e);
		if (next)
			*next++ = '\0';
		size_t nf = fields(rec, f), nl = (nf - 1) / 2;
		for (size_t i = 0; i < nl; i++)
			l[i] = (struct bs_label){f[1 + 2 * i], f[2 + 2 * i]};
		size_t pre = nl ? (unsigned char)f[0][0] % (nl + 1) : 0;
		if (f[0][0] && f[0][1] == 'F') {
			char name[16] = "f_";
			name[2] = (char)('a' + family++ % 26);
			bs_family(&r->em.pub, name, types[(unsigned char)f[0][0] % 3], NULL, "");
		}
		const struct bs_label *own = l;
		size_t nown = nl;
		if (use_prefix) {
			r->em.pub.ops->prefix(&r->em.pub, l, pre);
			own += pre;
			nown -= pre;
		}
		switch (r->em.type) {
		case BS_HISTOGRAM:
			r->em.pub.ops->histogram(&r->em.pub, own, nown, &h);
			break;
		case BS_STATESET:
			r->em.pub.ops->stateset(&r->em.pub, own, nown, states, active, 2);
			break;
		default:
			bs_sample_u64(&r->em.pub, own, nown, 1);
		}
	}
}

static char *text_of(struct sink *s)
{
	size_t n = 0;
	sink_finish(s);
	for (struct sink_chunk *k = s->head; k; k = k->next)
		n += k->len;
	char *t = malloc(n + 1);
	n = 0;
	for (struct sink_chunk *k = s->head; k; k = k->next) {
		memcpy(t + n, k->data, k->len);
		n += k->len;
	}
	t[n] = '\0';
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r[2];
	char *out[2];

	for (int use = 0; use < 2; use++) {
		char *text = malloc(size + 1);
		memcpy(text, data, size);
		text[size] = '\0';
		sink_init(&r[use].sink, false, 1 << 20);
		famreg_init(&r[use].reg);
		emitter_init(&r[use].em, EXPO_OPENMETRICS, &r[use].sink, &r[use].reg, 0);
		bs_family(&r[use].em.pub, "g", BS_GAUGE, NULL, "");
		emit_all(&r[use], text, use);
		out[use] = text_of(&r[use].sink);
		free(text);
	}
	if (strcmp(out[0], out[1]) != 0 || r[0].em.ndrops != r[1].em.ndrops)
		abort();
	for (size_t i = 0; i < r[0].em.ndrops; i++)
		if (strcmp(r[0].em.drops[i].reason, r[1].em.drops[i].reason) != 0 ||
		    r[0].em.drops[i].n != r[1].em.drops[i].n)
			abort();
	for (int use = 0; use < 2; use++) {
		free(out[use]);
		emitter_free(&r[use].em);
		famreg_free(&r[use].reg);
		sink_free(&r[use].sink);
	}
	return 0;
}
