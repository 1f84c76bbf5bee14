/* The processing between scrapes, fed by hand at set times: X from value,
 * delta and rate (a counter reset included), selection, what /metrics and
 * /statistics/ show, the caps (sources, expiry), the template's sample
 * rate, write permission, configuration errors; and a sampler racing a
 * reader, which must never see a statistic half updated. */
#include "helpers.h"

#include <pthread.h>
#include <unistd.h>

#include "config.h"
#include "proc.h"

#define S(sec) ((uint64_t)((sec)*1e9 + 0.5))

static struct config *cfg;

static struct proc *make(const char *yaml)
{
	char err[CONF_ERR_MAX];
	struct proc *p;

	cfg = config_load("t.yml", yaml, "/plugins", err, sizeof(err));
	if (!cfg)
		fail_msg("config: %s", err);
	assert_non_null(cfg->processing);
	assert_int_equal(proc_new(cfg->processing, &p), 0);
	return p;
}

static void done(struct proc *p)
{
	proc_free(p);
	config_free(cfg);
}

static char *metrics(struct proc *p)
{
	struct capture c;
	capture_begin(&c, EXPO_TEXT, 1 << 24);
	assert_int_equal(proc_source.collect(p, &c.em.pub), 0);
	char *text = strdup(capture_end(&c));
	capture_free(&c);
	return text;
}

static char *iface(struct proc *p, const char *method, const char *path, const char *body,
		   bool may_write, uint64_t now, int *status)
{
	struct proc_reply r;
	proc_iface(p, method, path, body, may_write, now, &r);
	*status = r.status;
	char *text = strdup(r.text.p ? r.text.p : "");
	statproc_text_free(&r.text);
	return text;
}

static const char *delta_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: ex\n"
    "      select: 'kvm_exits_total{vm=~\"web.*\"}'\n"
    "      x: delta\n"
    "      statistics:\n"
    "        - {name: ex_n, type: value}\n"
    "        - {name: ex_r, type: range, range_min: 0, range_max: 100}\n"
    "      template:\n"
    "        stats: [sum, max]\n";

static void test_delta_and_reset(void **state)
{
	struct proc *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}}, db[] = {{"vm", "db1"}};
	int status;
	(void)state;

	assert_true(proc_feed(p, "kvm_exits_total", web, 1, 10, S(0))); /* the base: no X */
	assert_false(proc_feed(p, "kvm_exits_total", db, 1, 10, S(0))); /* not selected */
	proc_feed(p, "kvm_exits_total", web, 1, 13, S(1));		/* 3 */
	proc_feed(p, "kvm_exits_total", web, 1, 20, S(2));		/* 7 */
	proc_feed(p, "kvm_exits_total", web, 1, 5, S(3)); /* went back: reset, X = 5 */
	char *text = iface(p, "GET", "ex/0/data", NULL, false, S(4), &status);
	assert_int_equal(status, 200);
	assert_string_equal(text, "ex_n 3\nex_r 3 3 5.000 7\nex_sum 15\nex_max 7\n");
	free(text);
	text = metrics(p);
	assert_non_null(
	    strstr(text, "ex_n_total{vm=\"web1\",source_metric=\"kvm_exits_total\"} 3\n"));
	assert_non_null(
	    strstr(text, "ex_r_avg{vm=\"web1\",source_metric=\"kvm_exits_total\"} 5\n"));
	assert_non_null(
	    strstr(text, "# TYPE ex_sum_of_values_total counter\n")); /* a sum of deltas */
	assert_non_null(strstr(text, "binstat_processing_sources 1\n"));
	assert_null(strstr(text, "db1"));
	free(text);
	text = iface(p, "GET", "", NULL, false, S(4), &status);
	assert_string_equal(text, "ex/0 kvm_exits_total{vm=\"web1\"}\n");
	free(text);
	done(p);
}

