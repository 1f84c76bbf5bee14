/* Name rules, escaping and UTF-8 repair. */
#include "helpers.h"

#include <sys/mman.h>
#include <unistd.h>

#include "names.h"

/* Escapes s; adds the invalid UTF-8 repairs to *repaired, returns the text. */
static const char *esc_bidi(const char *s, unsigned *repaired, unsigned *bidi)
{
	static char buf[256];
	struct names_repairs r = {0};
	bool cut;
	*names_escape(buf, s, 64, true, &r, &cut) = '\0';
	assert_false(cut);
	*repaired += r.utf8;
	*bidi += r.bidi;
	return buf;
}

static const char *esc(const char *s, unsigned *repaired)
{
	unsigned bidi = 0;
	const char *out = esc_bidi(s, repaired, &bidi);
	assert_int_equal(bidi, 0);
	return out;
}

static void test_metric_names(void **state)
{
	(void)state;
	assert_true(names_metric_valid("a", 1));
	assert_true(names_metric_valid("kvm_vm:rate5m", 13));
	assert_true(names_metric_valid("_x9", 3));
	assert_false(names_metric_valid("9x", 2));
	assert_false(names_metric_valid("a-b", 3));
	assert_false(names_metric_valid("", 0));
	assert_false(names_metric_valid("a b", 3));
}

static void test_label_names(void **state)
{
	(void)state;
	assert_true(names_label_valid("device", 6));
	assert_true(names_label_valid("_x", 2));
	assert_false(names_label_valid("__name__", 8)); /* reserved */
	assert_false(names_label_valid("a:b", 3));
	assert_false(names_label_valid("1a", 2));
}

static void test_escape(void **state)
{
	unsigned rep = 0;
	(void)state;
	assert_string_equal(esc("plain", &rep), "plain");
	assert_string_equal(esc("a\\b\"c\nd", &rep), "a\\\\b\\\"c\\nd");
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", &rep),
			    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	assert_int_equal(rep, 0);
}

