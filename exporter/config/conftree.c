/* A YAML file as a tree of nodes that know their file position (what the
 * file means is config.c's business).
 * libyaml's document loader does the parsing; the tree is ours so that
 * collectors never see libyaml and every error can name file, line and column.
 * Aliases are expanded with a node cap, so an alias bomb is an error, not OOM. */
#include "conftree.h"

#include "hash.h"
#include "readfile.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <yaml.h>

static const struct bs_conf_ops conf_ops;

static int conf_verrorf(const struct conf_node *node, const char *fmt, va_list ap)
{
	struct conf_doc *doc = node->doc;

	if (doc->has_err)
		return -EINVAL;
	int n =
	    snprintf(doc->err, sizeof(doc->err), "%s:%u:%u: ", doc->file, node->line, node->col);
	if (n > 0 && (size_t)n < sizeof(doc->err))
		vsnprintf(doc->err + n, sizeof(doc->err) - (size_t)n, fmt, ap);
	doc->has_err = true;
	return -EINVAL;
}

int conf_errorf(const struct conf_node *node, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = conf_verrorf(node, fmt, ap);
	va_end(ap);
	return rc;
}

void conf_null_to_map(const struct conf_node *node)
{
	struct conf_node *n = (struct conf_node *)node; /* the document owns it */

	if (n->kind == BS_CONF_SCALAR && n->scalar[0] == '\0')
		n->kind = BS_CONF_MAP;
}

static void node_free(struct conf_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->val[i]);
		if (n->key) {
			free(n->key[i]);
			node_free(n->key_pos[i]);
		}
	}
	free(n->val);
	free(n->key);
	free(n->key_pos);
	free(n->used);
	free(n->scalar);
	free(n);
}

static struct conf_node *node_new(struct conf_doc *doc, enum bs_conf_kind kind,
				  const yaml_node_t *y)
{
	struct conf_node *n;

	if (++doc->nodes > CONF_NODES_MAX)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->pub.ops = &conf_ops;
	n->doc = doc;
	n->kind = kind;
	n->line = (unsigned)y->start_mark.line + 1;
	n->col = (unsigned)y->start_mark.column + 1;
	return n;
}

static struct conf_node *convert(struct conf_doc *doc, yaml_document_t *yd, yaml_node_t *y,
				 int depth, char *err, size_t errlen);

static int fail(struct conf_doc *doc, const yaml_node_t *y, char *err, size_t errlen,
		const char *why)
{
	snprintf(err, errlen, "%s:%zu:%zu: %s", doc->file, y->start_mark.line + 1,
		 y->start_mark.column + 1, why);
	return -EINVAL;
}

/* The keys of one mapping seen so far, for the duplicate check: an open
 * addressing table of their indices, seeded since the keys are outside
 * input (a scan of every earlier key made 50,000 keys take 5.6 s). */
struct keyset {
	size_t *slot; /* index + 1 into the mapping's keys; 0 empty */
	size_t mask;
	uint64_t seed;
};

static size_t *keyset_new(struct keyset *set, size_t cnt)
{
	size_t size = 8;

	while (size < 2 * cnt)
		size <<= 1;
	set->mask = size - 1;
	set->seed = hash_seed();
	return set->slot = calloc(size, sizeof(*set->slot));
}

/* Records `key` as key i of `keys` (keys 0 .. i-1 recorded before); false
 * if it is one of them. */
static bool keyset_add(struct keyset *set, char *const *keys, size_t i, const char *key)
{
	size_t h = (size_t)hash_bytes(key, strlen(key), set->seed) & set->mask;

	for (; set->slot[h]; h = (h + 1) & set->mask)
		if (strcmp(keys[set->slot[h] - 1], key) == 0)
			return false;
	set->slot[h] = i + 1;
	return true;
}

