/* The DCI4 supplier library over its real socket: the protocol, the
 * partial-buffer rule, refused requests, and atomic ranges under load. */
#include "helpers.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dci4_supplier.h"

static char dir[64];

static const struct dci4_stat stats[] = {
    {ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, "pair_a"},
    {ST_INTEGER64, SIF_UNSIGNED | SIF_BIGENDIAN, 1, 8, SV_VOLATILE, "pair_b"},
    {ST_UNUSED, 0, 0, 0, 0, NULL},
    {ST_STRING, 0, 0, 16, SV_STATIC, "driver"},
    {ST_BOOLEAN, 0, 0, 4, SV_VARIABLE, "link_up"},
};

static struct dci4_supplier *open_supplier(void)
{
	struct dci4_supplier_conf c = {dir,	    "test.eth0", SPT_NETWORK_DRIVER, 100,
				       "dci4-test", "eth0",	 "A test supplier"};
	int err = 0;
	struct dci4_supplier *s = dci4_supplier_open(&c, stats, 5, &err);
	if (!s)
		fail_msg("open: %s", strerror(-err));
	assert_int_equal(dci4_supplier_start(s), 0);
	return s;
}

static int connect_supplier(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/test.eth0.sock", dir);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void read_full(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		assert_true(r > 0);
		p += r;
		n -= (size_t)r;
	}
}

/* Sends one request; returns the reply body (caller frees) and its length. */
static uint8_t *request(int fd, uint16_t op, uint32_t first, uint32_t last, uint32_t bufsize,
			uint32_t *len)
{
	uint8_t req[DCI4_HEADER_LEN + 12];
	struct dci4_header h;
	size_t n = DCI4_HEADER_LEN;

	if (op != SP_INFO) {
		dci4_put32(req + 12, first);
		dci4_put32(req + 16, last);
		dci4_put32(req + 20, bufsize);
		n += 12;
	}
	dci4_put_header(req, op, (uint32_t)(n - DCI4_HEADER_LEN));
	assert_int_equal(write(fd, req, n), (ssize_t)n);
	read_full(fd, req, DCI4_HEADER_LEN);
	assert_int_equal(dci4_get_header(req, DCI4_HEADER_LEN, &h), 0);
	assert_int_equal(h.op, op | DCI4_REPLY);
	uint8_t *body = malloc(h.length);
	read_full(fd, body, h.length);
	*len = h.length;
	return body;
}

static void test_protocol(void **state)
{
	struct dci4_supplier *s = open_supplier();
	int fd = connect_supplier();
	struct dci4_info info;
	struct dci4_desc d;
	uint32_t len;
	(void)state;

	uint8_t *b = request(fd, SP_INFO, 0, 0, 0, &len);
	assert_int_equal(dci4_decode_info(b, len, &info), 0);
	assert_int_equal(info.max_stat, 4);
	assert_int_equal(info.type, SPT_NETWORK_DRIVER);
	assert_string_equal(info.title, "eth0");
	free(b);

	b = request(fd, SA_DESCRIBE, 0, 4, 4096, &len);
	assert_int_equal(dci4_get32(b), DCI4_OK);
	assert_int_equal(dci4_get32(b + 4), 5);
	size_t off = 12;
	for (int i = 0; i < 5; i++) {
		int n = dci4_decode_desc(b + off, len - off, &d);
		assert_true(n > 0);
		assert_int_equal(d.type, stats[i].type);
		off += (size_t)n;
	}
	assert_int_equal(off, len);
	free(b);

	/* The partial-buffer rule: 50 bytes hold one record (40), not two. */
	b = request(fd, SA_DESCRIBE, 0, 4, 50, &len);
	assert_int_equal(dci4_get32(b + 4), 1);
	assert_int_equal(dci4_get32(b + 8), 40);
	free(b);

	uint64_t one[2] = {5, 7};
	dci4_add(s, 2, (const uint32_t[]){0, 1}, one);
	dci4_set(s, 3, "virtio_net", 11);
	dci4_set(s, 4, &(uint32_t){1}, 4);
	b = request(fd, SA_READ, 0, 4, 4096, &len);
	assert_int_equal(dci4_get32(b + 4), 5);
	assert_int_equal(dci4_get32(b + 8), 8 + 8 + 0 + 16 + 4); /* ST_UNUSED takes 0 bytes */
	bool sgn;
	uint64_t u;
	int64_t i;
	assert_int_equal(
	    dci4_value_int(
		&(struct dci4_desc){.type = ST_INTEGER64, .format = SIF_UNSIGNED, .size = 8},
		b + 12, &sgn, &u, &i),
	    0);
	assert_int_equal(u, 5);
	assert_int_equal(dci4_value_int(&(struct dci4_desc){.type = ST_INTEGER64,
							    .format = SIF_UNSIGNED | SIF_BIGENDIAN,
							    .size = 8},
					b + 20, &sgn, &u, &i),
			 0);
	assert_int_equal(u, 7);
	assert_string_equal((const char *)b + 28, "virtio_net");
	assert_int_equal(b[44], 1);
	free(b);

	/* Reading a range takes all of it, or as much as fits: values, too. */
	b = request(fd, SA_READ, 2, 4, 8, &len);
	assert_int_equal(dci4_get32(b + 4), 1); /* the unused one fits in 0; the string does not */
	free(b);
	close(fd);
	dci4_supplier_close(s);
}