static void test_utf8_repair(void **state)
{
	unsigned rep = 0;
	(void)state;
	/* A lone continuation, an overlong '/', a surrogate, a truncated sequence. */
	assert_string_equal(esc("a\x80z", &rep), "a\xef\xbf\xbdz");
	assert_int_equal(rep, 1);
	rep = 0;
	esc("\xc0\xaf", &rep);
	assert_int_equal(rep, 2);
	rep = 0;
	esc("\xed\xa0\x80", &rep);
	assert_int_equal(rep, 3);
	rep = 0;
	assert_string_equal(esc("x\xe2\x82", &rep), "x\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(rep, 2);
	rep = 0;
	esc("\xf4\x90\x80\x80", &rep); /* above U+10FFFF */
	assert_int_equal(rep, 4);
}

static void test_bidi_controls(void **state)
{
	unsigned rep = 0, bidi = 0;
	(void)state;
	/* RLO ... PDF around a name would show "exe.txt" for "txt.exe". */
	assert_string_equal(esc_bidi("a\xe2\x80\xaetxt.exe\xe2\x80\xac", &rep, &bidi),
			    "a\xef\xbf\xbdtxt.exe\xef\xbf\xbd");
	assert_int_equal(bidi, 2);
	bidi = 0;
	esc_bidi("\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x81\xa6\xe2\x81\xa9", &rep, &bidi);
	assert_int_equal(bidi, 5);
	/* Neighbours stay: U+2029 and U+2070, Arabic letters, Hebrew. */
	bidi = 0;
	assert_string_equal(esc_bidi("\xe2\x80\xa9\xe2\x81\xb0\xd8\xa8\xd7\x90", &rep, &bidi),
			    "\xe2\x80\xa9\xe2\x81\xb0\xd8\xa8\xd7\x90");
	assert_int_equal(bidi, 0);
	assert_int_equal(rep, 0);
}

static void test_help_escape(void **state)
{
	char buf[64];
	struct names_repairs rep = {0};
	bool cut;
	(void)state;
	*names_escape(buf, "say \"hi\"\\\n", 10, false, &rep, &cut) = '\0';
	assert_string_equal(buf, "say \"hi\"\\\\\\n");
	*names_escape(buf, "say \"hi\"", 8, true, &rep, &cut) = '\0';
	assert_string_equal(buf, "say \\\"hi\\\"");
}

static void test_escape_stops_at_max(void **state)
{
	char buf[64];
	struct names_repairs rep = {0};
	bool cut;
	(void)state;
	*names_escape(buf, "abcdef", 4, true, &rep, &cut) = '\0';
	assert_string_equal(buf, "abcd");
	assert_true(cut);
	*names_escape(buf, "abcd", 4, true, &rep, &cut) = '\0';
	assert_false(cut);
	/* Never inside a sequence: the euro sign starting at byte 2 stays whole. */
	*names_escape(buf, "ab\xe2\x82\xacz", 3, true, &rep, &cut) = '\0';
	assert_string_equal(buf, "ab\xe2\x82\xac");
	assert_true(cut);
	assert_int_equal(rep.utf8, 0);
}

/* Strings built of units whose escaped form is known, so that every unit
 * lands at every offset of the eight-byte scan and across its words: the
 * output is the units' forms up to max, where a UTF-8 sequence that starts
 * before max is taken whole. */
static void test_escape_units_anywhere(void **state)
{
	static const struct {
		const char *in, *out;
	} unit[] = {
	    {"a", "a"},
	    {"z", "z"},
	    {" ", " "},
	    {"\"", "\\\""},
	    {"\\", "\\\\"},
	    {"\n", "\\n"},
	    {"\xc3\xa9", "\xc3\xa9"},
	    {"\xff", "\xef\xbf\xbd"},
	};
	const size_t nunit = sizeof(unit) / sizeof(unit[0]);
	char in[256], want[768], got[768];
	unsigned seed = 1;
	(void)state;

	for (int round = 0; round < 50000; round++) {
		size_t nin = 0, nwant = 0, max;
		bool cut = false, got_cut;
		seed = seed * 1103515245u + 12345u;
		max = (seed >> 8) % 48;
		for (int k = 0; k < 40; k++) {
			seed = seed * 1103515245u + 12345u;
			/* Mostly plain, so that whole words pass the fast scan. */
			size_t u = (seed >> 16) % 4 ? (seed >> 20) % 3 : (seed >> 20) % nunit;
			size_t l = strlen(unit[u].in);
			cut |= nin >= max;
			if (!cut) {
				memcpy(want + nwant, unit[u].out, strlen(unit[u].out));
				nwant += strlen(unit[u].out);
			}
			memcpy(in + nin, unit[u].in, l);
			nin += l;
		}
		in[nin] = '\0';
		struct names_repairs r = {0};
		size_t n = (size_t)(names_escape(got, in, max, true, &r, &got_cut) - got);
		assert_int_equal(n, nwant);
		assert_memory_equal(got, want, n);
		assert_int_equal(got_cut, cut);
	}
}

static void test_copy_label(void **state)
{
	char buf[NAMES_LABEL_NAME_MAX + 8];
	char longname[NAMES_LABEL_NAME_MAX + 2];
	(void)state;
	char *e = names_copy_label(buf, "device_1");
	assert_non_null(e);
	assert_memory_equal(buf, "device_1", 8);
	assert_int_equal(e - buf, 8);
	assert_null(names_copy_label(buf, "__name__"));
	assert_null(names_copy_label(buf, "1x"));
	assert_null(names_copy_label(buf, "a-b"));
	assert_null(names_copy_label(buf, ""));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_null(names_copy_label(buf, longname));
}

/* s padded as names_same wants its known name. */
static const char *known(char *buf, const char *s)
{
	memset(buf, 0x55, NAMES_LABEL_NAME_MAX + 8);
	memcpy(buf, s, strlen(s) + 1);
	return buf;
}

static void test_same_name(void **state)
{
	char k[NAMES_LABEL_NAME_MAX + 8];
	static const char *names[] = {"",	  "a",	       "mode",
				      "instance", "instances", "a_rather_long_name_1"};
	(void)state;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			assert_int_equal(names_same(names[i], known(k, names[j]), strlen(names[j])),
					 i == j);
	/* A difference in any byte, the NUL's included. */
	const char *ref = "a_rather_long_name_1";
	for (size_t at = 0; at <= strlen(ref); at++) {
		char s[32];
		memcpy(s, ref, strlen(ref) + 1);
		s[at] = 'Z'; /* at the NUL: s goes on past ref */
		if (at == strlen(ref))
			s[at + 1] = '\0';
		assert_false(names_same(s, known(k, ref), strlen(ref)));
	}
}

/* The word-at-a-time reads go past a string's NUL, never past its page:
 * strings ending at the last byte before a page that is not mapped. */
static void test_reads_stop_at_page_end(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char k[NAMES_LABEL_NAME_MAX + 8], out[3 * 64 + 8];
	(void)state;

	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	for (size_t len = 0; len < 64; len++) {
		char *s = map + page - 1 - len;
		for (size_t i = 0; i < len; i++)
			s[i] = (char)('a' + i % 26);
		s[len] = '\0';
		struct names_repairs r = {0};
		bool cut;
		size_t n = (size_t)(names_escape(out, s, 64, true, &r, &cut) - out);
		assert_int_equal(n, len);
		assert_memory_equal(out, s, len);
		if (len <= NAMES_LABEL_NAME_MAX) {
			known(k, s);
			assert_true(names_same(s, k, len));
			k[len] = 'a';
			k[len + 1] = '\0';
			assert_false(names_same(s, k, len + 1));
		}
	}
	munmap(map, 2 * (size_t)page);
}

static void test_utf8_cut(void **state)
{
	const char *s = "ab\xe2\x82\xac";
	(void)state;
	assert_int_equal(names_utf8_cut(s, 5, 10), 5);
	assert_int_equal(names_utf8_cut(s, 5, 4), 2); /* would split the euro sign */
	assert_int_equal(names_utf8_cut(s, 5, 2), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metric_names),
	    cmocka_unit_test(test_label_names),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_utf8_repair),
	    cmocka_unit_test(test_bidi_controls),
	    cmocka_unit_test(test_help_escape),
	    cmocka_unit_test(test_same_name),
	    cmocka_unit_test(test_reads_stop_at_page_end),
	    cmocka_unit_test(test_escape_stops_at_max),
	    cmocka_unit_test(test_escape_units_anywhere),
	    cmocka_unit_test(test_copy_label),
	    cmocka_unit_test(test_utf8_cut),
	};
	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