static int convert_pairs(struct conf_doc *doc, yaml_document_t *yd, yaml_node_t *y,
			 struct conf_node *n, size_t cnt, struct keyset *keys, int depth, char *err,
			 size_t errlen)
{
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_pair_t *pair = &y->data.mapping.pairs.start[i];
		yaml_node_t *k = yaml_document_get_node(yd, pair->key);
		yaml_node_t *v = yaml_document_get_node(yd, pair->value);
		if (!k || !v || k->type != YAML_SCALAR_NODE)
			return fail(doc, k ? k : y, err, errlen,
				    "mapping keys must be plain strings");
		const char *ks = (const char *)k->data.scalar.value;
		if (strlen(ks) != k->data.scalar.length) /* "a\0b" must not pass as "a" */
			return fail(doc, k, err, errlen, "NUL byte in a key");
		if (!keyset_add(keys, n->key, i, ks)) {
			char why[160];
			snprintf(why, sizeof(why), "duplicate key '%.100s'", ks);
			return fail(doc, k, err, errlen, why);
		}
		n->key[i] = strdup(ks);
		n->key_pos[i] = node_new(doc, BS_CONF_SCALAR, k);
		n->val[i] = convert(doc, yd, v, depth + 1, err, errlen);
		n->n = i + 1;
		if (!n->key[i] || !n->key_pos[i] || !n->val[i])
			return -EINVAL;
	}
	return 0;
}

static int convert_map(struct conf_doc *doc, yaml_document_t *yd, yaml_node_t *y,
		       struct conf_node *n, int depth, char *err, size_t errlen)
{
	size_t cnt = (size_t)(y->data.mapping.pairs.top - y->data.mapping.pairs.start);
	struct keyset keys = {0};

	n->key = calloc(cnt ? cnt : 1, sizeof(char *));
	n->key_pos = calloc(cnt ? cnt : 1, sizeof(*n->key_pos));
	n->val = calloc(cnt ? cnt : 1, sizeof(*n->val));
	n->used = calloc(cnt ? cnt : 1, sizeof(bool));
	if (!n->key || !n->key_pos || !n->val || !n->used || !keyset_new(&keys, cnt)) {
		free(keys.slot);
		return fail(doc, y, err, errlen, "out of memory");
	}
	int rc = convert_pairs(doc, yd, y, n, cnt, &keys, depth, err, errlen);
	free(keys.slot);
	return rc;
}

static int convert_seq(struct conf_doc *doc, yaml_document_t *yd, yaml_node_t *y,
		       struct conf_node *n, int depth, char *err, size_t errlen)
{
	size_t cnt = (size_t)(y->data.sequence.items.top - y->data.sequence.items.start);

	n->val = calloc(cnt ? cnt : 1, sizeof(*n->val));
	if (!n->val)
		return fail(doc, y, err, errlen, "out of memory");
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *v = yaml_document_get_node(yd, y->data.sequence.items.start[i]);
		n->val[i] = v ? convert(doc, yd, v, depth + 1, err, errlen) : NULL;
		n->n = i + 1;
		if (!n->val[i])
			return -EINVAL;
	}
	return 0;
}

static struct conf_node *convert(struct conf_doc *doc, yaml_document_t *yd, yaml_node_t *y,
				 int depth, char *err, size_t errlen)
{
	static const enum bs_conf_kind kinds[] = {
	    [YAML_SCALAR_NODE] = BS_CONF_SCALAR,
	    [YAML_SEQUENCE_NODE] = BS_CONF_SEQ,
	    [YAML_MAPPING_NODE] = BS_CONF_MAP,
	};
	struct conf_node *n;
	int rc = 0;

	if (depth > CONF_DEPTH_MAX) {
		fail(doc, y, err, errlen, "nested too deeply");
		return NULL;
	}
	if (y->type == YAML_NO_NODE || !(n = node_new(doc, kinds[y->type], y))) {
		fail(doc, y, err, errlen,
		     doc->nodes > CONF_NODES_MAX ? "too many nodes (alias expansion?)"
						 : "out of memory");
		return NULL;
	}
	if (y->type == YAML_SCALAR_NODE) {
		n->scalar = strndup((const char *)y->data.scalar.value, y->data.scalar.length);
		if (!n->scalar || strlen(n->scalar) != y->data.scalar.length)
			rc = fail(doc, y, err, errlen,
				  n->scalar ? "NUL byte in a string" : "out of memory");
	} else if (y->type == YAML_MAPPING_NODE) {
		rc = convert_map(doc, yd, y, n, depth, err, errlen);
	} else {
		rc = convert_seq(doc, yd, y, n, depth, err, errlen);
	}
	if (rc < 0) {
		node_free(n);
		return NULL;
	}
	return n;
}

