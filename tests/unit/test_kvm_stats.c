/* KVM stats fds on synthetic files (memfd): the parser's checks, one
 * malformed case at a time, and the mapping to metrics. */
#include "helpers.h"

#include <math.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kvm_emit.h"
#include "kvm_scrape.h"
#include "kvm_statsfd.h"

#define NAME_SIZE 48

struct fake_desc {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t offset;
	uint32_t bucket_size;
};

#define T(x) ((uint32_t)(x))
#define U(x) ((uint32_t)(x) << 4)
#define BASE(x) ((uint32_t)(x) << 8)

/* Writes header, id, descriptors and data the way the kernel lays them out. */
/* Hosts with emitter forks (ABI 5) and without. */
static const struct bs_host abi_now = {.abi_version = BS_COLLECTOR_ABI_VERSION};
static const struct bs_host abi4 = {.abi_version = 4};

static int make_file(const struct fake_desc *d, size_t n, const uint64_t *data, size_t nwords,
		     uint32_t name_size, const char *id)
{
	int fd = memfd_create("kvmstats", 0);
	uint32_t desc_offset = 24 + name_size;
	uint32_t data_offset = desc_offset + (uint32_t)n * (16 + name_size);
	uint32_t hdr[6] = {0, name_size, (uint32_t)n, 24, desc_offset, data_offset};
	char *idbuf = calloc(1, name_size);

	memcpy(idbuf, id, strlen(id) < name_size ? strlen(id) : name_size);
	assert_int_equal(pwrite(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	assert_int_equal(pwrite(fd, idbuf, name_size, 24), name_size);
	for (size_t i = 0; i < n; i++) {
		unsigned char buf[16 + KVM_NAME_SIZE_MAX] = {0};
		memcpy(buf, &d[i].flags, 4);
		memcpy(buf + 4, &d[i].exponent, 2);
		memcpy(buf + 6, &d[i].size, 2);
		memcpy(buf + 8, &d[i].offset, 4);
		memcpy(buf + 12, &d[i].bucket_size, 4);
		memcpy(buf + 16, d[i].name,
		       strlen(d[i].name) < name_size ? strlen(d[i].name) : name_size);
		assert_int_equal(
		    pwrite(fd, buf, 16 + name_size, desc_offset + i * (16 + name_size)),
		    16 + name_size);
	}
	assert_int_equal(pwrite(fd, data, nwords * 8, data_offset), (ssize_t)(nwords * 8));
	free(idbuf);
	return fd;
}

struct drops {
	char reasons[64][32];
	int n;
};

static void record(void *ctx, const char *reason)
{
	struct drops *d = ctx;
	if (d->n < 64)
		snprintf(d->reasons[d->n++], 32, "%s", reason);
}

static bool dropped(const struct drops *d, const char *reason)
{
	for (int i = 0; i < d->n; i++)
		if (strcmp(d->reasons[i], reason) == 0)
			return true;
	return false;
}

/* Like the kernel's vCPU block: descriptors deliberately not in offset order. */
static const struct fake_desc vcpu_descs[] = {
    {"halt_wait_hist", T(4) | U(2), -9, 32, 16, 0},
    {"exits", T(0), 0, 1, 0, 0},
    {"halt_wait_ns", T(0) | U(2), -9, 1, 8, 0},
    {"guest_mode", T(1) | U(4), 0, 1, 272, 0},
    {"mem_kb", T(1) | U(1) | BASE(1), 10, 1, 280, 0},
    {"max_busy", T(2), 0, 1, 288, 0},
    {"lin_hist", T(3), 0, 4, 296, 10},
};

/* An array the test made itself, seen as a full growarr (never grown or
 * freed through it). */
static struct growarr borrowed(void *p, size_t n, size_t size)
{
	return (struct growarr){.p = p, .n = n, .cap = n, .size = size, .max = n};
}

static const struct kvm_metric *find(const struct kvm_schema *s, const char *family)
{
	for (size_t i = 0; i < s->nmetric; i++)
		if (strcmp(s->metric[i].family, family) == 0)
			return &s->metric[i];
	return NULL;
}

static void test_mapping(void **state)
{
	uint64_t data[41] = {0};
	struct kvm_schemas cache = {0};
	struct kvm_statsfd s;
	struct drops dr = {0};
	(void)state;

	data[0] = 77;	      /* exits */
	data[1] = 1500000000; /* halt_wait_ns */
	data[2 + 3] = 4;      /* halt_wait_hist bucket 3: 4..7 ns */
	data[34] = 1;	      /* guest_mode */
	data[35] = 3;	      /* mem_kb */
	int fd = make_file(vcpu_descs, 7, data, 41, NAME_SIZE, "kvm-1234/vcpu-3");
	assert_int_equal(kvm_statsfd_open(&s, fd, true, &cache, record, &dr), 0);
	assert_int_equal(dr.n, 0);
	assert_string_equal(s.id, "kvm-1234/vcpu-3");
	assert_int_equal(s.schema->data_size, 328);
	assert_int_equal(s.schema->nmetric, 6); /* halt_wait_ns folded into the histogram */
	assert_int_equal(kvm_statsfd_read(&s), 0);

	const struct kvm_metric *m = find(s.schema, "kvm_vcpu_exits");
	assert_non_null(m);
	assert_int_equal(m->mtype, BS_COUNTER);
	struct bs_value v = kvm_metric_value(m, s.data[m->index]);
	assert_int_equal(v.kind, BS_VAL_U64);
	assert_int_equal(v.u, 77);

	m = find(s.schema, "kvm_vcpu_halt_wait_seconds");
	assert_non_null(m);
	assert_int_equal(m->mtype, BS_HISTOGRAM);
	assert_string_equal(m->unit, "seconds");
	assert_int_equal(m->sum_index, 1);
	v = kvm_metric_value(m, s.data[m->sum_index]);
	assert_true(v.kind == BS_VAL_F64 && v.f == 1.5);
	/* log buckets: 0 holds only 0; i holds 2^(i-1)..2^i-1; the last takes the rest */
	assert_true(m->le[0] == 0);
	assert_true(m->le[1] == 1e-9);
	assert_true(m->le[3] == 7e-9);
	assert_true(m->le[30] == 1073741823 / 1e9);
	assert_true(isinf(m->le[31]));
	assert_null(find(s.schema, "kvm_vcpu_halt_wait_seconds_total"));

	m = find(s.schema, "kvm_vcpu_guest_mode");
	assert_true(m && m->boolean && m->mtype == BS_GAUGE);
	m = find(s.schema, "kvm_vcpu_mem_bytes");
	assert_non_null(m);
	v = kvm_metric_value(m, 3);
	assert_int_equal(v.u, 3072); /* 3 KiB, exact */
	m = find(s.schema, "kvm_vcpu_max_busy");
	assert_true(m && m->ktype == KVM_T_PEAK);
	m = find(s.schema, "kvm_vcpu_lin");
	assert_non_null(m);
	/* linear: bucket i holds i*10 .. (i+1)*10-1 */
	assert_true(m->le[0] == 9 && m->le[1] == 19 && m->le[2] == 29);
	assert_int_equal(m->sum_index, -1);

	/* A second fd with the same layout shares the schema. */
	struct kvm_statsfd s2;
	int fd2 = make_file(vcpu_descs, 7, data, 41, NAME_SIZE, "kvm-1234/vcpu-4");
	assert_int_equal(kvm_statsfd_open(&s2, fd2, true, &cache, record, &dr), 0);
	assert_ptr_equal(s2.schema, s.schema);
	assert_int_equal(cache.n, 1);
	kvm_statsfd_close(&s2, &cache);
	kvm_statsfd_close(&s, &cache);
	assert_int_equal(cache.n, 0);
}

static void test_exact_and_scaled_values(void **state)
{
	struct kvm_metric m = {0};
	(void)state;
	m.exact = true;
	m.factor = 1000;
	struct bs_value v = kvm_metric_value(&m, UINT64_MAX / 10);
	assert_int_equal(v.kind, BS_VAL_F64); /* would overflow: a double instead */
	v = kvm_metric_value(&m, 5);
	assert_int_equal(v.u, 5000);
	m.exact = false;
	m.pow10_div = 9;
	v = kvm_metric_value(&m, 123456789);
	assert_true(v.f == 0.123456789);
	assert_int_equal(kvm_bucket_upper_raw(KVM_T_LOG_HIST, 0, 64), UINT64_MAX);
	assert_int_equal(kvm_bucket_upper_raw(KVM_T_LOG_HIST, 0, 63), UINT64_MAX >> 1);
}

/* Each malformed descriptor is skipped with its reason; the good one survives. */
static void test_bad_descriptors(void **state)
{
	static const struct {
		struct fake_desc d;
		const char *why;
	} cases[] = {
	    {{"t", T(9), 0, 1, 8, 0}, "unknown_type"},
	    {{"u", U(9), 0, 1, 8, 0}, "unknown_unit"},
	    {{"b", BASE(5), 0, 1, 8, 0}, "unknown_base"},
	    {{"f", 1u << 20, 0, 1, 8, 0}, "unknown_flags"},
	    {{"e", U(2), 3, 1, 8, 0}, "bad_exponent"},
	    {{"n", U(0), -1, 1, 8, 0}, "bad_exponent"},
	    {{"z", 0, 0, 0, 8, 0}, "bad_size"},
	    {{"s", 0, 0, 2, 8, 0}, "bad_size"},
	    {{"h", T(4), 0, 1, 8, 0}, "bad_size"},
	    {{"l", T(3), 0, 4, 8, 0}, "bad_bucket_size"},
	    {{"k", T(4), 0, 4, 8, 5}, "bad_bucket_size"},
	    {{"o", 0, 0, 1, 12, 0}, "bad_offset"},
	    {{"p", 0, 0, 1, KVM_DATA_MAX, 0}, "bad_offset"},
	    {{"Bad-Name", 0, 0, 1, 8, 0}, "bad_name"},
	    {{"", 0, 0, 1, 8, 0}, "bad_name"},
	    {{"good", 0, 0, 1, 16, 0}, "duplicate_name"},
	};
	uint64_t data[4] = {1, 2, 3, 4};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_desc d[2] = {{"good", 0, 0, 1, 0, 0}, cases[i].d};
		struct kvm_schemas cache = {0};
		struct kvm_statsfd s;
		struct drops dr = {0};
		int fd = make_file(d, 2, data, 4, NAME_SIZE, "kvm-1");
		assert_int_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), 0);
		if (!dropped(&dr, cases[i].why))
			fail_msg("case %zu: want %s, got %s", i, cases[i].why,
				 dr.n ? dr.reasons[0] : "nothing");
		assert_int_equal(s.schema->nmetric, 1);
		assert_string_equal(s.schema->metric[0].family, "kvm_vm_good");
		kvm_statsfd_close(&s, &cache);
	}
}

