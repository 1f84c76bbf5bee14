/* The log's lines as written: logfmt and JSON with a collector's pairs as
 * fields, journal entries when stderr is the journal, and no kind of line
 * written more than five times a second, the rest summarised with their
 * count. */
#include "helpers.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "journal.h"
#include "log.h"
#include "monoclock.h"

static char out[1 << 16];

/* Runs fn with stderr sent to a file, and returns what was written. */
static const char *logged(void (*fn)(void))
{
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO);

	assert_non_null(f);
	dup2(fileno(f), STDERR_FILENO);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	size_t n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* Waits for the monotonic second to turn (at most about a second). */
static void next_second(void)
{
	uint64_t s = monoclock_ns() / 1000000000u;
	while (monoclock_ns() / 1000000000u == s)
		usleep(1000);
}

/* What the daemon's bs_host.log does with a collector's line. */
__attribute__((sentinel)) static void collector_line(enum bs_log_level level, const char *collector,
						     const char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	log_vcollector(level, collector, msg, ap);
	va_end(ap);
}

static void flood(void)
{
	next_second(); /* the burst all in one second */
	for (int i = 0; i < 100; i++)
		log_warn("accept failed", "err", "Too many open files");
	log_info("another kind, written");
	for (int i = 0; i < 20; i++) /* pairs differ, the kind is one */
		collector_line(BS_LOG_WARN, "kvm", "peer gone", "pid", i % 2 ? "12" : "13",
			       (char *)NULL);
	next_second();
	log_flush_held();
}

static void test_repeats_summarised(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, false);
	const char *text = logged(flood);

	assert_int_equal(count(text, "msg=\"accept failed\""), 5);
	assert_int_equal(count(text, "msg=\"another kind, written\""), 1);
	assert_int_equal(count(text, "msg=\"peer gone\" collector=kvm pid=1"), 5);
	assert_non_null(strstr(text, "like=\"accept failed\" count=95\n"));
	assert_non_null(strstr(text, "like=\"peer gone\" count=15\n"));
	assert_int_equal(count(text, "lines not written"), 2);
}

static void first_scan(void)
{
	collector_line(BS_LOG_INFO, "kvm", "first scan done", "vms", "4", "stats_fds", "6",
		       "duration_ms", "1.6", (char *)NULL);
}

/* The line: the pairs are fields, not words of msg. */
static void test_pairs_are_fields(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, false);
	const char *text = logged(first_scan);
	assert_non_null(
	    strstr(text, " level=info msg=\"first scan done\" collector=kvm vms=4 stats_fds=6 "
			 "duration_ms=1.6\n"));
	log_setup(BS_LOG_INFO, true);
	text = logged(first_scan);
	assert_non_null(strstr(text, ",\"level\":\"info\",\"msg\":\"first scan done\","
				     "\"collector\":\"kvm\",\"vms\":\"4\",\"stats_fds\":\"6\","
				     "\"duration_ms\":\"1.6\"}\n"));
	log_setup(BS_LOG_INFO, false);
}

static void odd_keys(void)
{
	log_info("odd", "a key", "1", "k=v", "2", "", "3");
}

/* A key that would break logfmt's syntax is mended, not written raw. */
static void test_logfmt_keys_mended(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, false);
	assert_non_null(strstr(logged(odd_keys), "msg=odd a_key=1 k_v=2 _=3\n"));
}

static void test_journal_field_names(void **state)
{
	static const char *const cases[][2] = {
	    {"vms", "VMS"},
	    {"stats_fds", "STATS_FDS"},
	    {"duration-ms", "DURATION_MS"},
	    {"a.b c", "A_B_C"},
	    {"_pid", "X__PID"},
	    {"1st", "X_1ST"},
	    {"", "X_"},
	    {"message", "X_MESSAGE"},
	    {"priority", "X_PRIORITY"},
	    {"syslog_identifier", "X_SYSLOG_IDENTIFIER"},
	    {"collector", "COLLECTOR"},
	    {"\xc3\xa9t\xc3\xa9", "X___T__"}, /* mended to a leading _ */
	};
	char name[JOURNAL_FIELD_MAX + 1];
	char lng[200];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		journal_field_name(cases[i][0], name);
		assert_string_equal(name, cases[i][1]);
	}
	memset(lng, 'k', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	journal_field_name(lng, name);
	assert_int_equal(strlen(name), JOURNAL_FIELD_MAX);
	lng[0] = '_';
	journal_field_name(lng, name);
	assert_int_equal(strlen(name), JOURNAL_FIELD_MAX);
	assert_memory_equal(name, "X__K", 4);
}

