/* The collector plugin ABI: the one header a collector includes.
 * A plugin exports one `const struct bs_collector` named binstat_collector_<name>. */
#ifndef BINSTAT_COLLECTOR_H
#define BINSTAT_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* C linkage for a collector written in C++: the host looks the table up
 * by its C name. */
#ifdef __cplusplus
extern "C" {
#endif

/* The ABI a plugin is built against. Each version may only add operations
 * at the end of a table; the host loads plugins of any version from
 * BS_COLLECTOR_ABI_OLDEST to its own, and a plugin reads an operation only
 * when host->abi_version is at least the version that added it.
 *   1: the first.
 *   2: bs_conf_ops.errorf, get_duration, get_bytes.
 *   3: bs_collector.describe.
 *   4: bs_emitter_ops.prefix.
 *   5: bs_emitter_ops.fork. */
#define BS_COLLECTOR_ABI_VERSION 5
#define BS_COLLECTOR_ABI_OLDEST 1

/* Symbol a plugin file <name>.so exports: binstat_collector_<name>. */
#define BS_COLLECTOR_SYMBOL_PREFIX "binstat_collector_"
/* Plugins build with -fvisibility=hidden; only this symbol is exported
 * (in C++ with C linkage, and external although const). */
#ifdef __cplusplus
#define BS_COLLECTOR_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define BS_COLLECTOR_EXPORT __attribute__((visibility("default")))
#endif

enum bs_metric_type {
	BS_COUNTER,
	BS_GAUGE,
	BS_HISTOGRAM,
	BS_SUMMARY,
	BS_INFO,
	BS_STATESET,
	BS_UNKNOWN,
};

/* A metric family. For a counter, `name` may end in _total or not; for an
 * info metric, in _info or not: the writer adds the suffix each format wants.
 * `unit`, if set, must be the last part of the name (OpenMetrics rule). */
struct bs_family {
	const char *name;
	const char *help;
	const char *unit;
	enum bs_metric_type type;
};

struct bs_label {
	const char *name;
	const char *value;
};

enum bs_value_kind { BS_VAL_U64, BS_VAL_I64, BS_VAL_F64 };

/* Integers stay integers all the way to the text: a counter at 2^64-1 is
 * written exactly, never rounded through a double. */
struct bs_value {
	enum bs_value_kind kind;
	union {
		uint64_t u;
		int64_t i;
		double f;
	};
};

/* Buckets are given per bucket (not cumulative), bounds strictly increasing;
 * the writer accumulates and adds the +Inf bucket when the last bound is finite. */
struct bs_histogram {
	size_t nbuckets;
	const double *upper;
	const uint64_t *count;
	bool has_sum;
	struct bs_value sum;
};

struct bs_summary {
	size_t nquantiles;
	const double *quantile; /* each in [0, 1] */
	const double *value;
	uint64_t count;
	struct bs_value sum;
};

struct bs_emitter;

/* Everything a collector writes goes through these; the caller keeps ownership
 * of every string and array it passes, which are copied or written at once.
 * Each returns 0, or -errno when the item was rejected (and counted as dropped). */
struct bs_emitter_ops {
	int (*family)(struct bs_emitter *em, const struct bs_family *fam);
	int (*sample)(struct bs_emitter *em, const struct bs_label *labels, size_t nlabels,
		      struct bs_value value);
	int (*histogram)(struct bs_emitter *em, const struct bs_label *labels, size_t nlabels,
			 const struct bs_histogram *h);
	int (*summary)(struct bs_emitter *em, const struct bs_label *labels, size_t nlabels,
		       const struct bs_summary *s);
	int (*stateset)(struct bs_emitter *em, const struct bs_label *labels, size_t nlabels,
			const char *const *states, const bool *active, size_t nstates);
	/* Counts `n` items of outside input dropped for `reason` (a short
	 * snake_case word from a fixed set the collector owns). */
	void (*drop)(struct bs_emitter *em, const char *reason, uint64_t n);
	/* True once the scrape's deadline has passed, or, in a collect the
	 * processing's sampler runs, once a scrape waits for this collector:
	 * a long collect should stop. */
	bool (*expired)(struct bs_emitter *em);
	/* ---- ABI 4, may be NULL ---- */
	/* Labels that the series after this call share (a VM's, a statistics
	 * set's), checked and escaped once here rather than at every series.
	 * Each later series (of any family) is written with these labels
	 * first, then its own, exactly as if it had passed them all, until
	 * the next call; n = 0 ends the prefix. Returns 0, or -errno when the
	 * labels are wrong: every series is then refused and counted as it
	 * would be with them, until the next call. When the host's
	 * abi_version is below 4 or this is NULL (an emitter that must see
	 * whole label sets), pass every label with each series instead. */
	int (*prefix)(struct bs_emitter *em, const struct bs_label *labels, size_t nlabels);
	/* ---- ABI 5, may be NULL ---- */
	/* A second emitter, for another thread of this collect to write
	 * families into while this one is written: the emitters are not
	 * thread-safe, each is written by one thread at a time. A fork's
	 * families are claimed in the same scrape as this one's (a family
	 * either writes is refused in the other), its drops are counted as
	 * this one's, and its output follows all of this one's, forks in the
	 * order they were made. Every write into a fork must be done before
	 * collect returns. NULL when the emitter cannot fork (a fork itself,
	 * one that already made BS_EMITTER_FORKS_MAX, or out of memory):
	 * write those families into this emitter instead. Use bs_fork(). */
	struct bs_emitter *(*fork)(struct bs_emitter *em);
};

/* Forks an emitter may make. */
#define BS_EMITTER_FORKS_MAX 3

struct bs_emitter {
	const struct bs_emitter_ops *ops;
};

static inline int bs_family(struct bs_emitter *em, const char *name, enum bs_metric_type type,
			    const char *unit, const char *help)
{
	struct bs_family f = {name, help, unit, type};
	return em->ops->family(em, &f);
}

static inline int bs_sample_u64(struct bs_emitter *em, const struct bs_label *labels, size_t n,
				uint64_t v)
{
	struct bs_value val = {.kind = BS_VAL_U64, .u = v};
	return em->ops->sample(em, labels, n, val);
}

static inline int bs_sample_i64(struct bs_emitter *em, const struct bs_label *labels, size_t n,
				int64_t v)
{
	struct bs_value val = {.kind = BS_VAL_I64, .i = v};
	return em->ops->sample(em, labels, n, val);
}

static inline int bs_sample_f64(struct bs_emitter *em, const struct bs_label *labels, size_t n,
				double v)
{
	struct bs_value val = {.kind = BS_VAL_F64, .f = v};
	return em->ops->sample(em, labels, n, val);
}

/* An info metric's one sample: its labels are the information, its value 1. */
static inline int bs_info(struct bs_emitter *em, const struct bs_label *labels, size_t n)
{
	return bs_sample_u64(em, labels, n, 1);
}

static inline void bs_drop(struct bs_emitter *em, const char *reason, uint64_t n)
{
	em->ops->drop(em, reason, n);
}

/* ---- configuration: a read-only view of the collector's YAML node ---- */

struct bs_conf;

enum bs_conf_kind { BS_CONF_NONE, BS_CONF_SCALAR, BS_CONF_MAP, BS_CONF_SEQ };

/* Getters return 0 when the key was found and valid, -ENOENT when it is
 * absent (the output is left alone, so preset the default), and -EINVAL when
 * it is present but wrong: the host then already holds an error message that
 * names the file, line and column. A key no getter ever asked for is reported
 * as unknown after init. */
struct bs_conf_ops {
	const struct bs_conf *(*child)(const struct bs_conf *node, const char *key);
	enum bs_conf_kind (*kind)(const struct bs_conf *node);
	size_t (*length)(const struct bs_conf *node);
	const struct bs_conf *(*item)(const struct bs_conf *node, size_t i);
	int (*get_str)(const struct bs_conf *node, const char *key, const char **out);
	int (*get_bool)(const struct bs_conf *node, const char *key, bool *out);
	int (*get_u64)(const struct bs_conf *node, const char *key, uint64_t min, uint64_t max,
		       uint64_t *out);
	int (*get_f64)(const struct bs_conf *node, const char *key, double min, double max,
		       double *out);
	/* The scalar of a sequence item or a node itself; NULL when not a scalar. */
	const char *(*scalar)(const struct bs_conf *node);
	/* Records a collector-specific error about `node` ("wrong pattern"),
	 * prefixed with its location; returns -EINVAL for `return bs_conf_error(..)`. */
	int (*error)(const struct bs_conf *node, const char *msg);
	/* ---- ABI 2 ---- */
	/* error() with a printf format: "at most %d patterns", say. */
	int (*errorf)(const struct bs_conf *node, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
	/* A duration like the global section's ("10s", "500ms", "1m30s"); a
	 * plain number is seconds. In seconds, within [min, max]. */
	int (*get_duration)(const struct bs_conf *node, const char *key, double min, double max,
			    double *out);
	/* A size in bytes: "64MiB", "1GB", or a plain number of bytes. */
	int (*get_bytes)(const struct bs_conf *node, const char *key, uint64_t min, uint64_t max,
			 uint64_t *out);
};

struct bs_conf {
	const struct bs_conf_ops *ops;
};

enum bs_log_level { BS_LOG_DEBUG, BS_LOG_INFO, BS_LOG_WARN, BS_LOG_ERROR };

/* bs_host.flags */
/* --check-config: init reads and checks its options and returns a state
 * that is only ever shut down; it opens no socket, starts no thread and
 * touches no other process, so a check never disturbs a running daemon. */
#define BS_HOST_CHECK_ONLY 1u

/* GCC checks a variadic function pointer's NULL terminator; clang (up to
 * 14 at least) ignores the attribute there and warns that it does. */
#if defined(__GNUC__) && !defined(__clang__)
#define BS_SENTINEL_PTR __attribute__((sentinel))
#else
#define BS_SENTINEL_PTR
#endif

/* What the host lends a collector for its lifetime. Grows only at the end. */
struct bs_host {
	uint32_t abi_version;
	/* Structured log line: msg plus key/value string pairs, NULL-terminated
	 * (the compiler checks the NULL at every call). Each pair is a field
	 * of the line (logfmt, JSON, a journal entry's KEY=value): put
	 * figures in pairs, not in msg, which names one kind of line. */
	void (*log)(enum bs_log_level level, const char *collector, const char *msg,
		    ...) BS_SENTINEL_PTR;
	uint32_t flags; /* BS_HOST_* */
};

/* em->ops->fork where the host has it (ABI 5), else NULL. */
static inline struct bs_emitter *bs_fork(const struct bs_host *host, struct bs_emitter *em)
{
	return host->abi_version >= 5 && em->ops->fork ? em->ops->fork(em) : NULL;
}

/* A collector. `init` gets its YAML node (never NULL: an empty map when the
 * config gave no options, or "name:" with nothing after it) and returns 0 or -errno with `*state`
 * set; -EINVAL means the configuration is wrong. `collect` may be slow, but is never called twice
 * at once for one state. */
struct bs_collector {
	uint32_t abi_version; /* BS_COLLECTOR_ABI_VERSION: checked at load */
	const char *name;
	const char *description;
	int (*init)(const struct bs_host *host, const struct bs_conf *conf, void **state);
	int (*collect)(void *state, struct bs_emitter *em);
	void (*shutdown)(void *state);
	/* ABI 3, may be NULL: one line on what the collector found ("2 VMs,
	 * 6 vCPUs") for the landing page, written to buf (NUL-terminated,
	 * cut at len). The host calls it right after a collect, while no
	 * other collect of this state runs; a collector's own threads still
	 * do, so it locks what collect locks. */
	void (*describe)(void *state, char *buf, size_t len);
};

#ifdef __cplusplus
}
#endif

#endif
