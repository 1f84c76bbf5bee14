/* The processing's total memory bound, max_memory_bytes: the running
 * total is the sum of what each source holds, through
 * new sources, writes, sample rates and expiry; a write, a rate
 * or a new source that would pass the bound is refused with nothing
 * changed (a source counted as memory_limit); a configuration whose first
 * source of each group would not fit is an error with its position. */
#include "processing_helpers.h"

#include <inttypes.h>
#include <malloc.h>
#include <math.h>

static char *iface(struct processing *p, const char *method, const char *path, const char *body,
		   uint64_t now, int *status)
{
	return iface_as(p, method, path, body, true, now, status);
}

static void feed(struct processing *p, const char *vm, double v, uint64_t now)
{
	struct bs_label l[] = {{"vm", vm}};
	feed_value(p, "m_total", l, 1, v, now);
}

/* The running total is the sum over the sources, each source's share is
 * what its definitions make it, and what each statistic's data got from
 * the allocator is at least what was counted for it. */
static void check_total(const struct processing *p)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->srcs.n; i++) {
		const struct source *s = p->src[i];
		assert_int_equal(s->bytes, srctab_bytes(p, s));
		sum += s->bytes;
		for (uint32_t k = 0; k < p->conf->group[s->group].nstats; k++) {
			const struct statproc_stat *st = &s->stat[k];
			const void *mem = st->def.type == STATPROC_ARRAY
					      ? (void *)st->data.array.hits
					  : st->def.type == STATPROC_LIST ? (void *)st->data.list.e
					  : st->def.type == STATPROC_RAW  ? (void *)st->data.raw.e
					  : st->def.type == STATPROC_HISTORY ? st->data.history.e
									     : NULL;
			size_t want = statproc_data_bytes(&st->def);
			assert_true(mem ? want > 0 && malloc_usable_size((void *)mem) >= want
					: want == 0);
		}
	}
	assert_int_equal(p->mem_bytes, sum);
	assert_true(p->mem_bytes <= p->conf->max_memory_bytes);
}

static const char *mixed_yaml =
    "processing:\n"
    "  source_ttl: 10s\n"
    "  groups:\n"
    "    - name: a\n"
    "      select: 'm_total'\n"
    "      statistics:\n"
    "        - {name: a_v, type: value}\n"
    "        - {name: a_r, type: range}\n"
    "        - {name: a_a, type: array, range_min: 0, range_max: 1000, base_interval: 10}\n"
    "        - {name: a_l, type: list, entries_max: 100}\n"
    "        - {name: a_w, type: raw, entries_max: 50}\n"
    "        - {name: a_h, type: history, mode: range, entries_max: 20}\n"
    "      template:\n"
    "        name: a_t\n"
    "        sample_pct: 50\n"
    "        stats: [sum, {crhist: {scheme: lin, lb: 0, ub: 100, stepinc: 10}},\n"
    "                {tdigest: {compression: 100}}]\n"
    "    - name: h\n"
    "      select: 'lat_seconds'\n"
    "      statistics: [{name: h_r, type: range}]\n";

/* The total equals the sum of the sources' sizes after every change that
 * moves it: new sources, a histogram source, writes that grow and shrink
 * a source, sample rates that give and take VOIs, expiry. */
static void test_total_is_sum_of_sizes(void **state)
{
	struct processing *p = make(mixed_yaml);
	char name[16];
	int status;
	(void)state;

	assert_int_equal(p->mem_bytes, 0);
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "vm%d", i);
		feed(p, name, i, S(1));
	}
	double le[] = {0.1, 1, INFINITY};
	uint64_t count[] = {1, 2, 3};
	struct bs_histogram hg = {3, le, count, false, {0}};
	feed_histogram(p, "lat_seconds", (struct bs_label[]){{"vm", "x"}}, 1, &hg, S(1));
	assert_int_equal(p->srcs.n, 21);
	check_total(p);

	/* one VOI by hand: a t-digest at its most, a crhist's 10 buckets and
	 * its open last one, their counts and the 12 between them */
	const struct processing_group_conf *g = &p->conf->group[0];
	size_t tpl = tdigest_bytes_max(100) + 11 * (sizeof(struct vstats_bucket) + 8) + 12 * 8;
	assert_int_equal(g->tpl.voi_bytes, tpl);
	uint64_t before = p->mem_bytes;
	char *text = iface(p, "POST", "a/3/definition",
			   "name=a_w entries_max=1000\nname=a_l entries_max=10\n", S(2), &status);
	assert_int_equal(status, 200);
	free(text);
	assert_int_equal(p->mem_bytes, before + 950 * sizeof(struct statproc_raw_entry) -
					   90 * (sizeof(struct statproc_list_entry) + 8 + 8));
	check_total(p);
	text =
	    iface(p, "POST", "a/3/definition",
		  "name=a_v type=history mode=range entries_max=7 period=1000000", S(2), &status);
	assert_int_equal(status, 200);
	free(text);
	check_total(p);

	size_t sampled = 0;
	for (size_t i = 0; i < p->srcs.n; i++)
		sampled += p->src[i]->sampled;
	assert_true(sampled > 0 && sampled < 20);
	free(iface(p, "POST", "sample_rates", "a_t=100", S(3), &status));
	assert_int_equal(status, 200);
	check_total(p);
	free(iface(p, "POST", "sample_rates", "a_t=0", S(3), &status));
	assert_int_equal(status, 200);
	check_total(p);

	/* half the sources go quiet and expire; the rest are fed */
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "vm%d", i);
		feed(p, name, i, S(8));
	}
	sampler_tick(p, S(15));
	assert_int_equal(p->srcs.n, 10);
	check_total(p);
	done(p);
	/* every source freed took its share: nothing left counted */
}

