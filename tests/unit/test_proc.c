/* The processing between scrapes, fed by hand at set times: X from value,
 * delta and rate (a counter reset included), selection, what /metrics and
 * /statistics/ show, the caps (sources, expiry), the template's sample
 * rate, write permission, configuration errors; and a sampler racing a
 * reader, which must never see a statistic half updated. */
#include "helpers.h"

#include <pthread.h>
#include <unistd.h>

#include "config.h"
#include "names.h"
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
	assert_non_null(strstr(text, "# template=g state=on sampled=0 relative=0 updates=0\n"));
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
	assert_string_equal(text,
			    "line 2: EINVAL: a new type needs all its type-specific attributes\n"
			    "line 3: ENOENT: no statistic of that name\n"
			    "nothing applied: 2 lines refused\n");
	free(text);
	/* all or nothing (issue 29, item 11): lines 1 and 4 did not apply */
	text = iface(p, "GET", "ex/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 1 1.000 1\nex_sum 1\nex_max 1\n");
	free(text);
	text = iface(p, "POST", "ex/0/definition", "name=ex_r range_max=50\ndata=reset", true, S(3),
		     &status);
	assert_int_equal(status, 200);
	free(text);
	/* range_max 50, and everything reset, the template's statistics too:
	 * the maximum of nothing has no line (item 14) */
	text = iface(p, "GET", "ex/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "ex_n 0\nex_r 0 0 0.000 0\nex_sum 0\n");
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

/* A label value at the emitter's cap is kept, whatever it escapes to;
 * labels longer than a key holds are counted, not silently skipped. */
static void test_long_keys(void **state)
{
	struct proc *p = make("processing:\n  groups:\n"
			      "    - {name: g, select: m, statistics: [{name: n, type: value}]}\n");
	static char hostile[NAMES_LABEL_VALUE_MAX + 1];
	struct bs_label one[] = {{"vm", hostile}}, six[6];
	(void)state;

	memset(hostile, 0xff, NAMES_LABEL_VALUE_MAX); /* each byte escapes to 3 */
	assert_true(proc_feed(p, "m", one, 1, 1, S(0)));
	for (size_t i = 0; i < 6; i++)
		six[i] =
		    (struct bs_label){(const char *[]){"a", "b", "c", "d", "e", "f"}[i], hostile};
	assert_false(proc_feed(p, "m", six, 6, 1, S(0)));
	assert_int_equal(p->count.key_too_long, 1);
	char *text = metrics(p);
	assert_non_null(
	    strstr(text, "binstat_processing_dropped_total{reason=\"key_too_long\"} 1\n"));
	free(text);
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

/* ---- issue 29: the /statistics/ interface (items 11 to 14, 16) ---- */

/* A gauge "g" of 1, no labels. */
static int gauge_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family f = {.name = "g", .type = BS_GAUGE};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &f);
	bs_sample_f64(e, NULL, 0, 1);
	return 0;
}

/* Item 13: seed 001 takes each value at the time its pass was due, so
 * with passes at 4 Hz run up to 199 ms late, every 1 s period holds 4
 * (with the time each ran, a late boundary pass lands in the next). */
static void test_history_by_due_time(void **state)
{
	struct proc *p = make("processing:\n  groups:\n    - name: g\n      select: g\n"
			      "      statistics:\n        - {name: h, type: history, mode: "
			      "increments, period: 1s, entries_max: 16}\n");
	uint64_t t0 = S(100.1234);
	int status;
	(void)state;

	p->in = (struct proc_input){.n = 1, .collect = gauge_collect};
	for (uint64_t k = 0; k < 40; k++) {
		uint64_t due = t0 + k * S(0.25), late = k * 7919 % 200 * 1000000;
		proc_tick_at(p, due, due + late);
	}
	char *text = iface(p, "GET", "g/0/data", NULL, false, S(110), &status);
	assert_string_equal(text, "h [100.000000] 4\nh [101.000000] 4\nh [102.000000] 4\n"
				  "h [103.000000] 4\nh [104.000000] 4\nh [105.000000] 4\n"
				  "h [106.000000] 4\nh [107.000000] 4\nh [108.000000] 4\n"
				  "h [109.000000] 4\nh [110.000000] 0\n");
	free(text);
	p->in = (struct proc_input){0};
	done(p);
}

