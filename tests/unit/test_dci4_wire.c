/* The DCI4 wire codec: round trips, and every malformed reply refused. */
#include "helpers.h"

#include "dci4_wire.h"

static void test_header(void **state)
{
	uint8_t b[DCI4_HEADER_LEN];
	struct dci4_header h;
	(void)state;
	dci4_put_header(b, SA_READ | DCI4_REPLY, 1234);
	assert_memory_equal(b, "DCI4\x01\x00\x01\x80\xd2\x04\x00\x00", 12);
	assert_int_equal(dci4_get_header(b, sizeof(b), &h), 0);
	assert_int_equal(h.op, SA_READ | DCI4_REPLY);
	assert_int_equal(h.length, 1234);
	assert_int_equal(dci4_get_header(b, 11, &h), -EPROTO);
	b[4] = 2;
	assert_int_equal(dci4_get_header(b, sizeof(b), &h), -EPROTO); /* version */
	b[4] = 1;
	b[0] = 'X';
	assert_int_equal(dci4_get_header(b, sizeof(b), &h), -EPROTO); /* magic */
	dci4_put_header(b, SA_READ, DCI4_BODY_MAX + 1);
	assert_int_equal(dci4_get_header(b, sizeof(b), &h), -EMSGSIZE);
}

static void test_info(void **state)
{
	struct dci4_info in = {101,
			       0,
			       41,
			       SPT_NETWORK_DRIVER,
			       123,
			       "RESET!!",
			       "dci4-netdev",
			       "eth0",
			       "Network interface eth0"};
	struct dci4_info out;
	uint8_t buf[1024];
	(void)state;
	int n = dci4_encode_info(&in, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(dci4_decode_info(buf, (size_t)n, &out), 0);
	assert_int_equal(out.max_stat, 41);
	assert_int_equal(out.type, SPT_NETWORK_DRIVER);
	assert_memory_equal(out.reset, in.reset, 8);
	assert_string_equal(out.title, "eth0");
	assert_string_equal(out.description, "Network interface eth0");
	assert_int_equal(dci4_decode_info(buf, (size_t)n - 1, &out), -EPROTO); /* cut */
	assert_int_equal(dci4_decode_info(buf, (size_t)n + 1, &out), -EPROTO); /* trailing */
	buf[44 + 11] = 'y'; /* the NUL ending "dci4-netdev" overwritten */
	assert_int_equal(dci4_decode_info(buf, (size_t)n, &out), -EBADMSG);
	assert_int_equal(dci4_encode_info(&in, buf, 20), -ENOSPC);
}

static void test_desc(void **state)
{
	struct dci4_desc d = {ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, 0, 0, "rx_bytes"};
	struct dci4_desc u = {ST_UNUSED, 0, 0, 0, 0, 0, 0, ""};
	struct dci4_desc out;
	uint8_t buf[256];
	(void)state;
	int n = dci4_encode_desc(&d, buf, sizeof(buf));
	assert_int_equal(n, 32 + 12); /* "rx_bytes\0" padded to 12 */
	assert_int_equal((size_t)n, dci4_desc_record_len(&d));
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), n);
	assert_string_equal(out.name, "rx_bytes");
	assert_int_equal(out.size, 8);
	assert_int_equal(dci4_decode_desc(buf, (size_t)n - 4, &out), -EPROTO); /* cut */
	buf[12] = 6; /* size 6: not a multiple of 4 */
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), -ERANGE);
	buf[12] = 8;
	memset(buf + 32, 'x', 12); /* "rx_bytes" and its padding: no NUL left */
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), -EBADMSG);
	memcpy(buf + 32, "rx_bytes\0\0\0", 12);
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), n);
	buf[12] = 8;
	buf[24] = 1; /* spare */
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), -EPROTO);
	buf[24] = 0;
	buf[21] = 1; /* name_tag, whose mechanism "has yet to be determined": must be zero */
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), -EPROTO);
	buf[21] = 0;
	buf[28] = 200; /* name longer than the record */
	assert_int_equal(dci4_decode_desc(buf, (size_t)n, &out), -EPROTO);
	n = dci4_encode_desc(&u, buf, sizeof(buf));
	assert_int_equal(n, 32);
	assert_int_equal(dci4_decode_desc(buf, 32, &out), 32);
	buf[12] = 4; /* an unused statistic with a size */
	assert_int_equal(dci4_decode_desc(buf, 32, &out), -EPROTO);
	assert_int_equal(dci4_encode_desc(&d, buf, 40), -ENOSPC);
}

static void test_integers(void **state)
{
	static const uint8_t le[8] = {0xfe, 0xff, 0xff, 0xff, 0x01, 0, 0, 0};
	static const uint8_t be[8] = {0x80, 0, 0, 0, 0, 0, 0, 1};
	struct dci4_desc d = {ST_INTEGER32, 0, 1, 4, 0, 0, 0, "x"};
	bool sgn;
	uint64_t u;
	int64_t i;
	(void)state;
	assert_int_equal(dci4_value_int(&d, le, &sgn, &u, &i), 0);
	assert_true(sgn);
	assert_int_equal(i, -2);
	d.format = SIF_UNSIGNED;
	dci4_value_int(&d, le, &sgn, &u, &i);
	assert_false(sgn);
	assert_int_equal(u, 0xfffffffe);
	d.type = ST_INTEGER64;
	d.size = 8;
	d.format = SIF_BIGENDIAN;
	dci4_value_int(&d, be, &sgn, &u, &i);
	assert_int_equal(i, INT64_MIN + 1);
	d.type = ST_INTEGER8;
	d.format = 0;
	dci4_value_int(&d, le, &sgn, &u, &i);
	assert_int_equal(i, -2);
	d.format = 4; /* reserved bits */
	assert_int_equal(dci4_value_int(&d, le, &sgn, &u, &i), -EPROTO);
	d.type = ST_INTEGER64;
	d.format = 0;
	d.size = 4; /* too small for 64 bits */
	assert_int_equal(dci4_value_int(&d, le, &sgn, &u, &i), -EPROTO);
}

static void test_times(void **state)
{
	/* 1970-01-01 00:00:01 as centiseconds since 1900: (2208988800 + 1) * 100 */
	uint64_t cs = (2208988800ull + 1) * 100;
	uint8_t five[8] = {0};
	for (int k = 0; k < 5; k++)
		five[k] = (uint8_t)(cs >> (8 * k));
	five[5] = 0xAA; /* the top three bytes are ignored */
	struct dci4_desc d = {ST_TIME, STF_5BYTE, 0, 8, 0, 0, 0, "t"};
	double s;
	(void)state;
	assert_int_equal(dci4_value_time(&d, five, &s), 0);
	assert_true(s == 1.0);
	d.format = STF_MONOTONIC;
	d.size = 4;
	static const uint8_t mono[4] = {250, 0, 0, 0};
	assert_int_equal(dci4_value_time(&d, mono, &s), 0);
	assert_true(s == 2.5);
	d.format = 9;
	assert_int_equal(dci4_value_time(&d, mono, &s), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_header), cmocka_unit_test(test_info),
	    cmocka_unit_test(test_desc),   cmocka_unit_test(test_integers),
	    cmocka_unit_test(test_times),
	};
	return cmocka_run_group_tests_name("dci4_wire", tests, NULL, NULL);
}