static void test_name_without_nul(void **state)
{
	char longname[NAME_SIZE + 1];
	uint64_t data[2] = {0};
	struct kvm_schemas cache = {0};
	struct kvm_statsfd s;
	struct drops dr = {0};
	(void)state;
	memset(longname, 'a', NAME_SIZE);
	longname[NAME_SIZE] = '\0';
	struct fake_desc d[2] = {{"good", 0, 0, 1, 0, 0}, {longname, 0, 0, 1, 8, 0}};
	int fd = make_file(d, 2, data, 2, NAME_SIZE, "kvm-1");
	assert_int_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), 0);
	assert_true(dropped(&dr, "name_without_nul"));
	kvm_statsfd_close(&s, &cache);
}

static void test_bad_headers(void **state)
{
	struct kvm_stats_hdr h;
	const char *why;
	(void)state;
	uint32_t good[6] = {0, 48, 2, 24, 72, 200};
	assert_int_equal(kvm_stats_parse_header(good, 24, &h, &why), 0);
	assert_int_equal(kvm_stats_parse_header(good, 20, &h, &why), -EINVAL);
	assert_string_equal(why, "short_header");
	static const uint32_t bad[][6] = {
	    {0, 0, 2, 24, 72, 200},	      /* name_size 0 */
	    {0, 100000, 2, 24, 72, 200},      /* name_size huge */
	    {0, 48, 0, 24, 72, 200},	      /* no descriptors */
	    {0, 48, 1000000, 24, 72, 200},    /* a billion... */
	    {0, 48, 2, 4, 72, 200},	      /* id inside the header */
	    {0, 48, 2, 24, 72, 100},	      /* data inside descriptors */
	    {0, 48, 2, 24, 0xFFFFFFF0u, 200}, /* offset past the cap */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (kvm_stats_parse_header(bad[i], 24, &h, &why) == 0)
			fail_msg("bad header %zu accepted", i);

	/* The draft's 16-byte header, id inline: name_size 48, count 2,
	 * desc_offset 64, data_offset 224, then "kvm-1234". Refused as such,
	 * never read as the kernel's six words. */
	unsigned char draft[64] = {0};
	uint32_t draft_words[4] = {48, 2, 64, 224};
	memcpy(draft, draft_words, sizeof(draft_words));
	memcpy(draft + 16, "kvm-1234", 8);
	assert_int_equal(kvm_stats_parse_header(draft, sizeof(draft), &h, &why), -EINVAL);
	assert_string_equal(why, "draft_header_layout");
	/* The kernel's layout whose id happens to sit right after the header is
	 * not mistaken for it: its flags are 0. */
	uint32_t kernel_words[6] = {0, 48, 2, 24, 72, 200};
	unsigned char kernel[64] = {0};
	memcpy(kernel, kernel_words, sizeof(kernel_words));
	memcpy(kernel + 24, "kvm-1234", 8);
	assert_int_equal(kvm_stats_parse_header(kernel, sizeof(kernel), &h, &why), 0);
}

static void test_bad_files(void **state)
{
	struct kvm_schemas cache = {0};
	struct kvm_statsfd s;
	struct drops dr = {0};
	uint64_t data[2] = {0};
	struct fake_desc d[1] = {{"a", 0, 0, 1, 0, 0}};
	(void)state;

	/* An id that does not start with "kvm". */
	int fd = make_file(d, 1, data, 1, NAME_SIZE, "xyz");
	assert_int_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), -EINVAL);
	assert_true(dropped(&dr, "bad_id"));
	close(fd);
	/* A file cut short inside the descriptors. */
	fd = make_file(d, 1, data, 1, NAME_SIZE, "kvm-1");
	assert_int_equal(ftruncate(fd, 24 + NAME_SIZE + 8), 0);
	assert_int_not_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), 0);
	close(fd);
	/* Nothing valid left. */
	struct fake_desc bad[1] = {{"a", T(9), 0, 1, 0, 0}};
	fd = make_file(bad, 1, data, 1, NAME_SIZE, "kvm-1");
	assert_int_not_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), 0);
	assert_true(dropped(&dr, "no_valid_stats"));
	close(fd);
	/* Data shorter than the descriptors promise: the read fails, no crash. */
	fd = make_file(d, 1, data, 1, NAME_SIZE, "kvm-1");
	struct fake_desc far[1] = {{"a", 0, 0, 1, 4096, 0}};
	close(fd);
	fd = make_file(far, 1, data, 1, NAME_SIZE, "kvm-1");
	assert_int_equal(kvm_statsfd_open(&s, fd, false, &cache, record, &dr), 0);
	assert_int_not_equal(kvm_statsfd_read(&s), 0);
	assert_false(s.fresh);
	kvm_statsfd_close(&s, &cache);
	assert_int_equal(cache.n, 0);
}

