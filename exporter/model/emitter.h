/* The emitter a collector writes into: it enforces the metric model's rules
 * and passes what is valid to the exposition writer. */
#ifndef BS_EMITTER_H
#define BS_EMITTER_H

#include <binstat/collector.h>

#include "expo.h"
#include "famreg.h"
#include "lebounds.h"
#include "names.h"
#include "prefixset.h"
#include "seriesset.h"

#define EMITTER_MAX_LABELS 64
#define EMITTER_MAX_BUCKETS 4096
#define EMITTER_MAX_STATES 256
#define EMITTER_MAX_REASONS 32
#define EMITTER_REASON_MAX 47
#define EMITTER_UNIT_MAX 63

struct emitter_drop {
	char reason[EMITTER_REASON_MAX + 1];
	uint64_t n;
};

struct emitter {
	struct bs_emitter pub;
	enum expo_format format;
	struct sink *sink;
	struct famreg *reg;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */

	/* The open family; its header is written with its first sample, so
	 * a family with no valid series leaves no trace. */
	bool has_family;
	bool header_done;
	enum bs_metric_type type;
	char base[NAMES_METRIC_MAX + 1];
	size_t base_len;
	char unit[EMITTER_UNIT_MAX + 1];
	char help[NAMES_HELP_MAX + 1];
	size_t help_len;
	struct seriesset series;   /* the family's series, flat */
	struct prefixset byprefix; /* or by prefix */
	struct lebounds bounds;	   /* the last histogram's */

	char *scratch; /* the escaped label block of the current series */
	/* Where each label of that block starts: its name, and the whole
	 * `name="value"` text the set of series compares. */
	const char *name_at[EMITTER_MAX_LABELS];
	size_t name_len[EMITTER_MAX_LABELS];
	struct seriesset_label written[EMITTER_MAX_LABELS];
	/* The label names written last, position by position, of which the
	 * first `known` are valid and distinct from one another: a series
	 * naming its labels the same, in the same order, as collectors do,
	 * has them compared, not checked again (labels_write). */
	struct {
		size_t known;
		size_t len[EMITTER_MAX_LABELS];
		uint64_t key[EMITTER_MAX_LABELS]; /* hashes the values of the name */
		char text[EMITTER_MAX_LABELS][NAMES_LABEL_NAME_MAX + 8];
	} names;

	/* The label prefix (ABI 4): its labels checked and escaped once, at
	 * the start of scratch, and put before the labels of every series
	 * until the next prefix. */
	struct {
		size_t n, len;
		uint64_t hash;
		struct names_repairs repaired; /* counted again with each series */
		unsigned truncated;
		const char *refusal; /* every series' while the prefix is wrong */
		int refusal_rc;
	} prefix;
	/* The shape of the family's first series: how many of its labels came
	 * from the prefix. While every series comes under a prefix of as many
	 * labels, none of whose names changed since (name_write), the
	 * family's series are kept by prefix (emitter.c, series_add). */
	struct emitter_family_prefix {
		bool decided;	/* at the family's first series */
		bool by_prefix; /* kept by prefix, not (or no longer) flat */
		size_t n;
		bool renamed; /* a name among the first n has changed since */
	} family_prefix;

	struct emitter_drop drops[EMITTER_MAX_REASONS];
	size_t ndrops;
	uint64_t lines;

	/* Forks (ABI 5), each writing into a sink of its own until
	 * emitter_join_forks; a fork has none and cannot make one. */
	struct emitter_fork *fork[BS_EMITTER_FORKS_MAX];
	size_t nforks;
	bool is_fork;
};

/* Adds n to `reason` in a table of EMITTER_MAX_REASONS, the last slot "other". */
void drops_add(struct emitter_drop *tab, size_t *ntab, const char *reason, uint64_t n);

/* The OpenMetrics family name's length: a counter's without _total, an
 * info's without _info. */
size_t emitter_family_base_len(const char *name, size_t n, enum bs_metric_type t);
/* 0 when family f (base_len as above) is one the model accepts, or -EINVAL. */
int emitter_family_check(const struct bs_family *f, size_t base_len);
void emitter_init(struct emitter *e, enum expo_format f, struct sink *s, struct famreg *reg,
		  uint64_t deadline_ns);
/* Frees e and its forks, joined or not (a collect that overran may have
 * left them). */
void emitter_free(struct emitter *e);
/* Frees the label scratch kept for the next emitters (at exit). */
void emitter_pool_drain(void);
/* After the collect: finishes e's sink, then puts each fork's output after
 * it and counts the forks' drops and lines as e's, and frees the forks.
 * Returns 0, or -ENOBUFS when a sink overflowed or all of them together
 * hold more than e's limit: the collect's output is then refused whole. */
int emitter_join_forks(struct emitter *e);
/* The sets of series a collector's emitter grew, kept for its next collect. */
struct emitter_kept {
	struct seriesset series;
	struct prefixset byprefix;
};

/* Moves `kept` into the emitter, and back (trimmed) when its collect is
 * done: the owner of `kept` keeps what one collect grew for the next. */
void emitter_adopt(struct emitter *e, struct emitter_kept *kept);
void emitter_release(struct emitter *e, struct emitter_kept *kept);

#endif