/* What tells one version of a file from the next: a file rewritten in
 * place changes size or mtime, one replaced by rename changes inode. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static int64_t ts_ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void conf_settle_init(struct conf_settle *settle, long wait_ns)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t d = ts_ns(now) + wait_ns;
	settle->deadline = (struct timespec){d / 1000000000, d % 1000000000};
	settle->unsettled = false;
}

/* How much longer the version `st` of a file must stand unchanged before
 * a reload takes it, in ns; 0 when it has settled. An mtime of a whole
 * second may come from a file system that keeps seconds only, so the
 * last write may have come up to a second later. An mtime further in the
 * future than the settle time (a clock set back, a file stamped ahead)
 * tells nothing of when it was written: such a file has settled. */
static int64_t settle_left(const struct stat *st)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	int64_t written = ts_ns(st->st_mtim) + (st->st_mtim.tv_nsec == 0 ? 1000000000 : 0);
	int64_t age = ts_ns(now) - written;
	if (age >= CONF_SETTLE_NS || age < -CONF_SETTLE_NS)
		return 0;
	return CONF_SETTLE_NS - age;
}

/* Sleeps `left` ns, or until the rule's deadline if that comes first:
 * -ETIME at the deadline. */
static int settle_wait(const struct conf_settle *settle, int64_t left)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t until_deadline = ts_ns(settle->deadline) - ts_ns(now);
	if (until_deadline <= 0)
		return -ETIME;
	int64_t ns = (left < until_deadline ? left : until_deadline) + 1000000;
	nanosleep(&(struct timespec){ns / 1000000000, ns % 1000000000}, NULL);
	return 0;
}

enum read_state { READ_WHOLE, READ_TORN, READ_UNSETTLED };

/* One read of the file, and whether it was whole: the same file, unchanged,
 * before and after, and every byte it had read. Under a settle rule, a
 * file not yet settled is not read (*left: how long until it is). A
 * read_state, or -errno. */
static int read_once(const char *file, const struct conf_settle *settle, char **buf, size_t *len,
		     int64_t *left)
{
	struct stat before, after;
	int rc;

	if (stat(file, &before) < 0)
		return -errno;
	if (settle && (*left = settle_left(&before)) > 0)
		return READ_UNSETTLED;
	if ((rc = readfile_bounded(file, CONF_FILE_MAX, false, buf, len)) < 0)
		return rc;
	if (stat(file, &after) == 0 && same_file(&before, &after) && *len == (size_t)after.st_size)
		return READ_WHOLE;
	free(*buf);
	*buf = NULL;
	return READ_TORN;
}

char *conf_read_file(const char *file, struct conf_settle *settle, size_t *len, char *err,
		     size_t errlen)
{
	char *buf = NULL;
	int64_t left = 0;
	int rc, torn = 0;

	/* A file being written while it is read (`cat > file`, an editor
	 * saving in place) is read again, a bounded number of times; under a
	 * settle rule, one that changed lately is waited for, until the
	 * rule's deadline. */
	for (;;) {
		rc = read_once(file, settle, &buf, len, &left);
		if (rc == READ_TORN && ++torn < CONF_READ_TRIES)
			nanosleep(&(struct timespec){.tv_nsec = CONF_READ_RETRY_NS << torn}, NULL);
		else if (rc != READ_UNSETTLED || settle_wait(settle, left) < 0)
			break;
	}
	if (rc == READ_UNSETTLED)
		settle->unsettled = true;
	if (rc != READ_WHOLE)
		snprintf(err, errlen, "%s: %s", file,
			 rc == READ_TORN ? "changed each of the " CONF_READ_TRIES_TEXT
					   " times it was read (write a new file and rename "
					   "it over this one)"
			 : rc == READ_UNSETTLED
			     ? "still being written: changed less than " CONF_SETTLE_TEXT
			       " ago (write a new file and rename it over this one)"
			 : rc == -EINVAL ? "not a regular file"
			 : rc == -EFBIG	 ? "larger than 1 MiB"
					 : strerror(-rc));
	return rc == READ_WHOLE ? buf : NULL;
}

/* libyaml's scanner spends time in proportion to the flow nesting on every
 * token: 160 KB of "[[[" took 17 s to load. Its events are read first, as
 * they come, and the file is refused at the first collection nested past
 * the cap, before the scanner gets deep, or at a second document, which
 * the loader would silently drop. */
