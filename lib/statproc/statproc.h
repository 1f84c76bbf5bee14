/* The Linux statistics infrastructure's statistics: (X, Y) pairs processed as value, range, list,
 * array, history or raw per a definition a user may change at run time,
 * with the infrastructure's definition-line and data-file formats. Pure: the caller
 * passes the time, serialises calls per interface, and owns the text. */
#ifndef STATPROC_H
#define STATPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "textbuf.h"

#define STATPROC_NAME_MAX 128
#define STATPROC_LIST_MAX                                                                          \
	2047				   /* entries_max of a list: with the gap below            \
					      each X, 4096 Prometheus buckets */
#define STATPROC_RING_MAX 65536		   /* entries_max of a history or raw ring */
#define STATPROC_ARRAY_MAX 4096		   /* intervals of an array */
#define STATPROC_PERIOD_MAX 86400000000ull /* µs: a day */

enum statproc_type {
	STATPROC_VALUE,
	STATPROC_RANGE,
	STATPROC_ARRAY,
	STATPROC_LIST,
	STATPROC_RAW,
	STATPROC_HISTORY,
};

enum statproc_mode { STATPROC_INCREMENTS, STATPROC_PRODUCTS, STATPROC_MODE_RANGE };
enum statproc_scale { STATPROC_LIN, STATPROC_LOG2 };

/* The changeable part of a statistic. Which fields count depends on type:
 * mode (value: increments or products; history: those or range),
 * entries_max (list, raw, history), base_interval and scale (array),
 * period_us (history). */
struct statproc_def {
	enum statproc_type type;
	int64_t range_min, range_max;
	enum statproc_mode mode;
	uint32_t entries_max;
	uint32_t base_interval;
	enum statproc_scale scale;
	uint64_t period_us;
};

struct statproc_range {
	uint64_t num; /* total of Y */
	/* Total of X * Y, exact: |X| <= 2^63 and num < 2^64 keep it inside
	 * 128 bits (the infrastructure's s64 wrapped, and its average with it). */
	__int128 acc;
	int64_t min, max;
};

struct statproc_list_entry {
	int64_t x;
	uint64_t hits;
};

struct statproc_raw_entry {
	uint64_t ns, serial;
	int64_t x;
	uint64_t y;
};

/* One statistic: its name and units (read-only), definition, state and data. */
struct statproc_stat {
	char name[STATPROC_NAME_MAX + 1];
	char units[STATPROC_NAME_MAX + 1];
	struct statproc_def def;
	bool on;
	uint64_t started_ns, stopped_ns, reset_ns;
	uint64_t hits_out_of_range;
	/* Pairs a total could not take whole: a value's or a history
	 * period's total stays at the s64 limit (the infrastructure's wrapped), a
	 * range whose total of Y would pass 2^64 - 1 does not take them. */
	uint64_t hits_saturated;
	union {
		int64_t total;		     /* value */
		struct statproc_range range; /* range */
		struct {
			uint64_t *hits; /* one per interval */
			uint32_t n;
			double sum; /* of X * Y: Prometheus' _sum */
		} array;
		struct {
			struct statproc_list_entry *e; /* most hits first */
			uint32_t n;
			uint64_t hits_missed; /* pairs, as the infrastructure counts them */
			/* What the infrastructure does not keep but a Prometheus histogram
			 * needs to count every X: once the list is full its X
			 * no longer change, and a missed X's Y is counted by
			 * where it falls among them (missed_y[i]: below
			 * sorted[i], the last above them all); the Y of X
			 * outside the range; the sum of every X * Y. */
			int64_t *sorted;    /* n, in increasing order, once missed */
			uint64_t *missed_y; /* entries_max + 1 */
			bool have_sorted;
			uint64_t below_y, above_y;
			double sum;
		} list;
		struct {
			struct statproc_raw_entry *e; /* ring of entries_max */
			uint32_t n, head;	      /* head: the next slot written */
			uint64_t next_serial;
		} raw;
		struct {
			void *e;	   /* ring of int64_t or statproc_range */
			uint32_t n, head;  /* head: the newest entry */
			uint64_t start_ns; /* start of the newest entry's period */
		} history;
	} data;
};

/* A fresh statistic, off (started = stopped = now), defined by def.
 * -EINVAL for a definition statproc_check refuses, -ENOMEM. */
int statproc_init(struct statproc_stat *s, const char *name, const char *units,
		  const struct statproc_def *def, uint64_t now_ns);
void statproc_free(struct statproc_stat *s);
/* The bytes a statistic of def allocates for its data, besides its own
 * struct: an array's intervals, a list's entries, a raw or history ring of
 * entries_max. Computed from the definition, not measured, so a caller can
 * bound a total before anything is allocated; it is exactly what
 * statproc_init and statproc_define allocate (0 for a value or a range,
 * whose data is in the struct). def must pass statproc_check. */
size_t statproc_data_bytes(const struct statproc_def *def);
/* 0, or -EINVAL with *why saying what is wrong with the definition. */
int statproc_check(const struct statproc_def *def, const char **why);
/* Replaces the definition and discards the data; the old stays on failure. */
int statproc_define(struct statproc_stat *s, const struct statproc_def *def, uint64_t now_ns);

