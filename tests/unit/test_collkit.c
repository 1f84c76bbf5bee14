/* lib/collkit, what collectors share: deferred drops never lose a reason,
 * the family writer's vote and order, exact or scaled integers, the
 * worker's one stop rule (it always joins), and the growable array's
 * doubling, cap and overflow checks. */
#include "helpers.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "droptab.h"
#include "utf8.h"
#include "famgroup.h"
#include "growarr.h"
#include "labelprefix.h"
#include "worker.h"

/* A cut keeps whole characters; an invalid byte is one character. */
static void test_utf8_cut(void **state)
{
	(void)state;
	assert_int_equal(utf8_cut("abc", 2), 2);
	assert_int_equal(utf8_cut("abc", 9), 3);
	assert_int_equal(utf8_cut("a\xc3\xa9", 2), 1); /* not inside the é */
	assert_int_equal(utf8_cut("a\xc3\xa9", 3), 3);
	assert_int_equal(utf8_cut("a\xe2\x80\xae", 3), 1); /* a three-byte one */
	assert_int_equal(utf8_cut("a\xff\xfe\xc3", 3), 3); /* invalid: byte by byte */
	assert_int_equal(utf8_cut("\xc3", 1), 1);	   /* a lone lead byte */
	assert_int_equal(utf8_seq((const unsigned char *)"\xc0\x80", 2), 0);	 /* overlong */
	assert_int_equal(utf8_seq((const unsigned char *)"\xed\xa0\x80", 3), 0); /* surrogate */
	assert_int_equal(utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
}

static void test_droptab_counts_past_its_size(void **state)
{
	static char reasons[DROPTAB_REASONS_MAX + 2][16];
	struct droptab t = {0};
	struct capture c;
	(void)state;

	for (size_t i = 0; i < DROPTAB_REASONS_MAX + 2; i++) {
		snprintf(reasons[i], sizeof(reasons[i]), "reason_%zu", i);
		droptab_add(&t, reasons[i], i + 1);
	}
	droptab_add(&t, "reason_0", 10); /* another pointer, the same text */
	assert_int_equal(t.slot[0].n, 11);
	assert_string_equal(t.slot[DROPTAB_REASONS_MAX - 1].reason, "reason_31");
	assert_int_equal(t.other, 33 + 34); /* the two past the table */
	capture_begin(&c, EXPO_TEXT, 1 << 20);
	droptab_flush(&t, &c.em.pub);
	capture_end(&c);
	uint64_t total = 0;
	for (size_t i = 0; i < c.em.ndrops; i++)
		total += c.em.drops[i].n;
	assert_int_equal(total, 34 * 35 / 2 + 10); /* every count reached the emitter */
	assert_int_equal(capture_drops(&c, "reason_0"), 11);
	capture_free(&c);
	for (size_t i = 0; i < DROPTAB_REASONS_MAX; i++) /* flushed: empty again */
		assert_null(t.slot[i].reason);
	assert_int_equal(t.other, 0);
}

/* A synthetic source: a name, whether it answered, and per statistic a
 * metric name and type. */
struct src {
	const char *name;
	bool live;
	const char *metric[2];
	enum bs_metric_type type[2];
	uint64_t value[2];
};

static const struct src *src_of(const struct famgroup_member *m)
{
	return m->src;
}

static const char *t_metric(const struct famgroup_member *m)
{
	return src_of(m)->metric[m->stat];
}

static int t_cmp(const struct famgroup_member *a, const struct famgroup_member *b)
{
	return strcmp(src_of(a)->name, src_of(b)->name);
}

static bool t_live(const struct famgroup_member *m)
{
	return src_of(m)->live;
}

static void t_head(const struct famgroup_member *m, struct bs_family *f)
{
	*f = (struct bs_family){t_metric(m), NULL, NULL, src_of(m)->type[m->stat]};
}

static void t_help(const struct famgroup_member *m, void *ctx, char *out, size_t cap)
{
	(void)ctx;
	snprintf(out, cap, "defined by %s", src_of(m)->name);
}

static void t_write(const struct famgroup_member *m, void *ctx, struct bs_emitter *em)
{
	struct bs_label l = {"src", src_of(m)->name};
	(*(int *)ctx)++;
	bs_sample_u64(em, &l, 1, src_of(m)->value[m->stat]);
}

static const struct famgroup_ops t_ops = {t_metric, t_cmp, t_live, t_head, t_help, t_write};

static const char *emit_all(struct src *s, size_t n, uint64_t epoch, struct famgroup *g,
			    struct capture *c, int *writes)
{
	if (famgroup_stale(g, epoch)) {
		struct famgroup_member *m = famgroup_begin(2 * n);
		size_t k = 0;
		assert_non_null(m);
		for (size_t i = 0; i < n; i++)
			for (uint32_t j = 0; j < 2; j++)
				if (s[i].metric[j])
					m[k++] = (struct famgroup_member){&s[i], j};
		famgroup_commit(g, m, k, epoch, &t_ops);
	}
	capture_begin(c, EXPO_TEXT, 1 << 20);
	famgroup_emit(g, &t_ops, writes, &c->em.pub);
	return capture_end(c);
}

static void test_famgroup_majority_and_order(void **state)
{
	/* Listed out of order; "c" claims b's gauge as a counter, "d" did not
	 * answer (its vote and its sample do not count). */
	struct src s[] = {
	    {"c", true, {"m_x", NULL}, {BS_COUNTER}, {30}},
	    {"a", true, {"m_x", "m_a"}, {BS_GAUGE, BS_GAUGE}, {10, 1}},
	    {"d", false, {"m_x", NULL}, {BS_COUNTER}, {40}},
	    {"b", true, {"m_x", NULL}, {BS_GAUGE}, {20}},
	};
	struct famgroup g = {0};
	struct capture c;
	int writes = 0;
	(void)state;

	const char *text = emit_all(s, 4, 1, &g, &c, &writes);
	assert_string_equal(text, "# HELP m_a defined by a\n# TYPE m_a gauge\nm_a{src=\"a\"} 1\n"
				  "# HELP m_x defined by a\n# TYPE m_x gauge\nm_x{src=\"a\"} 10\n"
				  "m_x{src=\"b\"} 20\n");
	assert_int_equal(capture_drops(&c, "family_conflict"), 1);
	assert_int_equal(writes, 3);
	capture_free(&c);

	/* The same epoch reuses the order even if the sources changed; a new
	 * one rebuilds. A tie (one gauge, one counter) keeps the first. */
	s[3].live = false;
	text = emit_all(s, 4, 1, &g, &c, &writes);
	assert_string_equal(strstr(text, "# TYPE m_x"), "# TYPE m_x gauge\nm_x{src=\"a\"} 10\n");
	assert_null(strstr(text, "src=\"c\""));
	capture_free(&c);
	s[1].metric[1] = NULL;
	text = emit_all(s, 4, 2, &g, &c, &writes);
	assert_null(strstr(text, "m_a"));
	capture_free(&c);

	/* No live member: no family at all. */
	for (size_t i = 0; i < 4; i++)
		s[i].live = false;
	text = emit_all(s, 4, 2, &g, &c, &writes);
	assert_string_equal(text, "");
	capture_free(&c);
	famgroup_free(&g);
}

static void test_famgroup_sample_int(void **state)
{
	struct capture c;
	(void)state;

	capture_begin(&c, EXPO_TEXT, 1 << 20);
	bs_family(&c.em.pub, "v", BS_GAUGE, NULL, "h");
	struct bs_label l = {"k", "u"};
	famgroup_sample_int(&c.em.pub, &l, 1, false, UINT64_MAX, 1);
	l.value = "s";
	famgroup_sample_int(&c.em.pub, &l, 1, true, (uint64_t)-5, 1);
	l.value = "scaled";
	famgroup_sample_int(&c.em.pub, &l, 1, true, (uint64_t)-5, 0.5);
	assert_string_equal(capture_end(&c), "# HELP v h\n# TYPE v gauge\n"
					     "v{k=\"u\"} 18446744073709551615\n"
					     "v{k=\"s\"} -5\nv{k=\"scaled\"} -2.5\n");
	capture_free(&c);
}

/* Two sources' series, each source's labels given through labelprefix. */
static const char *prefixed_text(struct capture *c, const struct bs_host *host,
				 const struct bs_emitter_ops *ops, size_t *skipped)
{
	static const struct bs_label src[2][2] = {{{"vm", "a"}, {"uuid", "1"}},
						  {{"vm", "b"}, {"uuid", "2"}}};
	struct labelprefix p;

	capture_begin(c, EXPO_TEXT, 1 << 20);
	if (ops)
		c->em.pub.ops = ops;
	labelprefix_init(&p, host);
	bs_family(&c->em.pub, "v", BS_GAUGE, NULL, "h");
	*skipped = 0;
	for (int s = 0; s < 2; s++)
		for (int cpu = 0; cpu < 2; cpu++) {
			struct bs_label l[3] = {src[s][0], src[s][1], {"cpu", cpu ? "1" : "0"}};
			size_t skip = labelprefix_use(&p, &c->em.pub, src[s], l, 2);
			*skipped += skip;
			bs_sample_u64(&c->em.pub, l + skip, 3 - skip, (uint64_t)cpu);
		}
	labelprefix_end(&p, &c->em.pub);
	bs_family(&c->em.pub, "w", BS_GAUGE, NULL, "h");
	bs_sample_u64(&c->em.pub, NULL, 0, 9); /* after the end: no prefix */
	return capture_end(c);
}

static void test_labelprefix_falls_back(void **state)
{
	const char *want =
	    "# HELP v h\n# TYPE v gauge\n"
	    "v{vm=\"a\",uuid=\"1\",cpu=\"0\"} 0\nv{vm=\"a\",uuid=\"1\",cpu=\"1\"} 1\n"
	    "v{vm=\"b\",uuid=\"2\",cpu=\"0\"} 0\nv{vm=\"b\",uuid=\"2\",cpu=\"1\"} 1\n"
	    "# HELP w h\n# TYPE w gauge\nw 9\n";
	struct bs_host now = {BS_COLLECTOR_ABI_VERSION, NULL, 0}, old = {3, NULL, 0};
	struct capture c;
	size_t skipped;
	(void)state;

	assert_string_equal(prefixed_text(&c, &now, NULL, &skipped), want);
	assert_int_equal(skipped, 8);
	capture_free(&c);
	/* A host before ABI 4: its emitter's table has no prefix to read. */
	assert_string_equal(prefixed_text(&c, &old, NULL, &skipped), want);
	assert_int_equal(skipped, 0);
	capture_free(&c);
	/* An emitter that must see whole label sets leaves it NULL. */
	struct bs_emitter_ops whole = *c.em.pub.ops;
	whole.prefix = NULL;
	assert_string_equal(prefixed_text(&c, &now, &whole, &skipped), want);
	assert_int_equal(skipped, 0);
	capture_free(&c);
}

static void *wait_for_stop(void *arg)
{
	int epfd = *(int *)arg;
	struct epoll_event ev;

	while (epoll_wait(epfd, &ev, 1, -1) != 1 || ev.data.u32 != 7)
		;
	return NULL;
}

static void *deaf(void *arg)
{
	(void)arg;
	for (;;)
		sleep(1); /* never looks at its stop fd; a cancellation point */
	return NULL;
}

static void test_worker_stop_always_joins(void **state)
{
	struct worker w;
	int epfd = epoll_create1(EPOLL_CLOEXEC);
	uint64_t almost_full = UINT64_MAX - 1;
	(void)state;

	worker_init(&w);
	worker_stop(&w); /* never opened: nothing to do */
	assert_int_equal(worker_open(&w, epfd, (epoll_data_t){.u32 = 7}), 0);
	assert_int_equal(worker_start(&w, wait_for_stop, &epfd), 0);
	worker_stop(&w);
	assert_false(w.started);
	assert_int_equal(w.stopfd, -1);
	close(epfd);

	/* A stop that cannot be written (the counter is full): the thread is
	 * cancelled and still joined before worker_stop returns. */
	epfd = epoll_create1(EPOLL_CLOEXEC);
	worker_init(&w);
	assert_int_equal(worker_open(&w, epfd, (epoll_data_t){.u32 = 7}), 0);
	assert_int_equal(write(w.stopfd, &almost_full, sizeof(almost_full)), sizeof(almost_full));
	assert_int_equal(worker_start(&w, deaf, NULL), 0);
	worker_stop(&w);
	assert_false(w.started);
	close(epfd);
}

/* Doubling from 4, every element kept through each move, the last growth
 * clamped to the cap rather than doubled past it. */
static void test_growarr_grows_by_doubling(void **state)
{
	struct growarr a;
	(void)state;

	growarr_init(&a, sizeof(uint32_t), 1000);
	assert_null(a.p);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(growarr_push(&a, &i), 0);
		assert_int_equal(a.n, i + 1);
		if (i == 0)
			assert_int_equal(a.cap, 4);
		else if (i == 4)
			assert_int_equal(a.cap, 8);
		else if (i == 600)
			assert_int_equal(a.cap, 1000); /* 512 full: 1024 clamped */
	}
	const uint32_t *v = a.p;
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	growarr_free(&a);
	assert_null(a.p);
	assert_int_equal(a.n, 0);
	assert_int_equal(a.cap, 0);
}

