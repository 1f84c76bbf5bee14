/* Mapping rules and metric names for statistics whose names are free text.
 * Everything here runs on describe, never per sample, so clarity wins over
 * speed; the names it makes are deterministic for a given description. */
#include "statmap.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int statmap_type_parse(const char *s, enum bs_metric_type *out)
{
	static const struct {
		const char *name;
		enum bs_metric_type type;
	} types[] = {{"counter", BS_COUNTER}, {"gauge", BS_GAUGE}, {"unknown", BS_UNKNOWN}};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(s, types[i].name) == 0) {
			*out = types[i].type;
			return 0;
		}
	}
	return -EINVAL;
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && c >= '0' && c <= '9');
}

static bool snake_valid(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

size_t statmap_sanitize(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	bool gap = false;

	if (cap == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)in; *p && n + 1 < cap; p++) {
		char c = (char)*p;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (gap && n > 0) {
				if (n + 2 >= cap)
					break;
				out[n++] = '_';
			}
			gap = false;
			out[n++] = c;
		} else {
			gap = true;
		}
	}
	out[n] = '\0';
	return n;
}

static int key_index(const struct statmap *m, const char *name, size_t len)
{
	for (size_t k = 0; k < m->nkeys; k++)
		if (strlen(m->keys[k]) == len && memcmp(m->keys[k], name, len) == 0)
			return (int)k;
	return -1;
}

/* Appends src (len bytes) at out[*n]; -ERANGE when it would not fit. */
static int append(char *out, size_t *n, const char *src, size_t len)
{
	if (*n + len > STATMAP_NAME_MAX)
		return -ERANGE;
	memcpy(out + *n, src, len);
	*n += len;
	out[*n] = '\0';
	return 0;
}

/* The template with each placeholder's name part cut to at most part_cap
 * bytes; -ERANGE when the result does not fit. */
static int expand_template(const struct statmap *m, const char *tmpl, const char *const *values,
			   size_t part_cap, char *out, size_t *n)
{
	char part[STATMAP_NAME_BUF];
	int rc = 0;

	*n = 0;
	out[0] = '\0';
	for (const char *p = tmpl; *p && rc == 0;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;
		if (!close) {
			rc = append(out, n, p, 1);
			p++;
			continue;
		}
		int k = key_index(m, p + 1, (size_t)(close - p - 1));
		if (k < 0)
			return -EINVAL;
		size_t len = statmap_sanitize(values[k], part, sizeof(part));
		while (len > part_cap || (len > 0 && part[len - 1] == '_'))
			len--; /* a cut part ends in a letter or digit, as a whole one does */
		rc = append(out, n, part, len);
		p = close + 1;
	}
	return rc;
}

static int expand_with_unit(const struct statmap *m, const char *tmpl, const char *const *values,
			    const char *unit, size_t part_cap, char *out, size_t *n)
{
	int rc = expand_template(m, tmpl, values, part_cap, out, n);
	if (rc < 0)
		return rc;
	if (out[0] >= '0' && out[0] <= '9') { /* "{stat}" of "5min_load" */
		if (*n + 1 > STATMAP_NAME_MAX)
			return -ERANGE;
		memmove(out + 1, out, *n + 1);
		out[0] = '_';
		(*n)++;
	}
	if (!unit)
		return 0;
	size_t ul = strlen(unit);
	bool has = *n > ul && out[*n - ul - 1] == '_' && strcmp(out + *n - ul, unit) == 0;
	if (!has && (append(out, n, "_", 1) < 0 || append(out, n, unit, ul) < 0))
		return -ERANGE;
	return 0;
}

/* Expanded whole when it fits; else with every name part cut to the
 * longest length that fits, never below STATMAP_PART_MIN bytes, so that a
 * long statistic name still shows as much of itself as a name can hold
 * (DCI4's gatherer shows at least a name's first twenty characters). */
