/* Allocation failure at every allocation site of one scrape: this test
 * replaces malloc, calloc and realloc for the whole process (the plugins
 * and libc included) and fails the Nth call of a scrape, for N = 1 up to
 * the number a scrape makes, of the example collector and of the DCI
 * collector reading a real supplier (in a child process, whose own
 * allocations are not failed). None may crash, leak, or spoil the next
 * scrape, which must be whole. Under AddressSanitizer (which owns malloc)
 * it is skipped, visibly. */
#include "helpers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collset.h"
#include "dci4_supplier.h"
#include "log.h"
#include "scrape.h"
#include "sink.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_INTERPOSER 0
#else
#define HAVE_INTERPOSER 1

static int armed;
static unsigned long calls, fail_at, failed;
static long live; /* blocks allocated and not freed, in the whole process */

static bool should_fail(void)
{
	if (!__atomic_load_n(&armed, __ATOMIC_ACQUIRE))
		return false;
	unsigned long n = __atomic_add_fetch(&calls, 1, __ATOMIC_ACQ_REL);
	if (n != fail_at)
		return false;
	__atomic_add_fetch(&failed, 1, __ATOMIC_ACQ_REL);
	return true;
}

static void *counted(void *p)
{
	if (p)
		__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return p;
}

void *malloc(size_t n)
{
	return should_fail() ? NULL : counted(__libc_malloc(n));
}

void *calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : counted(__libc_calloc(n, m));
}

void *realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	void *q = __libc_realloc(p, n);
	if (!p)
		counted(q);
	else if (n == 0)
		__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	return q;
}

void *memalign(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

void *aligned_alloc(size_t a, size_t n)
{
	return counted(__libc_memalign(a, n));
}

int posix_memalign(void **out, size_t a, size_t n)
{
	void *p = counted(__libc_memalign(a, n));
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	__libc_free(p);
}
#endif

__attribute__((sentinel)) static void host_log(enum bs_log_level l, const char *c, const char *m,
					       ...)
{
	(void)l;
	(void)c;
	(void)m;
}

/* Under AddressSanitizer the test is skipped and these go unused. */
#define HELPER __attribute__((unused))

static const struct bs_host host HELPER = {BS_COLLECTOR_ABI_VERSION, host_log, 0};

static int alone_extra;		  /* threads of the test besides main (collectors' own) */
static struct collset *alone_set; /* whose collectors' kept job threads stay */

static bool jobs_running(void)
{
	return alone_set && collset_busy(alone_set);
}

/* Waits until the scrape's jobs have returned and its detached collector
 * threads have ended (their exit frees memory too), so what is counted
 * next is settled. */
static void wait_alone(void)
{
	char line[64];
	for (int i = 0; i < 400; i++) {
		FILE *f = fopen("/proc/self/status", "re");
		int threads = 0;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "Threads: %d", &threads) == 1)
				break;
		if (f)
			fclose(f);
		if (threads == 1 + alone_extra && !jobs_running())
			return;
		usleep(5000);
	}
	fail_msg("collector threads still running after 2 s");
}

/* The example collector's series of a scrape, or NULL when the scrape
 * itself could not be made. */
