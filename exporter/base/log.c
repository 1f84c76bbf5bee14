/* Structured logging to stderr in logfmt or JSON, node_exporter style,
 * or to the journal with each pair a field when stderr is the journal.
 * A line is built whole and written with one write(2) (one datagram to
 * the journal), so threads never interleave. No kind of line is written
 * more than LOG_BURST times a second: a fault that repeats (a spinning accept, a peer retrying)
 * must not fill a disk; the lines held back are counted and summarised. */
#include "log.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"
#include "monoclock.h"

#define LOG_BURST 5  /* lines of one kind a second, at most */
#define LOG_KINDS 64 /* kinds followed at once; a new one takes an old one's slot */
#define LOG_LIKE_MAX 96
#define LOG_PAIRS_MAX 32 /* pairs a line keeps; the last slot counts the rest */

/* One kind of line: its level, its message and the collector's name. */
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
static int journal_fd = -1; /* stderr is the journal: entries go here */

static const char *const level_name[] = {"debug", "info", "warn", "error"};
static const int level_priority[] = {7, 6, 4, 3}; /* syslog's */

int log_parse_level(const char *s, enum bs_log_level *out)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(s, level_name[i]) == 0) {
			*out = (enum bs_log_level)i;
			return 0;
		}
	return -1;
}

const char *log_level_names(void)
{
	return "debug, info, warn, error";
}

void log_setup(enum bs_log_level min, bool json)
{
	min_level = min;
	as_json = json;
	if (journal_fd >= 0)
		close(journal_fd);
	journal_fd = journal_open();
}

bool log_to_journal(void)
{
	return journal_fd >= 0;
}

/* One line's pairs, gathered once from the caller's list. */
struct rec {
	enum bs_log_level level;
	const char *msg;
	const char *kv[2 * LOG_PAIRS_MAX];
	size_t n;
	char cut[24];
};

static void rec_fill(struct rec *r, enum bs_log_level level, const char *collector, const char *msg,
		     va_list kv)
{
	va_list ap;
	size_t cut = 0;

	r->level = level;
	r->msg = msg;
	r->n = 0;
	if (collector) {
		r->kv[0] = "collector";
		r->kv[1] = collector;
		r->n = 1;
	}
	va_copy(ap, kv);
	for (const char *k; (k = va_arg(ap, const char *));) {
		const char *v = va_arg(ap, const char *);
		if (r->n < LOG_PAIRS_MAX - 1) {
			r->kv[2 * r->n] = k;
			r->kv[2 * r->n + 1] = v ? v : "";
			r->n++;
		} else {
			cut++;
		}
	}
	va_end(ap);
	if (cut) {
		snprintf(r->cut, sizeof(r->cut), "%zu", cut);
		r->kv[2 * r->n] = "pairs_cut";
		r->kv[2 * r->n + 1] = r->cut;
		r->n++;
	}
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
		/* A key is a collector's word: one that would break the line's
		 * syntax has those characters made _. */
		for (const char *p = *k ? k : "_"; *p; p++)
			add_char(l, (unsigned char)*p > ' ' && *p != '"' && *p != '=' ? *p : '_');
		add_char(l, '=');
		add_logfmt_value(l, v);
	}
}

static void write_rec(const struct rec *r);

/* A line's kind: its message, its level and its collector. */
static uint64_t kind_key(const struct rec *r, char *like, size_t max)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)r->level;
	const char *collector = "";

	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->kv[2 * i], "collector") == 0) {
			collector = r->kv[2 * i + 1];
			break;
		}
	snprintf(like, max, "%s", r->msg);
	for (const char *p = r->msg; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull; /* "ab"+"c" is not "a"+"bc" */
	for (const char *p = collector; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h | 1;
}

static void summarise(const struct kind *k, uint64_t held)
{
	char n[24];
	struct rec r = {.level = k->level,
			.msg = "lines not written: more than 5 of this kind in a second",
			.kv = {"like", k->like, "count", n},
			.n = 2};

	snprintf(n, sizeof(n), "%llu", (unsigned long long)held);
	write_rec(&r);
}

/* Whether this line may be written now; a kind whose burst is spent is
 * counted instead, and summarised once its second is over. */
static bool within_burst(const struct rec *r)
{
	char like[LOG_LIKE_MAX];
	uint64_t key = kind_key(r, like, sizeof(like));
	uint64_t now = monoclock_ns() / 1000000000u, held = 0;
	struct kind *k = &kinds[key % LOG_KINDS], before = {0};
	bool ok;

	pthread_mutex_lock(&kinds_lock);
	if (k->key != key) { /* another kind had the slot: its count is told first */
		before = *k;
		*k = (struct kind){.key = key, .second = now, .level = r->level};
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

void log_vcollector(enum bs_log_level level, const char *collector, const char *msg, va_list kv)
{
	struct rec r;

	if (level < min_level)
		return;
	rec_fill(&r, level, collector, msg, kv);
	if (within_burst(&r))
		write_rec(&r);
}

void log_vmsg(enum bs_log_level level, const char *msg, va_list kv)
{
	log_vcollector(level, NULL, msg, kv);
}

/* To the journal when stderr is the journal and it takes the entry, else
 * to stderr. */
static void write_rec(const struct rec *r)
{
	struct line l = {.len = 0};
	struct timeval tv;
	struct tm tm;
	char ts[40];

	if (journal_fd >= 0 &&
	    journal_send(journal_fd, level_priority[r->level], r->msg, r->kv, r->n) == 0)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", (long)tv.tv_usec / 1000);
	add_pair(&l, "ts", ts, true);
	add_pair(&l, "level", level_name[r->level], false);
	add_pair(&l, "msg", r->msg, false);
	for (size_t i = 0; i < r->n; i++)
		add_pair(&l, r->kv[2 * i], r->kv[2 * i + 1], false);
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