static int expand_fitting(const struct statmap *m, const char *tmpl, const char *const *values,
			  const char *unit, char *out, size_t *n)
{
	size_t lo = STATMAP_PART_MIN, hi = STATMAP_NAME_MAX;
	int rc = expand_with_unit(m, tmpl, values, unit, hi, out, n);

	if (rc != -ERANGE)
		return rc;
	if (expand_with_unit(m, tmpl, values, unit, lo, out, n) < 0)
		return -ERANGE;
	while (hi - lo > 1) { /* lo fits, hi does not */
		size_t mid = lo + (hi - lo) / 2;
		if (expand_with_unit(m, tmpl, values, unit, mid, out, n) == 0)
			lo = mid;
		else
			hi = mid;
	}
	return expand_with_unit(m, tmpl, values, unit, lo, out, n);
}

int statmap_expand(const struct statmap *m, const char *tmpl, const char *const *values,
		   const char *unit, char *out)
{
	size_t n;
	int rc = expand_fitting(m, tmpl, values, unit, out, &n);
	if (rc < 0)
		return rc;
	if (n == 0)
		return -ERANGE;
	for (size_t i = 0; i < n; i++)
		if (!name_char(out[i], i == 0))
			return -ERANGE;
	return 0;
}

void statmap_help(const struct statmap *m, const char *tmpl, const char *const *values, char *out,
		  size_t cap)
{
	size_t n = 0;

	for (const char *p = tmpl; *p && n + 1 < cap;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;
		int k = close ? key_index(m, p + 1, (size_t)(close - p - 1)) : -1;
		if (k < 0) {
			out[n++] = *p++;
			continue;
		}
		size_t l = strnlen(values[k], cap - 1 - n);
		memcpy(out + n, values[k], l);
		n += l;
		p = close + 1;
	}
	out[n] = '\0';
}

const struct statmap_rule *statmap_match(const struct statmap *m, const char *const *values)
{
	for (size_t r = 0; r < m->n; r++) {
		const struct statmap_rule *rule = &m->rule[r];
		size_t k;
		for (k = 0; k < m->nkeys; k++)
			if (rule->match[k] && fnmatch(rule->match[k], values[k], 0) != 0)
				break;
		if (k == m->nkeys)
			return rule;
	}
	return &m->fallback;
}

/* ---- configuration ---- */

static int read_match(const struct statmap *m, const struct bs_conf *rule, struct statmap_rule *r)
{
	const struct bs_conf *match = rule->ops->child(rule, "match");

	if (!match)
		return 0;
	if (match->ops->kind(match) != BS_CONF_MAP)
		return match->ops->error(match, "match must be a mapping of key: glob pattern");
	/* Keys not listed here are reported by the host as unknown. */
	for (size_t k = 0; k < m->nkeys; k++)
		if (match->ops->get_str(match, m->keys[k], &r->match[k]) == -EINVAL)
			return -EINVAL;
	return 0;
}

/* The template with each placeholder filled by "x": catches unknown keys
 * and characters no metric name may hold, at start rather than per scrape. */
static int check_template(const struct statmap *m, const struct bs_conf *rule,
			  const struct statmap_rule *r)
{
	const char *x[STATMAP_KEYS_MAX] = {"x", "x", "x", "x"};
	char out[STATMAP_NAME_BUF], msg[160];
	int rc = statmap_expand(m, r->name, x, r->unit, out);

	if (rc == 0)
		return 0;
	if (rc == -EINVAL) {
		int n = snprintf(msg, sizeof(msg), "name: a placeholder is not one of {%s}",
				 m->keys[0]);
		for (size_t k = 1; k < m->nkeys && n > 0 && (size_t)n < sizeof(msg); k++)
			n += snprintf(msg + n, sizeof(msg) - (size_t)n, ", {%s}", m->keys[k]);
		return rule->ops->error(rule->ops->child(rule, "name"), msg);
	}
	return rule->ops->errorf(rule->ops->child(rule, "name"),
				 "name must make a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*, "
				 "at most %d bytes)",
				 STATMAP_NAME_MAX);
}

