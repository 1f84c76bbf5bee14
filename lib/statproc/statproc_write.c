/* Lines written to an interface's definition file (the Linux statistics infrastructure, "Changing
 * attributes through the definition file"): attributes separated by
 * blanks, read-only ones and junk ignored. The lines of one write are a
 * batch, applied all or nothing: each is checked against what the lines
 * before it leave, every allocation is made before anything changes, and
 * only then is the batch applied. */
#include "statproc.h"
#include "statproc_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BLANKS " \t\r\n\v\f"

/* What a batch will do to one statistic. */
struct statproc_pending {
	struct statproc_def def; /* the definition the lines so far leave */
	bool on;
	bool discard;	       /* redefined: new data at commit */
	bool reset;	       /* data=reset */
	bool started, stopped; /* started= and stopped= become the commit's time */
	void *mem;	       /* discard: the data the commit installs */
	uint32_t nmem;
};

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;

	errno = 0;
	long long v = strtoll(s, &end, 0); /* the kernel's match_s64(.., 0): hex too */
	*out = v;
	return *s && !*end && !errno;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	*out = v;
	return *s && *s != '-' && !*end && !errno && v <= max;
}

static int pick(const char *v, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0)
			return (int)i;
	return -1;
}

/* type=, mode= and scale=: a word of a list. */
static bool take_word(struct statproc_request *r, const char *key, const char *v, const char **why)
{
	static const char *const types[] = {"value", "range", "array", "list", "raw", "history"};
	static const char *const modes[] = {"increments", "products", "range"};
	static const char *const scales[] = {"lin", "log2"};
	int k;

	if (strcmp(key, "type") == 0) {
		if ((k = pick(v, types, 6)) < 0)
			*why = "type must be value, range, array, list, raw or history";
		r->def.type = (enum statproc_type)k;
		r->got |= STATPROC_GOT_TYPE;
	} else if (strcmp(key, "mode") == 0) {
		if ((k = pick(v, modes, 3)) < 0)
			*why = "mode must be increments, products or range";
		r->def.mode = (enum statproc_mode)k;
		r->got |= STATPROC_GOT_MODE;
	} else if (strcmp(key, "scale") == 0) {
		if ((k = pick(v, scales, 2)) < 0)
			*why = "scale must be lin or log2";
		r->def.scale = (enum statproc_scale)k;
		r->got |= STATPROC_GOT_SCALE;
	} else {
		return false;
	}
	return true;
}

/* range_min=, range_max=, entries_max=, base_interval= and period=. */
static bool take_number(struct statproc_request *r, const char *key, const char *v,
			const char **why)
{
	uint64_t u = 0;

	if (strcmp(key, "range_min") == 0) {
		if (!parse_i64(v, &r->def.range_min))
			*why = "range_min must be a number";
		r->got |= STATPROC_GOT_MIN;
	} else if (strcmp(key, "range_max") == 0) {
		if (!parse_i64(v, &r->def.range_max))
			*why = "range_max must be a number";
		r->got |= STATPROC_GOT_MAX;
	} else if (strcmp(key, "entries_max") == 0) {
		if (!parse_u64(v, UINT32_MAX, &u))
			*why = "entries_max must be a number";
		r->def.entries_max = (uint32_t)u;
		r->got |= STATPROC_GOT_ENTRIES;
	} else if (strcmp(key, "base_interval") == 0) {
		if (!parse_u64(v, UINT32_MAX, &u))
			*why = "base_interval must be a number";
		r->def.base_interval = (uint32_t)u;
		r->got |= STATPROC_GOT_BASE;
	} else if (strcmp(key, "period") == 0) {
		if (!parse_u64(v, STATPROC_PERIOD_MAX, &r->def.period_us))
			*why = "period must be a number of microseconds, at most a day";
		r->got |= STATPROC_GOT_PERIOD;
	} else {
		return false;
	}
	return true;
}

/* Whether the line named a changeable attribute (or name=) already: a
 * key twice is refused, as either value taken alone would change another
 * statistic or attribute than the writer meant. */
static bool seen_before(const struct statproc_request *r, const char *key)
{
	static const char *const keys[] = {"type",	    "mode",	 "scale",
					   "entries_max",   "range_min", "range_max",
					   "base_interval", "period"}; /* STATPROC_GOT_* order */

	if (strcmp(key, "name") == 0)
		return r->got_name;
	if (strcmp(key, "on") == 0)
		return r->on >= 0;
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i]) == 0)
			return r->got & (1u << i);
	return false;
}

