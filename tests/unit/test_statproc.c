/* lib/statproc against hand-computed results on fixed (X, Y) streams:
 * every type of the Linux statistics infrastructure, its definition line and data lines byte for
 * byte, bucket edges, out-of-range, entries_max overflow, resets, and the
 * definition file's rules for writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "statproc.h"

#define S(sec) ((uint64_t)((sec)*1e9 + 0.5)) /* seconds to the ns the library takes */

static char *def_line(const struct statproc_stat *s)
{
	static char out[1024];
	struct textbuf t = {0};
	statproc_format_def(s, &t);
	assert_false(t.failed);
	snprintf(out, sizeof(out), "%.*s", (int)t.len, t.p);
	textbuf_free(&t);
	return out;
}

static char *data_lines(struct statproc_stat *s, uint64_t now)
{
	static char out[8192];
	struct textbuf t = {0};
	statproc_format_data(s, now, &t);
	assert_false(t.failed);
	snprintf(out, sizeof(out), "%.*s", t.p ? (int)t.len : 0, t.p ? t.p : "");
	textbuf_free(&t);
	return out;
}

static void test_value(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {.type = STATPROC_VALUE, .range_min = 0, .range_max = 100};
	const char *why;
	(void)state;

	assert_int_equal(statproc_init(&s, "v", "bytes/requests", &d, S(1.5)), 0);
	statproc_add(&s, 10, 1, S(1.6)); /* off: ignored */
	statproc_start(&s, S(2));
	statproc_add(&s, 10, 1, S(2.1));
	statproc_add(&s, 20, 2, S(2.2));
	statproc_add(&s, 200, 1, S(2.3)); /* above range_max */
	statproc_add(&s, -5, 1, S(2.4));  /* below range_min */
	assert_string_equal(data_lines(&s, S(3)), "v 3\n");
	assert_string_equal(def_line(&s),
			    "name=v on=1 type=value range_min=0 range_max=100 mode=increments "
			    "hits_out_of_range=2 data=[1.500000] started=[2.000000] "
			    "stopped=[1.500000] units=bytes/requests\n");

	/* mode=products: the infrastructure's total of X * Y, signed (10 - 40); the
	 * redefinition discards the data and keeps the statistic on */
	assert_int_equal(statproc_write(&s, 1, "name=v mode=products range_min=-50", S(4), &why),
			 0);
	statproc_add(&s, 10, 1, S(4.1));
	statproc_add(&s, -20, 2, S(4.2));
	assert_string_equal(data_lines(&s, S(5)), "v -30\n");
	assert_non_null(strstr(def_line(&s), "on=1 type=value range_min=-50 range_max=100 "
					     "mode=products hits_out_of_range=0 data=[4.000000] "
					     "started=[4.000000] stopped=[4.000000]"));
	statproc_free(&s);
}

static void test_range(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {.type = STATPROC_RANGE, .range_min = -10, .range_max = 10};
	(void)state;

	assert_int_equal(statproc_init(&s, "r", "slots/incidents", &d, 0), 0);
	statproc_start(&s, 0);
	assert_string_equal(data_lines(&s, 1), "r 0 0 0.000 0\n");
	statproc_add(&s, 1, 1, 1);
	statproc_add(&s, 5, 2, 1);
	statproc_add(&s, 2, 1, 1);
	statproc_add(&s, 11, 1, 1); /* out of range: not in the range's figures */
	assert_string_equal(data_lines(&s, 2), "r 4 1 3.250 5\n");
	statproc_reset(&s, 3);
	statproc_add(&s, 0, 1, 3);
	statproc_add(&s, 1, 2, 3); /* 2/3: 0.667 */
	assert_string_equal(data_lines(&s, 4), "r 3 0 0.667 1\n");
	statproc_reset(&s, 5);
	statproc_add(&s, -1, 1, 5);
	statproc_add(&s, -2, 2, 5); /* -5/3: -1.667 */
	assert_string_equal(data_lines(&s, 6), "r 3 -2 -1.667 -1\n");
	statproc_reset(&s, 7);
	statproc_add(&s, 10, 1, 7); /* the range's edges are in it */
	statproc_add(&s, -10, 1, 7);
	assert_string_equal(data_lines(&s, 8), "r 2 -10 0.000 10\n");
	assert_int_equal(s.hits_out_of_range, 0);
	statproc_free(&s);
}