static int read_rule(const struct statmap *m, const struct bs_conf *rule, struct statmap_rule *r)
{
	const struct bs_conf_ops *c = rule->ops;
	const char *type = NULL;

	r->scale = 1;
	if (c->kind(rule) != BS_CONF_MAP)
		return c->error(rule, "a rule must be a mapping (match, name, type, unit, help, "
				      "scale, drop)");
	if (read_match(m, rule, r) < 0 || c->get_str(rule, "name", &r->name) == -EINVAL ||
	    c->get_str(rule, "type", &type) == -EINVAL ||
	    c->get_str(rule, "unit", &r->unit) == -EINVAL ||
	    c->get_str(rule, "help", &r->help) == -EINVAL ||
	    c->get_f64(rule, "scale", -1e18, 1e18, &r->scale) == -EINVAL ||
	    c->get_bool(rule, "drop", &r->drop) == -EINVAL)
		return -EINVAL;
	if (type && statmap_type_parse(type, &r->type) < 0)
		return c->error(c->child(rule, "type"), "type must be counter, gauge or unknown");
	r->typed = type != NULL;
	if (r->unit && !snake_valid(r->unit))
		return c->error(c->child(rule, "unit"),
				"unit must be 1 to 64 of a-z, 0-9 and _ (bytes, seconds, ...)");
	if (r->scale == 0)
		return c->error(c->child(rule, "scale"), "scale must not be 0");
	if (r->name)
		return check_template(m, rule, r);
	return 0;
}

int statmap_init(struct statmap *m, const struct bs_conf *rules, const char *const *keys,
		 size_t nkeys)
{
	*m = (struct statmap){.keys = keys, .nkeys = nkeys, .fallback = {.scale = 1}};
	if (!rules)
		return 0;
	size_t n = rules->ops->length(rules);
	if (rules->ops->kind(rules) != BS_CONF_SEQ || n > STATMAP_RULES_MAX)
		return rules->ops->errorf(rules, "rules must be a list of at most %d rules",
					  STATMAP_RULES_MAX);
	if (n && !(m->rule = calloc(n, sizeof(*m->rule))))
		return -ENOMEM;
	for (m->n = 0; m->n < n; m->n++) {
		if (read_rule(m, rules->ops->item(rules, m->n), &m->rule[m->n]) < 0) {
			statmap_free(m);
			return -EINVAL;
		}
	}
	return 0;
}

void statmap_free(struct statmap *m)
{
	free(m->rule);
	m->rule = NULL;
	m->n = 0;
}

/* ---- collisions ---- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

struct seen {
	const char **slot;
	size_t mask;
};

/* Inserts s unless present; false when it was there already. */
static bool seen_add(struct seen *t, const char *s)
{
	for (size_t i = hash_str(s) & t->mask;; i = (i + 1) & t->mask) {
		if (!t->slot[i]) {
			t->slot[i] = s;
			return true;
		}
		if (strcmp(t->slot[i], s) == 0)
			return false;
	}
}

/* names[i] with "_<i>" (then "_<i>_<k>") appended, its base cut to fit. */
static void rename_unique(struct seen *t, char *name, size_t i)
{
	char base[STATMAP_NAME_BUF], suffix[32];

	memcpy(base, name, STATMAP_NAME_BUF);
	for (unsigned k = 1;; k++) {
		int sl = k == 1 ? snprintf(suffix, sizeof(suffix), "_%zu", i)
				: snprintf(suffix, sizeof(suffix), "_%zu_%u", i, k);
		size_t bl = strlen(base);
		if (bl + (size_t)sl > STATMAP_NAME_MAX)
			bl = STATMAP_NAME_MAX - (size_t)sl;
		memcpy(name, base, bl);
		memcpy(name + bl, suffix, (size_t)sl + 1);
		if (seen_add(t, name))
			return;
	}
}

int statmap_unique(char **names, size_t n)
{
	size_t cap = 16, renamed = 0;

	while (cap < 2 * n + 2)
		cap *= 2;
	struct seen t = {calloc(cap, sizeof(char *)), cap - 1};
	if (!t.slot)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!names[i][0] || seen_add(&t, names[i]))
			continue;
		rename_unique(&t, names[i], i);
		renamed++;
	}
	free(t.slot);
	return (int)renamed;
}
