/* Mapping rules for self-describing statistics (shared by the DCI and Xen
 * collectors): YAML rules that match a statistic by the names of its source
 * and give it a metric name, type, unit and help; free-text names made into
 * metric names deterministically, collisions resolved. */
#ifndef STATMAP_H
#define STATMAP_H

#include <stdbool.h>
#include <stddef.h>

#include <binstat/collector.h>

#define STATMAP_KEYS_MAX 4
#define STATMAP_RULES_MAX 1024
#define STATMAP_NAME_MAX 200 /* bytes of a generated metric name */
#define STATMAP_NAME_BUF (STATMAP_NAME_MAX + 1)
#define STATMAP_PART_MIN 20 /* bytes a placeholder keeps when a name is cut to fit */

/* One rule; strings point into the configuration, which outlives it. */
struct statmap_rule {
	const char *match[STATMAP_KEYS_MAX]; /* a glob per key; NULL matches anything */
	const char *name;		     /* template with {key}; NULL: the collector's */
	const char *unit;		     /* NULL: none */
	const char *help;		     /* NULL: the collector's */
	enum bs_metric_type type;	     /* meaningful when `typed` */
	bool typed;
	bool drop;    /* the statistic is not exported */
	double scale; /* values are multiplied by it (1: exact integers kept) */
};

/* The rules of one collector, and the names of the keys its sources have
 * (the DCI collector's are module, title, supplier and stat). */
struct statmap {
	const char *const *keys;
	size_t nkeys;
	struct statmap_rule *rule;
	size_t n;
	struct statmap_rule fallback; /* what matches when no rule does */
};

/* Reads `rules` (a YAML list, or NULL for none). A rule's `name` template
 * is checked with every placeholder filled, so a bad one is a configuration
 * error at start. `keys` must outlive the map. -EINVAL: the error is
 * recorded on the node. */
int statmap_init(struct statmap *m, const struct bs_conf *rules, const char *const *keys,
		 size_t nkeys);
void statmap_free(struct statmap *m);

/* The first rule whose every pattern matches values[] (one per key, raw
 * text); the fallback when none does. Never NULL. */
const struct statmap_rule *statmap_match(const struct statmap *m, const char *const *values);

/* Expands a template: "{key}" becomes that key's value made a name part
 * (statmap_sanitize); "_<unit>" is appended when the name does not end in it.
 * A name that would pass STATMAP_NAME_MAX bytes has its placeholders' parts
 * cut to fit (each keeps at least STATMAP_PART_MIN bytes). Writes a valid
 * metric name of at most STATMAP_NAME_MAX bytes into out (STATMAP_NAME_BUF
 * bytes). -EINVAL for an unknown placeholder, -ERANGE when the result
 * cannot fit or is not a valid name. */
int statmap_expand(const struct statmap *m, const char *tmpl, const char *const *values,
		   const char *unit, char *out);

/* Help text from a rule's help: "{key}" becomes that key's raw value
 * (other braces are kept). Writes at most cap - 1 bytes and a NUL. */
void statmap_help(const struct statmap *m, const char *tmpl, const char *const *values, char *out,
		  size_t cap);

/* Free text made into a metric name part: ASCII letters lowercased, digits
 * kept, each run of anything else one '_', none at either end. Writes at
 * most cap - 1 bytes and a NUL; returns the length. */
size_t statmap_sanitize(const char *in, char *out, size_t cap);

/* Makes names[0..n) unique, in order: a name seen before gets "_<i>" (i its
 * index, the statistic's number) appended, cut to fit, until unique. Empty
 * names are skipped. Each names[i] holds STATMAP_NAME_BUF bytes. Returns
 * how many were renamed, or -ENOMEM. */
int statmap_unique(char **names, size_t n);

/* "counter", "gauge", "unknown" (what a rule may say). */
int statmap_type_parse(const char *s, enum bs_metric_type *out);

#endif