static int prescan_event(struct conf_doc *doc, const yaml_event_t *ev, int *depth, int *docs,
			 char *err, size_t errlen)
{
	const char *why = NULL;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			why = "a second YAML document: the file must hold exactly one";
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++*depth > CONF_DEPTH_MAX)
			why = "nested deeper than " CONF_DEPTH_MAX_TEXT " levels";
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		--*depth;
		break;
	default:
		break;
	}
	if (!why)
		return 0;
	snprintf(err, errlen, "%s:%zu:%zu: %s", doc->file, ev->start_mark.line + 1,
		 ev->start_mark.column + 1, why);
	return -EINVAL;
}

static int prescan(struct conf_doc *doc, const char *text, size_t len, char *err, size_t errlen)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	int depth = 0, docs = 0, rc = 0;
	bool end = false;

	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (rc == 0 && !end) {
		if (!yaml_parser_parse(&parser, &ev)) {
			snprintf(err, errlen, "%s:%zu:%zu: %s", doc->file,
				 parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "YAML error");
			rc = -EINVAL;
			break;
		}
		end = ev.type == YAML_STREAM_END_EVENT;
		rc = prescan_event(doc, &ev, &depth, &docs, err, errlen);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	return rc;
}

static struct conf_doc *parse(struct conf_doc *doc, const char *text, size_t len, char *err,
			      size_t errlen)
{
	yaml_parser_t parser;
	yaml_document_t yd;
	bool loaded = false;

	if (prescan(doc, text, len, err, errlen) < 0) {
		conf_free(doc);
		return NULL;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &yd)) {
		snprintf(err, errlen, "%s:%zu:%zu: %s", doc->file, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "YAML error");
		goto err_free_doc;
	}
	loaded = true;
	yaml_node_t *root = yaml_document_get_root_node(&yd);
	if (!root) {
		/* No document: empty, or only blanks and comments. An empty
		 * mapping to a reader that allows it (conf_doc.empty). */
		static yaml_node_t empty = {.type = YAML_MAPPING_NODE};
		root = &empty;
		doc->empty = true;
	}
	if (root->type != YAML_MAPPING_NODE) {
		fail(doc, root, err, errlen, "the configuration must be a mapping");
		goto err_free_doc;
	}
	doc->root = convert(doc, &yd, root, 0, err, errlen);
	if (!doc->root)
		goto err_free_doc;
	yaml_document_delete(&yd);
	yaml_parser_delete(&parser);
	return doc;
err_free_doc:
	if (loaded)
		yaml_document_delete(&yd);
	yaml_parser_delete(&parser);
	conf_free(doc);
	return NULL;
}

static struct conf_doc *load(const char *file, const char *text, struct conf_settle *settle,
			     char *err, size_t errlen)
{
	struct conf_doc *doc = calloc(1, sizeof(*doc));
	char *owned = NULL;
	size_t len;

	if (!doc || !(doc->file = strdup(file))) {
		snprintf(err, errlen, "out of memory");
		free(doc);
		return NULL;
	}
	if (text) {
		len = strlen(text);
	} else {
		if (!(owned = conf_read_file(file, settle, &len, err, errlen))) {
			conf_free(doc);
			return NULL;
		}
		text = owned;
	}
	doc->settle = settle;
	doc = parse(doc, text, len, err, errlen);
	free(owned);
	return doc;
}

struct conf_doc *conf_load(const char *file, const char *text, char *err, size_t errlen)
{
	return load(file, text, NULL, err, errlen);
}

struct conf_doc *conf_load_file(const char *file, struct conf_settle *settle, char *err,
				size_t errlen)
{
	return load(file, NULL, settle, err, errlen);
}

void conf_free(struct conf_doc *doc)
{
	if (!doc)
		return;
	node_free(doc->root);
	free(doc->file);
	free(doc);
}

/* ---- lookups and typed getters ---- */

static ssize_t find_key(const struct conf_node *map, const char *key)
{
	if (!map || map->kind != BS_CONF_MAP)
		return -1;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->key[i], key) == 0)
			return (ssize_t)i;
	return -1;
}

void conf_mark_used(const struct conf_node *map, const char *key)
{
	ssize_t i = find_key(map, key);
	if (i >= 0)
		map->used[i] = true;
}

const struct conf_node *conf_child(const struct conf_node *node, const char *key)
{
	ssize_t i = find_key(node, key);
	if (i < 0)
		return NULL;
	node->used[i] = true;
	return node->val[i];
}