/* Per-VM mode folds the vCPUs by each statistic's kind: cumulative ones
 * and histogram buckets summed, a peak as the maximum, a boolean as the
 * number of vCPUs where it is true; a cycles statistic keeps its unit,
 * exactly. The fourth vCPU has another layout (its stats in another order,
 * one more): it folds by family name. */
static void test_per_vm_aggregation(void **state)
{
	static const struct fake_desc descs[] = {
	    {"exits", T(0), 0, 1, 0, 0},
	    {"guest_mode", T(1) | U(4), 0, 1, 8, 0},
	    {"max_busy", T(2), 0, 1, 16, 0},
	    {"tsc_cycles", T(0) | U(3), 0, 1, 24, 0},
	    {"wait_hist", T(4) | U(2) | BASE(0), -9, 3, 32, 0},
	    {"wait_ns", T(0) | U(2) | BASE(0), -9, 1, 56, 0},
	};
	static const struct fake_desc other[] = {
	    {"extra", T(0), 0, 1, 0, 0},
	    {"wait_ns", T(0) | U(2) | BASE(0), -9, 1, 8, 0},
	    {"max_busy", T(2), 0, 1, 16, 0},
	    {"exits", T(0), 0, 1, 24, 0},
	    {"guest_mode", T(1) | U(4), 0, 1, 32, 0},
	    {"tsc_cycles", T(0) | U(3), 0, 1, 40, 0},
	    {"wait_hist", T(4) | U(2) | BASE(0), -9, 3, 48, 0},
	};
	static const uint64_t values[3][8] = {{10, 1, 7, 1000, 1, 2, 3, 100},
					      {20, 0, 42, 2000, 0, 0, 1, 50},
					      {30, 5, 3, UINT64_MAX - 10, 4, 0, 0, 7}};
	static const uint64_t other_values[9] = {99, 3, 50, 40, 1, 5, 2, 2, 2};
	struct kvm_schemas cache = {0};
	struct kvm_vcpu vcpus[4] = {0};
	struct kvm_vm vm = {.included = true, .vcpus = borrowed(vcpus, 4, sizeof(vcpus[0]))};
	struct kvm_vm *vms[] = {&vm};
	struct kvm_vmset set = {.vms = borrowed(vms, 1, sizeof(vms[0]))};
	struct kvm_filter all = {0};
	struct drops dr = {0};
	struct capture c;
	(void)state;

	kvm_fold_init(&vm.fold);
	snprintf(vm.label, sizeof(vm.label), "web1");
	for (int i = 0; i < 4; i++) {
		char id[32];
		snprintf(id, sizeof(id), "kvm-1/vcpu-%d", i);
		int fd = i < 3 ? make_file(descs, 6, values[i], 8, NAME_SIZE, id)
			       : make_file(other, 7, other_values, 9, NAME_SIZE, id);
		assert_int_equal(kvm_statsfd_open(&vcpus[i].s, fd, true, &cache, record, &dr), 0);
		vcpus[i].index = i;
		vcpus[i].vmm_fd = -1;
		vcpus[i].schedfd = -1;
	}
	assert_int_equal(cache.n, 2);
	capture_begin(&c, EXPO_OPENMETRICS, SIZE_MAX);
	kvm_scrape(&set, &all, &all, KVM_PER_VM, &abi_now, &c.em.pub);
	const char *out = capture_end(&c);
	assert_non_null(strstr(out, "kvm_vcpu_exits_total{vm=\"web1\"} 100\n"));
	assert_non_null(
	    strstr(out, "kvm_vcpu_guest_mode{vm=\"web1\"} 3\n")); /* 1, 0, 5, 1: three true */
	assert_non_null(strstr(out, "kvm_vcpu_max_busy{vm=\"web1\"} 50\n"));
	assert_non_null(strstr(out, "# UNIT kvm_vcpu_tsc_cycles cycles\n"));
	/* cycles stay integers, and a sum past 2^64 saturates rather than wraps */
	assert_non_null(
	    strstr(out, "kvm_vcpu_tsc_cycles_total{vm=\"web1\"} 18446744073709551615\n"));
	/* buckets 1+0+4+2, 2+0+0+2, 3+1+0+2 cumulated; the total 100+50+7+3 ns */
	assert_non_null(strstr(out, "kvm_vcpu_wait_seconds_bucket{vm=\"web1\",le=\"0.0\"} 7\n"));
	assert_non_null(strstr(out, "kvm_vcpu_wait_seconds_bucket{vm=\"web1\",le=\"1e-09\"} 11\n"));
	assert_non_null(strstr(out, "kvm_vcpu_wait_seconds_bucket{vm=\"web1\",le=\"+Inf\"} 17\n"));
	assert_non_null(strstr(out, "kvm_vcpu_wait_seconds_sum{vm=\"web1\"} 0.00000016\n"));
	assert_null(strstr(out, "extra"));
	capture_free(&c);

	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	kvm_scrape(&set, &all, &all, KVM_PER_VCPU, &abi_now, &c.em.pub);
	out = capture_end(&c);
	assert_non_null(strstr(out, "kvm_vcpu_guest_mode{vm=\"web1\",vcpu=\"2\"} 1\n"));
	assert_non_null(strstr(out, "kvm_vcpu_tsc_cycles_total{vm=\"web1\",vcpu=\"1\"} 2000\n"));
	capture_free(&c);
	for (int i = 0; i < 4; i++)
		kvm_statsfd_close(&vcpus[i].s, &cache);
	kvm_fold_free(&vm.fold);
	assert_int_equal(cache.n, 0);
}

