/* dci4-netdev: publishes every Linux network interface as a DCI4
 * SPT_NETWORK_DRIVER supplier (one socket per interface), appearing and
 * vanishing with the interfaces. One thread: the library's event-loop API.
 *   dci4-netdev [-d DIR] [-i INTERVAL_MS] */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dci4_supplier.h"

#define SYSFS "/sys/class/net"
#define IFACES_MAX 256
#define SIP_DECIMAL 1
#define SBP_YES_NO 1

enum {
	RX_BYTES,
	RX_PACKETS,
	RX_ERRORS,
	RX_DROPPED,
	TX_BYTES,
	TX_PACKETS,
	TX_ERRORS,
	TX_DROPPED,
	MAC,
	IPV4,
	LINK_UP,
	DRIVER,
	LAST_CHANGE,
	NSTATS
};
#define NCOUNTERS 8

static const struct dci4_stat stats[NSTATS] = {
    [RX_BYTES] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "rx_bytes"},
    [RX_PACKETS] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "rx_packets"},
    [RX_ERRORS] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "rx_errors"},
    [RX_DROPPED] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "rx_dropped"},
    [TX_BYTES] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "tx_bytes"},
    [TX_PACKETS] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "tx_packets"},
    [TX_ERRORS] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "tx_errors"},
    [TX_DROPPED] = {ST_INTEGER64, SIF_UNSIGNED, SIP_DECIMAL, 8, SV_VOLATILE, "tx_dropped"},
    [MAC] = {ST_ADDRESS, SAF_ETHERNET, 0, 8, SV_STATIC, "mac"},
    [IPV4] = {ST_ADDRESS, SAF_IP, 0, 4, SV_VARIABLE, "ipv4"},
    [LINK_UP] = {ST_BOOLEAN, 0, SBP_YES_NO, 4, SV_VARIABLE, "link_up"},
    [DRIVER] = {ST_STRING, 0, 0, 64, SV_STATIC, "driver"},
    [LAST_CHANGE] = {ST_TIME, STF_CTIME, 0, 8, SV_VARIABLE, "last_link_change"},
};

struct iface {
	char name[64];
	struct dci4_supplier *s; /* NULL: a free slot */
	bool has_ipv4;		 /* described with the ipv4 statistic (else ST_UNUSED) */
	uint64_t last[NCOUNTERS];
	int up; /* -1 before the first look */
	bool seen;
};