static const char *raw16_yaml = "processing:\n"
				"  max_memory_bytes: 1MiB\n"
				"  groups:\n"
				"    - name: r\n"
				"      select: 'm_total'\n"
				"      statistics:\n"
				"        - {name: r0, type: raw, entries_max: 8}\n"
				"        - {name: r1, type: raw, entries_max: 8}\n"
				"        - {name: r2, type: history, mode: range, entries_max: 8}\n"
				"        - {name: r3, type: list, entries_max: 8}\n";

/* The blow-up case: entries_max=65536 written on a statistic is 2 MiB;
 * past the bound it is refused, EFBIG, and nothing of the write applies,
 * the lines that would have fitted neither. */
static void test_post_over_bound_refused(void **state)
{
	struct processing *p = make(raw16_yaml);
	int status;
	(void)state;

	feed(p, "a", 1, S(1));
	feed(p, "b", 1, S(1));
	assert_int_equal(p->srcs.n, 2);
	char *def0 = iface(p, "GET", "r/0/definition", NULL, S(2), &status);
	uint64_t before = p->mem_bytes, src0 = p->src[0]->bytes;

	char *text =
	    iface(p, "POST", "r/0/definition", "name=r0 entries_max=65536\n", S(2), &status);
	assert_int_equal(status, 400);
	has(text, "EFBIG: this source's statistics would hold ");
	has(text, "past max_memory_bytes (1048576)");
	has(text, "nothing applied: 1 line refused");
	free(text);
	/* each line alone fits (12,000 entries: 384,000 bytes), the three not */
	text = iface(p, "POST", "r/0/definition",
		     "name=r1 entries_max=12000\nname=r2 entries_max=12000\n"
		     "name=r0 entries_max=12000\n",
		     S(2), &status);
	assert_int_equal(status, 400);
	has(text, "EFBIG");
	free(text);
	char *def1 = iface(p, "GET", "r/0/definition", NULL, S(2), &status);
	assert_string_equal(def0, def1); /* nothing applied: data and times too */
	assert_int_equal(p->mem_bytes, before);
	assert_int_equal(p->src[0]->bytes, src0);
	check_total(p);

	/* what fits is taken, and the total moves by exactly its data */
	text = iface(p, "POST", "r/0/definition", "name=r0 entries_max=12000\n", S(3), &status);
	assert_int_equal(status, 200);
	free(text);
	assert_int_equal(p->mem_bytes, before + (12000 - 8) * sizeof(struct statproc_raw_entry));
	check_total(p);
	/* the other source may now grow less: 768,000 bytes would fit it
	 * alone, not beside the first's 384,000 (the bound is for all) */
	text = iface(p, "POST", "r/1/definition",
		     "name=r0 entries_max=12000\nname=r1 entries_max=12000\n", S(3), &status);
	assert_int_equal(status, 400);
	free(text);
	check_total(p);
	/* shrinking is always taken */
	text = iface(p, "POST", "r/0/definition", "name=r0 entries_max=1\n", S(4), &status);
	assert_int_equal(status, 200);
	free(text);
	assert_true(p->mem_bytes < before);
	check_total(p);
	free(def0);
	free(def1);
	done(p);
}

/* A new source that would pass the bound is not made: counted as
 * memory_limit at each value it brings, until room is made. */