/* Past the cap: -E2BIG, and the array is as it was. */
static void test_growarr_cap(void **state)
{
	struct growarr a;
	uint64_t x = 7;
	(void)state;

	growarr_init(&a, sizeof(x), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(growarr_push(&a, &x), 0);
	assert_int_equal(a.cap, 5);
	x = 8;
	assert_int_equal(growarr_push(&a, &x), -E2BIG);
	assert_int_equal(growarr_insert(&a, 0, &x), -E2BIG);
	assert_int_equal(growarr_reserve(&a, 6), -E2BIG);
	assert_int_equal(growarr_reserve(&a, 5), 0);
	assert_int_equal(a.n, 5);
	assert_int_equal(a.cap, 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(((uint64_t *)a.p)[i], 7);
	a.n--; /* the owner drops one: there is room again */
	assert_int_equal(growarr_push(&a, &x), 0);
	assert_int_equal(((uint64_t *)a.p)[4], 8);
	growarr_free(&a);

	growarr_init(&a, sizeof(x), 0); /* a cap of none takes nothing */
	assert_int_equal(growarr_push(&a, &x), -E2BIG);
	assert_int_equal(growarr_reserve(&a, 1), -E2BIG);
	assert_null(a.p);
	growarr_free(&a);
}

/* A cap whose bytes overflow is lowered to what fits, so no count past it
 * can wrap the multiplication into a small allocation. */
static void test_growarr_overflow(void **state)
{
	struct growarr a;
	(void)state;

	growarr_init(&a, 24, SIZE_MAX);
	assert_int_equal(a.max, SIZE_MAX / 24);
	assert_int_equal(growarr_reserve(&a, SIZE_MAX / 24 + 1), -E2BIG);
	assert_int_equal(growarr_reserve(&a, SIZE_MAX / 3), -E2BIG); /* its bytes would wrap */
	assert_int_equal(growarr_reserve(&a, SIZE_MAX), -E2BIG);
	assert_int_equal(growarr_room(&a, SIZE_MAX / 24 + 1), -E2BIG);
	assert_null(a.p);
	assert_int_equal(a.cap, 0);
	growarr_free(&a);

	/* n + more would wrap to a count that already fits */
	char x = 'x';
	growarr_init(&a, 1, SIZE_MAX);
	assert_int_equal(growarr_push(&a, &x), 0);
	assert_int_equal(growarr_room(&a, SIZE_MAX), -E2BIG);
	assert_int_equal(a.cap, 4);
	growarr_free(&a);
}

/* Room made ahead, counted in by the owner; removals keep the order. */
static void test_growarr_room_and_remove(void **state)
{
	struct growarr a;
	(void)state;

	growarr_init(&a, sizeof(int), 100);
	assert_int_equal(growarr_room(&a, 0), 0);
	assert_null(a.p);
	assert_int_equal(growarr_room(&a, 1), 0);
	assert_int_equal(a.cap, 4);
	assert_int_equal(growarr_room(&a, 9), 0); /* 4, 8, 16 */
	assert_int_equal(a.cap, 16);
	for (int i = 0; i < 16; i++)
		((int *)a.p)[i] = i;
	a.n = 16;
	assert_int_equal(growarr_room(&a, 85), -E2BIG);
	assert_int_equal(growarr_room(&a, 84), 0); /* 32, 64, then the cap */
	assert_int_equal(a.cap, 100);
	growarr_remove(&a, 0);
	growarr_remove(&a, 14); /* the last */
	growarr_remove(&a, 5);
	assert_int_equal(a.n, 13);
	assert_memory_equal(a.p, ((int[]){1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14}),
			    13 * sizeof(int));
	growarr_free(&a);
}

/* Exact reservations, inserts in order, a block handed over, and frees of
 * arrays that hold nothing. */
static void test_growarr_reserve_insert_take_free(void **state)
{
	struct growarr a, zeroed = {0};
	int x;
	(void)state;

	growarr_free(&zeroed); /* zeroed: nothing to free */
	growarr_free(&zeroed);
	growarr_init(&a, sizeof(int), 100);
	growarr_free(&a); /* made, never grown */
	assert_int_equal(growarr_reserve(&a, 10), 0);
	assert_int_equal(a.cap, 10); /* exactly */
	assert_int_equal(a.n, 0);
	assert_int_equal(growarr_reserve(&a, 3), 0); /* never shrinks */
	assert_int_equal(a.cap, 10);
	int order[] = {5, 1, 3};
	size_t at[] = {0, 0, 1};
	for (int i = 0; i < 3; i++)
		assert_int_equal(growarr_insert(&a, at[i], &order[i]), 0);
	x = 9;
	assert_int_equal(growarr_insert(&a, 4, &x), -EINVAL); /* past n */
	assert_int_equal(growarr_insert(&a, 3, &x), 0);	      /* at n: the end */
	assert_memory_equal(a.p, ((int[]){1, 3, 5, 9}), 4 * sizeof(int));
	for (int i = 0; i < 7; i++)
		assert_int_equal(growarr_push(&a, &x), 0);
	assert_int_equal(a.cap, 20); /* the exact 10 full: doubled */
	int *block = growarr_take(&a);
	assert_null(a.p);
	assert_int_equal(a.n, 0);
	assert_int_equal(block[2], 5);
	free(block);
	assert_null(growarr_take(&a));		   /* nothing added since */
	assert_int_equal(growarr_push(&a, &x), 0); /* taken: usable again */
	growarr_free(&a);
	growarr_free(&a);
}

/* GROWARR_OF: an owner's array indexed through its typed view. */
struct holder {
	int before;
	GROWARR_OF(double, val, vals);
	int after;
};

static void test_growarr_typed_view(void **state)
{
	struct holder h = {.before = 1, .after = 2};
	(void)state;

	growarr_init(&h.vals, sizeof(double), 64);
	for (int i = 0; i < 40; i++) {
		double d = i / 4.0;
		assert_int_equal(growarr_push(&h.vals, &d), 0);
	}
	assert_ptr_equal(h.val, h.vals.p);
	for (int i = 0; i < 40; i++)
		assert_true(h.val[i] == i / 4.0);
	assert_int_equal(h.before + h.after, 3);
	growarr_free(&h.vals);
	assert_null(h.val);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_utf8_cut),
	    cmocka_unit_test(test_droptab_counts_past_its_size),
	    cmocka_unit_test(test_famgroup_majority_and_order),
	    cmocka_unit_test(test_famgroup_sample_int),
	    cmocka_unit_test(test_labelprefix_falls_back),
	    cmocka_unit_test(test_worker_stop_always_joins),
	    cmocka_unit_test(test_growarr_grows_by_doubling),
	    cmocka_unit_test(test_growarr_cap),
	    cmocka_unit_test(test_growarr_overflow),
	    cmocka_unit_test(test_growarr_reserve_insert_take_free),
	    cmocka_unit_test(test_growarr_room_and_remove),
	    cmocka_unit_test(test_growarr_typed_view),
	};
	return cmocka_run_group_tests_name("collkit", tests, NULL, NULL);
}