/* Enough VMs that the reads are shared out among threads: every VM is
 * read and folded whole, each failed read counted once. With emitter
 * forks (a host of ABI 5) the families are written on those threads too,
 * and the output is the same, byte for byte, as one emitter's. */
static void test_reads_shared_out(void **state)
{
	static const struct fake_desc descs[] = {{"exits", T(0), 0, 1, 0, 0}};
	enum { NVM = 300, NVCPU = 4 };
	struct kvm_schemas cache = {0};
	struct kvm_vm *vm = calloc(NVM, sizeof(*vm)), **vms = calloc(NVM, sizeof(*vms));
	struct kvm_vcpu *vcpu = calloc(NVM * NVCPU, sizeof(*vcpu));
	struct kvm_vmset set = {.vms = borrowed(vms, NVM, sizeof(vms[0])), .nfds = NVM * NVCPU};
	struct kvm_filter all = {0};
	struct drops dr = {0};
	struct capture c, single;
	(void)state;

	for (int i = 0; i < NVM; i++) {
		vm[i] = (struct kvm_vm){.vcpus = borrowed(vcpu + i * NVCPU, NVCPU, sizeof(*vcpu))};
		kvm_fold_init(&vm[i].fold);
		snprintf(vm[i].label, sizeof(vm[i].label), "vm%d", i);
		vms[i] = &vm[i];
		for (int j = 0; j < NVCPU; j++) {
			char id[32];
			uint64_t v = (uint64_t)i * 10 + (uint64_t)j;
			snprintf(id, sizeof(id), "kvm-%d/vcpu-%d", i, j);
			int fd = make_file(descs, 1, &v, 1, NAME_SIZE, id);
			struct kvm_vcpu *cpu = &vm[i].vcpu[j];
			assert_int_equal(kvm_statsfd_open(&cpu->s, fd, true, &cache, record, &dr),
					 0);
			cpu->index = j;
			cpu->vmm_fd = -1;
			cpu->schedfd = -1;
			if (i == 250 && j == 1)
				assert_int_equal(ftruncate(fd, 24 + NAME_SIZE),
						 0); /* its read fails */
		}
	}
	assert_true(set.nfds >= KVM_READ_SPLIT_FDS);
	capture_begin(&single, EXPO_TEXT, SIZE_MAX);
	kvm_scrape(&set, &all, &all, KVM_PER_VM, &abi4, &single.em.pub);
	assert_int_equal(single.em.nforks, 0);
	capture_end(&single);
	capture_begin(&c, EXPO_TEXT, SIZE_MAX);
	kvm_scrape(&set, &all, &all, KVM_PER_VM, &abi_now, &c.em.pub);
	cpu_set_t cpus;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) >= 2)
		assert_true(c.em.nforks >= 1);
	const char *out = capture_end(&c);
	assert_string_equal(out, single.text);
	capture_free(&single);
	for (int i = 0; i < NVM; i++) {
		char want[64];
		/* 4 vCPUs of 10i + j: 40i + 6; VM 250 without its vCPU 1 */
		snprintf(want, sizeof(want), "kvm_vcpu_exits_total{vm=\"vm%d\"} %d\n", i,
			 i == 250 ? 30 * i + 5 : 40 * i + 6);
		assert_non_null(strstr(out, want));
	}
	assert_non_null(strstr(out, "kvm_vcpu_exits_total{vm=\"vm250\"} 7505\n"));
	assert_int_equal(c.em.ndrops, 1);
	assert_string_equal(c.em.drops[0].reason, "read_error");
	assert_int_equal(c.em.drops[0].n, 1);
	capture_free(&c);
	for (int i = 0; i < NVM; i++) {
		for (int j = 0; j < NVCPU; j++)
			kvm_statsfd_close(&vm[i].vcpu[j].s, &cache);
		kvm_fold_free(&vm[i].fold);
	}
	assert_int_equal(cache.n, 0);
	free(vcpu);
	free(vms);
	free(vm);
}

