/* One DCI4 connection without blocking, against a socketpair standing in
 * for the supplier: replies arriving a byte at a time, replies that do not
 * match their request, and lengths no request allows. */
#include "helpers.h"

#include <sys/socket.h>
#include <unistd.h>

#include "dci_link.h"

struct pair {
	struct dci_link link;
	int peer;
};

static void open_pair(struct pair *p)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	dci_link_init(&p->link, NULL);
	p->link.fd = sv[0];
	p->peer = sv[1];
}

static void close_pair(struct pair *p)
{
	dci_link_free(&p->link);
	close(p->peer);
}

/* A reply header and status for op with `length` body bytes. */
static size_t reply(uint8_t *b, uint16_t op, uint32_t length, uint32_t status)
{
	dci4_put_header(b, op | DCI4_REPLY, length);
	dci4_put32(b + DCI4_HEADER_LEN, status);
	return DCI4_HEADER_LEN + 4;
}

static void test_byte_by_byte(void **state)
{
	struct pair p;
	struct dci_req r = {SA_READ, 0, 1, 16, 7}, got;
	const uint8_t *body;
	uint32_t len;
	uint8_t b[64] = {0}, req[DCI_REQ_LEN];
	(void)state;
	open_pair(&p);
	assert_int_equal(dci_link_queue(&p.link, &r), 0);
	assert_int_equal(dci_link_flush(&p.link), 0);
	assert_int_equal(read(p.peer, req, sizeof(req)), DCI_REQ_LEN);
	assert_int_equal(dci4_get32(req + DCI4_HEADER_LEN + 8), 16); /* buffer size asked */
	size_t n = reply(b, SA_READ, 12 + 8, DCI4_OK);
	dci4_put32(b + n, 2);	  /* processed */
	dci4_put32(b + n + 4, 8); /* used */
	n += 8 + 8;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(dci_link_recv(&p.link, &got, &body, &len), 0);
		assert_int_equal(write(p.peer, b + i, 1), 1);
	}
	assert_int_equal(dci_link_recv(&p.link, &got, &body, &len), 1);
	assert_int_equal(len, 20);
	assert_int_equal(got.gen, 7);
	assert_int_equal(p.link.qn, 0);
	close_pair(&p);
}

static int recv_after(struct pair *p, const struct dci_req *r, const uint8_t *b, size_t n)
{
	struct dci_req got;
	const uint8_t *body;
	uint32_t len;
	if (r)
		assert_int_equal(dci_link_queue(&p->link, r), 0);
	assert_int_equal(write(p->peer, b, n), (ssize_t)n);
	return dci_link_recv(&p->link, &got, &body, &len);
}

static void test_hostile_replies(void **state)
{
	struct pair p;
	struct dci_req info = {SP_INFO}, read = {SA_READ, 0, 0, 8};
	uint8_t b[64] = {0};
	(void)state;

	open_pair(&p); /* a reply nobody asked for */
	assert_int_equal(recv_after(&p, NULL, b, reply(b, SP_INFO, 4, 0)), -EPROTO);
	close_pair(&p);

	open_pair(&p); /* a reply to another operation */
	assert_int_equal(recv_after(&p, &info, b, reply(b, SA_READ, 4, 0)), -EPROTO);
	close_pair(&p);

	open_pair(&p); /* longer than the 8-byte buffer allows: refused before allocating */
	assert_int_equal(recv_after(&p, &read, b, reply(b, SA_READ, 12 + 9, 0)), -EMSGSIZE);
	assert_null(p.link.body);
	close_pair(&p);

	/* A whole 1 MiB buffer of values: status, processed, used and 1 MiB is
	 * the longest reply a read may have, and it is taken (the first bytes
	 * of it are in, the rest awaited); one byte more is refused. */
	struct dci_req full = {SA_READ, 0, 0, DCI4_BUFFER_MAX};
	open_pair(&p);
	assert_int_equal(recv_after(&p, &full, b, reply(b, SA_READ, 12 + DCI4_BUFFER_MAX, 0)), 0);
	close_pair(&p);
	open_pair(&p);
	assert_int_equal(recv_after(&p, &full, b, reply(b, SA_READ, 13 + DCI4_BUFFER_MAX, 0)),
			 -EMSGSIZE);
	close_pair(&p);

	open_pair(&p); /* a billion bytes claimed for SP_INFO */
	assert_int_equal(recv_after(&p, &info, b, reply(b, SP_INFO, 1000000000, 0)), -EMSGSIZE);
	close_pair(&p);

	open_pair(&p);
	assert_int_equal(recv_after(&p, &info, b, reply(b, SP_INFO, 4, DCI4_BUSY)), -EBUSY);
	close_pair(&p);

	open_pair(&p);
	assert_int_equal(recv_after(&p, &info, b, reply(b, SP_INFO, 4, DCI4_BAD_REQUEST)),
			 -EREMOTEIO);
	close_pair(&p);

	open_pair(&p); /* closed mid-reply */
	size_t n = reply(b, SP_INFO, 40, 0);
	assert_int_equal(recv_after(&p, &info, b, n), 0);
	close(p.peer);
	p.peer = -1;
	struct dci_req got;
	const uint8_t *body;
	uint32_t len;
	assert_int_equal(dci_link_recv(&p.link, &got, &body, &len), -EPIPE);
	dci_link_free(&p.link);
}

static void test_queue_cap(void **state)
{
	struct pair p;
	struct dci_req r = {SA_READ, 0, 0, 8};
	(void)state;
	open_pair(&p);
	for (int i = 0; i < DCI_LINK_QUEUE_MAX; i++)
		assert_int_equal(dci_link_queue(&p.link, &r), 0);
	assert_int_equal(dci_link_queue(&p.link, &r), -ENOSPC);
	assert_int_equal(dci_link_flush(&p.link), 0);
	assert_int_equal(p.link.outoff, p.link.outlen);
	close_pair(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_byte_by_byte),
	    cmocka_unit_test(test_hostile_replies),
	    cmocka_unit_test(test_queue_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