static void test_rate_and_value(void **state)
{
	struct proc *p = make("processing:\n  groups:\n"
			      "    - {name: r, select: c_total, x: rate, x_scale: 1000,\n"
			      "       statistics: [{name: r_r, type: range}]}\n"
			      "    - {name: v, select: g, statistics: [{name: v_r, type: range}],\n"
			      "       template: {stats: [{tdigest: {quantiles: [0.5]}}]}}\n");
	int status;
	(void)state;

	proc_feed(p, "c_total", NULL, 0, 0, S(0));
	proc_feed(p, "c_total", NULL, 0, 10, S(0.5));  /* 20/s, scaled: 20000 */
	proc_feed(p, "c_total", NULL, 0, 10, S(0.75)); /* 0/s */
	proc_feed(p, "g", NULL, 0, 2.4, S(0));	       /* value: rounded for seed 001 */
	proc_feed(p, "g", NULL, 0, -7, S(1));
	char *text = iface(p, "GET", "r/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "r_r 2 0 10000.000 20000\n");
	free(text);
	text = iface(p, "GET", "v/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "v_r 2 -7 -2.500 2\nv_tdigest 0.5 2\nv_tdigest count 2\n"
				  "v_tdigest sum -5\n");
	free(text);
	done(p);
}

static void test_caps(void **state)
{
	struct proc *p =
	    make("processing:\n  max_sources: 2\n  source_ttl: 10s\n  groups:\n"
		 "    - {name: g, select: 'm{i!=\"x\"}', statistics: [{name: s, type: value}],\n"
		 "       template: {sample_pct: 0, stats: [sum]}}\n");
	struct bs_label l[] = {{"i", "1"}};
	int status;
	(void)state;

	for (int i = 1; i <= 3; i++) {
		char v[2] = {(char)('0' + i), 0};
		l[0].value = v;
		proc_feed(p, "m", l, 1, 1, S(0));
	}
	assert_int_equal(p->srcs.n, 2);
	assert_int_equal(p->count.too_many_sources, 1);
	/* sample_pct 0: no source is sampled by the template */
	char *text = iface(p, "GET", "g/1/definition", NULL, false, S(1), &status);
	assert_non_null(strstr(text, "# template=g sampled=0 relative=0 updates=0\n"));
	free(text);
	text = metrics(p);
	assert_null(strstr(text, "g_sum"));
	free(text);
	/* a source not seen for source_ttl is forgotten */
	l[0].value = "1";
	proc_feed(p, "m", l, 1, 1, S(5));
	proc_tick(p, S(10.5));
	assert_int_equal(p->srcs.n, 1);
	assert_int_equal(p->count.expired_sources, 1);
	done(p);
}

static void test_interface_writes(void **state)
{
	struct proc *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	int status;
	(void)state;

	proc_feed(p, "kvm_exits_total", web, 1, 1, S(0));
	proc_feed(p, "kvm_exits_total", web, 1, 2, S(1));
	free(iface(p, "POST", "ex/0/definition", "on=0", false, S(2), &status));
	assert_int_equal(status, 403); /* not an allowed client */
	char *text = iface(p, "POST", "ex/0/definition",
			   "name=ex_r range_max=50\nname=ex_r type=list\nname=zz on=1\ndata=reset",
			   true, S(2), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "line 2: a new type needs all its type-specific attributes\n"
				  "line 3: no statistic of that name\n");
	free(text);
	text = iface(p, "GET", "ex/0/data", NULL, false, S(3), &status);
	/* line 1 and line 4 applied: range_max 50, and everything reset, the
	 * template's statistics too */
	assert_string_equal(text, "ex_n 0\nex_r 0 0 0.000 0\nex_sum 0\n"
				  "ex_max -9223372036854775808\n");
	free(text);
	text = iface(p, "GET", "ex/0/definition", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "name=ex_r on=1 type=range range_min=0 range_max=50 "));
	free(text);
	free(iface(p, "POST", "ex/0/snapshot", NULL, true, S(3), &status));
	assert_int_equal(status, 200);
	free(iface(p, "GET", "ex/7/data", NULL, false, S(3), &status));
	assert_int_equal(status, 404);
	free(iface(p, "POST", "ex/0/data", "", true, S(3), &status));
	assert_int_equal(status, 405);
	done(p);
}

