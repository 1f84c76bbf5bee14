/* Any YAML file as a tree of nodes that know their file position, with the
 * typed getters collectors see through struct bs_conf. It knows no key of
 * the exporter's: config.c reads those from this tree. */
#ifndef BS_CONFTREE_H
#define BS_CONFTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <binstat/collector.h>

#define CONF_FILE_MAX (1u << 20) /* bytes */
#define CONF_NODES_MAX 100000	 /* after aliases are expanded */
#define CONF_DEPTH_MAX 64	 /* collections nested in one another */
#define CONF_DEPTH_MAX_TEXT "64"
#define CONF_READ_TRIES 4 /* reads of a file that changes while it is read */
#define CONF_READ_TRIES_TEXT "4"
#define CONF_READ_RETRY_NS 5000000L /* doubled after each torn read */
/* A reload takes a file only once it has stood unchanged this long (its
 * mtime at least this old): a save in place, written in several writes,
 * is never read between two of them. */
#define CONF_SETTLE_NS 1000000000L
#define CONF_SETTLE_TEXT "1 s"
/* How long past the settle time a reload at SIGHUP waits for it. */
#define CONF_SETTLE_SLACK_NS 200000000L
#define CONF_ERR_MAX 512

struct conf_doc;

/* How a reload reads its files: only a version that has settled (see
 * CONF_SETTLE_NS), waiting for it until `deadline` (CLOCK_MONOTONIC) at
 * the latest. A NULL settle rule reads a file as it is (start, check). */
struct conf_settle {
	struct timespec deadline;
	bool unsettled; /* out: a file was still changing at the deadline */
};

struct conf_node {
	struct bs_conf pub;
	struct conf_doc *doc;
	enum bs_conf_kind kind;
	unsigned line, col; /* 1-based */
	char *scalar;
	size_t n;		    /* map entries or sequence items */
	char **key;		    /* map only */
	struct conf_node **key_pos; /* map only: scalar nodes of the keys, for positions */
	struct conf_node **val;
	bool *used; /* map only: a getter asked for this key */
};

struct conf_doc {
	char *file;
	struct conf_node *root;
	size_t nodes;
	bool empty; /* no YAML document at all: root is an empty mapping */
	/* The rule the files the document names are read by (the web
	 * config's PEM files), while it is loaded; NULL after. */
	struct conf_settle *settle;
	char err[CONF_ERR_MAX]; /* first error, "file:line:col: message" */
	bool has_err;
};

/* Parses `file` (or the string `text` when not NULL, named `file` in
 * errors). Returns the document, or NULL with the reason in err: a YAML
 * error, a second document, or collections nested past CONF_DEPTH_MAX,
 * each with its line and column. A file with no document at all (empty,
 * blanks, comments) loads as an empty mapping marked `empty`. */
struct conf_doc *conf_load(const char *file, const char *text, char *err, size_t errlen);
/* conf_load of a file read under the settle rule `settle` (NULL: as it is). */
struct conf_doc *conf_load_file(const char *file, struct conf_settle *settle, char *err,
				size_t errlen);
/* A settle rule whose deadline is `wait_ns` from now: 0 never waits (a
 * request that finds a changed file), CONF_SETTLE_NS + CONF_SETTLE_SLACK_NS
 * takes a file written just before a SIGHUP. */
void conf_settle_init(struct conf_settle *settle, long wait_ns);
void conf_free(struct conf_doc *doc);
/* A regular file of at most CONF_FILE_MAX bytes, NUL-terminated; NULL
 * with "file: reason" in err. A file that changes while it is read (its
 * inode, size or mtime differ after the read, or the read comes short) is
 * read again, up to CONF_READ_TRIES times in all. Under a settle rule, only
 * a version whose mtime was CONF_SETTLE_NS old when it was read is taken;
 * past the rule's deadline, NULL with settle->unsettled set. */
char *conf_read_file(const char *file, struct conf_settle *settle, size_t *len, char *err,
		     size_t errlen);

/* Records the first error of the document at `node`'s position. */
int conf_errorf(const struct conf_node *node, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "key:" with nothing after it (YAML's null) where a mapping of options
 * is expected: the node becomes an empty mapping. */
void conf_null_to_map(const struct conf_node *node);
/* Reports the first key under `node` no getter asked for. */
int conf_check_unused(const struct conf_node *node);
void conf_mark_used(const struct conf_node *map, const char *key);

const struct conf_node *conf_child(const struct conf_node *node, const char *key);
int conf_get_str(const struct conf_node *node, const char *key, const char **out);
int conf_get_bool(const struct conf_node *node, const char *key, bool *out);
int conf_get_u64(const struct conf_node *node, const char *key, uint64_t min, uint64_t max,
		 uint64_t *out);
/* An integer of the full s64 range, exact (a double rounds past 2^53). */
int conf_get_i64(const struct conf_node *node, const char *key, int64_t min, int64_t max,
		 int64_t *out);
/* Decimal whole numbers, exact over the type's whole range: no blanks,
 * no '+', nothing after the digits. 0, or -EINVAL. */
int conf_parse_u64(const char *s, uint64_t *out);
int conf_parse_i64(const char *s, int64_t *out);
int conf_get_f64(const struct conf_node *node, const char *key, double min, double max,
		 double *out);
/* A Prometheus-style duration ("1m30s", "500ms") or a number of seconds. */
int conf_get_duration(const struct conf_node *node, const char *key, double min, double max,
		      double *out);
/* A size in bytes: "64MiB", "1GB", "4096". */
int conf_get_bytes(const struct conf_node *node, const char *key, uint64_t min, uint64_t max,
		   uint64_t *out);

#endif