int conf_check_unused(const struct conf_node *node)
{
	for (size_t i = 0; i < node->n; i++) {
		if (node->kind == BS_CONF_MAP && !node->used[i])
			return conf_errorf(node->key_pos[i], "unknown key '%s'", node->key[i]);
		if (node->kind == BS_CONF_MAP || node->kind == BS_CONF_SEQ) {
			int rc = conf_check_unused(node->val[i]);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static const struct conf_node *scalar_child(const struct conf_node *node, const char *key, int *rc)
{
	const struct conf_node *c = conf_child(node, key);

	*rc = 0;
	if (!c) {
		*rc = -ENOENT;
		return NULL;
	}
	if (c->kind != BS_CONF_SCALAR) {
		*rc = conf_errorf(c, "'%s' must be a single value", key);
		return NULL;
	}
	return c;
}

int conf_get_str(const struct conf_node *node, const char *key, const char **out)
{
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);
	if (c)
		*out = c->scalar;
	return rc;
}

int conf_get_bool(const struct conf_node *node, const char *key, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);

	if (!c)
		return rc;
	for (size_t i = 0; i < 3; i++) {
		if (strcasecmp(c->scalar, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(c->scalar, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return conf_errorf(c, "'%s' must be true or false, not '%s'", key, c->scalar);
}

int conf_get_u64(const struct conf_node *node, const char *key, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);
	uint64_t v;

	if (!c)
		return rc;
	if (conf_parse_u64(c->scalar, &v) < 0)
		return conf_errorf(c, "'%s' must be a whole number, not '%s'", key, c->scalar);
	if (v < min || v > max)
		return conf_errorf(c, "'%s' must be between %llu and %llu, not %llu", key,
				   (unsigned long long)min, (unsigned long long)max,
				   (unsigned long long)v);
	*out = v;
	return 0;
}

int conf_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

int conf_parse_i64(const char *s, int64_t *out)
{
	const char *digits = s[0] == '-' ? s + 1 : s;
	char *end;

	/* strtoll alone would take leading blanks and a '+' */
	if (digits[0] < '0' || digits[0] > '9')
		return -EINVAL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (*end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

int conf_get_i64(const struct conf_node *node, const char *key, int64_t min, int64_t max,
		 int64_t *out)
{
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);
	int64_t v;

	if (!c)
		return rc;
	if (conf_parse_i64(c->scalar, &v) < 0)
		return conf_errorf(
		    c, "'%s' must be a whole number from %" PRId64 " to %" PRId64 ", not '%s'", key,
		    min, max, c->scalar);
	if (v < min || v > max)
		return conf_errorf(c,
				   "'%s' must be between %" PRId64 " and %" PRId64 ", not %" PRId64,
				   key, min, max, v);
	*out = v;
	return 0;
}

static int f64_in_range(const struct conf_node *c, const char *key, double v, double min,
			double max, double *out)
{
	if (!isfinite(v) || v < min || v > max)
		return conf_errorf(c, "'%s' must be between %g and %g, not '%s'", key, min, max,
				   c->scalar);
	*out = v;
	return 0;
}

int conf_get_f64(const struct conf_node *node, const char *key, double min, double max, double *out)
{
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);
	char *end;

	if (!c)
		return rc;
	errno = 0;
	double v = strtod(c->scalar, &end);
	if (end == c->scalar || *end || errno)
		return conf_errorf(c, "'%s' must be a number, not '%s'", key, c->scalar);
	return f64_in_range(c, key, v, min, max, out);
}

struct unit {
	const char *name;
	double scale;
};

/* Parses numbers each followed by a unit from `units` ("1m30s" when
 * `repeat`); returns the total or NaN. */
static double parse_with_units(const char *s, const struct unit *units, bool repeat)
{
	double total = 0;
	bool any = false;

	while (*s) {
		char *end;
		if (*s < '0' || *s > '9')
			return NAN;
		double v = strtod(s, &end);
		size_t i;
		for (i = 0; units[i].name; i++) {
			size_t ul = strlen(units[i].name);
			if (strncmp(end, units[i].name, ul) == 0 &&
			    !(end[ul] >= 'a' && end[ul] <= 'z') &&
			    !(end[ul] >= 'A' && end[ul] <= 'Z'))
				break;
		}
		if (!units[i].name)
			return NAN;
		total += v * units[i].scale;
		s = end + strlen(units[i].name);
		any = true;
		if (!repeat && *s)
			return NAN;
	}
	return any ? total : NAN;
}

int conf_get_duration(const struct conf_node *node, const char *key, double min, double max,
		      double *out)
{
	static const struct unit units[] = {{"ms", 1e-3}, {"s", 1}, {"m", 60},
					    {"h", 3600},  {"", 1},  {0, 0}};
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);

	if (!c)
		return rc;
	double v = parse_with_units(c->scalar, units, true);
	if (isnan(v))
		return conf_errorf(c, "'%s' must be a duration like 10s or 500ms, not '%s'", key,
				   c->scalar);
	return f64_in_range(c, key, v, min, max, out);
}

int conf_get_bytes(const struct conf_node *node, const char *key, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	static const struct unit units[] = {{"KiB", 1024.0},
					    {"MiB", 1048576.0},
					    {"GiB", 1073741824.0},
					    {"KB", 1e3},
					    {"MB", 1e6},
					    {"GB", 1e9},
					    {"B", 1},
					    {"", 1},
					    {0, 0}};
	int rc;
	const struct conf_node *c = scalar_child(node, key, &rc);

	if (!c)
		return rc;
	double v = parse_with_units(c->scalar, units, false);
	if (isnan(v) || v != floor(v) || v < (double)min || v > (double)max)
		return conf_errorf(c,
				   "'%s' must be a size from %llu to %llu bytes "
				   "(like 64MiB), not '%s'",
				   key, (unsigned long long)min, (unsigned long long)max,
				   c->scalar);
	*out = (uint64_t)v;
	return 0;
}

/* ---- the read-only view collectors get ---- */

#define NODE(c) ((const struct conf_node *)(c))

static const struct bs_conf *op_child(const struct bs_conf *n, const char *key)
{
	const struct conf_node *c = conf_child(NODE(n), key);
	return c ? &c->pub : NULL;
}

static enum bs_conf_kind op_kind(const struct bs_conf *n)
{
	return n ? NODE(n)->kind : BS_CONF_NONE;
}

static size_t op_length(const struct bs_conf *n)
{
	return n && NODE(n)->kind != BS_CONF_SCALAR ? NODE(n)->n : 0;
}

static const struct bs_conf *op_item(const struct bs_conf *n, size_t i)
{
	if (!n || NODE(n)->kind != BS_CONF_SEQ || i >= NODE(n)->n)
		return NULL;
	return &NODE(n)->val[i]->pub;
}

static int op_get_str(const struct bs_conf *n, const char *k, const char **o)
{
	return conf_get_str(NODE(n), k, o);
}

static int op_get_bool(const struct bs_conf *n, const char *k, bool *o)
{
	return conf_get_bool(NODE(n), k, o);
}

static int op_get_u64(const struct bs_conf *n, const char *k, uint64_t lo, uint64_t hi, uint64_t *o)
{
	return conf_get_u64(NODE(n), k, lo, hi, o);
}

static int op_get_f64(const struct bs_conf *n, const char *k, double lo, double hi, double *o)
{
	return conf_get_f64(NODE(n), k, lo, hi, o);
}

static const char *op_scalar(const struct bs_conf *n)
{
	return n && NODE(n)->kind == BS_CONF_SCALAR ? NODE(n)->scalar : NULL;
}

static int op_error(const struct bs_conf *n, const char *msg)
{
	return conf_errorf(NODE(n), "%s", msg);
}

__attribute__((format(printf, 2, 3))) static int op_errorf(const struct bs_conf *n, const char *fmt,
							   ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = conf_verrorf(NODE(n), fmt, ap);
	va_end(ap);
	return rc;
}

static int op_get_duration(const struct bs_conf *n, const char *k, double lo, double hi, double *o)
{
	return conf_get_duration(NODE(n), k, lo, hi, o);
}

static int op_get_bytes(const struct bs_conf *n, const char *k, uint64_t lo, uint64_t hi,
			uint64_t *o)
{
	return conf_get_bytes(NODE(n), k, lo, hi, o);
}

static const struct bs_conf_ops conf_ops = {
    .child = op_child,
    .kind = op_kind,
    .length = op_length,
    .item = op_item,
    .get_str = op_get_str,
    .get_bool = op_get_bool,
    .get_u64 = op_get_u64,
    .get_f64 = op_get_f64,
    .scalar = op_scalar,
    .error = op_error,
    .errorf = op_errorf,
    .get_duration = op_get_duration,
    .get_bytes = op_get_bytes,
};