static void test_new_source_over_bound_counted(void **state)
{
	struct processing *p =
	    make("processing:\n"
		 "  max_memory_bytes: 1MiB\n"
		 "  source_ttl: 10s\n"
		 "  groups:\n"
		 "    - name: r\n"
		 "      select: 'm_total'\n"
		 "      statistics: [{name: r0, type: raw, entries_max: 10000}]\n");
	char name[16];
	(void)state;

	/* 320,000 bytes of data each, and its record: three fit in 1 MiB */
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "vm%d", i);
		feed(p, name, i, S(1));
	}
	assert_int_equal(p->srcs.n, 3);
	assert_int_equal(p->count.memory_limit, 2);
	assert_int_equal(p->count.too_many_sources, 0);
	check_total(p);
	char *text = metrics(p);
	has(text, "binstat_processing_dropped_total{reason=\"memory_limit\"} 2\n");
	has(text, "binstat_processing_memory_limit_bytes 1048576\n");
	char want[64];
	snprintf(want, sizeof(want), "binstat_processing_memory_bytes %" PRIu64 "\n", p->mem_bytes);
	has(text, want);
	free(text);

	/* the three made go quiet and expire: the next ones fit */
	feed(p, "vm3", 1, S(9));
	feed(p, "vm4", 1, S(9));
	assert_int_equal(p->count.memory_limit, 4);
	sampler_tick(p, S(15));
	assert_int_equal(p->srcs.n, 0);
	assert_int_equal(p->mem_bytes, 0);
	feed(p, "vm3", 1, S(16));
	feed(p, "vm4", 1, S(16));
	assert_int_equal(p->srcs.n, 2);
	check_total(p);
	done(p);
}

/* Sample rates that would give VOIs past the bound: refused before any
 * VOI is made, nothing changed. */
static void test_rates_over_bound_refused(void **state)
{
	struct processing *p =
	    make("processing:\n"
		 "  max_memory_bytes: 1MiB\n"
		 "  groups:\n"
		 "    - name: t\n"
		 "      select: 'm_total'\n"
		 "      template:\n"
		 "        {name: t_voi, sample_pct: 0, stats: [{tdigest: {compression: "
		 "5000}}]}\n");
	char name[16];
	int status;
	(void)state;

	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "vm%d", i);
		feed(p, name, i, S(1));
	}
	assert_int_equal(p->srcs.n, 4);
	uint64_t before = p->mem_bytes;
	assert_true(4 * tdigest_bytes_max(5000) > (1u << 20) - before);
	char *text = iface(p, "POST", "sample_rates", "t_voi=100", S(2), &status);
	assert_int_equal(status, 400);
	has(text, "EFBIG: the VOIs these rates give would add ");
	free(text);
	text = iface(p, "GET", "sample_rates", NULL, S(2), &status);
	has(text, "=0\n");
	free(text);
	for (size_t i = 0; i < p->srcs.n; i++)
		assert_false(p->src[i]->sampled);
	assert_int_equal(p->mem_bytes, before);
	check_total(p);
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

/* At load, one source of each group must fit, else the processing could
 * keep nothing: an error at the group that passes the bound. */
static void test_config_must_fit_one_source(void **state)
{
	char err[CONF_ERR_MAX];
	(void)state;

	expect_conf_error("processing:\n"
			  "  max_memory_bytes: 1MiB\n"
			  "  groups:\n"
			  "    - {name: a, select: m, statistics: [{name: a0, type: raw, "
			  "entries_max: 20000}]}\n"
			  "    - {name: b, select: m, statistics: [{name: b0, type: history, "
			  "mode: range, entries_max: 20000}]}\n",
			  "t.yml:5:7: one source of each group up to 'b' holds ");
	expect_conf_error("processing:\n  max_memory_bytes: 512KiB\n  groups:\n"
			  "    - {name: t, select: m, template: {stats: [{tdigest: "
			  "{compression: 10000}}]}}\n",
			  "past max_memory_bytes (524288)");
	expect_conf_error("processing:\n  max_memory_bytes: 1KiB\n  groups: []\n",
			  "t.yml:2:21: 'max_memory_bytes' must be a size from 65536");
	expect_conf_error("processing:\n  max_memory_bytes: lots\n  groups: []\n", "t.yml:2:21:");
	/* the default holds 16 rings of 65,536 raw entries (32 MiB) */
	struct config *c = config_load("t.yml",
				       "processing:\n  groups:\n    - {name: a, select: m, "
				       "statistics: [{name: a0, type: raw, entries_max: 65536}]}\n",
				       "/p", err, sizeof(err));
	if (!c)
		fail_msg("refused: %s", err);
	assert_int_equal(c->processing->max_memory_bytes, 256u << 20);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_total_is_sum_of_sizes),
	    cmocka_unit_test(test_post_over_bound_refused),
	    cmocka_unit_test(test_new_source_over_bound_counted),
	    cmocka_unit_test(test_rates_over_bound_refused),
	    cmocka_unit_test(test_config_must_fit_one_source),
	};
	return cmocka_run_group_tests_name("processing_mem", tests, NULL, NULL);
}