static void expect_conf_error(const char *yaml, const char *want)
{
	char err[CONF_ERR_MAX];
	struct config *c = config_load("t.yml", yaml, "/p", err, sizeof(err));
	if (c)
		fail_msg("accepted: %s", yaml);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_configuration_errors(void **state)
{
	(void)state;
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: '{}', "
			  "statistics: [{name: s, type: value}]}\n",
			  "t.yml:3:25: select: the selector must have a matcher");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m}\n",
			  "group 'g' has neither statistics nor a template");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m, statistics: "
			  "[{name: s, type: array, range_min: 0, range_max: 100000}]}\n",
			  "statistic 's': an array may have at most 4096 intervals");
	expect_conf_error("processing:\n  groups:\n    - {name: g, select: m, template: "
			  "{stats: [{crhist: {scheme: lin, lb: 0, ub: 10, stepinc: 0}}]}}\n",
			  "'stepinc' must be between");
	expect_conf_error("processing:\n  write: true\n  groups:\n    - {name: g, select: m, "
			  "statistics: [{name: s, type: value}]}\n",
			  "write: true needs write_allow");
	expect_conf_error("processing:\n  write_allow: [10.0.0.0/33]\n  groups: []\n",
			  "an IPv4 prefix is 0 to 32");
	expect_conf_error("collectors:\n  processing: {}\n", "'processing' is the built-in");
	expect_conf_error("processing:\n  sample_interval: 10ms\n  groups: []\n",
			  "'sample_interval' must be between 0.05 and 60");
}

static void test_write_allow(void **state)
{
	unsigned char v4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
	unsigned char v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1};
	(void)state;

	struct proc *p = make("processing:\n  write: true\n  write_allow: [10.1.0.0/16, "
			      "'2001:db8::/32']\n  groups:\n    - {name: g, select: m, statistics: "
			      "[{name: s, type: value}]}\n");
	assert_true(proc_conf_may_write(cfg->processing, v4, NULL));
	v4[13] = 9;
	assert_false(proc_conf_may_write(cfg->processing, v4, NULL));
	assert_true(proc_conf_may_write(cfg->processing, v6, "anyone"));
	v6[3] = 0xb9;
	assert_false(proc_conf_may_write(cfg->processing, v6, NULL));
	done(p);

	/* Users only; then both, each required. */
	p = make("processing:\n  write: true\n  write_users: [alice]\n  groups:\n    - {name: g, "
		 "select: m, statistics: [{name: s, type: value}]}\n");
	assert_true(proc_conf_may_write(cfg->processing, v6, "alice"));
	assert_false(proc_conf_may_write(cfg->processing, v6, "bob"));
	assert_false(proc_conf_may_write(cfg->processing, v6, NULL));
	done(p);
	p = make("processing:\n  write: true\n  write_users: [alice]\n  write_allow: ['::1']\n  "
		 "groups:\n    - {name: g, select: m, statistics: [{name: s, type: value}]}\n");
	unsigned char lo[16] = {[15] = 1};
	assert_true(proc_conf_may_write(cfg->processing, lo, "alice"));
	assert_false(proc_conf_may_write(cfg->processing, v6, "alice"));
	assert_false(proc_conf_may_write(cfg->processing, lo, NULL));
	done(p);
}

/* A writer feeding X = 5 without pause, a reader printing the data: the
 * value total, the range's count and the array's buckets move together
 * under one lock, and the range's figures never disagree. */
struct race {
	struct proc *p;
	volatile bool stop;
};

static void *race_feed(void *arg)
{
	struct race *r = arg;
	uint64_t t = 1;
	double v = 0;

	while (!r->stop) {
		v += 5;
		proc_feed(r->p, "c_total", NULL, 0, v, t++);
	}
	return NULL;
}

/* A collector writing through the sampler's probe: one family the
 * emitter refuses, one it takes. */