HELPER static char *scrape_lines(struct collset *set)
{
	struct scrape_request req = {.set = set, .format = EXPO_TEXT, .timeout_s = 5};
	struct scrape *sc = scrape_run(&req);
	if (!sc) {
		wait_alone();
		return NULL;
	}
	const struct iovec *iov;
	size_t total, niov = scrape_body(sc, &iov, &total);
	/* The test's own buffers: neither failed nor counted. */
	char *text = __libc_malloc(total + 1), *keep = __libc_malloc(total + 1);
	size_t off = 0, k = 0;
	for (size_t i = 0; i < niov; i++) {
		memcpy(text + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	text[off] = '\0';
	scrape_put(sc);
	wait_alone();
	/* Every family and series of the example collector, without values (a
	 * counter of it moves on every scrape). */
	char *save;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name = strncmp(line, "# TYPE ", 7) == 0 ? line + 7 : line;
		bool ours = strncmp(name, "example_", 8) == 0 || strncmp(name, "dci_", 4) == 0;
		if (ours && name == line)
			*strrchr(line, ' ') = '\0';
		if (ours)
			k += (size_t)snprintf(keep + k, total + 1 - k, "%s\n", line);
	}
	keep[k] = '\0';
	__libc_free(text);
	return keep;
}

/* A DCI4 supplier of a few statistics serving from a child process. */
HELPER static pid_t start_supplier(const char *dir)
{
	static const struct dci4_stat stats[] = {
	    {ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, "packets"},
	    {ST_INTEGER32, 0, 1, 4, SV_STATIC, "level"},
	    {ST_STRING, 0, 0, 32, SV_VARIABLE, "driver"},
	    {ST_BOOLEAN, 0, 1, 4, SV_VARIABLE, "link_up"},
	};
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed test */
		struct dci4_supplier_conf c = {dir,  "failmalloc", SPT_GENERAL_SUPPLIER, 100,
					       "fm", "unit0",	   "allocation failures"};
		int err;
		struct dci4_supplier *s = dci4_supplier_open(&c, stats, 4, &err);
		if (!s || dci4_supplier_start(s) < 0)
			_exit(1);
		dci4_set(s, 2, "virtio", 7);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	char r;
	assert_int_equal(read(ready[0], &r, 1), 1);
	close(ready[0]);
	close(ready[1]);
	return pid;
}

static void test_every_allocation_fails_once(void **state)
{
	(void)state;
#if !HAVE_INTERPOSER
	skip(); /* AddressSanitizer replaces malloc itself */
#else
	char err[CONF_ERR_MAX], dir[] = "/tmp/failmalloc.XXXXXX", yaml[512];
	struct collset *set = NULL;
	assert_non_null(mkdtemp(dir));
	pid_t supplier = start_supplier(dir);
	snprintf(yaml, sizeof(yaml),
		 "collectors:\n  example: {}\n  dci:\n    supplier_dir: %s\n"
		 "    timeout_seconds: 2\n  kvm: {enabled: false}\n",
		 dir);
	struct config *cfg = config_load("t.yml", yaml, getenv("BS_PLUGINS"), err, sizeof(err));
	assert_non_null(cfg);
	assert_int_equal(collset_build(cfg, &host, &set, err, sizeof(err)), 0);
	alone_set = set;
	alone_extra = (int)collset_count(set); /* each collector's kept job thread */

	__libc_free(scrape_lines(set)); /* the DCI collector describes its supplier */
	char *reference = scrape_lines(set);
	assert_non_null(reference);
	assert_non_null(strstr(reference, "example_latency_seconds_bucket"));
	assert_non_null(strstr(reference, "dci_fm_packets{supplier=\"failmalloc\"}"));
	/* How many allocations one scrape makes, counted with none failing. */
	fail_at = 0;
	calls = 0;
	__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
	__libc_free(scrape_lines(set));
	__atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
	unsigned long per_scrape = calls;
	assert_true(per_scrape > 10);

	/* What the first failure logs loads libc's message catalogue once, for
	 * good: load it now, so it is not taken for a leak. */
	log_warn("warming up", "err", strerror(ENOBUFS));
	sink_pool_drain(); /* output chunks kept for reuse are not live data */
	long live0 = __atomic_load_n(&live, __ATOMIC_RELAXED);
	for (unsigned long n = 1; n <= per_scrape; n++) {
		calls = 0;
		fail_at = n;
		__atomic_store_n(&armed, 1, __ATOMIC_RELEASE);
		char *out = scrape_lines(set);
		__atomic_store_n(&armed, 0, __ATOMIC_RELEASE);
		__libc_free(out);
		char *next = scrape_lines(set);
		if (!next || strcmp(next, reference) != 0) {
			if (getenv("FAILMALLOC_DEBUG"))
				fprintf(stderr, "--- reference\n%s--- next\n%s", reference,
					next ? next : "(none)\n");
			fail_msg("after failing allocation %lu of %lu, the next scrape differs", n,
				 per_scrape);
		}
		__libc_free(next);
		/* The next scrape may rebuild what the failure threw away (the DCI
		 * supplier is described again); after one more, the live blocks
		 * must be what they were before the failure. */
		__libc_free(scrape_lines(set));
		sink_pool_drain();
		long now = __atomic_load_n(&live, __ATOMIC_RELAXED);
		if (now != live0)
			fail_msg("failing allocation %lu of a scrape leaked %ld blocks", n,
				 now - live0);
	}
	/* A failure may change what the next scrapes do (a describe again): most
	 * of the sites, not all, are failed on every run. */
	assert_true(failed * 10 >= per_scrape * 9);
	print_message("%lu allocations per scrape, each failed once; no block leaked\n",
		      per_scrape);
	__libc_free(reference);
	alone_set = NULL;
	collset_put(set);
	kill(supplier, SIGKILL);
	waitpid(supplier, NULL, 0);
	char sock[64];
	snprintf(sock, sizeof(sock), "%s/failmalloc.sock", dir);
	unlink(sock);
	rmdir(dir);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_allocation_fails_once),
	};
	return cmocka_run_group_tests_name("failmalloc", tests, NULL, NULL);
}