static volatile sig_atomic_t stop;
static struct iface ifaces[IFACES_MAX];
static const char *dir;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int read_text(const char *ifname, const char *file, char *buf, size_t len)
{
	char path[256];
	snprintf(path, sizeof(path), SYSFS "/%s/%s", ifname, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	bool ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void set_identity(struct iface *it)
{
	char text[64], path[256], link[256];
	uint8_t mac[6] = {0};

	if (read_text(it->name, "address", text, sizeof(text)) == 0)
		sscanf(text, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		       &mac[4], &mac[5]);
	dci4_set(it->s, MAC, mac, sizeof(mac));
	snprintf(path, sizeof(path), SYSFS "/%s/device/driver", it->name);
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		const char *base = strrchr(link, '/');
		dci4_set(it->s, DRIVER, base ? base + 1 : link, strlen(base ? base + 1 : link) + 1);
	} else {
		dci4_set(it->s, DRIVER, "virtual", 8); /* lo, bridges, veths: no device */
	}
}

/* One look at an interface: counters as a group of deltas (so a gatherer's
 * range read sees rx bytes and packets from the same moment), link state
 * and the time it last changed. */
static void sample(struct iface *it)
{
	static const char *const file[NCOUNTERS] = {
	    "statistics/rx_bytes",   "statistics/rx_packets", "statistics/rx_errors",
	    "statistics/rx_dropped", "statistics/tx_bytes",   "statistics/tx_packets",
	    "statistics/tx_errors",  "statistics/tx_dropped",
	};
	uint32_t idx[NCOUNTERS];
	uint64_t delta[NCOUNTERS];
	char text[64];

	for (int i = 0; i < NCOUNTERS; i++) {
		uint64_t v = it->last[i];
		if (read_text(it->name, file[i], text, sizeof(text)) == 0)
			v = strtoull(text, NULL, 10);
		idx[i] = (uint32_t)i;
		/* A counter that went back (the driver reset it) restarts from there. */
		if (v < it->last[i]) {
			dci4_set(it->s, (uint32_t)i, &v, sizeof(v));
			delta[i] = 0;
		} else {
			delta[i] = v - it->last[i];
		}
		it->last[i] = v;
	}
	dci4_add(it->s, NCOUNTERS, idx, delta);
	int up = read_text(it->name, "carrier", text, sizeof(text)) == 0 && text[0] == '1';
	if (up != it->up) {
		uint32_t b = (uint32_t)up;
		int64_t now = (int64_t)time(NULL);
		dci4_set(it->s, LINK_UP, &b, sizeof(b));
		/* The kernel keeps no time of the last change: until one is seen
		 * here, the time this supplier started watching. */
		dci4_set(it->s, LAST_CHANGE, &now, sizeof(now));
		it->up = up;
	}
}

/* The interface's first IPv4 address into ip; false when it has none. */
static bool ipv4_of(const struct ifaddrs *list, const char *name, uint8_t ip[4])
{
	for (const struct ifaddrs *a = list; a; a = a->ifa_next)
		if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
		    strcmp(a->ifa_name, name) == 0) {
			memcpy(ip, &((const struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
			return true;
		}
	return false;
}

static void add(const char *name);

/* DCI4's address type has no "none": an interface without an IPv4 address
 * is described without the statistic (ST_UNUSED) rather than publishing
 * 0.0.0.0. When an address comes or goes, the supplier is opened again:
 * a new reset, so gatherers describe it again. */
static void set_ipv4(void)
{
	struct ifaddrs *list;
	if (getifaddrs(&list) < 0)
		return;
	for (int i = 0; i < IFACES_MAX; i++) {
		struct iface *it = &ifaces[i];
		uint8_t ip[4] = {0};
		if (!it->s)
			continue;
		bool has = ipv4_of(list, it->name, ip);
		if (has != it->has_ipv4) {
			char name[sizeof(it->name)];
			memcpy(name, it->name, sizeof(name));
			dci4_supplier_close(it->s);
			it->s = NULL;
			add(name);
			continue; /* its value is set at the next look */
		}
		if (has)
			dci4_set(it->s, IPV4, ip, sizeof(ip));
	}
	freeifaddrs(list);
}

static struct iface *find(const char *name)
{
	for (int i = 0; i < IFACES_MAX; i++)
		if (ifaces[i].s && strcmp(ifaces[i].name, name) == 0)
			return &ifaces[i];
	return NULL;
}

static void add(const char *name)
{
	struct iface *it = NULL;
	char sock[80], desc[96];
	int err;

	for (int i = 0; i < IFACES_MAX && !it; i++)
		if (!ifaces[i].s)
			it = &ifaces[i];
	if (!it || strlen(name) >= sizeof(it->name))
		return;
	/* Socket names take [A-Za-z0-9._-]; interface names may hold more. */
	snprintf(sock, sizeof(sock), "dci4-netdev.%.63s", name);
	for (char *c = sock; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    *c))
			*c = '_';
	snprintf(desc, sizeof(desc), "Network interface %.63s", name);
	struct dci4_supplier_conf c = {dir,  sock, SPT_NETWORK_DRIVER, 100, "dci4-netdev",
				       name, desc};
	struct dci4_stat described[NSTATS];
	struct ifaddrs *list;
	uint8_t ip[4];
	*it = (struct iface){.up = -1};
	memcpy(it->name, name, strlen(name) + 1);
	if (getifaddrs(&list) == 0) {
		it->has_ipv4 = ipv4_of(list, name, ip);
		freeifaddrs(list);
	}
	memcpy(described, stats, sizeof(described));
	if (!it->has_ipv4)
		described[IPV4] = (struct dci4_stat){ST_UNUSED, 0, 0, 0, 0, NULL};
	if (!(it->s = dci4_supplier_open(&c, described, NSTATS, &err))) {
		fprintf(stderr, "dci4-netdev: %s: %s\n", name, strerror(-err));
		return;
	}
	set_identity(it);
}

/* Interfaces that appeared become suppliers; vanished ones go. */
static void rescan(void)
{
	DIR *d = opendir(SYSFS);
	struct dirent *e;

	for (int i = 0; i < IFACES_MAX; i++)
		ifaces[i].seen = false;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		struct iface *it = find(e->d_name);
		if (!it) {
			add(e->d_name);
			it = find(e->d_name);
		}
		if (it) {
			it->seen = true;
			sample(it);
		}
	}
	if (d)
		closedir(d);
	for (int i = 0; i < IFACES_MAX; i++)
		if (ifaces[i].s && !ifaces[i].seen) {
			dci4_supplier_close(ifaces[i].s);
			ifaces[i].s = NULL;
		}
	set_ipv4();
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-d DIR] [-i INTERVAL_MS]\n\n"
		"Publishes every network interface as a DCI4 network driver statistic\n"
		"supplier: one socket per interface in DIR, with the counters of\n"
		"/sys/class/net/IF/statistics, its MAC and IPv4 addresses and link state.\n\n"
		"  -d, --dir=DIR              the supplier directory (default "
		"$DCI4_SUPPLIER_DIR, else " DCI4_DEFAULT_DIR ")\n"
		"  -i, --interval=MS          how often interfaces are looked for, 10 to "
		"3600000 (default 1000)\n"
		"  -h, --help                 print this and exit\n\n"
		"SIGTERM or SIGINT stops it and removes its sockets.\n",
		prog);
}