/* One "key=value" token; anything else is read-only or junk, ignored.
 * False with *why for a bad value of a key it knows, or a key twice. */
static bool take_token(struct statproc_request *r, const char *key, const char *v, const char **why)
{
	*why = NULL;
	if (seen_before(r, key)) {
		*why = "an attribute named twice in one line";
	} else if (strcmp(key, "name") == 0) {
		size_t len = strlen(v); /* a name too long names nothing */
		r->got_name = true;
		r->name_too_long = len >= sizeof(r->name);
		if (!r->name_too_long)
			memcpy(r->name, v, len + 1);
	} else if (strcmp(key, "on") == 0) {
		if (strcmp(v, "1") == 0 || strcmp(v, "0") == 0)
			r->on = v[0] - '0';
		else
			*why = "on must be 0 or 1";
	} else if (strcmp(key, "data") == 0) {
		r->reset |= strcmp(v, "reset") == 0; /* data=[age] copied back: read-only */
	} else if (!take_word(r, key, v, why)) {
		take_number(r, key, v, why);
	}
	return *why == NULL;
}

int statproc_parse(const char *line, struct statproc_request *r, const char **why)
{
	char tok[STATPROC_TOKEN_MAX + 1];

	memset(r, 0, sizeof(*r));
	r->on = -1;
	*why = NULL;
	for (line += strspn(line, BLANKS); *line; line += strspn(line, BLANKS)) {
		size_t n = strcspn(line, BLANKS);
		if (n > STATPROC_TOKEN_MAX) { /* dropping it would apply the rest of the line */
			*why = "a word is longer than 255 bytes";
			return -EFBIG;
		}
		memcpy(tok, line, n);
		tok[n] = '\0';
		line += n;
		char *eq = strchr(tok, '=');
		if (!eq)
			continue; /* junk */
		*eq = '\0';
		if (!take_token(r, tok, eq + 1, why))
			return -EINVAL;
	}
	return 0;
}

/* The type-specific attributes a new type needs (the old type's do not
 * apply to it), as the infrastructure asks. */
static bool complete_for_new_type(const struct statproc_request *r)
{
	unsigned need = 0;

	switch (r->def.type) {
	case STATPROC_VALUE:
		need = STATPROC_GOT_MODE;
		break;
	case STATPROC_ARRAY:
		need = STATPROC_GOT_BASE | STATPROC_GOT_SCALE;
		break;
	case STATPROC_LIST:
	case STATPROC_RAW:
		need = STATPROC_GOT_ENTRIES;
		break;
	case STATPROC_HISTORY:
		need = STATPROC_GOT_ENTRIES | STATPROC_GOT_PERIOD | STATPROC_GOT_MODE;
		break;
	case STATPROC_RANGE:
		break;
	}
	return (r->got & need) == need;
}

/* The definition the request makes of old, or -EINVAL with *why. */
static int merge(const struct statproc_def *old, const struct statproc_request *r,
		 struct statproc_def *d, const char **why)
{
	const struct statproc_def *v = &r->def;

	if ((r->got & STATPROC_GOT_TYPE) && v->type != old->type && !complete_for_new_type(r)) {
		*why = "a new type needs all its type-specific attributes";
		return -EINVAL;
	}
	*d = *old;
	d->type = r->got & STATPROC_GOT_TYPE ? v->type : d->type;
	d->range_min = r->got & STATPROC_GOT_MIN ? v->range_min : d->range_min;
	d->range_max = r->got & STATPROC_GOT_MAX ? v->range_max : d->range_max;
	d->mode = r->got & STATPROC_GOT_MODE ? v->mode : d->mode;
	d->entries_max = r->got & STATPROC_GOT_ENTRIES ? v->entries_max : d->entries_max;
	d->base_interval = r->got & STATPROC_GOT_BASE ? v->base_interval : d->base_interval;
	d->scale = r->got & STATPROC_GOT_SCALE ? v->scale : d->scale;
	d->period_us = r->got & STATPROC_GOT_PERIOD ? v->period_us : d->period_us;
	return statproc_check(d, why);
}

/* Whether data kept under a can stay under b: the same type with the same
 * type-specific attributes (the infrastructure discards data on a change of either).
 * An array's intervals run from range_min to range_max, so for an array
 * those bound what its counts mean too. */
