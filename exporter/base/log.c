/* Structured logging to stderr in logfmt or JSON, node_exporter style.
 * A line is built whole and written with one write(2), so threads never
 * interleave. No kind of line is written more than LOG_BURST times a
 * second: a fault that repeats (a spinning accept, a peer retrying) must
 * not fill a disk; the lines held back are counted and summarised. */
#include "log.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "monoclock.h"

#define LOG_BURST 5  /* lines of one kind a second, at most */
#define LOG_KINDS 64 /* kinds followed at once; a new one takes an old one's slot */
#define LOG_LIKE_MAX 96

/* One kind of line: its level, its message up to the first key=value a
 * collector folded into it, and the collector's name. */
struct kind {
	uint64_t key; /* 0: free */
	uint64_t second;
	unsigned written; /* in that second */
	uint64_t held;	  /* not written since the last summary */
	enum bs_log_level level;
	char like[LOG_LIKE_MAX];
};

static struct kind kinds[LOG_KINDS];
static pthread_mutex_t kinds_lock = PTHREAD_MUTEX_INITIALIZER;

static enum bs_log_level min_level = BS_LOG_INFO;
static bool as_json;

static const char *const level_name[] = {"debug", "info", "warn", "error"};

int log_parse_level(const char *s, enum bs_log_level *out)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, level_name[i]) == 0) {
			*out = (enum bs_log_level)i;
			return 0;
		}
	return -1;
}

void log_setup(enum bs_log_level min, bool json)
{
	min_level = min;
	as_json = json;
}

struct line {
	char buf[4096];
	size_t len;
};

static void add(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->buf) - 2 - l->len)
		n = sizeof(l->buf) - 2 - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static void add_char(struct line *l, char c)
{
	add(l, &c, 1);
}

static void add_quoted(struct line *l, const char *s)
{
	add_char(l, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			add_char(l, '\\');
			add_char(l, (char)c);
		} else if (c == '\n') {
			add(l, "\\n", 2);
		} else if (c < 0x20) {
			char esc[8];
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			add(l, esc, 6);
		} else {
			add_char(l, (char)c);
		}
	}
	add_char(l, '"');
}

/* logfmt quotes only what needs it. */
static void add_logfmt_value(struct line *l, const char *s)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = (unsigned char)*p > ' ' && *p != '"' && *p != '=' && *p != '\\';
	if (plain)
		add(l, s, strlen(s));
	else
		add_quoted(l, s);
}

static void add_pair(struct line *l, const char *k, const char *v, bool first)
{
	if (as_json) {
		add(l, first ? "{" : ",", 1);
		add_quoted(l, k);
		add_char(l, ':');
		add_quoted(l, v);
	} else {
		if (!first)
			add_char(l, ' ');
		add(l, k, strlen(k));
		add_char(l, '=');
		add_logfmt_value(l, v);
	}
}

static void write_line(enum bs_log_level level, const char *msg, va_list kv);

/* A line's kind: the message up to the first word holding '=' (host_log
 * folds a collector's pairs into it), the level and the collector. */
static uint64_t kind_key(enum bs_log_level level, const char *msg, const char *collector,
			 char *like, size_t max)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)level;
	size_t n = strlen(msg), cut = n;

	for (const char *eq = strchr(msg, '='); eq; eq = NULL) {
		const char *sp = eq;
		while (sp > msg && sp[-1] != ' ')
			sp--;
		cut = (size_t)(sp - msg);
	}
	while (cut > 0 && msg[cut - 1] == ' ')
		cut--;
	snprintf(like, max, "%.*s", (int)cut, msg);
	for (const char *p = like; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = collector ? collector : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h | 1;
}

static const char *collector_of(va_list kv)
{
	va_list ap;
	const char *k, *v = NULL;

	va_copy(ap, kv);
	while ((k = va_arg(ap, const char *)) && !v) {
		const char *val = va_arg(ap, const char *);
		if (strcmp(k, "collector") == 0)
			v = val;
	}
	va_end(ap);
	return v;
}

__attribute__((sentinel)) static void write_pairs(enum bs_log_level level, const char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	write_line(level, msg, ap);
	va_end(ap);
}

static void summarise(const struct kind *k, uint64_t held)
{
	char n[24];

	snprintf(n, sizeof(n), "%llu", (unsigned long long)held);
	write_pairs(k->level, "lines not written: more than 5 of this kind in a second", "like",
		    k->like, "count", n, (char *)NULL);
}

/* Whether this line may be written now; a kind whose burst is spent is
 * counted instead, and summarised once its second is over. */
static bool within_burst(enum bs_log_level level, const char *msg, va_list kv)
{
	char like[LOG_LIKE_MAX];
	uint64_t key = kind_key(level, msg, collector_of(kv), like, sizeof(like));
	uint64_t now = monoclock_ns() / 1000000000u, held = 0;
	struct kind *k = &kinds[key % LOG_KINDS], before = {0};
	bool ok;

	pthread_mutex_lock(&kinds_lock);
	if (k->key != key) { /* another kind had the slot: its count is told first */
		before = *k;
		*k = (struct kind){.key = key, .second = now, .level = level};
		memcpy(k->like, like, sizeof(like));
	}
	if (k->second != now) {
		held = k->held;
		k->held = 0;
		k->second = now;
		k->written = 0;
	}
	ok = k->written < LOG_BURST;
	k->written += ok;
	k->held += !ok;
	struct kind told = *k;
	pthread_mutex_unlock(&kinds_lock);
	if (before.key && before.held)
		summarise(&before, before.held);
	if (held)
		summarise(&told, held);
	return ok;
}

void log_flush_held(void)
{
	uint64_t now = monoclock_ns() / 1000000000u;

	for (size_t i = 0; i < LOG_KINDS; i++) {
		pthread_mutex_lock(&kinds_lock);
		struct kind k = kinds[i];
		bool due = k.key && k.held && k.second != now;
		if (due)
			kinds[i].held = 0;
		pthread_mutex_unlock(&kinds_lock);
		if (due)
			summarise(&k, k.held);
	}
}

void log_vmsg(enum bs_log_level level, const char *msg, va_list kv)
{
	if (level < min_level || !within_burst(level, msg, kv))
		return;
	write_line(level, msg, kv);
}

static void write_line(enum bs_log_level level, const char *msg, va_list kv)
{
	struct line l = {.len = 0};
	struct timeval tv;
	struct tm tm;
	char ts[40];

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", (long)tv.tv_usec / 1000);
	add_pair(&l, "ts", ts, true);
	add_pair(&l, "level", level_name[level], false);
	add_pair(&l, "msg", msg, false);
	for (;;) {
		const char *k = va_arg(kv, const char *);
		if (!k)
			break;
		const char *v = va_arg(kv, const char *);
		add_pair(&l, k, v ? v : "", false);
	}
	if (as_json)
		add_char(&l, '}');
	l.buf[l.len++] = '\n';
	ssize_t w = write(STDERR_FILENO, l.buf, l.len);
	(void)w;
}

void log_msg(enum bs_log_level level, const char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	log_vmsg(level, msg, ap);
	va_end(ap);
}
