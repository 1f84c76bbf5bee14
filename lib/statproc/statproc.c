/* The Linux statistics infrastructure's data processing: a statistic's definition, its on/off and
 * reset, and what each type does with a reported (X, Y). */
#include "statproc.h"
#include "statproc_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Discriminator i as the steps make it: range_min plus i base intervals
 * (lin) or 2^(i-1) of them (log2); false when it would pass any int64. */
static bool raw_bound(const struct statproc_def *d, uint32_t i, int64_t *out)
{
	uint64_t step;

	if (d->scale == STATPROC_LIN) {
		step = (uint64_t)d->base_interval * i;
	} else if (i == 0) {
		step = 0;
	} else {
		if (i - 1 >= 63 ||
		    ((uint64_t)d->base_interval << (i - 1)) >> (i - 1) != d->base_interval)
			return false; /* past any int64 */
		step = (uint64_t)d->base_interval << (i - 1);
	}
	if (step > (uint64_t)INT64_MAX - (uint64_t)(d->range_min < 0 ? 0 : d->range_min))
		return false;
	*out = (int64_t)((uint64_t)d->range_min + step);
	return true;
}

bool statproc_array_bound(const struct statproc_def *d, uint32_t i, int64_t *out)
{
	if (raw_bound(d, i, out) && *out < d->range_max)
		return true;
	*out = d->range_max;
	return false;
}

/* Intervals: one per discriminator below range_max, one ending at
 * range_max, and one above it. */
static uint32_t array_intervals(const struct statproc_def *d)
{
	uint32_t n = 0;
	int64_t b;

	while (n <= STATPROC_ARRAY_MAX && raw_bound(d, n, &b) && b < d->range_max)
		n++;
	return n + 2;
}

int statproc_check(const struct statproc_def *d, const char **why)
{
	*why = NULL;
	if (d->range_min > d->range_max)
		*why = "range_min is above range_max";
	else if (d->type > STATPROC_HISTORY)
		*why = "type must be value, range, array, list, raw or history";
	else if (d->type == STATPROC_VALUE && d->mode == STATPROC_MODE_RANGE)
		*why = "a value's mode is increments or products";
	else if ((d->type == STATPROC_LIST &&
		  (d->entries_max < 1 || d->entries_max > STATPROC_LIST_MAX)) ||
		 ((d->type == STATPROC_RAW || d->type == STATPROC_HISTORY) &&
		  (d->entries_max < 1 || d->entries_max > STATPROC_RING_MAX)))
		*why = "entries_max is out of its bounds";
	else if (d->type == STATPROC_ARRAY && d->base_interval == 0)
		*why = "base_interval must be at least 1";
	else if (d->type == STATPROC_ARRAY && array_intervals(d) < 2)
		*why = "an array needs at least 2 intervals";
	else if (d->type == STATPROC_ARRAY && array_intervals(d) > STATPROC_ARRAY_MAX)
		*why = "an array may have at most 4096 intervals";
	else if (d->type == STATPROC_HISTORY &&
		 (d->period_us == 0 || d->period_us > STATPROC_PERIOD_MAX))
		*why = "period must be 1 µs to a day";
	return *why ? -EINVAL : 0;
}

size_t statproc_history_entry_size(const struct statproc_def *d)
{
	return d->mode == STATPROC_MODE_RANGE ? sizeof(struct statproc_range) : sizeof(int64_t);
}

/* Empty: no sentinels, all zero as the infrastructure prints it; the first X taken
 * sets both ends (range_add), so a range changed since stays right. */
static void range_clear(struct statproc_range *r)
{
	*r = (struct statproc_range){0, 0, 0, 0};
}

static void free_data(struct statproc_stat *s)
{
	switch (s->def.type) {
	case STATPROC_ARRAY:
		free(s->data.array.hits);
		break;
	case STATPROC_LIST:
		free(s->data.list.e);
		break;
	case STATPROC_RAW:
		free(s->data.raw.e);
		break;
	case STATPROC_HISTORY:
		free(s->data.history.e);
		break;
	default:
		break;
	}
	memset(&s->data, 0, sizeof(s->data));
}