static bool data_fits(const struct statproc_def *a, const struct statproc_def *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case STATPROC_VALUE:
		return a->mode == b->mode;
	case STATPROC_RANGE:
		return true;
	case STATPROC_ARRAY:
		return a->scale == b->scale && a->base_interval == b->base_interval &&
		       a->range_min == b->range_min && a->range_max == b->range_max;
	case STATPROC_LIST:
	case STATPROC_RAW:
		return a->entries_max == b->entries_max;
	case STATPROC_HISTORY:
		return a->entries_max == b->entries_max && a->mode == b->mode &&
		       a->period_us == b->period_us;
	}
	return false;
}

/* on=1 starts a statistic that is off, on=0 stops one that is on; the
 * value it already has is no change (started= and stopped= stay). */
static void pend_on(struct statproc_pending *p, int on)
{
	if (on == 1 && !p->on)
		p->on = p->started = true;
	else if (on == 0 && p->on)
		p->on = false, p->stopped = true;
}

/* As the infrastructure's own code: a statistic whose data a redefinition
 * discards is stopped, redefined, and started again if it was on. */
static int pend_define(struct statproc_pending *p, const struct statproc_request *r,
		       const char **why)
{
	struct statproc_def d;
	int rc;

	if ((rc = merge(&p->def, r, &d, why)) < 0)
		return rc;
	if (!data_fits(&p->def, &d)) {
		p->discard = true;
		if (p->on)
			p->stopped = p->started = true;
	}
	p->def = d;
	return 0;
}

int statproc_batch_init(struct statproc_batch *b, struct statproc_stat *s, size_t n)
{
	b->s = s;
	b->n = n;
	if (!(b->p = calloc(n ? n : 1, sizeof(*b->p))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		b->p[i].def = s[i].def;
		b->p[i].on = s[i].on;
	}
	return 0;
}

int statproc_batch_add(struct statproc_batch *b, const struct statproc_request *r, const char **why)
{
	size_t i = r->name_too_long ? b->n : 0;
	int rc;

	*why = NULL;
	if (!r->got_name) {
		if (r->got) { /* only on, off and data=reset apply to a whole interface */
			*why = "changing a definition needs name=";
			return -EINVAL;
		}
		for (i = 0; i < b->n; i++) {
			pend_on(&b->p[i], r->on);
			b->p[i].reset |= r->reset;
		}
		return 0;
	}
	while (i < b->n && strcmp(b->s[i].name, r->name) != 0)
		i++;
	if (i == b->n) {
		*why = "no statistic of that name";
		return -ENOENT;
	}
	if (r->got && (rc = pend_define(&b->p[i], r, why)) < 0)
		return rc;
	pend_on(&b->p[i], r->on);
	b->p[i].reset |= r->reset;
	return 0;
}

static void apply(struct statproc_stat *s, struct statproc_pending *p, uint64_t now_ns)
{
	if (p->discard) {
		statproc_data_install(s, &p->def, p->mem, p->nmem, now_ns);
		p->mem = NULL;
	} else {
		s->def = p->def; /* at most its range moved: the data stays */
		if (p->reset)
			statproc_reset(s, now_ns);
	}
	if (p->stopped)
		s->stopped_ns = now_ns;
	if (p->started)
		s->started_ns = now_ns;
	s->on = p->on;
}

int statproc_batch_commit(struct statproc_batch *b, uint64_t now_ns)
{
	for (size_t i = 0; i < b->n; i++) {
		struct statproc_pending *p = &b->p[i];
		if (p->discard && !p->mem && statproc_data_alloc(&p->def, &p->mem, &p->nmem) < 0) {
			for (size_t k = 0; k < i; k++) {
				free(b->p[k].mem);
				b->p[k].mem = NULL;
			}
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < b->n; i++)
		apply(&b->s[i], &b->p[i], now_ns);
	return 0;
}

const struct statproc_def *statproc_batch_def(const struct statproc_batch *b, size_t i)
{
	return &b->p[i].def;
}

void statproc_batch_free(struct statproc_batch *b)
{
	for (size_t i = 0; b->p && i < b->n; i++)
		free(b->p[i].mem);
	free(b->p);
	b->p = NULL;
}

int statproc_write(struct statproc_stat *s, size_t n, const char *line, uint64_t now_ns,
		   const char **why)
{
	struct statproc_request r;
	struct statproc_batch b;
	int rc;

	if ((rc = statproc_parse(line, &r, why)) < 0)
		return rc;
	if (statproc_batch_init(&b, s, n) < 0) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if ((rc = statproc_batch_add(&b, &r, why)) == 0 &&
	    (rc = statproc_batch_commit(&b, now_ns)) < 0)
		*why = "out of memory";
	statproc_batch_free(&b);
	return rc;
}