/* A journald of our own: a datagram socket bound in a temporary folder,
 * stderr a socket whose device and inode JOURNAL_STREAM names. */
struct fake_journal {
	char dir[64], path[128];
	int sock;	 /* bound: what journald would read */
	int stderr_peer; /* the other end of the stderr socket */
	int saved_stderr;
};

static void fake_journal_start(struct fake_journal *j, bool stream_matches)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int sp[2];
	char env[64];

	snprintf(j->dir, sizeof(j->dir), "/tmp/bs-journal.XXXXXX");
	assert_non_null(mkdtemp(j->dir));
	snprintf(j->path, sizeof(j->path), "%s/socket", j->dir);
	j->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(j->sock >= 0);
	memcpy(sa.sun_path, j->path, strlen(j->path) + 1);
	assert_int_equal(bind(j->sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	j->saved_stderr = dup(STDERR_FILENO);
	dup2(sp[0], STDERR_FILENO);
	close(sp[0]);
	j->stderr_peer = sp[1];
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + (stream_matches ? 0 : 1));
	setenv("JOURNAL_STREAM", env, 1);
	setenv(JOURNAL_TEST_SOCKET_ENV, j->path, 1);
	log_setup(BS_LOG_INFO, false);
}

static void fake_journal_stop(struct fake_journal *j)
{
	dup2(j->saved_stderr, STDERR_FILENO);
	close(j->saved_stderr);
	unsetenv("JOURNAL_STREAM");
	unsetenv(JOURNAL_TEST_SOCKET_ENV);
	log_setup(BS_LOG_INFO, false);
	close(j->sock);
	close(j->stderr_peer);
	unlink(j->path);
	rmdir(j->dir);
}