static int probe_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family bad = {.name = "bad-name", .type = BS_GAUGE};
	struct bs_family good = {.name = "ok_gauge", .type = BS_GAUGE};
	struct bs_label l[] = {{"vm", "web1"}};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &bad);
	bs_sample_f64(e, l, 1, 1);
	e->ops->family(e, &good);
	bs_sample_f64(e, l, 1, 2);
	return 0;
}

/* Sources are named by the emitter's rules: what a scrape refuses (a bad
 * family or label name, a label twice) is not kept, and a label value is
 * repaired as /metrics repairs it (invalid UTF-8, bidi controls). */
static void test_keys_by_the_emitters_rules(void **state)
{
	struct proc *p = make("processing:\n  groups:\n"
			      "    - {name: g, select: '{__name__=~\".+\"}',\n"
			      "       statistics: [{name: n, type: value}]}\n");
	struct bs_label reserved[] = {{"__x", "1"}}, dash[] = {{"a-b", "1"}},
			twice[] = {{"vm", "a"}, {"vm", "b"}},
			hostile[] = {{"vm", "\xff\xfe\u202eevil"}};
	int status;
	(void)state;

	assert_false(proc_feed(p, "m", reserved, 1, 1, S(0)));
	assert_false(proc_feed(p, "m", dash, 1, 1, S(0)));
	assert_false(proc_feed(p, "m", twice, 2, 1, S(0)));
	assert_true(proc_feed(p, "m", hostile, 1, 1, S(0)));
	p->in = (struct proc_input){.n = 1, .collect = probe_collect};
	proc_tick(p, S(1));
	char *text = iface(p, "GET", "", NULL, false, S(1), &status);
	assert_string_equal(text, "g/0 m{vm=\"\uFFFD\uFFFD\uFFFDevil\"}\n"
				  "g/1 ok_gauge{vm=\"web1\"}\n");
	free(text);
	p->in = (struct proc_input){0};
	done(p);
}

static void test_sampler_races_reader(void **state)
{
	struct race r = {
	    .p = make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
		      "      x: delta\n      statistics:\n"
		      "        - {name: n, type: value}\n"
		      "        - {name: r, type: range}\n"
		      "        - {name: a, type: array, range_min: 0, range_max: 8}\n")};
	pthread_t th;
	int status, reads = 0;
	(void)state;

	assert_int_equal(pthread_create(&th, NULL, race_feed, &r), 0);
	for (int i = 0; i < 10000; i++) { /* until the writer's second value is in */
		pthread_mutex_lock(&r.p->lock);
		bool fed = r.p->count.values > 0;
		pthread_mutex_unlock(&r.p->lock);
		if (fed)
			break;
		usleep(1000);
	}
	for (int i = 0; i < 3000; i++) {
		char *text = iface(r.p, "GET", "g/0/data", NULL, false, UINT64_MAX, &status);
		unsigned long long n = 0, num = 0, sum = 0, hits;
		char *line = strstr(text, "n ");
		if (line && sscanf(line, "n %llu", &n) == 1 && (line = strstr(text, "\nr "))) {
			if (n == 0) {
				free(text);
				continue;
			}
			char want[96];
			if (sscanf(line, "\nr %llu", &num) != 1)
				fail_msg("%s", text);
			snprintf(want, sizeof(want), "\nr %llu 5 5.000 5\n", num);
			if (!strstr(text, want) || num != n)
				fail_msg("half-updated: %s", text);
			for (char *a = text; (a = strstr(a, "\na ")); a++)
				if (sscanf(strchr(a + 3, ' '), " %llu", &hits) == 1)
					sum += hits;
			if (sum != n)
				fail_msg("array holds %llu of %llu: %s", sum, n, text);
			reads++;
		}
		free(text);
	}
	r.stop = true;
	pthread_join(th, NULL);
	assert_int_equal(reads, 3000);
	done(r.p);
}

/* Type changes under load: a writer feeds, another client redefines the
 * statistic through every type, a reader prints it. Nothing may crash or
 * leak (the suite also runs under ASan), every read is a whole
 * definition line and a whole set of families, and the last definition
 * holds at the end. */
