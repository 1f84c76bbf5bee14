/* The listener: listen addresses parsed, resolved and bound as a start
 * does; what a client is refused under when it cannot be admitted (its
 * address's share, or no slot and none to evict); and, with every slot
 * taken, a new client admitted by evicting a connection of the address
 * holding the most, through a real libmicrohttpd daemon. */
#include "helpers.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include "httpguard.h"
#include "listener.h"

static void test_parse(void **state)
{
	char host[64], port[16];
	(void)state;
	assert_int_equal(
	    listener_parse_address("127.0.0.1:9100", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_string_equal(port, "9100");
	assert_int_equal(listener_parse_address("[::1]:80", host, sizeof(host), port, sizeof(port)),
			 0);
	assert_string_equal(host, "::1");
	assert_int_equal(listener_parse_address(":10187", host, sizeof(host), port, sizeof(port)),
			 0);
	assert_string_equal(host, "");
	/* a bare IPv6 address needs brackets; ports are 1 to 65535 */
	assert_int_equal(listener_parse_address("::1:80", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(listener_parse_address("h:0", host, sizeof(host), port, sizeof(port)),
			 -ERANGE);
	assert_int_equal(listener_parse_address("h:65536", host, sizeof(host), port, sizeof(port)),
			 -ERANGE);
	assert_int_equal(listener_parse_address("h:-1", host, sizeof(host), port, sizeof(port)),
			 -ERANGE);
	assert_int_equal(listener_parse_address("h", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_int_equal(listener_parse_address("[::1:80", host, sizeof(host), port, sizeof(port)),
			 -EINVAL);
	assert_non_null(strstr(listener_address_error(-ERANGE), "65535"));
}

static void test_resolve_and_bind(void **state)
{
	struct addrinfo *ai = NULL;
	char err[256], where[LISTENER_DESCRIBE_MAX];
	int family = 0;
	(void)state;
	assert_int_equal(listener_resolve("127.0.0.1:1", &ai, err, sizeof(err)), 0);
	assert_int_equal(ai->ai_family, AF_INET);
	freeaddrinfo(ai);
	assert_int_equal(listener_resolve("nonsense", &ai, err, sizeof(err)), -EINVAL);
	assert_null(ai);
	assert_non_null(strstr(err, "bad listen address 'nonsense'"));
	/* a port of the kernel's choosing is not a listen address: find a
	 * free one, then bind it as a start does */
	int probe = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	assert_int_equal(bind(probe, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(probe, (struct sockaddr *)&sin, &len), 0);
	close(probe);
	char addr[32];
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sin.sin_port));
	int fd = listener_bind(addr, &family, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(family, AF_INET);
	listener_describe(fd, where, sizeof(where));
	assert_string_equal(where, addr);
	/* the same again: busy, said with the address */
	assert_true(listener_bind(addr, &family, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, addr));
	close(fd);
}

static void test_refusal_reason(void **state)
{
	struct httpguard_rules rules = {.head_ns = 1000000000, .protect_ns = 1};
	struct httpguard_limits full_address = {.keep = 4, .most = 8, .per_address = 0};
	struct httpguard_limits no_slot = {.keep = 0, .most = 0, .per_address = 16};
	struct httpguard_limits room = {.keep = 4, .most = 8, .per_address = 16};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002)};
	struct httpguard *g;
	(void)state;
	/* an address at its share is refused as such... */
	assert_int_equal(httpguard_start(&g, &full_address, &rules), 0);
	assert_int_equal(httpguard_admit(g, (struct sockaddr *)&sin), HTTPGUARD_ADDRESS_FULL);
	httpguard_stop(g);
	/* ...a client of an address holding nothing, when no slot can be
	 * freed, is not: it had no share to exceed */
	assert_int_equal(httpguard_start(&g, &no_slot, &rules), 0);
	assert_int_equal(httpguard_admit(g, (struct sockaddr *)&sin), HTTPGUARD_NO_SLOT);
	assert_false(httpguard_evict(g));
	httpguard_stop(g);
	assert_int_equal(httpguard_start(&g, &room, &rules), 0);
	assert_int_equal(httpguard_admit(g, (struct sockaddr *)&sin), HTTPGUARD_ADMITTED);
	httpguard_stop(g);
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static char seen;
	struct MHD_Response *r;
	enum MHD_Result rc;
	(void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;

	if (!*con_cls) { /* answered once the request is complete: kept alive */
		*con_cls = &seen;
		return MHD_YES;
	}
	r = MHD_create_response_from_buffer(3, (void *)"ok\n", MHD_RESPMEM_PERSISTENT);
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* A client from `from` that asked once and read its answer: kept alive. */
static int client(const struct sockaddr_in *to, const char *from, bool ask)
{
	struct sockaddr_in me = {.sin_family = AF_INET};
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	char buf[512];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, from, &me.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)to, sizeof(*to)), 0);
	if (ask) {
		assert_int_equal(write(fd, req, sizeof(req) - 1), (ssize_t)sizeof(req) - 1);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_true(read(fd, buf, sizeof(buf)) > 0);
	}
	return fd;
}

/* Whether the exporter closed fd within 5 s. */
static bool closed(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char b;
	return poll(&p, 1, 5000) == 1 && read(fd, &b, 1) <= 0;
}

static void test_eviction(void **state)
{
	struct httpguard_rules rules = {.head_ns = 10000000000ull,
					.send_ns = 10000000000ull,
					.idle_ns = 10000000000ull,
					.life_ns = 10000000000ull,
					.protect_ns = 1,
					.pipeline_max = 4};
	struct httpguard_limits lim = {.keep = 2, .most = 2, .per_address = 16};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);
	struct httpguard *g;
	struct listener *l;
	(void)state;
	assert_int_equal(httpguard_start(&g, &lim, &rules), 0);
	struct MHD_Daemon *d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC |
		MHD_USE_POLL | MHD_USE_NO_LISTEN_SOCKET,
	    0, NULL, NULL, answer, NULL, MHD_OPTION_NOTIFY_CONNECTION, httpguard_notify, g,
	    MHD_OPTION_NOTIFY_COMPLETED, httpguard_completed, g, MHD_OPTION_END);
	assert_non_null(d);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	assert_int_equal(listener_start(&l, &fd, &d, 1, g), 0);
	/* both slots held by one address, kept alive after a request each */
	int a = client(&sin, "127.0.0.2", true), b = client(&sin, "127.0.0.2", true);
	/* a client of another address gets in, and is answered */
	int c = client(&sin, "127.0.0.3", true);
	/* by evicting one of the address holding the most, the other kept */
	bool ca = closed(a), cb = closed(b);
	assert_true(ca != cb);
	listener_stop(l);
	MHD_stop_daemon(d);
	httpguard_stop(g);
	close(a);
	close(b);
	close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_resolve_and_bind),
	    cmocka_unit_test(test_refusal_reason),
	    cmocka_unit_test(test_eviction),
	};
	return cmocka_run_group_tests_name("listener", tests, NULL, NULL);
}