/* A whole decimal number in [min, max], or -1. */
static long number_arg(const char *s, long min, long max)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return *s && !*end && !errno && v >= min && v <= max ? v : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"interval", required_argument, NULL, 'i'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int interval_ms = 1000, opt;

	dir = getenv("DCI4_SUPPLIER_DIR") ? getenv("DCI4_SUPPLIER_DIR") : DCI4_DEFAULT_DIR;
	while ((opt = getopt_long(argc, argv, "d:i:h", longopts, NULL)) != -1) {
		if (opt == 'd') {
			dir = optarg;
		} else if (opt == 'i' && number_arg(optarg, 10, 3600000) >= 0) {
			interval_ms = (int)number_arg(optarg, 10, 3600000);
		} else if (opt == 'h') {
			usage(stdout, argv[0]);
			return 0;
		} else {
			if (opt == 'i')
				fprintf(stderr, "%s: bad interval '%s': 10 to 3600000 ms\n",
					argv[0], optarg);
			fprintf(stderr,
				"usage: %s [-d DIR] [-i INTERVAL_MS]; %s --help says more\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", argv[0],
			argv[optind]);
		return 2;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGPIPE, SIG_IGN);
	while (!stop) {
		struct pollfd pfd[IFACES_MAX];
		struct iface *owner[IFACES_MAX];
		nfds_t n = 0;
		struct timespec t0, t1;

		rescan();
		for (int i = 0; i < IFACES_MAX; i++)
			if (ifaces[i].s) {
				pfd[n] = (struct pollfd){dci4_supplier_fd(ifaces[i].s), POLLIN, 0};
				owner[n++] = &ifaces[i];
			}
		/* Serve gatherers until the next look at the interfaces. */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int left = interval_ms; left > 0 && !stop;) {
			if (poll(pfd, n, left) > 0)
				for (nfds_t k = 0; k < n; k++)
					if (pfd[k].revents)
						dci4_supplier_dispatch(owner[k]->s);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			left = interval_ms - (int)((t1.tv_sec - t0.tv_sec) * 1000 +
						   (t1.tv_nsec - t0.tv_nsec) / 1000000);
		}
	}
	for (int i = 0; i < IFACES_MAX; i++)
		if (ifaces[i].s)
			dci4_supplier_close(ifaces[i].s);
	return 0;
}
