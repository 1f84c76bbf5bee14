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
#include "utf8.h"

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
	char renamed[1024]; /* collector keys that took the x_ prefix */
	size_t renamed_len;
};

/* Keys the log itself writes on a line: a collector's key must not
 * duplicate or override them (in JSON a parser keeps the last). */
static const char *const own_keys[] = {"ts", "level", "msg", "collector", "pairs_cut", "truncated"};

/* A collector's key as written: "x_" before one that, compared as the
 * journal compares field names (case and punctuation aside), is one of
 * own_keys or starts with x_ itself, so no two keys end up alike and the
 * same key is renamed the same way in logfmt, JSON and the journal.
 * A renamed key is kept in r->renamed, cut when that is full. */
static const char *collector_key(struct rec *r, const char *k)
{
	char norm[16];
	size_t n = 0;
	bool rename;

	for (const char *p = k; *p && n < sizeof(norm) - 1; p++) {
		char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		norm[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	norm[n] = '\0';
	rename = strncmp(norm, "x_", 2) == 0;
	for (size_t i = 0; i < sizeof(own_keys) / sizeof(own_keys[0]) && !rename; i++)
		rename = strlen(k) == strlen(own_keys[i]) && strcmp(norm, own_keys[i]) == 0;
	if (!rename)
		return k;
	size_t room = sizeof(r->renamed) - r->renamed_len;
	if (room < 4)
		return "x_";
	char *out = r->renamed + r->renamed_len;
	size_t kn = utf8_cut(k, room - 3);
	memcpy(out, "x_", 2);
	memcpy(out + 2, k, kn);
	out[2 + kn] = '\0';
	r->renamed_len += 3 + kn;
	return out;
}

static void rec_fill(struct rec *r, enum bs_log_level level, const char *collector, const char *msg,
		     va_list kv)
{
	va_list ap;
	size_t cut = 0;

	r->level = level;
	r->msg = msg;
	r->n = 0;
	r->renamed_len = 0;
	if (collector) {
		r->kv[0] = "collector";
		r->kv[1] = collector;
		r->n = 1;
	}
	va_copy(ap, kv);
	for (const char *k; (k = va_arg(ap, const char *));) {
		const char *v = va_arg(ap, const char *);
		if (r->n < LOG_PAIRS_MAX - 1) {
			r->kv[2 * r->n] = collector ? collector_key(r, k) : k;
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

/* A line is cut, when it must be, at a character and an escape, and still
 * closed: its string ended, its object closed, and "truncated":true (or
 * truncated=true) after the last pair it kept. LINE_CLOSE is the room kept
 * for that. */
#define LINE_MAX 4096
#define LINE_CLOSE 32

#define LINE_KEYS (LOG_PAIRS_MAX + 4) /* the line's own keys and the pairs */

struct line {
	char buf[LINE_MAX];
	size_t len;
	bool full; /* something was left out: nothing more is added */
	/* logfmt: where each key written is in buf, to keep them apart */
	size_t key_at[LINE_KEYS], key_len[LINE_KEYS];
	size_t nkeys;
};

/* Adds s[0..n) whole, or nothing and marks the line full. */
static bool add(struct line *l, const char *s, size_t n)
{
	if (l->full || l->len + n > LINE_MAX - LINE_CLOSE) {
		l->full = true;
		return false;
	}
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	return true;
}

static bool add_char(struct line *l, char c)
{
	return add(l, &c, 1);
}

/* The closing text, in the room add() leaves for it. */
static void add_close(struct line *l, const char *s)
{
	size_t n = strlen(s);
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

/* Characters written escaped though valid: Unicode's bidirectional
 * controls, which reorder what a reader sees beside them (a VM named to
 * hide what follows); the C1 controls, U+0080..U+009F (U+009B is an 8-bit
 * CSI a terminal may act on); and the line and paragraph separators
 * U+2028 and U+2029, which end a line for some readers (and a JavaScript
 * string before ES2019). */
static bool escaped_cp(uint32_t cp)
{
	return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
	       (cp >= 0x2066 && cp <= 0x2069) || (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 ||
	       cp == 0x2029;
}

/* The bytes of the character at s, as written inside a quoted string
 * (JSON's rules, which logfmt shares): escapes for " \ and controls,
 * \ufffd for a byte of invalid UTF-8, \uXXXX for one escaped_cp names.
 * *used is how many bytes of s it took. */
static size_t quoted_char(const unsigned char *s, char out[8], size_t *used)
{
	size_t len = s[0] < 0x80 ? 1 : utf8_seq(s, 4);

	*used = len ? len : 1;
	if (!len)
		return (size_t)snprintf(out, 8, "\\ufffd");
	if (len == 1) {
		if (s[0] == '"' || s[0] == '\\')
			return (size_t)snprintf(out, 8, "\\%c", s[0]);
		if (s[0] == '\n')
			return (size_t)snprintf(out, 8, "\\n");
		if (s[0] < 0x20 || s[0] == 0x7f)
			return (size_t)snprintf(out, 8, "\\u%04x", s[0]);
		out[0] = (char)s[0];
		return 1;
	}
	uint32_t cp = len == 2 ? s[0] & 0x1fu : len == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3fu);
	if (escaped_cp(cp))
		return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)cp);
	memcpy(out, s, len);
	return len;
}

/* A quoted string, cut (when the line is full) after a whole character and
 * always closed once opened; false when not even opened. */
static bool add_quoted(struct line *l, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	char esc[8];
	size_t used;

	if (!add_char(l, '"'))
		return false;
	for (size_t i = 0; u[i]; i += used)
		if (!add(l, esc, quoted_char(u + i, esc, &used)))
			break;
	add_close(l, "\"");
	return true;
}

/* logfmt quotes only what needs it: a value written plain is printable
 * ASCII or valid UTF-8 other than what escaped_cp names. */
static void add_logfmt_value(struct line *l, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	bool plain = *s != '\0';
	char esc[8];
	size_t used;

	for (size_t i = 0; u[i] && plain; i += used) {
		size_t n = quoted_char(u + i, esc, &used);
		plain = n == used && memcmp(esc, u + i, n) == 0 && u[i] > ' ' && u[i] != '"' &&
			u[i] != '=' && u[i] != '\\';
	}
	if (!plain) {
		add_quoted(l, s);
		return;
	}
	for (size_t i = 0; u[i]; i += used)
		if (!add(l, s + i, quoted_char(u + i, esc, &used)))
			break;
}

/* Whether the key at buf[at..len) was written on the line already. */
static bool key_taken(const struct line *l, size_t at)
{
	size_t n = l->len - at;

	for (size_t i = 0; i < l->nkeys; i++)
		if (l->key_len[i] == n && memcmp(l->buf + l->key_at[i], l->buf + at, n) == 0)
			return true;
	return false;
}

/* The logfmt key just written at buf[at..len), made unlike every key
 * before it on the line: mending ("ms g", "ms=g" and "ms\"g" are all
 * ms_g) must not make two pairs one key. The second takes _2, the next _3,
 * in the order written, so the same line is always written the same. */
static bool logfmt_key_apart(struct line *l, size_t at)
{
	size_t base = l->len;
	char suffix[24];

	for (unsigned n = 2; key_taken(l, at); n++) {
		l->len = base;
		if (!add(l, suffix, (size_t)snprintf(suffix, sizeof(suffix), "_%u", n)))
			return false;
	}
	if (l->nkeys < LINE_KEYS) {
		l->key_at[l->nkeys] = at;
		l->key_len[l->nkeys++] = l->len - at;
	}
	return true;
}

/* A pair is written whole or, when its key does not fit, not at all. */
static void add_pair(struct line *l, const char *k, const char *v, bool first)
{
	size_t mark = l->len;
	bool ok;

	if (l->full)
		return;
	if (as_json) {
		ok = add(l, first ? "{" : ",", 1) && add_quoted(l, k) && !l->full &&
		     add_char(l, ':') && add_quoted(l, v);
	} else {
		ok = first || add_char(l, ' ');
		/* A key is a collector's word: one that would break the line's
		 * syntax has those characters made _. */
		const unsigned char *u = (const unsigned char *)(*k ? k : "_");
		size_t at = l->len;
		for (size_t i = 0, used; ok && u[i]; i += used) {
			char esc[8];
			size_t n = quoted_char(u + i, esc, &used);
			bool keep =
			    n == used && u[i] > ' ' && u[i] != '"' && u[i] != '=' && u[i] != '\\';
			ok = keep ? add(l, (const char *)u + i, n) : add_char(l, '_');
		}
		ok = ok && logfmt_key_apart(l, at) && add_char(l, '=');
		if (ok)
			add_logfmt_value(l, v);
	}
	if (!ok)
		l->len = mark; /* the key cut: the pair is left out */
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
	if (l.full)
		add_close(&l, as_json ? ",\"truncated\":true" : " truncated=true");
	if (as_json)
		add_close(&l, "}");
	add_close(&l, "\n");
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
