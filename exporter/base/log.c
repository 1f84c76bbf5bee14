/* Structured logging to stderr in logfmt or JSON, node_exporter style.
 * A line is built whole and written with one write(2), so threads never interleave. */
#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

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

void log_vmsg(enum bs_log_level level, const char *msg, va_list kv)
{
	struct line l = {.len = 0};
	struct timeval tv;
	struct tm tm;
	char ts[40];

	if (level < min_level)
		return;
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