/* Item 11: a POST is all or nothing, and its reply names every refused
 * line with its error (the seed's errno names); item 9 through the
 * interface: an overlong word refuses its line. */
static void test_post_all_or_nothing(void **state)
{
	struct proc *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	char body[1024], word[300];
	int status;
	(void)state;

	proc_feed(p, "kvm_exits_total", web, 1, 1, S(0));
	proc_feed(p, "kvm_exits_total", web, 1, 4, S(1)); /* X = 3 */
	char *before = iface(p, "GET", "ex/0/definition", NULL, false, S(2), &status);
	memset(word, 'a', sizeof(word) - 1);
	word[sizeof(word) - 1] = '\0';
	snprintf(body, sizeof(body),
		 "on=0\nname=%s data=reset\nname=ex_r type=list entries_max=4\n"
		 "name=ex entries_max=4\nname=ex_n range_max=x\ndata=reset",
		 word);
	char *text = iface(p, "POST", "ex/0/definition", body, true, S(2), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "line 2: EFBIG: a word is longer than 255 bytes\n"
				  "line 4: EOPNOTSUPP: a template's statistics are fixed: only "
				  "on= and data=reset\n"
				  "line 5: EINVAL: range_max must be a number\n"
				  "nothing applied: 3 lines refused\n");
	free(text);
	text = iface(p, "GET", "ex/0/definition", NULL, false, S(2), &status);
	assert_string_equal(text, before); /* on=0 and the type change did not apply */
	free(text);
	free(before);
	text = iface(p, "GET", "ex/0/data", NULL, false, S(2), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 3 3.000 3\nex_sum 3\nex_max 3\n");
	free(text);
	/* each line is checked against what the lines before it leave */
	text = iface(p, "POST", "ex/0/definition",
		     "name=ex_r type=list entries_max=4\nname=ex_r entries_max=8 range_max=9\n",
		     true, S(3), &status);
	assert_int_equal(status, 200);
	assert_string_equal(text, "ok\n");
	free(text);
	text = iface(p, "GET", "ex/0/definition", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "name=ex_r on=1 type=list range_min=0 range_max=9 "
				     "entries_max=8 hits_missed=0"));
	free(text);
	done(p);
}

/* Item 12: off is off for everything of the interface, the template too;
 * the template alone answers to its name. */
static void test_off_stops_template(void **state)
{
	struct proc *p = make(delta_yaml);
	struct bs_label web[] = {{"vm", "web1"}};
	int status;
	(void)state;

	proc_feed(p, "kvm_exits_total", web, 1, 0, S(0));
	proc_feed(p, "kvm_exits_total", web, 1, 2, S(1));
	free(iface(p, "POST", "ex/0/definition", "on=0", true, S(2), &status));
	assert_int_equal(status, 200);
	proc_feed(p, "kvm_exits_total", web, 1, 5, S(3));
	char *text = iface(p, "GET", "ex/0/definition", NULL, false, S(4), &status);
	assert_non_null(strstr(text, "# template=ex state=off sampled=1 relative=0 updates=1\n"));
	free(text);
	text = iface(p, "GET", "ex/0/data", NULL, false, S(4), &status);
	assert_string_equal(text, "ex_n 1\nex_r 1 2 2.000 2\nex_sum 2\nex_max 2\n");
	free(text);
	/* on=1 starts it all again; name=<template> reaches it alone */
	free(iface(p, "POST", "ex/0/definition", "on=1\nname=ex on=0 data=reset", true, S(5),
		   &status));
	assert_int_equal(status, 200);
	proc_feed(p, "kvm_exits_total", web, 1, 9, S(6));
	text = iface(p, "GET", "ex/0/data", NULL, false, S(7), &status);
	assert_string_equal(text, "ex_n 2\nex_r 2 2 3.000 4\nex_sum 0\n");
	free(text);
	text = iface(p, "POST", "ex/0/definition", "name=ex type=value mode=increments", true, S(8),
		     &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "line 1: EOPNOTSUPP: a template's statistics are fixed: only "
				  "on= and data=reset\nnothing applied: 1 line refused\n");
	free(text);
	done(p);
}