/* An array from range_min 0, on, fed each of xs once. */
static void array_fed(struct statproc_stat *s, int64_t range_max, uint32_t base,
		      enum statproc_scale scale, const int64_t *xs, size_t n)
{
	struct statproc_def d = {.type = STATPROC_ARRAY,
				 .range_min = 0,
				 .range_max = range_max,
				 .base_interval = base,
				 .scale = scale};

	assert_int_equal(statproc_init(s, "a", "x/y", &d, 0), 0);
	statproc_start(s, 0);
	for (size_t i = 0; i < n; i++)
		statproc_add(s, xs[i], 1, 0);
}

static void test_array_lin(void **state)
{
	struct statproc_stat s;
	(void)state;

	array_fed(&s, 10, 5, STATPROC_LIN, (int64_t[]){-3, 0, 1, 5, 6, 10, 11}, 7);
	assert_string_equal(data_lines(&s, 0), "a <=0 2\na <=5 2\na <=10 2\na >10 1\n");
	assert_int_equal(s.hits_out_of_range, 2); /* -3 and 11, kept at the edges too */
	assert_non_null(strstr(def_line(&s), "range_max=10 base_interval=5 scale=lin "
					     "hits_out_of_range=2"));
	statproc_free(&s);
}

/* The intervals end at range_max: with range_max 40 and steps of 7 the
 * one after <=35 is <=40, and only what is above 40 is >40. */
static void test_array_ends_at_range_max(void **state)
{
	struct statproc_stat s;
	(void)state;

	array_fed(&s, 40, 7, STATPROC_LIN, (int64_t[]){35, 36, 40, 41, 1000}, 5);
	assert_string_equal(data_lines(&s, 0), "a <=0 0\na <=7 0\na <=14 0\na <=21 0\na <=28 0\n"
					       "a <=35 1\na <=40 2\na >40 2\n");
	assert_true(s.data.array.sum == 35 + 36 + 40 + 41 + 1000);
	statproc_free(&s);
	/* log2 likewise: 0 1 2 4 8, then 10 */
	array_fed(&s, 10, 1, STATPROC_LOG2, (int64_t[]){9, 10, 11}, 3);
	assert_string_equal(data_lines(&s, 0),
			    "a <=0 0\na <=1 0\na <=2 0\na <=4 0\na <=8 0\na <=10 2\na >10 1\n");
	statproc_free(&s);
}

