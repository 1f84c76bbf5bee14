/* The log's lines as written: logfmt, and no kind of line written more
 * than five times a second, the rest summarised with their count. */
#include "helpers.h"

#include <unistd.h>

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

static void flood(void)
{
	next_second(); /* the burst all in one second */
	for (int i = 0; i < 100; i++)
		log_warn("accept failed", "err", "Too many open files");
	log_info("another kind, written");
	for (int i = 0; i < 20; i++) /* a collector's pairs folded in: one kind */
		log_msg(BS_LOG_WARN, i % 2 ? "peer gone pid=12" : "peer gone pid=13", "collector",
			"kvm", (char *)NULL);
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
	assert_int_equal(count(text, "msg=\"peer gone pid="), 5);
	assert_non_null(strstr(text, "like=\"accept failed\" count=95\n"));
	assert_non_null(strstr(text, "like=\"peer gone\" count=15\n"));
	assert_int_equal(count(text, "lines not written"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_repeats_summarised),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