/* Item 14: an empty digest has no quantile lines, its count and sum 0. */
static void test_empty_digest_lines(void **state)
{
	struct proc *p = make("processing:\n  groups:\n    - {name: g, select: m, "
			      "template: {stats: [min, {tdigest: {quantiles: [0.5]}}]}}\n");
	int status;
	(void)state;

	proc_feed(p, "m", NULL, 0, 3, S(0));
	char *text = iface(p, "GET", "g/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "g_min 3\ng_tdigest 0.5 3\ng_tdigest count 1\ng_tdigest sum 3\n");
	free(text);
	free(iface(p, "POST", "g/0/definition", "data=reset", true, S(1), &status));
	text = iface(p, "GET", "g/0/data", NULL, false, S(1), &status);
	assert_string_equal(text, "g_tdigest count 0\ng_tdigest sum 0\n");
	free(text);
	done(p);
}

static const char *two_tpl_yaml =
    "processing:\n"
    "  groups:\n"
    "    - name: ex\n"
    "      select: ex_total\n"
    "      template: {name: ex_voi, sample_pct: 0, stats: [sum]}\n"
    "    - name: io\n"
    "      select: io_total\n"
    "      x: delta\n"
    "      template: {stats: [sum, max, {crhist: {scheme: usr, bounds: [0, 10]}}]}\n";

/* Item 16: the template list with slot ids and hashes, found by id
 * (stats_tpl_id2name) or spec (stats_tpl_fetch_allocid), with stats(3)'s
 * error names. */
static void test_template_list(void **state)
{
	struct proc *p = make(two_tpl_yaml);
	char want[256], path[128];
	int status;
	(void)state;

	uint32_t h0 = p->tpl[0].hash, h1 = p->tpl[1].hash;
	assert_int_not_equal(h0, h1);
	char *text = iface(p, "GET", "templates", NULL, false, 0, &status);
	snprintf(want, sizeof(want), "0 \"ex_voi\":%u\n1 \"io\":%u\n", h0, h1);
	assert_string_equal(text, want);
	free(text);
	snprintf(want, sizeof(want), "1 \"io\":%u\n", h1);
	snprintf(path, sizeof(path), "templates/\"io\":%u", h1);
	static const char *const ways[] = {"templates/1", "templates/io", "templates/\"io\"", NULL};
	for (size_t i = 0; i < 4; i++) {
		text = iface(p, "GET", ways[i] ? ways[i] : path, NULL, false, 0, &status);
		assert_int_equal(status, 200);
		assert_string_equal(text, want);
		free(text);
	}
	snprintf(path, sizeof(path), "templates/:%u", h1);
	text = iface(p, "GET", path, NULL, false, 0, &status);
	assert_string_equal(text, want);
	free(text);
	snprintf(path, sizeof(path), "templates/io:%u", h0); /* name and hash disagree */
	text = iface(p, "GET", path, NULL, false, 0, &status);
	assert_int_equal(status, 404);
	assert_string_equal(text, "ESRCH: no template matches\n");
	free(text);
	text = iface(p, "GET", "templates/2", NULL, false, 0, &status);
	assert_int_equal(status, 404);
	assert_string_equal(text, "ENOENT: no template has that id\n");
	free(text);
	text = iface(p, "GET", "templates/io:x", NULL, false, 0, &status);
	assert_int_equal(status, 400);
	assert_true(strncmp(text, "EINVAL: ", 8) == 0);
	free(text);
	done(p);
}

/* Item 16: a template name used twice is stats_tpl_alloc's EEXIST. */
static void test_template_name_twice(void **state)
{
	(void)state;
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: a, select: m, template: {name: t, stats: [sum]}}\n"
			  "    - {name: b, select: n, template: {name: t, stats: [max]}}\n",
			  "t.yml:4:38: EEXIST: template 't' is group 'a''s already");
	expect_conf_error("processing:\n  groups:\n"
			  "    - {name: a, select: m, template: {stats: [sum]}}\n"
			  "    - {name: b, select: n, template: {name: a, stats: [max]}}\n",
			  "EEXIST: template 'a' is group 'a''s already");
	expect_conf_error("processing:\n  groups:\n    - {name: a, select: m, x: rate,\n"
			  "       template: {dtype: u64, stats: [sum]}}\n",
			  "x: rate makes the VOI a double");
}

