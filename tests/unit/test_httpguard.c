/* The request guard's rules: each phase's bound, the minimum read rate,
 * a run of pipelined responses under one deadline, idle keep-alive apart
 * from a slow head, and which connection is evicted for a new client. */
#include "helpers.h"

#include "httpguard.h"

#define S 1000000000ull

static const struct httpguard_rules rules = {
    .head_ns = 10 * S,
    .send_ns = 120 * S,
    .idle_ns = 150 * S,
    .life_ns = 3600 * S,
    .grace_ns = 5 * S,
    .min_rate = 256,
    .protect_ns = 1 * S,
    .pipeline_max = 4,
};

/* A connection accepted at 1000 s, in phase p since `since` s. */
static struct httpguard_conn conn(enum httpguard_phase p, uint64_t since)
{
	return (struct httpguard_conn){.phase = p, .born_ns = 1000 * S, .phase_ns = since * S};
}

static void test_head_bound(void **state)
{
	struct httpguard_conn c = conn(HTTPGUARD_HEAD, 1000);
	(void)state;
	assert_int_equal(httpguard_judge(&c, &rules, 1009 * S), HTTPGUARD_KEEP);
	assert_int_equal(httpguard_judge(&c, &rules, 1011 * S), HTTPGUARD_CUT_HEAD);
	/* a body and a wait for a password check have the same bound */
	c.phase = HTTPGUARD_BODY;
	assert_int_equal(httpguard_judge(&c, &rules, 1011 * S), HTTPGUARD_CUT_HEAD);
	c.phase = HTTPGUARD_AUTH;
	assert_int_equal(httpguard_judge(&c, &rules, 1011 * S), HTTPGUARD_CUT_HEAD);
	/* the exporter's own work: bounded by the scrape's deadline, not here */
	c.phase = HTTPGUARD_WORK;
	assert_int_equal(httpguard_judge(&c, &rules, 1100 * S), HTTPGUARD_KEEP);
	/* cut once: never judged again */
	c.phase = HTTPGUARD_HEAD;
	c.cut = true;
	assert_int_equal(httpguard_judge(&c, &rules, 2000 * S), HTTPGUARD_KEEP);
}

static void test_idle_keepalive(void **state)
{
	struct httpguard_conn c = conn(HTTPGUARD_IDLE, 1000);
	(void)state;
	/* a scrape a minute or two apart is no slow head */
	assert_int_equal(httpguard_judge(&c, &rules, 1120 * S), HTTPGUARD_KEEP);
	assert_int_equal(httpguard_judge(&c, &rules, 1151 * S), HTTPGUARD_CUT_IDLE);
	/* a byte arrives: a head starts, under its own bound */
	httpguard_observe(&c, 1, 0, 0, 1100 * S);
	assert_int_equal(c.phase, HTTPGUARD_HEAD);
	assert_int_equal(httpguard_judge(&c, &rules, 1111 * S), HTTPGUARD_CUT_HEAD);
	/* idle past its whole life: closed between requests */
	c = conn(HTTPGUARD_IDLE, 4500);
	assert_int_equal(httpguard_judge(&c, &rules, 4601 * S + 1), HTTPGUARD_CUT_LIFE);
}

static void test_send_rate(void **state)
{
	struct httpguard_conn c = conn(HTTPGUARD_SEND, 1000);
	(void)state;
	c.send_ns = 1000 * S;
	/* within the grace nothing is asked */
	assert_int_equal(httpguard_judge(&c, &rules, 1004 * S), HTTPGUARD_KEEP);
	/* 200 bytes a second is below 256: a slow reader */
	c.bytes_out = 200 * 6;
	assert_int_equal(httpguard_judge(&c, &rules, 1006 * S), HTTPGUARD_CUT_SLOW);
	/* 1,000 bytes a second passes the rate, not the write deadline */
	c.bytes_out = 1000 * 100;
	assert_int_equal(httpguard_judge(&c, &rules, 1100 * S), HTTPGUARD_KEEP);
	c.bytes_out = 1000 * 121;
	assert_int_equal(httpguard_judge(&c, &rules, 1121 * S), HTTPGUARD_CUT_WRITE);
	/* no TCP_INFO: no rate to judge, the deadline still holds */
	c.blind = true;
	c.bytes_out = 0;
	assert_int_equal(httpguard_judge(&c, &rules, 1100 * S), HTTPGUARD_KEEP);
	assert_int_equal(httpguard_judge(&c, &rules, 1121 * S), HTTPGUARD_CUT_WRITE);
}

