/* The listener: listen addresses parsed, resolved and bound as a start
 * does, and what a client is refused under when it cannot be admitted
 * (its address's share, or no slot and none to evict). */
#include "helpers.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_resolve_and_bind),
	    cmocka_unit_test(test_refusal_reason),
	};
	return cmocka_run_group_tests_name("listener", tests, NULL, NULL);
}