/* Item 16: sample rates read and changed at run time as
 * stats_tpl_sample_rates reads and writes them; a raised rate gives the
 * sources VOIs, a lowered one takes them; a refused write changes none. */
static void test_sample_rates(void **state)
{
	struct proc *p = make(two_tpl_yaml);
	char want[256], body[128];
	int status;
	(void)state;

	for (int i = 0; i < 8; i++) {
		struct bs_label l[] = {
		    {"vm", (const char *[]){"a", "b", "c", "d", "e", "f", "g", "h"}[i]}};
		proc_feed(p, "ex_total", l, 1, 7, S(0));
	}
	uint32_t h0 = p->tpl[0].hash, h1 = p->tpl[1].hash;
	char *text = iface(p, "GET", "sample_rates", NULL, false, 0, &status);
	snprintf(want, sizeof(want), "\"ex_voi\":%u=0,\"io\":%u=100\n", h0, h1);
	assert_string_equal(text, want);
	free(text);
	free(iface(p, "POST", "sample_rates", "ex_voi=100", false, S(1), &status));
	assert_int_equal(status, 403);
	/* refused as a whole: the first pair is good, the second names nothing */
	text = iface(p, "POST", "sample_rates", "ex_voi=100, nosuch=5", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "ESRCH: pair 2: no template matches\n");
	free(text);
	text = iface(p, "POST", "sample_rates", "ex_voi=101", true, S(1), &status);
	assert_int_equal(status, 400);
	assert_string_equal(text, "EINVAL: a sample rate is a whole percentage, 0 to 100\n");
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	/* every spec form; the last pair for a template wins */
	snprintf(body, sizeof(body), "\"ex_voi\":%u=10, :%u=100,\n", h0, h0);
	text = iface(p, "POST", "sample_rates", body, true, S(1), &status);
	assert_int_equal(status, 200);
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_true(p->src[i]->sampled);
	proc_feed(p, "ex_total", (struct bs_label[]){{"vm", "a"}}, 1, 9, S(2));
	text = iface(p, "GET", "ex/0/data", NULL, false, S(2), &status);
	assert_string_equal(text, "ex_voi_sum 9\n"); /* a VOI from the change on */
	free(text);
	free(iface(p, "POST", "sample_rates", "ex_voi=0", true, S(3), &status));
	assert_int_equal(status, 200);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	done(p);
}

/* Item 16: a source's blob in stats_blob_tostr's JSON shape
 * (SB_STRFMT_JSON with SB_TOSTR_META), every statistic visited, one not
 * yet updated null. */