void statproc_start(struct statproc_stat *s, uint64_t now_ns);
void statproc_stop(struct statproc_stat *s, uint64_t now_ns);
void statproc_reset(struct statproc_stat *s, uint64_t now_ns);

/* Reports (X, Y). Ignored while off; an X outside [range_min, range_max]
 * counts in hits_out_of_range (an array also keeps it in its first or last
 * interval). A value's products total X * Y, signed. True when a total
 * could not take the pair whole (counted in hits_saturated). */
bool statproc_add(struct statproc_stat *s, int64_t x, uint64_t y, uint64_t now_ns);

/* An array's discriminator i, the upper bound of its interval i: the
 * intervals end at range_max, so the last is range_max itself. False when
 * that is range_max's rather than the step's (the step passed it). */
bool statproc_array_bound(const struct statproc_def *d, uint32_t i, int64_t *out);
/* The statistic's definition line, in the Linux statistics infrastructure's syntax, with its
 * newline. */
void statproc_format_def(const struct statproc_stat *s, struct textbuf *t);
/* Its lines of the data file. A history that is on is first brought up to
 * now (periods without data are entries of zero). */
void statproc_format_data(struct statproc_stat *s, uint64_t now_ns, struct textbuf *t);

/* Brings a history that is on up to now, as a read of its data file
 * does (statproc_format_data calls it): each period begun since is an
 * entry, zero where it had no data. Any other statistic, and a stopped
 * history, stays as it is. A scrape calls it too, so that what it serves
 * and the data file agree at any moment. */
void statproc_catch_up(struct statproc_stat *s, uint64_t now_ns);

/* A history's last complete period (a range or an int64_t total, per its
 * mode): the entry before the newest, which is still filling while the
 * statistic is on; NULL when there is none yet. */
const void *statproc_history_last(const struct statproc_stat *s);

/* ---- statproc_write.c: lines written to a definition file ---- */

#define STATPROC_TOKEN_MAX 255 /* bytes of one blank-separated key=value */

/* Which definition attributes a line names (statproc_request.got). */
enum {
	STATPROC_GOT_TYPE = 1u << 0,
	STATPROC_GOT_MODE = 1u << 1,
	STATPROC_GOT_SCALE = 1u << 2,
	STATPROC_GOT_ENTRIES = 1u << 3,
	STATPROC_GOT_MIN = 1u << 4,
	STATPROC_GOT_MAX = 1u << 5,
	STATPROC_GOT_BASE = 1u << 6,
	STATPROC_GOT_PERIOD = 1u << 7,
};

/* One line, parsed: read-only attributes and junk are ignored, so a line
 * read from the definition file may be written back. */
struct statproc_request {
	char name[STATPROC_NAME_MAX + 1];
	bool got_name, name_too_long; /* name= twice is EINVAL */
	int on;			      /* -1: no on=; else the last on='s 0 or 1 */
	bool reset;		      /* data=reset */
	unsigned got;		      /* STATPROC_GOT_* */
	struct statproc_def def;      /* the values of the attributes in got */
};

/* 0; -EFBIG for a token longer than STATPROC_TOKEN_MAX, -EINVAL for a
 * value a changeable attribute cannot take, or name= or a changeable
 * attribute twice in the line, with *why. */
int statproc_parse(const char *line, struct statproc_request *r, const char **why);

/* The lines of one write, applied to an interface's n statistics all or
 * nothing (the Linux statistics infrastructure's rules): each line is checked against what the
 * lines before it leave, and nothing changes before statproc_batch_commit. With name= a line
 * changes that statistic: a type change needs all the new type's attributes, an attribute written
 * with the value it has is no change, and only a change of type or of a type-specific attribute
 * (for an array also of range_min or range_max, which bound its intervals) discards the data; a
 * redefined statistic that was on stays on. Without name= only on=, on=0 and data=reset apply, to
 * every statistic. */
struct statproc_pending;
struct statproc_batch {
	struct statproc_stat *s;
	size_t n;
	struct statproc_pending *p; /* one per statistic */
};

int statproc_batch_init(struct statproc_batch *b, struct statproc_stat *s, size_t n);
/* 0; -ENOENT for a name no statistic has, -EINVAL (*why) for a request
 * refused; a refused request leaves the batch as it was. */
int statproc_batch_add(struct statproc_batch *b, const struct statproc_request *r,
		       const char **why);
/* Applies the batch at now: 0, or -ENOMEM with every statistic as it was. */
int statproc_batch_commit(struct statproc_batch *b, uint64_t now_ns);
/* The definition statistic i has once the batch so far is applied (to
 * check the batch as a whole before its commit). */
const struct statproc_def *statproc_batch_def(const struct statproc_batch *b, size_t i);
void statproc_batch_free(struct statproc_batch *b);

/* One line parsed and applied as a batch of its own: 0 or the error of
 * statproc_parse, statproc_batch_add or statproc_batch_commit. */
int statproc_write(struct statproc_stat *s, size_t n, const char *line, uint64_t now_ns,
		   const char **why);

#endif
