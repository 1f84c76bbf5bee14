/* The Linux statistics infrastructure's two files as text: a statistic's
 * definition line and its lines of the data file, byte for byte in the
 * infrastructure's formats. Times are printk-style,
 * [seconds.microseconds] of the caller's clock. */
#include "statproc.h"
#include "statproc_priv.h"

#include <inttypes.h>
#include <stdlib.h>

static void put_time(struct textbuf *t, uint64_t ns)
{
	textbuf_printf(t, "[%" PRIu64 ".%06" PRIu64 "]", ns / 1000000000u, ns / 1000u % 1000000u);
}

static const char *const type_names[] = {"value", "range", "array", "list", "raw", "history"};
static const char *const mode_names[] = {"increments", "products", "range"};

void statproc_format_def(const struct statproc_stat *s, struct textbuf *t)
{
	const struct statproc_def *d = &s->def;

	textbuf_printf(t, "name=%s on=%d type=%s range_min=%" PRId64 " range_max=%" PRId64, s->name,
		       s->on, type_names[d->type], d->range_min, d->range_max);
	switch (d->type) {
	case STATPROC_VALUE:
		textbuf_printf(t, " mode=%s", mode_names[d->mode]);
		break;
	case STATPROC_ARRAY:
		textbuf_printf(t, " base_interval=%" PRIu32 " scale=%s", d->base_interval,
			       d->scale == STATPROC_LIN ? "lin" : "log2");
		break;
	case STATPROC_LIST:
		textbuf_printf(t, " entries_max=%" PRIu32 " hits_missed=%" PRIu64, d->entries_max,
			       s->data.list.hits_missed);
		break;
	case STATPROC_RAW:
		textbuf_printf(t, " entries_max=%" PRIu32, d->entries_max);
		break;
	case STATPROC_HISTORY:
		textbuf_printf(t, " entries_max=%" PRIu32 " mode=%s period=%" PRIu64,
			       d->entries_max, mode_names[d->mode], d->period_us);
		break;
	case STATPROC_RANGE:
		break;
	}
	textbuf_printf(t, " hits_out_of_range=%" PRIu64, s->hits_out_of_range);
	if (s->hits_saturated) /* not the infrastructure's: only once a total saturated */
		textbuf_printf(t, " hits_saturated=%" PRIu64, s->hits_saturated);
	textbuf_printf(t, " data=");
	put_time(t, s->reset_ns);
	textbuf_printf(t, " started=");
	put_time(t, s->started_ns);
	textbuf_printf(t, " stopped=");
	put_time(t, s->stopped_ns);
	textbuf_printf(t, " units=%s\n", s->units);
}

/* <total> <min> <avg> <max>, the average to three decimals, rounded half
 * away from zero; all zero while nothing was taken. */
static void put_range(struct textbuf *t, const struct statproc_range *r)
{
	if (r->num == 0) {
		textbuf_printf(t, " 0 0 0.000 0\n");
		return;
	}
	/* acc / num in thousandths without acc * 1000, which 128 bits may
	 * not hold: the whole part (inside the s64 range: an average), then
	 * the remainder's thousandths (|rem| < num < 2^64). */
	__int128 num = (__int128)r->num, whole = r->acc / num, part = r->acc % num * 1000;
	__int128 q = whole * 1000 + part / num, rem = part % num;
	if ((rem < 0 ? -rem : rem) * 2 >= num)
		q += r->acc < 0 ? -1 : 1;
	unsigned __int128 mag = (unsigned __int128)(q < 0 ? -q : q);
	textbuf_printf(t, " %" PRIu64 " %" PRId64 " %s%" PRIu64 ".%03u %" PRId64 "\n", r->num,
		       r->min, q < 0 ? "-" : "", (uint64_t)(mag / 1000), (unsigned)(mag % 1000),
		       r->max);
}

static void format_array(const struct statproc_stat *s, struct textbuf *t)
{
	int64_t b = s->def.range_min;
	uint32_t last = s->data.array.n - 1;

	for (uint32_t i = 0; i < last; i++) {
		statproc_array_bound(&s->def, i, &b);
		textbuf_printf(t, "%s <=%" PRId64 " %" PRIu64 "\n", s->name, b,
			       s->data.array.hits[i]);
	}
	textbuf_printf(t, "%s >%" PRId64 " %" PRIu64 "\n", s->name, b, s->data.array.hits[last]);
}

static void format_raw(const struct statproc_stat *s, struct textbuf *t)
{
	uint32_t n = s->data.raw.n, max = s->def.entries_max;
	uint32_t first = (s->data.raw.head + max - n) % max;

	for (uint32_t i = 0; i < n; i++) {
		const struct statproc_raw_entry *e = &s->data.raw.e[(first + i) % max];
		textbuf_printf(t, "%s ", s->name);
		put_time(t, e->ns);
		textbuf_printf(t, " %" PRIu64 " %" PRId64 " %" PRIu64 "\n", e->serial, e->x, e->y);
	}
}

/* Oldest first, each entry stamped with the start of its period: the
 * newest, still filling, is never stamped in the future. */
static void format_history(const struct statproc_stat *s, struct textbuf *t)
{
	uint32_t n = s->data.history.n, max = s->def.entries_max;
	uint32_t first = (s->data.history.head + 1 + max - n) % max;
	uint64_t period = s->def.period_us * 1000;

	for (uint32_t i = 0; i < n; i++) {
		const void *e = statproc_history_slot(s, (first + i) % max);
		textbuf_printf(t, "%s ", s->name);
		put_time(t, s->data.history.start_ns - period * (n - 1 - i));
		if (s->def.mode == STATPROC_MODE_RANGE)
			put_range(t, e);
		else
			textbuf_printf(t, " %" PRId64 "\n", *(const int64_t *)e);
	}
}

void statproc_format_data(struct statproc_stat *s, uint64_t now_ns, struct textbuf *t)
{
	switch (s->def.type) {
	case STATPROC_VALUE:
		textbuf_printf(t, "%s %" PRId64 "\n", s->name, s->data.total);
		break;
	case STATPROC_RANGE:
		textbuf_printf(t, "%s", s->name);
		put_range(t, &s->data.range);
		break;
	case STATPROC_ARRAY:
		format_array(s, t);
		break;
	case STATPROC_LIST:
		for (uint32_t i = 0; i < s->data.list.n; i++)
			textbuf_printf(t, "%s 0x%" PRIx64 " %" PRIu64 "\n", s->name,
				       (uint64_t)s->data.list.e[i].x, s->data.list.e[i].hits);
		break;
	case STATPROC_RAW:
		format_raw(s, t);
		break;
	case STATPROC_HISTORY:
		statproc_catch_up(s, now_ns);
		format_history(s, t);
		break;
	}
}