static void test_refused(void **state)
{
	struct dci4_supplier *s = open_supplier();
	int fd = connect_supplier();
	uint32_t len;
	(void)state;
	uint8_t *b = request(fd, SA_READ, 3, 9, 4096, &len); /* beyond max_stat */
	assert_int_equal(dci4_get32(b), DCI4_BAD_REQUEST);
	free(b);
	b = request(fd, SA_READ, 3, 1, 4096, &len); /* first > last */
	assert_int_equal(dci4_get32(b), DCI4_BAD_REQUEST);
	free(b);
	b = request(fd, SA_DESCRIBE, 0, 0, DCI4_BUFFER_MAX + 1, &len);
	assert_int_equal(dci4_get32(b), DCI4_BAD_REQUEST);
	free(b);
	/* Garbage: the supplier answers unsupported and hangs up; it keeps serving others. */
	assert_int_equal(write(fd, "GARBAGE GARBAGE!", 16), 16);
	uint8_t h[DCI4_HEADER_LEN + 4];
	read_full(fd, h, sizeof(h));
	assert_int_equal(dci4_get32(h + DCI4_HEADER_LEN), DCI4_UNSUPPORTED);
	assert_true(read(fd, h, 1) <= 0); /* EOF, or a reset: unread bytes were left */
	close(fd);
	fd = connect_supplier();
	b = request(fd, SP_INFO, 0, 0, 0, &len);
	free(b);
	close(fd);
	dci4_supplier_close(s);
	char path[128];
	snprintf(path, sizeof(path), "%s/test.eth0.sock", dir);
	assert_int_equal(access(path, F_OK), -1); /* the socket is removed */
}

#define UPDATES 200000

struct load {
	struct dci4_supplier *s;
	volatile bool stop;
	long torn, reads, updates;
};

/* Updates until both it has made UPDATES and the readers have read often
 * enough that the two overlapped. */
static void *updater(void *arg)
{
	struct load *l = arg;
	static const uint32_t pair[2] = {0, 1};
	static const uint64_t ones[2] = {1, 1};
	long n = 0;
	for (; n < UPDATES || __atomic_load_n(&l->reads, __ATOMIC_RELAXED) < 200; n++)
		dci4_add(l->s, 2, pair, ones);
	__atomic_add_fetch(&l->updates, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *reader(void *arg)
{
	struct load *l = arg;
	int fd = connect_supplier();
	uint32_t len;
	while (!l->stop) {
		uint8_t *b = request(fd, SA_READ, 0, 1, 16, &len);
		uint64_t a = 0, bb = 0;
		memcpy(&a, b + 12, 8);
		for (int k = 0; k < 8; k++)
			bb = bb << 8 | b[20 + k];
		if (a != bb)
			__atomic_add_fetch(&l->torn, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&l->reads, 1, __ATOMIC_RELAXED);
		free(b);
	}
	close(fd);
	return NULL;
}

/* Threads add to a pair in a tight loop while readers read the range: no
 * read ever sees one half of an update. */
static void test_atomic_pairs(void **state)
{
	struct load l = {.s = open_supplier()};
	pthread_t up[2], rd[2];
	uint32_t len;
	(void)state;
	for (int i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader, &l);
	for (int i = 0; i < 2; i++)
		pthread_create(&up[i], NULL, updater, &l);
	for (int i = 0; i < 2; i++)
		pthread_join(up[i], NULL);
	l.stop = true;
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	assert_int_equal(l.torn, 0);
	assert_true(l.reads >= 200);
	int fd = connect_supplier();
	uint8_t *b = request(fd, SA_READ, 0, 0, 8, &len);
	uint64_t a;
	memcpy(&a, b + 12, 8);
	assert_int_equal(a, l.updates); /* nothing lost in the merges */
	free(b);
	close(fd);
	dci4_supplier_close(l.s);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/dci4-test.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_protocol),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_atomic_pairs),
	};
	return cmocka_run_group_tests_name("dci4_supplier", tests, setup, teardown);
}
