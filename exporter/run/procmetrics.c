/* The standard process_* metrics every Prometheus exporter serves, read from
 * /proc/self as client_golang's process collector does. */
#include "procmetrics.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int procmetrics_parse_stat(const char *text, double ticks, double *cpu_s,
			   double *start_since_boot_s, unsigned long long *vsize,
			   long long *rss_pages)
{
	/* comm may hold spaces and parentheses: fields start after the last ')'. */
	const char *p = strrchr(text, ')');
	unsigned long utime, stime;
	unsigned long long start;

	if (!p)
		return -1;
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d "
		   "%*d %*d %*d %*d %llu %llu %lld",
		   &utime, &stime, &start, vsize, rss_pages) != 5)
		return -1;
	*cpu_s = (double)(utime + stime) / ticks;
	*start_since_boot_s = (double)start / ticks;
	return 0;
}

static double boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	double bt = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "btime ", 6) == 0) {
			bt = strtod(line + 6, NULL);
			break;
		}
	fclose(f);
	return bt;
}

/* Linux 6.2 and later give the count as the directory's size, which costs
 * nothing; reading the directory costs a dentry per fd, and a KVM host's
 * exporter holds thousands. */
static long count_fds(void)
{
	struct stat st;
	if (stat("/proc/self/fd", &st) == 0 && st.st_size > 0)
		return (long)st.st_size;

	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static void gauge(struct bs_emitter *em, const char *name, const char *unit, const char *help,
		  double v)
{
	bs_family(em, name, BS_GAUGE, unit, help);
	bs_sample_f64(em, NULL, 0, v);
}

void procmetrics_emit(struct bs_emitter *em)
{
	char text[1024];
	double ticks = (double)sysconf(_SC_CLK_TCK);
	double cpu, start;
	unsigned long long vsize;
	long long rss;
	struct rlimit rl;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (procmetrics_parse_stat(text, ticks, &cpu, &start, &vsize, &rss) < 0)
		return;
	bs_family(em, "process_cpu_seconds_total", BS_COUNTER, "seconds",
		  "Total user and system CPU time spent in seconds.");
	bs_sample_f64(em, NULL, 0, cpu);
	gauge(em, "process_resident_memory_bytes", "bytes", "Resident memory size in bytes.",
	      (double)rss * (double)sysconf(_SC_PAGESIZE));
	gauge(em, "process_virtual_memory_bytes", "bytes", "Virtual memory size in bytes.",
	      (double)vsize);
	gauge(em, "process_start_time_seconds", "seconds",
	      "Start time of the process since unix epoch in seconds.", boot_time() + start);
	gauge(em, "process_open_fds", NULL, "Number of open file descriptors.",
	      (double)count_fds());
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		gauge(em, "process_max_fds", NULL, "Maximum number of open file descriptors.",
		      (double)rl.rlim_cur);
}