static void test_pipelined_run(void **state)
{
	struct httpguard_conn c = conn(HTTPGUARD_SEND, 1000);
	(void)state;
	c.send_ns = 1000 * S;
	/* each pipelined response re-enters the send phase: the run's
	 * deadline stays where its first response put it */
	c.phase_ns = 1110 * S;
	c.bytes_out = 1000 * 121;
	assert_int_equal(httpguard_judge(&c, &rules, 1121 * S), HTTPGUARD_CUT_WRITE);
	/* libmicrohttpd handed its last byte over, the client has not read
	 * it: still sending */
	c.phase = HTTPGUARD_IDLE;
	httpguard_observe(&c, 0, 1000 * 121, 4096, 1121 * S);
	assert_int_equal(c.phase, HTTPGUARD_IDLE);
	assert_int_equal(httpguard_judge(&c, &rules, 1121 * S), HTTPGUARD_CUT_WRITE);
	/* everything read: the run is over, idle */
	httpguard_observe(&c, 0, 1000 * 121 + 4096, 0, 1122 * S);
	assert_int_equal(c.send_ns, 0);
	assert_int_equal(httpguard_judge(&c, &rules, 1122 * S), HTTPGUARD_KEEP);
}

static long pick(struct httpguard_conn *c, size_t n, uint64_t now)
{
	struct httpguard_conn *v[8];
	for (size_t i = 0; i < n; i++)
		v[i] = &c[i];
	return httpguard_pick(v, n, &rules, now);
}

static void test_evict_any_phase(void **state)
{
	struct httpguard_conn c[3] = {conn(HTTPGUARD_SEND, 1000), conn(HTTPGUARD_AUTH, 1000),
				      conn(HTTPGUARD_WORK, 1000)};
	(void)state;
	for (int i = 0; i < 3; i++)
		c[i].peers = 1;
	/* a slow reader (1,000 B/s) before a fast one, whatever its phase */
	c[0].bytes_out = 10 * 1000;
	c[1].bytes_in = 10 * 100000;
	assert_int_equal(pick(c, 3, 1010 * S), 0);
	/* a wait for a password check with little progress goes first */
	c[1].bytes_in = 200;
	assert_int_equal(pick(c, 3, 1010 * S), 1);
	/* the exporter's own work goes last, but it can go */
	c[0].cut = c[1].cut = true;
	assert_int_equal(pick(c, 3, 1010 * S), 2);
	c[2].pinned = true;
	assert_int_equal(pick(c, 3, 1010 * S), -1);
}

static void test_evict_biggest_holder(void **state)
{
	struct httpguard_conn c[3] = {conn(HTTPGUARD_IDLE, 1000), conn(HTTPGUARD_SEND, 1000),
				      conn(HTTPGUARD_HEAD, 1009)};
	(void)state;
	/* an attacker's fast reader from an address holding 16 goes before a
	 * scraper's idle keep-alive, the only one of its address */
	c[0].peers = 1;
	c[0].bytes_out = 100;
	c[1].peers = 16;
	c[1].bytes_out = 1000000;
	c[2].peers = 16;
	c[2].born_ns = 1009 * S + S / 2; /* half a second old: a head is on its way */
	assert_int_equal(pick(c, 3, 1010 * S), 1);
	/* among equals, the one slowest for its age; the young one last */
	c[1].peers = 1;
	assert_int_equal(pick(c, 3, 1010 * S), 0);
	c[0].cut = c[1].cut = true;
	assert_int_equal(pick(c, 3, 1010 * S), 2);
}

/* An address at its share: one of its own makes room for its newcomer,
 * an idle keep-alive one first, never a young one or one worked on. */
static void test_evict_own_address(void **state)
{
	struct httpguard_conn c[3] = {conn(HTTPGUARD_HEAD, 1000), conn(HTTPGUARD_IDLE, 1005),
				      conn(HTTPGUARD_WORK, 1009)};
	struct httpguard_conn *v[3] = {&c[0], &c[1], &c[2]};
	(void)state;
	c[0].bytes_in = 10; /* a slow head: fewer bytes than the idle one moved */
	c[1].bytes_in = c[1].bytes_out = 5000;
	assert_int_equal(httpguard_pick_own(v, 3, &rules, 1010 * S), 1);
	c[1].phase = HTTPGUARD_HEAD; /* no idle one: the least progress */
	assert_int_equal(httpguard_pick_own(v, 3, &rules, 1010 * S), 0);
	/* an idle one goes young too; young heads and work never */
	c[1].phase = HTTPGUARD_IDLE;
	assert_int_equal(httpguard_pick_own(v, 3, &rules, 1000 * S + S / 2), 1);
	c[1].phase = HTTPGUARD_HEAD;
	assert_int_equal(httpguard_pick_own(v, 3, &rules, 1000 * S + S / 2), -1);
	c[0].phase = c[1].phase = HTTPGUARD_WORK;
	assert_int_equal(httpguard_pick_own(v, 3, &rules, 1010 * S), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_head_bound),	      cmocka_unit_test(test_idle_keepalive),
	    cmocka_unit_test(test_send_rate),	      cmocka_unit_test(test_pipelined_run),
	    cmocka_unit_test(test_evict_any_phase),   cmocka_unit_test(test_evict_biggest_holder),
	    cmocka_unit_test(test_evict_own_address),
	};
	return cmocka_run_group_tests_name("httpguard", tests, NULL, NULL);
}