/* The fold plan: runs in index order, merged by kind; a value two stats
 * share is folded once, by the first's kind; a gap folds nothing. */
static void test_fold_plan(void **state)
{
	struct kvm_metric m[4] = {0};
	struct kvm_fold_run *run;
	(void)state;

	m[0] = (struct kvm_metric){.index = 0, .nvalues = 2, .sum_index = -1};
	m[1] = (struct kvm_metric){.index = 2, .nvalues = 3, .sum_index = 6, .mtype = BS_HISTOGRAM};
	m[2] = (struct kvm_metric){.index = 8, .nvalues = 1, .sum_index = -1, .ktype = KVM_T_PEAK};
	m[3] = (struct kvm_metric){.index = 8, .nvalues = 2, .sum_index = -1, .boolean = true};
	int n = kvm_fold_plan(m, 4, 10, &run);
	assert_int_equal(n, 4);
	assert_int_equal(run[0].start, 0); /* 0..4 summed */
	assert_int_equal(run[0].len, 5);
	assert_int_equal(run[0].op, KVM_FOLD_SUM);
	assert_int_equal(run[1].start, 6); /* the histogram's total; 5 and 7 are gaps */
	assert_int_equal(run[1].len, 1);
	assert_int_equal(run[1].op, KVM_FOLD_SUM);
	assert_int_equal(run[2].start, 8); /* the peak's, first; the boolean's second */
	assert_int_equal(run[2].op, KVM_FOLD_MAX);
	assert_int_equal(run[2].len, 1);
	assert_int_equal(run[3].start, 9);
	assert_int_equal(run[3].op, KVM_FOLD_COUNT);
	assert_int_equal(run[3].len, 1);
	free(run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mapping),
	    cmocka_unit_test(test_exact_and_scaled_values),
	    cmocka_unit_test(test_bad_descriptors),
	    cmocka_unit_test(test_name_without_nul),
	    cmocka_unit_test(test_bad_headers),
	    cmocka_unit_test(test_bad_files),
	    cmocka_unit_test(test_per_vm_aggregation),
	    cmocka_unit_test(test_fold_plan),
	    cmocka_unit_test(test_reads_shared_out),
	};
	return cmocka_run_group_tests_name("kvm_stats", tests, NULL, NULL);
}