static void *race_redefine(void *arg)
{
	static const char *const lines[] = {
	    "name=s type=array range_min=0 range_max=64 base_interval=4 scale=log2",
	    "name=s type=list entries_max=16",
	    "name=s type=raw entries_max=8",
	    "name=s type=history entries_max=4 period=1000 mode=range",
	    "name=s type=value mode=products",
	    "name=s type=range data=reset"};
	struct race *r = arg;
	int status;

	for (unsigned i = 0; !r->stop; i++)
		free(iface(r->p, "POST", "g/0/definition", lines[i % 6], true, i, &status));
	return NULL;
}

static void test_type_changes_under_load(void **state)
{
	struct race r = {.p = make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
				   "      x: delta\n      statistics: [{name: s, type: range}]\n")};
	pthread_t feeder, redefiner;
	int status;
	(void)state;

	proc_feed(r.p, "c_total", NULL, 0, 0, 0); /* the source exists from here */
	assert_int_equal(pthread_create(&feeder, NULL, race_feed, &r), 0);
	assert_int_equal(pthread_create(&redefiner, NULL, race_redefine, &r), 0);
	for (int i = 0; i < 2000; i++) {
		char *def = iface(r.p, "GET", "g/0/definition", NULL, false, 0, &status);
		assert_int_equal(status, 200);
		assert_non_null(strstr(def, "name=s on=1 type="));
		free(def);
		free(iface(r.p, "GET", "g/0/data", NULL, false, UINT64_MAX, &status));
		char *m = metrics(r.p);
		assert_non_null(strstr(m, "s_out_of_range_total"));
		free(m);
	}
	r.stop = true;
	pthread_join(feeder, NULL);
	pthread_join(redefiner, NULL);
	free(iface(r.p, "POST", "g/0/definition", "name=s type=list entries_max=2 range_min=0",
		   true, 1, &status));
	char *def = iface(r.p, "GET", "g/0/definition", NULL, false, 1, &status);
	assert_non_null(strstr(def, "type=list range_min=0 range_max=64 "
				    "entries_max=2 hits_missed="));
	free(def);
	done(r.p);
}

/* One collector the sampler reaches through proc_input: busy the first
 * time it is asked (a scrape has it), then writing c_total 7. */
static int busy_once_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	int *calls = ctx;
	(void)i, (void)wait_ns;

	if (++*calls == 1)
		return -EBUSY;
	bs_family(e, "c", BS_COUNTER, NULL, "c");
	bs_sample_u64(e, NULL, 0, 7);
	return 0;
}

/* A collector busy at its discovery pass is looked at again at the next
 * pass, not 30 s later: its series are sampled from then on. */
static void test_busy_at_discovery_looked_at_again(void **state)
{
	struct proc *p =
	    make("processing:\n  groups:\n    - name: g\n      select: c_total\n"
		 "      x: value\n      statistics:\n        - {name: n, type: value}\n");
	int calls = 0;
	(void)state;

	p->in = (struct proc_input){.n = 1, .collect = busy_once_collect, .ctx = &calls};
	proc_tick(p, S(1));
	assert_int_equal(p->count.busy, 1);
	assert_int_equal(p->count.values, 0);
	proc_tick(p, S(1.25));
	assert_int_equal(calls, 2);
	assert_int_equal(p->count.values, 1);
	proc_tick(p, S(1.5)); /* relevant now: sampled at every pass */
	assert_int_equal(calls, 3);
	assert_int_equal(p->count.values, 2);
	done(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_delta_and_reset),
	    cmocka_unit_test(test_rate_and_value),
	    cmocka_unit_test(test_caps),
	    cmocka_unit_test(test_interface_writes),
	    cmocka_unit_test(test_configuration_errors),
	    cmocka_unit_test(test_write_allow),
	    cmocka_unit_test(test_keys_by_the_emitters_rules),
	    cmocka_unit_test(test_sampler_races_reader),
	    cmocka_unit_test(test_type_changes_under_load),
	    cmocka_unit_test(test_busy_at_discovery_looked_at_again),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