size_t statproc_data_bytes(const struct statproc_def *d)
{
	switch (d->type) {
	case STATPROC_ARRAY:
		return (size_t)array_intervals(d) * sizeof(uint64_t);
	case STATPROC_LIST: /* the entries, their X sorted, missed_y */
		return (size_t)d->entries_max *
			   (sizeof(struct statproc_list_entry) + sizeof(int64_t)) +
		       ((size_t)d->entries_max + 1) * sizeof(uint64_t);
	case STATPROC_RAW:
		return (size_t)d->entries_max * sizeof(struct statproc_raw_entry);
	case STATPROC_HISTORY:
		return (size_t)d->entries_max * statproc_history_entry_size(d);
	default:
		return 0;
	}
}

/* The data a definition needs, allocated before anything is replaced:
 * exactly statproc_data_bytes, so what a caller counts is what is held. */
int statproc_data_alloc(const struct statproc_def *d, void **mem, uint32_t *n)
{
	size_t size = statproc_data_bytes(d);

	*mem = NULL;
	*n = d->type == STATPROC_ARRAY ? array_intervals(d) : 0;
	if (size == 0)
		return 0;
	return (*mem = calloc(1, size)) ? 0 : -ENOMEM;
}

static void attach_data(struct statproc_stat *s, void *mem, uint32_t n)
{
	switch (s->def.type) {
	case STATPROC_ARRAY:
		s->data.array.hits = mem;
		s->data.array.n = n;
		break;
	case STATPROC_LIST:
		s->data.list.e = mem;
		s->data.list.sorted = (int64_t *)(s->data.list.e + s->def.entries_max);
		s->data.list.missed_y = (uint64_t *)(s->data.list.sorted + s->def.entries_max);
		break;
	case STATPROC_RAW:
		s->data.raw.e = mem;
		break;
	case STATPROC_HISTORY:
		s->data.history.e = mem;
		break;
	default:
		break;
	}
}

void statproc_reset(struct statproc_stat *s, uint64_t now_ns)
{
	switch (s->def.type) {
	case STATPROC_VALUE:
		s->data.total = 0;
		break;
	case STATPROC_RANGE:
		range_clear(&s->data.range);
		break;
	case STATPROC_ARRAY:
		memset(s->data.array.hits, 0, s->data.array.n * sizeof(uint64_t));
		s->data.array.sum = 0;
		break;
	case STATPROC_LIST:
		s->data.list.n = 0;
		s->data.list.hits_missed = 0;
		s->data.list.have_sorted = false;
		memset(s->data.list.missed_y, 0, (s->def.entries_max + 1) * sizeof(uint64_t));
		s->data.list.below_y = s->data.list.above_y = 0;
		s->data.list.sum = 0;
		break;
	case STATPROC_RAW:
		s->data.raw.n = s->data.raw.head = 0;
		s->data.raw.next_serial = 0;
		break;
	case STATPROC_HISTORY:
		s->data.history.n = s->data.history.head = 0;
		s->data.history.start_ns = 0;
		break;
	}
	s->hits_out_of_range = 0;
	s->hits_saturated = 0;
	s->reset_ns = now_ns;
}

void statproc_data_install(struct statproc_stat *s, const struct statproc_def *def, void *mem,
			   uint32_t n, uint64_t now_ns)
{
	free_data(s);
	s->def = *def;
	attach_data(s, mem, n);
	statproc_reset(s, now_ns);
}

int statproc_define(struct statproc_stat *s, const struct statproc_def *def, uint64_t now_ns)
{
	const char *why;
	void *mem;
	uint32_t n;
	int rc;

	if ((rc = statproc_check(def, &why)) < 0 || (rc = statproc_data_alloc(def, &mem, &n)) < 0)
		return rc;
	statproc_data_install(s, def, mem, n, now_ns);
	return 0;
}

int statproc_init(struct statproc_stat *s, const char *name, const char *units,
		  const struct statproc_def *def, uint64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	snprintf(s->units, sizeof(s->units), "%s", units);
	s->def.type = STATPROC_VALUE; /* nothing to free yet */
	s->started_ns = s->stopped_ns = now_ns;
	return statproc_define(s, def, now_ns);
}

void statproc_free(struct statproc_stat *s)
{
	free_data(s);
}

void statproc_start(struct statproc_stat *s, uint64_t now_ns)
{
	s->on = true;
	s->started_ns = now_ns;
}

void statproc_stop(struct statproc_stat *s, uint64_t now_ns)
{
	s->on = false;
	s->stopped_ns = now_ns;
}

