/* A line written to an interface's definition file (seed 001, "Changing
 * attributes through the definition file"): attributes separated by
 * blanks, read-only ones and junk ignored, a whole line refused if a value
 * of a changeable attribute is not a number or not allowed. */
#include "statproc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX 256

/* What one line asked for; got_* say which attributes it named. */
struct request {
	char name[STATPROC_NAME_MAX + 1];
	bool got_name, name_too_long, got_type, got_mode, got_scale, got_entries, got_min, got_max,
	    got_base, got_period, on, off, reset;
	struct statproc_def def;
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

/* One "key=value" token. Returns false for a bad value of a key it knows. */
static bool take_token(struct request *r, const char *key, const char *v, const char **why)
{
	static const char *const types[] = {"value", "range", "array", "list", "raw", "history"};
	static const char *const modes[] = {"increments", "products", "range"};
	static const char *const scales[] = {"lin", "log2"};
	uint64_t u;
	int k;

	*why = NULL;
	if (strcmp(key, "name") == 0) {
		if (!r->got_name) { /* the first name= counts; a longer one names nothing */
			r->got_name = true;
			size_t len = strlen(v);
			r->name_too_long = len >= sizeof(r->name);
			if (!r->name_too_long)
				memcpy(r->name, v, len + 1);
		}
	} else if (strcmp(key, "on") == 0) {
		if (strcmp(v, "1") == 0)
			r->on = true;
		else if (strcmp(v, "0") == 0)
			r->off = true;
		else
			*why = "on must be 0 or 1";
	} else if (strcmp(key, "data") == 0) {
		r->reset |= strcmp(v, "reset") == 0; /* data=[age] copied back: read-only */
	} else if (strcmp(key, "type") == 0) {
		if ((k = pick(v, types, 6)) < 0)
			*why = "type must be value, range, array, list, raw or history";
		r->def.type = (enum statproc_type)k;
		r->got_type = true;
	} else if (strcmp(key, "mode") == 0) {
		if ((k = pick(v, modes, 3)) < 0)
			*why = "mode must be increments, products or range";
		r->def.mode = (enum statproc_mode)k;
		r->got_mode = true;
	} else if (strcmp(key, "scale") == 0) {
		if ((k = pick(v, scales, 2)) < 0)
			*why = "scale must be lin or log2";
		r->def.scale = (enum statproc_scale)k;
		r->got_scale = true;
	} else if (strcmp(key, "range_min") == 0) {
		if (!(r->got_min = parse_i64(v, &r->def.range_min)))
			*why = "range_min must be a number";
	} else if (strcmp(key, "range_max") == 0) {
		if (!(r->got_max = parse_i64(v, &r->def.range_max)))
			*why = "range_max must be a number";
	} else if (strcmp(key, "entries_max") == 0) {
		if (!(r->got_entries = parse_u64(v, UINT32_MAX, &u)))
			*why = "entries_max must be a number";
		r->def.entries_max = (uint32_t)u;
	} else if (strcmp(key, "base_interval") == 0) {
		if (!(r->got_base = parse_u64(v, UINT32_MAX, &u)))
			*why = "base_interval must be a number";
		r->def.base_interval = (uint32_t)u;
	} else if (strcmp(key, "period") == 0) {
		if (!(r->got_period = parse_u64(v, STATPROC_PERIOD_MAX, &r->def.period_us)))
			*why = "period must be a number of microseconds, at most a day";
	}
	return *why == NULL; /* anything else: read-only or junk, ignored */
}

static int parse_line(const char *line, struct request *r, const char **why)
{
	char tok[TOKEN_MAX];

	memset(r, 0, sizeof(*r));
	while (*line) {
		size_t n = strcspn(line, " \t\r\n");
		if (n > 0 && n < sizeof(tok)) {
			memcpy(tok, line, n);
			tok[n] = '\0';
			char *eq = strchr(tok, '=');
			if (eq) {
				*eq = '\0';
				if (!take_token(r, tok, eq + 1, why))
					return -EINVAL;
			}
		}
		line += n;
		line += strspn(line, " \t\r\n");
	}
	return 0;
}

/* The type-specific attributes a new type needs (the old type's do not
 * apply to it), as the seed asks. */
static bool complete_for_new_type(const struct request *r)
{
	switch (r->def.type) {
	case STATPROC_VALUE:
		return r->got_mode;
	case STATPROC_ARRAY:
		return r->got_base && r->got_scale;
	case STATPROC_LIST:
	case STATPROC_RAW:
		return r->got_entries;
	case STATPROC_HISTORY:
		return r->got_entries && r->got_period && r->got_mode;
	case STATPROC_RANGE:
		return true;
	}
	return false;
}

/* The definition the request makes of s's, or -EINVAL with *why. */
static int merge(const struct statproc_stat *s, const struct request *r, struct statproc_def *d,
		 const char **why)
{
	bool new_type = r->got_type && r->def.type != s->def.type;

	if (new_type && !complete_for_new_type(r)) {
		*why = "a new type needs all its type-specific attributes";
		return -EINVAL;
	}
	*d = s->def;
	if (r->got_type)
		d->type = r->def.type;
	if (r->got_min)
		d->range_min = r->def.range_min;
	if (r->got_max)
		d->range_max = r->def.range_max;
	if (r->got_mode)
		d->mode = r->def.mode;
	if (r->got_entries)
		d->entries_max = r->def.entries_max;
	if (r->got_base)
		d->base_interval = r->def.base_interval;
	if (r->got_scale)
		d->scale = r->def.scale;
	if (r->got_period)
		d->period_us = r->def.period_us;
	return statproc_check(d, why);
}

/* As the seed's implementation: stopped, redefined (the data discarded),
 * and started again if it was on or the line says on=1. */
static int redefine(struct statproc_stat *s, const struct request *r, uint64_t now_ns,
		    const char **why)
{
	struct statproc_def d;
	bool was_on = s->on;
	int rc = merge(s, r, &d, why);

	if (rc < 0)
		return rc; /* refused: nothing changed */
	statproc_stop(s, now_ns);
	if ((rc = statproc_define(s, &d, now_ns)) < 0)
		*why = "out of memory"; /* the old definition and data stay */
	if (r->on || (was_on && !r->off))
		statproc_start(s, now_ns);
	return rc;
}

int statproc_write(struct statproc_stat *s, size_t n, const char *line, uint64_t now_ns,
		   const char **why)
{
	struct request r;
	int rc;

	*why = NULL;
	if ((rc = parse_line(line, &r, why)) < 0)
		return rc;
	bool redefinition = r.got_type || r.got_mode || r.got_scale || r.got_entries || r.got_min ||
			    r.got_max || r.got_base || r.got_period;
	if (!r.got_name) {
		if (redefinition) { /* only on/off/reset apply to a whole interface */
			*why = "changing a definition needs name=";
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++) {
			if (r.on)
				statproc_start(&s[i], now_ns);
			if (r.off)
				statproc_stop(&s[i], now_ns);
			if (r.reset)
				statproc_reset(&s[i], now_ns);
		}
		return 0;
	}
	size_t i = r.name_too_long ? n : 0;
	while (i < n && strcmp(s[i].name, r.name) != 0)
		i++;
	if (i == n) {
		*why = "no statistic of that name";
		return -ENOENT;
	}
	if (redefinition)
		return redefine(&s[i], &r, now_ns, why);
	if (r.on)
		statproc_start(&s[i], now_ns);
	if (r.off)
		statproc_stop(&s[i], now_ns);
	if (r.reset)
		statproc_reset(&s[i], now_ns);
	return 0;
}