static void test_blob_json(void **state)
{
	struct proc *p = make(two_tpl_yaml);
	char want[512];
	int status;
	(void)state;

	proc_feed(p, "io_total", NULL, 0, 10, S(0));
	char *text = iface(p, "GET", "io/0/data?format=json", NULL, false, S(1), &status);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"io\",\"tplhash\":%u,\"vois\":{\"io\":{\"stats\":{\"SUM\":null,"
		 "\"MAX\":null,\"HIST\":null}}}}\n",
		 p->tpl[1].hash);
	assert_string_equal(text, want);
	free(text);
	proc_feed(p, "io_total", NULL, 0, 13, S(1));
	proc_feed(p, "io_total", NULL, 0, 25, S(2));
	text = iface(p, "GET", "io/0/data?format=json", NULL, false, S(3), &status);
	snprintf(want, sizeof(want),
		 "{\"tplname\":\"io\",\"tplhash\":%u,\"vois\":{\"io\":{\"stats\":{"
		 "\"SUM\":{\"errs\":0,\"val\":15},\"MAX\":{\"errs\":0,\"val\":12},"
		 "\"HIST\":{\"errs\":0,\"nbkts\":2,\"oob\":0,\"bkts\":["
		 "{\"lb\":0,\"ub\":10,\"cnt\":1},{\"lb\":10,\"ub\":9223372036854775807,"
		 "\"cnt\":1}]}}}}}\n",
		 p->tpl[1].hash);
	assert_string_equal(text, want);
	free(text);
	/* snapshot?format=json: the same, then reset */
	text = iface(p, "POST", "io/0/snapshot?format=json", NULL, true, S(3), &status);
	assert_string_equal(text, want);
	free(text);
	text = iface(p, "GET", "io/0/data?format=json", NULL, false, S(3), &status);
	assert_non_null(strstr(text, "\"SUM\":null"));
	free(text);
	free(iface(p, "GET", "io/0/data?format=xml", NULL, false, S(3), &status));
	assert_int_equal(status, 400);
	text = iface(p, "GET", "ex/0/data?format=json", NULL, false, S(3), &status);
	assert_int_equal(status, 404); /* no source of ex yet */
	free(text);
	done(p);
}

/* A KVM-like u64 counter past 2^63. */
static uint64_t u64_value;

static int u64_collect(void *ctx, size_t i, struct bs_emitter *e, uint64_t wait_ns)
{
	struct bs_family f = {.name = "big_total", .type = BS_COUNTER};
	(void)ctx, (void)i, (void)wait_ns;

	e->ops->family(e, &f);
	bs_sample_u64(e, NULL, 0, u64_value);
	return 0;
}

/* Item 16: a u64 VOI takes a counter past 2^63 exactly: it neither wraps
 * (negative as an s64) nor is clamped or refused. */
static void test_u64_voi_end_to_end(void **state)
{
	struct proc *p = make("processing:\n  groups:\n    - name: big\n      select: big_total\n"
			      "      template: {dtype: u64, stats: [sum, max, min]}\n"
			      "    - name: bigd\n      select: big_total\n      x: delta\n"
			      "      template: {dtype: u64, stats: [sum]}\n");
	int status;
	(void)state;

	p->in = (struct proc_input){.n = 1, .collect = u64_collect};
	u64_value = (1ull << 63) + 5;
	proc_tick(p, S(1));
	u64_value = UINT64_MAX - 2;
	proc_tick(p, S(2));
	char *text = iface(p, "GET", "big/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "big_sum 9223372036854775810\nbig_max 18446744073709551613\n"
				  "big_min 9223372036854775813\n");
	free(text);
	text = iface(p, "GET", "bigd/0/data", NULL, false, S(3), &status);
	assert_string_equal(text, "bigd_sum 9223372036854775800\n"); /* the exact increase */
	free(text);
	text = metrics(p); /* /metrics too: a u64, not its bits read as a double */
	assert_non_null(
	    strstr(text, "\nbig_max{source_metric=\"big_total\"} 18446744073709551613\n"));
	free(text);
	p->in = (struct proc_input){0};
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
	    cmocka_unit_test(test_long_keys),
	    cmocka_unit_test(test_sampler_races_reader),
	    cmocka_unit_test(test_type_changes_under_load),
	    cmocka_unit_test(test_history_by_due_time),
	    cmocka_unit_test(test_post_all_or_nothing),
	    cmocka_unit_test(test_off_stops_template),
	    cmocka_unit_test(test_empty_digest_lines),
	    cmocka_unit_test(test_template_list),
	    cmocka_unit_test(test_template_name_twice),
	    cmocka_unit_test(test_sample_rates),
	    cmocka_unit_test(test_blob_json),
	    cmocka_unit_test(test_u64_voi_end_to_end),
	};
	return cmocka_run_group_tests_name("proc", tests, NULL, NULL);
}