/* A total of Y, or of X * Y, in an s64: past its limits it stays at the
 * limit it passed and says so (false). The kernel's code wrapped,
 * turning a large positive total negative; an exporter's figure must be
 * right or marked. */
static bool value_add(int64_t *total, enum statproc_mode mode, int64_t x, uint64_t y)
{
	__int128 add = mode == STATPROC_PRODUCTS ? (__int128)x * y : (__int128)y;
	__int128 t = (__int128)*total + add; /* |add| < 2^127 - 2^63: no overflow */

	if (t > INT64_MAX || t < INT64_MIN) {
		*total = t > 0 ? INT64_MAX : INT64_MIN;
		return false;
	}
	*total = (int64_t)t;
	return true;
}

/* num, a u64, would pass 2^64 - 1 only with Y a collector made up: such
 * a pair is not taken (false), so num and acc stay exact. */
static bool range_add(struct statproc_range *r, int64_t x, uint64_t y)
{
	if (r->num + y < r->num)
		return false;
	if (r->num == 0)
		r->min = r->max = x;
	r->num += y;
	r->acc += (__int128)x * y;
	if (x < r->min)
		r->min = x;
	if (x > r->max)
		r->max = x;
	return true;
}

/* Interval i holds (bound i-1, bound i]; the first everything up to bound
 * 0, the one before last up to range_max, the last everything above it.
 * Found arithmetically: the number of base intervals X is above
 * range_min, rounded up, is the index (lin) or, as a power of two, one
 * less than it (log2). */