/* One datagram, or "" when none came within a second. */
static size_t journal_recv(int fd, char *buf, size_t max)
{
	struct timeval tv = {1, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t n = recv(fd, buf, max, 0);
	return n < 0 ? 0 : (size_t)n;
}

/* The value of field `name` in a native-protocol entry, parsed as
 * journald does: NAME=value\n, or NAME\n + 64-bit LE length + value + \n. */
static const char *entry_field(const char *e, size_t n, const char *name, char *val, size_t max)
{
	size_t i = 0, nl = strlen(name);

	while (i < n) {
		const char *line = e + i;
		const char *end = memchr(line, '\n', n - i);
		const char *eq = memchr(line, '=', end ? (size_t)(end - line) : n - i);
		assert_non_null(end);
		if (eq) {
			size_t vl = (size_t)(end - eq - 1);
			if ((size_t)(eq - line) == nl && memcmp(line, name, nl) == 0 && vl < max) {
				memcpy(val, eq + 1, vl);
				val[vl] = '\0';
				return val;
			}
			i = (size_t)(end - e) + 1;
		} else {
			uint64_t len;
			assert_true((size_t)(end - e) + 1 + 8 <= n);
			memcpy(&len, end + 1, 8);
			len = le64toh(len);
			const char *v = end + 1 + 8;
			assert_true((size_t)(v - e) + len + 1 <= n);
			assert_int_equal(v[len], '\n');
			if ((size_t)(end - line) == nl && memcmp(line, name, nl) == 0 &&
			    len < max) {
				memcpy(val, v, len);
				val[len] = '\0';
				return val;
			}
			i = (size_t)(v - e) + len + 1;
		}
	}
	return NULL;
}

static bool stderr_has_data(int peer)
{
	char c;
	return recv(peer, &c, 1, MSG_DONTWAIT) == 1;
}

static void test_journal_entry(void **state)
{
	struct fake_journal j;
	char e[8192], v[256];
	size_t n;

	(void)state;
	fake_journal_start(&j, true);
	assert_true(log_to_journal());
	collector_line(BS_LOG_INFO, "kvm", "first scan done", "vms", "4", "stats_fds", "6",
		       "duration_ms", "1.6", (char *)NULL);
	n = journal_recv(j.sock, e, sizeof(e));
	assert_true(n > 0);
	assert_string_equal(entry_field(e, n, "MESSAGE", v, sizeof(v)), "first scan done");
	assert_string_equal(entry_field(e, n, "PRIORITY", v, sizeof(v)), "6");
	assert_string_equal(entry_field(e, n, "COLLECTOR", v, sizeof(v)), "kvm");
	assert_string_equal(entry_field(e, n, "VMS", v, sizeof(v)), "4");
	assert_string_equal(entry_field(e, n, "STATS_FDS", v, sizeof(v)), "6");
	assert_string_equal(entry_field(e, n, "DURATION_MS", v, sizeof(v)), "1.6");
	assert_non_null(entry_field(e, n, "SYSLOG_IDENTIFIER", v, sizeof(v)));

	/* A newline in a value or the message: the binary form, whole. */
	log_warn("two\nlines", "err", "first\nsecond", "_pid", "7", "message", "m");
	n = journal_recv(j.sock, e, sizeof(e));
	assert_true(n > 0);
	assert_string_equal(entry_field(e, n, "MESSAGE", v, sizeof(v)), "two\nlines");
	assert_string_equal(entry_field(e, n, "PRIORITY", v, sizeof(v)), "4");
	assert_string_equal(entry_field(e, n, "ERR", v, sizeof(v)), "first\nsecond");
	assert_string_equal(entry_field(e, n, "X__PID", v, sizeof(v)), "7");
	assert_string_equal(entry_field(e, n, "X_MESSAGE", v, sizeof(v)), "m");
	assert_false(stderr_has_data(j.stderr_peer)); /* the journal only */

	/* journald gone: the line goes to stderr rather than nowhere. */
	unlink(j.path);
	log_error("journal gone", "k", "v");
	char line[512];
	struct timeval tv = {1, 0};
	setsockopt(j.stderr_peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t got = recv(j.stderr_peer, line, sizeof(line) - 1, 0);
	assert_true(got > 0);
	line[got] = '\0';
	assert_non_null(strstr(line, "level=error msg=\"journal gone\" k=v\n"));
	fake_journal_stop(&j);
}

/* JOURNAL_STREAM naming another stream (stderr redirected since systemd
 * started us): stderr it is. */
static void test_journal_stream_mismatch(void **state)
{
	struct fake_journal j;
	char e[512], line[512];

	(void)state;
	fake_journal_start(&j, false);
	assert_false(log_to_journal());
	log_info("not for the journal", "k", "v");
	struct timeval tv = {1, 0};
	setsockopt(j.stderr_peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ssize_t got = recv(j.stderr_peer, line, sizeof(line) - 1, 0);
	assert_true(got > 0);
	line[got] = '\0';
	assert_non_null(strstr(line, "msg=\"not for the journal\" k=v\n"));
	assert_true(recv(j.sock, e, sizeof(e), MSG_DONTWAIT) < 0);
	fake_journal_stop(&j);
}

/* A hostile VM name: a control, a quote, bytes that are no UTF-8, a
 * right-to-left override. */
#define HOSTILE                                                                                    \
	"a\x01"                                                                                    \
	"b\"c\xff\xfe\xe2\x80\xae"                                                                 \
	"d"

static void hostile_line(void)
{
	collector_line(BS_LOG_WARN, "kvm", "one thread created several VMs", "vm", HOSTILE, "cut",
		       "\xc3", (char *)NULL);
}

static void valid_utf8(void)
{
	log_info("ok", "name", "\xc3\xa9t\xc3\xa9");
}

/* Invalid UTF-8 becomes \ufffd and a bidirectional control is escaped, in
 * JSON and in logfmt alike: no raw ff fe, no override reordering a line. */
static void test_invalid_utf8_escaped(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, true);
	const char *text = logged(hostile_line);
	assert_non_null(
	    strstr(text, "\"vm\":\"a\\u0001b\\\"c\\ufffd\\ufffd\\u202ed\",\"cut\":\"\\ufffd\"}\n"));
	assert_null(strchr(text, '\xff'));
	log_setup(BS_LOG_INFO, false);
	text = logged(hostile_line);
	assert_non_null(
	    strstr(text, " vm=\"a\\u0001b\\\"c\\ufffd\\ufffd\\u202ed\" cut=\"\\ufffd\"\n"));
	assert_null(strchr(text, '\xff'));
	/* Valid UTF-8 is written as it is, unquoted in logfmt. */
	assert_non_null(strstr(logged(valid_utf8), " name=\xc3\xa9t\xc3\xa9\n"));
}

static void c1_line(void)
{
	log_info("loaded", "path",
		 "/etc/a\xc2\x9b"
		 "1m\xc2\x80z\xe2\x80\xa8y\xe2\x80\xa9x",
		 "ok", "\xc2\xa0\xc2\xa9"); /* U+00A0, U+00A9: past C1, written as they are */
}

/* C1 controls (U+009B, an 8-bit CSI) and U+2028/U+2029 are escaped in
 * JSON and make a logfmt value quoted and escaped. */
static void test_c1_and_separators_escaped(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, true);
	const char *text = logged(c1_line);
	assert_non_null(strstr(
	    text,
	    "\"path\":\"/etc/a\\u009b1m\\u0080z\\u2028y\\u2029x\",\"ok\":\"\xc2\xa0\xc2\xa9\"}\n"));
	assert_null(strstr(text, "\xc2\x9b"));
	assert_null(strstr(text, "\xe2\x80\xa8"));
	log_setup(BS_LOG_INFO, false);
	text = logged(c1_line);
	assert_non_null(strstr(
	    text, " path=\"/etc/a\\u009b1m\\u0080z\\u2028y\\u2029x\" ok=\xc2\xa0\xc2\xa9\n"));
	assert_null(strstr(text, "\xc2\x80"));
	assert_null(strstr(text, "\xe2\x80\xa9"));
}

static void mended_alike(void)
{
	collector_line(BS_LOG_INFO, "mine", "alike", "ms g", "1", "ms=g", "2", "ms\"g", "3",
		       "ms_g_2", "4", "ms_g", "5", "", "6", "=", "7", (char *)NULL);
}

/* Keys that mending makes alike stay apart in logfmt, numbered in the
 * order written; JSON keeps the keys as they are. */
static void test_logfmt_mended_keys_apart(void **state)
{
	(void)state;
	log_setup(BS_LOG_INFO, false);
	const char *text = logged(mended_alike);
	assert_non_null(strstr(text, " collector=mine ms_g=1 ms_g_2=2 ms_g_3=3 ms_g_2_2=4 "
				     "ms_g_4=5 _=6 __2=7\n"));
	log_setup(BS_LOG_INFO, true);
	text = logged(mended_alike);
	assert_non_null(strstr(text, "\"ms g\":\"1\",\"ms=g\":\"2\",\"ms\\\"g\":\"3\","
				     "\"ms_g_2\":\"4\",\"ms_g\":\"5\",\"\":\"6\",\"=\":\"7\"}\n"));
	log_setup(BS_LOG_INFO, false);
}

static char big[6000];
static char big_msg[32]; /* one kind a round: no round is held back */

static void long_line(void)
{
	log_info(big_msg, "config", big, "after", "lost");
}

/* A line longer than the buffer: cut at a character, the string and the
 * object closed, and marked truncated. */
static void test_long_line_closed(void **state)
{
	(void)state;
	/* Quotes, each escaped to two bytes, and two-byte characters: every
	 * cut can fall inside an escape or a character. */
	for (size_t off = 0; off < 4; off++) {
		size_t i = 0;
		for (; i < off; i++)
			big[i] = 'a';
		for (; i + 2 < sizeof(big); i += 2)
			memcpy(big + i, (i / 2) % 2 ? "\"\"" : "\xc3\xa9", 2);
		big[i] = '\0';
		snprintf(big_msg, sizeof(big_msg), "started, round %zu", off);
		log_setup(BS_LOG_INFO, true);
		const char *text = logged(long_line);
		size_t n = strlen(text);
		assert_true(n <= 4096);
		assert_int_equal(count(text, "\n"), 1);
		assert_non_null(strstr(text, "\",\"truncated\":true}\n"));
		assert_null(strstr(text, "lost"));
		/* The value ends after a whole escape and a whole character. */
		const char *end = strstr(text, "\",\"truncated\"");
		assert_true(end[-1] != '\\' || end[-2] == '\\');
		assert_true((unsigned char)end[-1] != 0xc3);
		log_setup(BS_LOG_INFO, false);
		text = logged(long_line);
		assert_true(strlen(text) <= 4096);
		assert_non_null(strstr(text, "\" truncated=true\n"));
		assert_null(strstr(text, "lost"));
	}
}

static void key_clash(void)
{
	collector_line(BS_LOG_INFO, "mine", "odd keys", "msg", "INJECTED", "level", "debug",
		       "collector", "other", "ts", "0", "Collector", "x", "x_msg", "y", "pairs_cut",
		       "9", "truncated", "true", "vms", "4", (char *)NULL);
}

/* A collector's keys never duplicate or override the line's own: they take
 * x_, the same in logfmt, JSON and the journal. */
static void test_collector_keys_renamed(void **state)
{
	struct fake_journal j;
	char e[8192], v[256];
	size_t n;

	(void)state;
	log_setup(BS_LOG_INFO, false);
	const char *text = logged(key_clash);
	assert_non_null(strstr(text, " level=info msg=\"odd keys\" collector=mine x_msg=INJECTED "
				     "x_level=debug x_collector=other x_ts=0 x_Collector=x "
				     "x_x_msg=y x_pairs_cut=9 x_truncated=true vms=4\n"));
	log_setup(BS_LOG_INFO, true);
	text = logged(key_clash);
	assert_non_null(strstr(text,
			       ",\"level\":\"info\",\"msg\":\"odd keys\",\"collector\":\"mine\","
			       "\"x_msg\":\"INJECTED\",\"x_level\":\"debug\","
			       "\"x_collector\":\"other\",\"x_ts\":\"0\",\"x_Collector\":\"x\","
			       "\"x_x_msg\":\"y\",\"x_pairs_cut\":\"9\","
			       "\"x_truncated\":\"true\",\"vms\":\"4\"}\n"));
	fake_journal_start(&j, true);
	key_clash();
	n = journal_recv(j.sock, e, sizeof(e));
	assert_true(n > 0);
	assert_int_equal(count(e, "\nCOLLECTOR="), 1);
	assert_string_equal(entry_field(e, n, "COLLECTOR", v, sizeof(v)), "mine");
	assert_string_equal(entry_field(e, n, "X_COLLECTOR", v, sizeof(v)), "other");
	assert_string_equal(entry_field(e, n, "X_MSG", v, sizeof(v)), "INJECTED");
	assert_string_equal(entry_field(e, n, "X_X_MSG", v, sizeof(v)), "y");
	assert_string_equal(entry_field(e, n, "MESSAGE", v, sizeof(v)), "odd keys");
	fake_journal_stop(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_repeats_summarised),
	    cmocka_unit_test(test_pairs_are_fields),
	    cmocka_unit_test(test_logfmt_keys_mended),
	    cmocka_unit_test(test_journal_field_names),
	    cmocka_unit_test(test_journal_entry),
	    cmocka_unit_test(test_journal_stream_mismatch),
	    cmocka_unit_test(test_invalid_utf8_escaped),
	    cmocka_unit_test(test_long_line_closed),
	    cmocka_unit_test(test_collector_keys_renamed),
	    cmocka_unit_test(test_c1_and_separators_escaped),
	    cmocka_unit_test(test_logfmt_mended_keys_apart),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