/* The kernel's latency histogram: <=0 <=1 <=2 <=4 ... <=1024 >1024. */
static void test_array_log2(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {.type = STATPROC_ARRAY,
				 .range_min = 0,
				 .range_max = 1024,
				 .base_interval = 1,
				 .scale = STATPROC_LOG2};
	(void)state;

	assert_int_equal(statproc_init(&s, "lat", "ms/requests", &d, 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 3, 1, 0);
	statproc_add(&s, 4, 2, 0);
	statproc_add(&s, 5, 1, 0);
	statproc_add(&s, 1024, 1, 0);
	statproc_add(&s, 1025, 7, 0);
	assert_string_equal(data_lines(&s, 0),
			    "lat <=0 0\nlat <=1 0\nlat <=2 0\nlat <=4 3\nlat <=8 1\nlat <=16 0\n"
			    "lat <=32 0\nlat <=64 0\nlat <=128 0\nlat <=256 0\nlat <=512 0\n"
			    "lat <=1024 1\nlat >1024 7\n");
	statproc_free(&s);
}

static void test_list(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {
	    .type = STATPROC_LIST, .range_min = 0, .range_max = 0x10000, .entries_max = 2};
	(void)state;

	assert_int_equal(statproc_init(&s, "sz", "bytes/requests", &d, 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 0x1000, 1, 0);
	statproc_add(&s, 0x2000, 1, 0);
	statproc_add(&s, 0x2000, 1, 0);	 /* more hits: moves up */
	statproc_add(&s, 0x3000, 4, 0);	 /* no room: missed */
	statproc_add(&s, 0x20000, 1, 0); /* out of range */
	assert_string_equal(data_lines(&s, 0), "sz 0x2000 2\nsz 0x1000 1\n");
	assert_non_null(strstr(def_line(&s), "entries_max=2 hits_missed=1 hits_out_of_range=1"));
	statproc_add(&s, 0x1000, 1, 0); /* a tie keeps the order of arrival */
	assert_string_equal(data_lines(&s, 0), "sz 0x2000 2\nsz 0x1000 2\n");
	/* for /metrics: the missed X by where they fall among the kept ones
	 * (below 0x1000, between, above 0x2000), the Y outside the range, and
	 * the sum of every X * Y */
	statproc_add(&s, 0x800, 2, 0);
	statproc_add(&s, 0x1800, 5, 0);
	statproc_add(&s, -1, 3, 0);
	assert_true(s.data.list.have_sorted);
	assert_int_equal(s.data.list.sorted[0], 0x1000);
	assert_int_equal(s.data.list.missed_y[0], 2);
	assert_int_equal(s.data.list.missed_y[1], 5);
	assert_int_equal(s.data.list.missed_y[2], 4);
	assert_int_equal(s.data.list.below_y, 3);
	assert_int_equal(s.data.list.above_y, 1);
	assert_true(s.data.list.sum ==
		    0x1000 * 2 + 0x2000 * 2 + 0x3000 * 4 + 0x20000 + 0x800 * 2 + 0x1800 * 5 - 3);
	assert_int_equal(s.hits_out_of_range, 2);
	statproc_reset(&s, 1);
	assert_false(s.data.list.have_sorted);
	assert_int_equal(s.data.list.missed_y[1] + s.data.list.below_y, 0);
	statproc_free(&s);
}

static void test_raw(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {
	    .type = STATPROC_RAW, .range_min = 0, .range_max = 100, .entries_max = 3};
	(void)state;

	assert_int_equal(statproc_init(&s, "w", "x/y", &d, 0), 0);
	statproc_start(&s, 0);
	for (int i = 0; i < 4; i++)
		statproc_add(&s, 10 * i, (uint64_t)i + 1, S(1) + (uint64_t)i * 250000);
	assert_string_equal(data_lines(&s, S(2)), "w [1.000250] 1 10 2\n"
						  "w [1.000500] 2 20 3\n"
						  "w [1.000750] 3 30 4\n");
	statproc_free(&s);
}

static void test_history(void **state)
{
	struct statproc_stat s;
	struct statproc_def d = {.type = STATPROC_HISTORY,
				 .range_min = 0,
				 .range_max = 100,
				 .entries_max = 3,
				 .mode = STATPROC_INCREMENTS,
				 .period_us = 1000000};
	(void)state;

	assert_int_equal(statproc_init(&s, "h", "x/y", &d, 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 7, 1, S(0.5)); /* period [0, 1), stamped with its start */
	statproc_add(&s, 7, 2, S(0.9));
	statproc_add(&s, 7, 1, S(1.2)); /* period [1, 2) */
	assert_string_equal(data_lines(&s, S(1.5)), "h [0.000000] 3\nh [1.000000] 1\n");
	/* 4 periods on: those of 2, 3 and 4 pass, only 3 entries stay */
	statproc_add(&s, 7, 5, S(5.5));
	assert_string_equal(data_lines(&s, S(5.6)),
			    "h [3.000000] 0\nh [4.000000] 0\nh [5.000000] 5\n");
	/* reading brings it up to now: a quiet period is an entry of 0 */
	assert_string_equal(data_lines(&s, S(6.1)),
			    "h [4.000000] 0\nh [5.000000] 5\nh [6.000000] 0\n");
	/* stopped, it is not moved */
	statproc_stop(&s, S(6.2));
	assert_string_equal(data_lines(&s, S(60)),
			    "h [4.000000] 0\nh [5.000000] 5\nh [6.000000] 0\n");
	assert_non_null(strstr(def_line(&s), "type=history range_min=0 range_max=100 "
					     "entries_max=3 mode=increments period=1000000"));

	/* mode=range: number, min, average and max per period; a pause of a
	 * year costs no loop */
	const char *why;
	assert_int_equal(
	    statproc_write(&s, 1, "name=h mode=range period=500000 on=1", S(100), &why), 0);
	statproc_add(&s, 4, 1, S(100.1));
	statproc_add(&s, 8, 1, S(100.2));
	assert_string_equal(data_lines(&s, S(100.3)), "h [100.000000] 2 4 6.000 8\n");
	statproc_add(&s, 1, 1, S(100 + 365 * 86400.0));
	assert_string_equal(data_lines(&s, S(100 + 365 * 86400.0)),
			    "h [31536099.000000] 0 0 0.000 0\nh [31536099.500000] 0 0 0.000 0\n"
			    "h [31536100.000000] 1 1 1.000 1\n");
	statproc_free(&s);
}

static void test_write_rules(void **state)
{
	struct statproc_stat s[2];
	struct statproc_def v = {.type = STATPROC_VALUE, .range_min = 0, .range_max = 10};
	const char *why;
	(void)state;

	assert_int_equal(statproc_init(&s[0], "foo", "a/b", &v, 0), 0);
	assert_int_equal(statproc_init(&s[1], "bar", "a/b", &v, 0), 0);
	/* no name: on, off and data=reset for the whole interface at once */
	assert_int_equal(statproc_write(s, 2, "on=1", S(1), &why), 0);
	assert_true(s[0].on && s[1].on);
	statproc_add(&s[0], 1, 5, S(1));
	assert_int_equal(statproc_write(s, 2, "data=reset", S(2), &why), 0);
	assert_string_equal(data_lines(&s[0], S(2)), "foo 0\n");
	assert_int_equal(statproc_write(s, 2, "range_max=5", S(2), &why), -EINVAL);
	assert_string_equal(why, "changing a definition needs name=");

	/* junk and read-only attributes are ignored: nothing is redefined */
	statproc_add(&s[0], 1, 5, S(3));
	assert_int_equal(statproc_write(s, 2,
					"name=foo units=x/y hits_out_of_range=9 data=[1.0] "
					"started=[0.5] junk garbage=1",
					S(3), &why),
			 0);
	assert_string_equal(data_lines(&s[0], S(3)), "foo 5\n");

	/* a new type needs its type-specific attributes */
	assert_int_equal(statproc_write(s, 2, "name=foo type=history", S(4), &why), -EINVAL);
	assert_int_equal(s[0].def.type, STATPROC_VALUE);
	assert_string_equal(data_lines(&s[0], S(4)), "foo 5\n"); /* kept */
	assert_int_equal(statproc_write(s, 2, "name=foo type=list entries_max=256", S(4), &why), 0);
	assert_int_equal(s[0].def.type, STATPROC_LIST);
	assert_int_equal(s[0].def.entries_max, 256);
	assert_true(s[0].on); /* it was on, it stays on */

	/* a whole line copied back changes nothing (test_write_back) */
	statproc_add(&s[0], 3, 1, S(5));
	char line[512];
	snprintf(line, sizeof(line), "%s", def_line(&s[0]));
	assert_int_equal(statproc_write(s, 2, line, S(6), &why), 0);
	assert_string_equal(data_lines(&s[0], S(6)), "foo 0x3 1\n");
	assert_string_equal(def_line(&s[0]), line);

	/* refused lines change nothing */
	assert_int_equal(statproc_write(s, 2, "name=nosuch on=1", S(7), &why), -ENOENT);
	assert_int_equal(statproc_write(s, 2, "name=foo range_min=abc", S(7), &why), -EINVAL);
	assert_int_equal(statproc_write(s, 2, "name=foo range_min=11", S(7), &why), -EINVAL);
	assert_string_equal(why, "range_min is above range_max");
	assert_int_equal(statproc_write(s, 2, "name=foo entries_max=5000", S(7), &why), -EINVAL);
	assert_int_equal(statproc_write(s, 2, "name=foo on=2", S(7), &why), -EINVAL);
	assert_int_equal(s[0].def.entries_max, 256);
	/* hex as the kernel's parser takes it */
	assert_int_equal(statproc_write(s, 2, "name=bar range_max=0x20 on=0", S(8), &why), 0);
	assert_int_equal(s[1].def.range_max, 32);
	assert_false(s[1].on);
	statproc_free(&s[0]);
	statproc_free(&s[1]);
}

static void test_bounds(void **state)
{
	struct statproc_def d = {.type = STATPROC_ARRAY,
				 .range_min = 0,
				 .range_max = 5000,
				 .base_interval = 1,
				 .scale = STATPROC_LIN};
	const char *why;
	(void)state;

	assert_int_equal(statproc_check(&d, &why), -EINVAL); /* 5002 intervals */
	d.base_interval = 0;
	assert_int_equal(statproc_check(&d, &why), -EINVAL);
	d.base_interval = 4096;
	d.range_max = 4095; /* <=0, <=4095 (range_max) and >4095 */
	assert_int_equal(statproc_check(&d, &why), 0);
	d.range_max = INT64_MAX;
	d.range_min = INT64_MIN;
	d.scale = STATPROC_LOG2; /* bounds stop where int64 does */
	assert_int_equal(statproc_check(&d, &why), 0);
	struct statproc_stat s;
	assert_int_equal(statproc_init(&s, "edge", "x/y", &d, 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, INT64_MAX, UINT64_MAX, 0);
	statproc_add(&s, INT64_MIN, 1, 0);
	statproc_free(&s);
	struct statproc_def h = {.type = STATPROC_HISTORY, .entries_max = 0, .period_us = 1};
	assert_int_equal(statproc_check(&h, &why), -EINVAL);
	h.entries_max = 1;
	h.period_us = 0;
	assert_int_equal(statproc_check(&h, &why), -EINVAL);
}

/* ---- definition and data files, writes ---- */

/* Two statistics, on, with data: "v" a value of 2, "r" a range of 1. */
static void two_with_data(struct statproc_stat s[2])
{
	struct statproc_def v = {.type = STATPROC_VALUE, .range_min = 0, .range_max = 10};
	struct statproc_def r = {.type = STATPROC_RANGE, .range_min = 0, .range_max = 10};

	assert_int_equal(statproc_init(&s[0], "v", "a/b", &v, 0), 0);
	assert_int_equal(statproc_init(&s[1], "r", "a/b", &r, 0), 0);
	statproc_start(&s[0], 0);
	statproc_start(&s[1], 0);
	statproc_add(&s[0], 5, 2, S(1));
	statproc_add(&s[1], 5, 1, S(1));
}

/* A word of 256 bytes or more refuses its line, which changes
 * nothing; it is not dropped with the rest of the line applied. */
static void test_long_token(void **state)
{
	struct statproc_stat s[2];
	char line[600], name[301];
	const char *why;
	(void)state;

	two_with_data(s);
	memset(name, 'a', 300);
	name[300] = '\0';
	snprintf(line, sizeof(line), "name=%s data=reset", name);
	assert_int_equal(statproc_write(s, 2, line, S(2), &why), -EFBIG);
	assert_string_equal(why, "a word is longer than 255 bytes");
	snprintf(line, sizeof(line), "name=%s on=0", name);
	assert_int_equal(statproc_write(s, 2, line, S(2), &why), -EFBIG);
	snprintf(line, sizeof(line), "on=0 %s", name); /* junk, but too long to judge */
	assert_int_equal(statproc_write(s, 2, line, S(2), &why), -EFBIG);
	assert_true(s[0].on && s[1].on);
	assert_string_equal(data_lines(&s[0], S(2)), "v 2\n");
	assert_string_equal(data_lines(&s[1], S(2)), "r 1 5 5.000 5\n");
	/* 255 bytes is a word like any other: junk, ignored */
	name[255] = '\0';
	snprintf(line, sizeof(line), "%s on=0", name);
	assert_int_equal(statproc_write(s, 2, line, S(3), &why), 0);
	assert_false(s[0].on || s[1].on);
	statproc_free(&s[0]);
	statproc_free(&s[1]);
}

/* Writes back the statistic's own definition line: nothing changes. */
static void write_back_keeps(struct statproc_stat *s, uint64_t now)
{
	char line[1024], before[8192];
	const char *why;

	snprintf(line, sizeof(line), "%s", def_line(s));
	snprintf(before, sizeof(before), "%s", data_lines(s, now));
	assert_int_equal(statproc_write(s, 1, line, now, &why), 0);
	assert_string_equal(def_line(s), line);
	assert_string_equal(data_lines(s, now), before);
}

/* A line written back exactly as read, a range change alone and
 * an attribute given the value it has discard nothing; a change of type
 * or of a type-specific attribute discards, as the infrastructure says. */
static void test_write_back(void **state)
{
	static const struct statproc_def defs[] = {
	    {.type = STATPROC_VALUE, .range_max = 100, .mode = STATPROC_PRODUCTS},
	    {.type = STATPROC_RANGE, .range_max = 100},
	    {.type = STATPROC_ARRAY, .range_max = 64, .base_interval = 2, .scale = STATPROC_LOG2},
	    {.type = STATPROC_LIST, .range_max = 100, .entries_max = 8},
	    {.type = STATPROC_RAW, .range_max = 100, .entries_max = 8},
	    {.type = STATPROC_HISTORY,
	     .range_max = 100,
	     .entries_max = 8,
	     .mode = STATPROC_MODE_RANGE,
	     .period_us = 1000000},
	};
	struct statproc_stat s;
	const char *why;
	(void)state;

	for (size_t k = 0; k < sizeof(defs) / sizeof(defs[0]); k++) {
		assert_int_equal(statproc_init(&s, "x", "a/b", &defs[k], 0), 0);
		statproc_start(&s, S(0.5));
		statproc_add(&s, 3, 1, S(1));
		statproc_add(&s, 7, 1, S(1.5));
		write_back_keeps(&s, S(1.7));
		if (defs[k].type != STATPROC_ARRAY) { /* its intervals end at range_max */
			assert_int_equal(statproc_write(&s, 1, "name=x range_max=50", S(2), &why),
					 0);
			assert_int_equal(s.def.range_max, 50);
			assert_int_equal(statproc_write(&s, 1, "name=x range_min=-5", S(2), &why),
					 0);
			assert_int_equal(s.reset_ns, 0); /* data= still the first start */
		}
		statproc_free(&s);
	}

	/* the value an attribute has is no change; another value is */
	assert_int_equal(statproc_init(&s, "x", "a/b", &defs[3], 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 3, 1, S(1));
	assert_int_equal(statproc_write(&s, 1, "name=x type=list entries_max=8 on=1", S(2), &why),
			 0);
	assert_string_equal(data_lines(&s, S(2)), "x 0x3 1\n");
	assert_string_equal(def_line(&s) + strlen("name=x on=1 type=list range_min=0 "
						  "range_max=100 entries_max=8 "),
			    "hits_missed=0 hits_out_of_range=0 data=[0.000000] started=[0.000000] "
			    "stopped=[0.000000] units=a/b\n");
	assert_int_equal(statproc_write(&s, 1, "name=x entries_max=9", S(3), &why), 0);
	assert_string_equal(data_lines(&s, S(3)), "");
	assert_true(strstr(def_line(&s), "data=[3.000000] started=[3.000000] stopped=[3.000000]"));
	statproc_add(&s, 4, 1, S(4));
	assert_int_equal(statproc_write(&s, 1, "name=x type=value mode=increments", S(5), &why), 0);
	assert_string_equal(data_lines(&s, S(5)), "x 0\n");
	statproc_free(&s);

	/* an array's range bounds its intervals: a change discards */
	assert_int_equal(statproc_init(&s, "x", "a/b", &defs[2], 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 3, 1, S(1));
	assert_int_equal(statproc_write(&s, 1, "name=x range_max=128", S(2), &why), 0);
	assert_null(strstr(data_lines(&s, S(2)), " 1\n"));
	statproc_free(&s);
}

/* A range emptied by a reset holds no sentinel, so a
 * range changed after it still takes its first X as both ends. */
static void test_range_moved_empty(void **state)
{
	struct statproc_def d = {.type = STATPROC_RANGE, .range_min = 0, .range_max = 10};
	struct statproc_stat s;
	const char *why;
	(void)state;

	assert_int_equal(statproc_init(&s, "r", "a/b", &d, 0), 0);
	statproc_start(&s, 0);
	statproc_add(&s, 4, 1, S(1));
	assert_int_equal(statproc_write(&s, 1, "name=r data=reset", S(2), &why), 0);
	assert_string_equal(data_lines(&s, S(2)),
			    "r 0 0 0.000 0\n"); /* the infrastructure's empty range */
	assert_int_equal(statproc_write(&s, 1, "name=r range_max=1000", S(3), &why), 0);
	statproc_add(&s, 500, 1, S(4));
	statproc_add(&s, 600, 1, S(4));
	assert_string_equal(data_lines(&s, S(5)), "r 2 500 550.000 600\n");
	statproc_free(&s);
}

/* A history statistic "h", on from t0. */
static void history_on(struct statproc_stat *s, enum statproc_mode mode, uint64_t period_us,
		       uint32_t entries, uint64_t t0)
{
	struct statproc_def d = {.type = STATPROC_HISTORY,
				 .range_max = 100,
				 .entries_max = entries,
				 .mode = mode,
				 .period_us = period_us};

	assert_int_equal(statproc_init(s, "h", "x/y", &d, t0), 0);
	statproc_start(s, t0);
}

/* Periods start on multiples of the period, so samples due at a
 * steady rate fill each alike, whenever the source was found: at 4 Hz a
 * 5 s period holds 20, the first whole one included. */
static void test_history_aligned(void **state)
{
	uint64_t t0 = S(10602.774754); /* found at run time, off any boundary */
	struct statproc_stat s;
	(void)state;

	history_on(&s, STATPROC_INCREMENTS, 5000000, 16, t0);
	for (uint64_t k = 0; k < 4 * 32; k++)
		statproc_add(&s, 1, 1, t0 + k * 250000000u);
	/* the partial first period [10600, 10605), then whole ones */
	assert_string_equal(data_lines(&s, t0 + 4 * 32 * 250000000u - 1),
			    "h [10600.000000] 9\nh [10605.000000] 20\nh [10610.000000] 20\n"
			    "h [10615.000000] 20\nh [10620.000000] 20\nh [10625.000000] 20\n"
			    "h [10630.000000] 19\n");
	/* a sample due before a read moved the history on still lands in
	 * the period it was due in */
	assert_true(strstr(data_lines(&s, S(10635.1)), "h [10635.000000] 0\n"));
	statproc_add(&s, 1, 1, S(10634.9));
	assert_true(
	    strstr(data_lines(&s, S(10635.2)), "h [10630.000000] 20\nh [10635.000000] 0\n"));
	statproc_free(&s);
}

/* No entry is stamped in the future: each carries the start of
 * its period, the newest (still filling) too. */
static void test_history_not_future(void **state)
{
	struct statproc_stat s;
	(void)state;

	history_on(&s, STATPROC_MODE_RANGE, 1000000, 4, S(7.25));
	statproc_add(&s, 3, 1, S(7.5));
	statproc_add(&s, 5, 1, S(8.25));
	/* read at 8.5: the newest period began at 8 and ends at 9 */
	assert_string_equal(data_lines(&s, S(8.5)),
			    "h [7.000000] 1 3 3.000 3\nh [8.000000] 1 5 5.000 5\n");
	/* after a reset: the infrastructure's empty range, no sentinel */
	statproc_reset(&s, S(9.1));
	assert_string_equal(data_lines(&s, S(9.2)), "h [9.000000] 0 0 0.000 0\n");
	statproc_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_value),
	    cmocka_unit_test(test_range),
	    cmocka_unit_test(test_array_lin),
	    cmocka_unit_test(test_array_ends_at_range_max),
	    cmocka_unit_test(test_array_log2),
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_raw),
	    cmocka_unit_test(test_history),
	    cmocka_unit_test(test_write_rules),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_long_token),
	    cmocka_unit_test(test_write_back),
	    cmocka_unit_test(test_range_moved_empty),
	    cmocka_unit_test(test_history_aligned),
	    cmocka_unit_test(test_history_not_future),
	};
	return cmocka_run_group_tests_name("statproc", tests, NULL, NULL);
}