static uint32_t array_index(const struct statproc_stat *s, int64_t x)
{
	const struct statproc_def *d = &s->def;
	uint32_t last = s->data.array.n - 1, i;

	if (x > d->range_max)
		return last;
	if (x <= d->range_min)
		return 0;
	uint64_t diff = (uint64_t)x - (uint64_t)d->range_min;
	uint64_t steps = diff / d->base_interval + (diff % d->base_interval != 0);
	if (d->scale == STATPROC_LIN)
		return steps < last - 1 ? (uint32_t)steps : last - 1;
	i = steps <= 1 ? 1 : 1 + (uint32_t)(64 - __builtin_clzll(steps - 1));
	return i < last - 1 ? i : last - 1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* A missed X: its Y counted by where it falls among the X kept, which do
 * not change once the list is full (until a reset). */
static void list_miss(struct statproc_stat *s, int64_t x, uint64_t y)
{
	int64_t *sorted = s->data.list.sorted;
	uint32_t n = s->data.list.n, lo = 0, hi = n;

	s->data.list.hits_missed++;
	if (!s->data.list.have_sorted) {
		for (uint32_t i = 0; i < n; i++)
			sorted[i] = s->data.list.e[i].x;
		qsort(sorted, n, sizeof(*sorted), cmp_i64);
		s->data.list.have_sorted = true;
	}
	while (lo < hi) { /* lo: how many kept X are below x */
		uint32_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	s->data.list.missed_y[lo] += y;
}

/* Each X's entry, most hits first; ties keep the order of arrival. An X
 * outside the range only counts for /metrics. */
static void list_add(struct statproc_stat *s, int64_t x, uint64_t y)
{
	struct statproc_list_entry *e = s->data.list.e;
	uint32_t i = 0, n = s->data.list.n;

	s->data.list.sum += (double)x * (double)y;
	if (x < s->def.range_min || x > s->def.range_max) {
		*(x < s->def.range_min ? &s->data.list.below_y : &s->data.list.above_y) += y;
		return;
	}
	while (i < n && e[i].x != x)
		i++;
	if (i == n) {
		if (n == s->def.entries_max) {
			list_miss(s, x, y);
			return;
		}
		e[n] = (struct statproc_list_entry){x, 0};
		s->data.list.n++;
	}
	e[i].hits += y;
	for (struct statproc_list_entry t; i > 0 && e[i - 1].hits < e[i].hits; i--) {
		t = e[i - 1];
		e[i - 1] = e[i];
		e[i] = t;
	}
}

static void raw_add(struct statproc_stat *s, int64_t x, uint64_t y, uint64_t now_ns)
{
	struct statproc_raw_entry *e = &s->data.raw.e[s->data.raw.head];

	*e = (struct statproc_raw_entry){now_ns, s->data.raw.next_serial++, x, y};
	s->data.raw.head = (s->data.raw.head + 1) % s->def.entries_max;
	if (s->data.raw.n < s->def.entries_max)
		s->data.raw.n++;
}

void *statproc_history_slot(const struct statproc_stat *s, uint32_t i)
{
	return (char *)s->data.history.e + (size_t)i * statproc_history_entry_size(&s->def);
}

static void history_push(struct statproc_stat *s)
{
	uint32_t max = s->def.entries_max;

	s->data.history.head = s->data.history.n ? (s->data.history.head + 1) % max : 0;
	if (s->data.history.n < max)
		s->data.history.n++;
	if (s->def.mode == STATPROC_MODE_RANGE)
		range_clear(statproc_history_slot(s, s->data.history.head));
	else
		*(int64_t *)statproc_history_slot(s, s->data.history.head) = 0;
}

const void *statproc_history_last(const struct statproc_stat *s)
{
	uint32_t n = s->data.history.n, max = s->def.entries_max;

	if (n < (s->on ? 2u : 1u))
		return NULL;
	return statproc_history_slot(s, s->on ? (s->data.history.head + max - 1) % max
					      : s->data.history.head);
}

/* Periods are aligned to the clock, [k * period, (k + 1) * period), not
 * to when the statistic was reset or its source found: every time falls
 * in exactly one period, so samples taken at a steady rate fill each with
 * the same count. */
static uint64_t period_start(const struct statproc_stat *s, uint64_t t)
{
	return t - t % (s->def.period_us * 1000);
}

void statproc_history_advance(struct statproc_stat *s, uint64_t now_ns)
{
	uint64_t period = s->def.period_us * 1000, start = period_start(s, now_ns);
	uint64_t k;

	if (s->data.history.n == 0) {
		history_push(s);
		s->data.history.start_ns = start;
		return;
	}
	if (start <= s->data.history.start_ns)
		return;
	k = (start - s->data.history.start_ns) / period;
	for (uint64_t i = k > s->def.entries_max ? k - s->def.entries_max : 0; i < k; i++)
		history_push(s);
	s->data.history.start_ns = start;
}

void statproc_catch_up(struct statproc_stat *s, uint64_t now_ns)
{
	if (s->def.type == STATPROC_HISTORY && s->on) /* stopped, it stays as it was */
		statproc_history_advance(s, now_ns);
}

/* The entry of the period holding t: the newest once the history is
 * brought up to t, or an older one still kept, for a sample due before a
 * read moved the history on; NULL when that period has left the ring. */
static void *history_entry(struct statproc_stat *s, uint64_t t)
{
	uint64_t start = period_start(s, t), period = s->def.period_us * 1000;
	uint32_t max = s->def.entries_max;

	if (s->data.history.n == 0 || start >= s->data.history.start_ns) {
		statproc_history_advance(s, t);
		return statproc_history_slot(s, s->data.history.head);
	}
	uint64_t back = (s->data.history.start_ns - start) / period;
	if (back >= s->data.history.n)
		return NULL;
	return statproc_history_slot(s, (uint32_t)((s->data.history.head + max - back) % max));
}

bool statproc_add(struct statproc_stat *s, int64_t x, uint64_t y, uint64_t now_ns)
{
	const struct statproc_def *d = &s->def;
	bool in_range = x >= d->range_min && x <= d->range_max, whole = true;

	if (!s->on)
		return false;
	if (!in_range)
		s->hits_out_of_range++;
	if (d->type == STATPROC_ARRAY) {
		s->data.array.hits[array_index(s, x)] += y;
		s->data.array.sum += (double)x * (double)y;
		return false;
	}
	if (d->type == STATPROC_LIST) {
		list_add(s, x, y);
		return false;
	}
	if (!in_range)
		return false;
	switch (d->type) {
	case STATPROC_VALUE:
		whole = value_add(&s->data.total, d->mode, x, y);
		break;
	case STATPROC_RANGE:
		whole = range_add(&s->data.range, x, y);
		break;
	case STATPROC_RAW:
		raw_add(s, x, y, now_ns);
		break;
	case STATPROC_HISTORY: {
		void *e = history_entry(s, now_ns);
		if (!e)
			break;
		if (d->mode == STATPROC_MODE_RANGE)
			whole = range_add(e, x, y);
		else
			whole = value_add(e, d->mode, x, y);
		break;
	}
	case STATPROC_ARRAY:
	case STATPROC_LIST:
		break;
	}
	s->hits_saturated += !whole;
	return !whole;
}
