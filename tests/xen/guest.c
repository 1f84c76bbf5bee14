/* A simulated guest (and toolstack) for the Xen tests, on the fake
 * hypervisor (fakexen.c) and the real cxenstored.
 *   guest add DOMID NAME       toolstack: name the domain and introduce it
 *   guest remove DOMID         toolstack: release it and remove its keys
 *   guest DOMID MODE [N]       a guest with FAKEXEN_DOMID=DOMID
 *   guest bench NDOM P S N K   the benchmark's NDOM guests (see bench())
 * MODE: normal (provider "network-0", sets Tx and Rx, through libpvstats;
 * withdraws on SIGTERM, waiting at most GUEST_GRACE_MS (300) for the agent
 * to close each port, and prints how it ended), silent (never answers), flood (answers, and signals
 * without end), badname, nonul, badtype (one bad tuple among good ones), ecfirst (event-channel
 * before the refs), outoforder (refs 0 and 2, no 1), toomanyrefs (20 pages), ungranted (refs never
 * granted), churn (a set created and deleted without end), providers N (N providers). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#include "pvstats.h"

static volatile sig_atomic_t stop;
static char base[64];

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int toolstack(int argc, char **argv)
{
	struct xs_handle *xs = xs_open(0);
	unsigned domid = (unsigned)strtoul(argv[2], NULL, 10);
	char path[64];
	if (!xs)
		return 1;
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	if (strcmp(argv[1], "add") == 0 && argc == 4) {
		char name[80];
		snprintf(name, sizeof(name), "%s/name", path);
		if (!xs_write(xs, XBT_NULL, name, argv[3], (unsigned)strlen(argv[3])) ||
		    !xs_introduce_domain(xs, domid, 0, 1))
			return 1;
	} else {
		xs_release_domain(xs, domid);
		xs_rm(xs, XBT_NULL, path);
	}
	xs_close(xs);
	return 0;
}

/* ---- well-behaved providers, through the library ---- */

struct counters {
	uint64_t updates;
	size_t n;
};

static void update(void *ctx, struct pvstats_set *set)
{
	struct counters *c = ctx;
	c->updates++;
	for (size_t i = 0; i < c->n; i++)
		pvstats_set_u64(set, i, c->updates * (i + 1));
}

static void update_mixed(void *ctx, struct pvstats_set *set)
{
	struct counters *c = ctx;
	c->updates++;
	pvstats_set_u64(set, 0, c->updates * 1000);
	pvstats_set_u64(set, 1, c->updates);
	pvstats_set_s64(set, 2, -(int64_t)c->updates);
	pvstats_set_double(set, 3, 0.5 * (double)c->updates);
	pvstats_set_ascii(set, 4, "up, 10Gb/s");
}

/* Says when a dispatch returns: one that waited for the next request
 * would answer every scrape and never return. */
static int serve(struct pvstats *p)
{
	struct pollfd pfd = {pvstats_fd(p), POLLIN, 0};
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		if (poll(&pfd, 1, 100) > 0 && pvstats_dispatch(p) > 0) {
			printf("dispatched\n");
			fflush(stdout);
		}
	return 0;
}

static int normal(struct pvstats *p)
{
	static const struct pvstats_stat net[] = {
	    {PVSTATS_U64, "bytes"},   {PVSTATS_U64, "packets"}, {PVSTATS_S64, "queue delta"},
	    {PVSTATS_DOUBLE, "load"}, {PVSTATS_ASCII, "link"},
	};
	struct counters tx = {0, 5}, rx = {0, 5};
	int err;
	struct pvstats_set *a =
	    pvstats_set_open(p, "network-0", "Tx", net, 5, update_mixed, &tx, &err);
	struct pvstats_set *b =
	    pvstats_set_open(p, "network-0", "Rx", net, 5, update_mixed, &rx, &err);
	if (!a || !b) {
		fprintf(stderr, "guest: set: %s\n", strerror(-err));
		return 1;
	}
	serve(p);
	/* GUEST_GRACE_MS: the grace period; each withdrawal says how it ended. */
	const char *g = getenv("GUEST_GRACE_MS");
	unsigned grace = g ? (unsigned)strtoul(g, NULL, 10) : 300;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int closed_a = pvstats_set_withdraw(a, grace);
	int closed_b = pvstats_set_withdraw(b, grace);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("withdrawn: agent closed %d of 2 ports, in %ld ms\n", closed_a + closed_b,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	return 0;
}

/* ---- hostile guests: written by hand, as a malicious guest would ---- */

enum {
	RAW_BADNAME = 1,
	RAW_NONUL = 2,
	RAW_BADTYPE = 4,
	RAW_ECFIRST = 8,
	RAW_OUTOFORDER = 16,
	RAW_TOOMANY = 32,
	RAW_UNGRANTED = 64,
	RAW_FLOOD = 128,
	RAW_SILENT = 256,
};

struct raw {
	struct xs_handle *xs;
	xengntshr_handle *gnt;
	xenevtchn_handle *evt;
	char path[256];
	uint32_t port, npages;
	uint8_t *names, *values;
	uint32_t nref[32], vref[32];
};

static void put(struct raw *r, const char *key, unsigned v)
{
	char path[320], val[16];
	snprintf(path, sizeof(path), "%s/%s", r->path, key);
	snprintf(val, sizeof(val), "%u", v);
	xs_write(r->xs, XBT_NULL, path, val, (unsigned)strlen(val));
}

static void put_refs(struct raw *r, unsigned flags)
{
	char key[32];
	for (uint32_t i = 0; i < r->npages; i++) {
		if ((flags & RAW_OUTOFORDER) && i == 1)
			continue;
		snprintf(key, sizeof(key), "name-type-ref%u", i);
		put(r, key, flags & RAW_UNGRANTED ? 90000 + i : r->nref[i]);
		snprintf(key, sizeof(key), "val-ref%u", i);
		put(r, key, flags & RAW_UNGRANTED ? 91000 + i : r->vref[i]);
	}
}

/* Three statistics a, b, c; the flags break the second one, or the keys. */
static int raw_set(struct raw *r, const char *provider, const char *set, unsigned flags)
{
	r->xs = xs_open(0);
	r->gnt = xengntshr_open(NULL, 0);
	r->evt = xenevtchn_open(NULL, 0);
	if (!r->xs || !r->gnt || !r->evt ||
	    fcntl(xenevtchn_fd(r->evt), F_SETFL, O_NONBLOCK) < 0) /* pending until none */
		return -1;
	r->npages = flags & RAW_TOOMANY ? 20 : flags & RAW_OUTOFORDER ? 3 : 1;
	r->names = xengntshr_share_pages(r->gnt, 0, (int)r->npages, r->nref, 0);
	r->values = xengntshr_share_pages(r->gnt, 0, (int)r->npages, r->vref, 0);
	if (!r->names || !r->values)
		return -1;
	const char *names[3] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		r->names[i * 64] = PVSTATS_U64;
		memcpy(r->names + i * 64 + 1, names[i], 2);
	}
	if (flags & RAW_BADNAME)
		r->names[64 + 1] = 0x01;
	if (flags & RAW_NONUL)
		memset(r->names + 64 + 1, 'x', 63);
	if (flags & RAW_BADTYPE)
		r->names[64] = 9;
	int port = xenevtchn_bind_unbound_port(r->evt, 0);
	if (port <= 0)
		return -1;
	r->port = (uint32_t)port;
	snprintf(r->path, sizeof(r->path), "%s/stats/%s/%s", base, provider, set);
	if (flags & RAW_ECFIRST) {
		put(r, "event-channel", r->port);
		usleep(300000);
		put_refs(r, flags);
	} else {
		put_refs(r, flags);
		put(r, "event-channel", r->port);
	}
	return 0;
}

static int raw_serve(struct raw *r, unsigned flags)
{
	struct pollfd pfd = {xenevtchn_fd(r->evt), POLLIN, 0};
	uint64_t n = 0;
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		if (flags & RAW_FLOOD) /* XSA-332: signal without end */
			xenevtchn_notify(r->evt, r->port);
		if (poll(&pfd, 1, flags & RAW_FLOOD ? 0 : 100) <= 0 || (flags & RAW_SILENT))
			continue;
		int port;
		while ((port = xenevtchn_pending(r->evt)) > 0) {
			n++;
			for (uint64_t i = 0; i < 3; i++) {
				uint64_t v = 10 * n + i; /* whose tuple it is shows */
				memcpy(r->values + i * 64, &v, 8);
			}
			xenevtchn_notify(r->evt, r->port);
			xenevtchn_unmask(r->evt, (uint32_t)port);
		}
	}
	return 0;
}

/* A set created and deleted as fast as xenstore takes it. */
static int churn(void)
{
	struct xs_handle *xs = xs_open(0);
	char path[256], key[300];
	printf("ready\n");
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/stats/churn/s", base);
	while (!stop && xs) {
		snprintf(key, sizeof(key), "%s/name-type-ref0", path);
		xs_write(xs, XBT_NULL, key, "7", 1);
		snprintf(key, sizeof(key), "%s/val-ref0", path);
		xs_write(xs, XBT_NULL, key, "8", 1);
		snprintf(key, sizeof(key), "%s/event-channel", path);
		xs_write(xs, XBT_NULL, key, "3", 1);
		xs_rm(xs, XBT_NULL, path);
	}
	return 0;
}

static int providers(struct pvstats *p, int n)
{
	static const struct pvstats_stat one[] = {{PVSTATS_U64, "x"}};
	struct counters c = {0, 1};
	char prov[32];
	int err;
	for (int k = 0; k < n; k++) {
		snprintf(prov, sizeof(prov), "p%03d", k);
		if (!pvstats_set_open(p, prov, "s", one, 1, update, &c, &err))
			return 1;
	}
	return serve(p);
}

static const struct {
	const char *mode;
	unsigned flags;
} raw_modes[] = {
    {"badname", RAW_BADNAME},	  {"nonul", RAW_NONUL},		  {"badtype", RAW_BADTYPE},
    {"ecfirst", RAW_ECFIRST},	  {"outoforder", RAW_OUTOFORDER}, {"toomanyrefs", RAW_TOOMANY},
    {"ungranted", RAW_UNGRANTED}, {"flood", RAW_FLOOD},		  {"silent", RAW_SILENT},
};

/* The benchmark's guests in one process: ndom domains (introduced here),
 * each with its own handles, of `providers` x `sets` sets of `stats`
 * counters; every `silent_every`th domain never answers. */
static int bench(int ndom, int providers, int sets, int stats, int silent_every)
{
	struct pvstats_stat st[256];
	char names[256][24], domain[64], name[32], prov[32], set[32];
	struct pvstats **p = calloc((size_t)ndom, sizeof(*p));
	struct pollfd *pfd = calloc((size_t)ndom, sizeof(*pfd));
	struct counters *c = calloc((size_t)(ndom * providers * sets), sizeof(*c));
	struct xs_handle *xs = xs_open(0);
	int err, k = 0;

	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { /* two fds per domain, and xenstore's */
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!p || !pfd || !c || !xs || stats > 256)
		return 1;
	for (int i = 0; i < stats; i++) {
		snprintf(names[i], sizeof(names[i]), "counter %d", i);
		st[i] = (struct pvstats_stat){PVSTATS_U64, names[i]};
	}
	for (int d = 0; d < ndom; d++) {
		unsigned domid = 100u + (unsigned)d;
		snprintf(domain, sizeof(domain), "/local/domain/%u/name", domid);
		snprintf(name, sizeof(name), "bench%u", domid);
		snprintf(base, sizeof(base), "%u", domid);
		setenv("FAKEXEN_DOMID", base, 1);
		snprintf(base, sizeof(base), "/local/domain/%u", domid);
		if (!xs_write(xs, XBT_NULL, domain, name, (unsigned)strlen(name)) ||
		    !xs_introduce_domain(xs, domid, 0, 1) || !(p[d] = pvstats_open(base, &err)))
			return 1;
		for (int a = 0; a < providers; a++)
			for (int b = 0; b < sets; b++, k++) {
				snprintf(prov, sizeof(prov), "provider-%d", a);
				snprintf(set, sizeof(set), "set-%d", b);
				c[k].n = (size_t)stats;
				if (!pvstats_set_open(p[d], prov, set, st, (size_t)stats, update,
						      &c[k], &err))
					return 1;
			}
		pfd[d] = (struct pollfd){pvstats_fd(p[d]), POLLIN, 0};
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		if (poll(pfd, (nfds_t)ndom, 100) <= 0)
			continue;
		for (int d = 0; d < ndom; d++)
			if (pfd[d].revents && !(silent_every && d % silent_every == 0))
				pvstats_dispatch(p[d]);
	}
	return 0;
}

static int arg_int(const char *s)
{
	return (int)strtol(s, NULL, 10);
}

int main(int argc, char **argv)
{
	int err;

	if (argc == 7 && strcmp(argv[1], "bench") == 0) {
		signal(SIGTERM, on_term);
		return bench(arg_int(argv[2]), arg_int(argv[3]), arg_int(argv[4]), arg_int(argv[5]),
			     arg_int(argv[6]));
	}
	if (argc >= 3 && (strcmp(argv[1], "add") == 0 || strcmp(argv[1], "remove") == 0))
		return toolstack(argc, argv);
	if (argc < 3)
		return 2;
	signal(SIGTERM, on_term);
	snprintf(base, sizeof(base), "/local/domain/%s", argv[1]);
	setenv("FAKEXEN_DOMID", argv[1], 1);
	struct pvstats *p = pvstats_open(base, &err);
	if (!p) {
		fprintf(stderr, "guest: open: %s\n", strerror(-err));
		return 1;
	}
	const char *mode = argv[2];
	int rc = 2;
	if (strcmp(mode, "normal") == 0)
		rc = normal(p);
	else if (strcmp(mode, "providers") == 0 && argc == 4)
		rc = providers(p, arg_int(argv[3]));
	else if (strcmp(mode, "churn") == 0)
		rc = churn();
	for (size_t i = 0; i < sizeof(raw_modes) / sizeof(raw_modes[0]); i++) {
		struct raw r = {0};
		if (strcmp(mode, raw_modes[i].mode) != 0)
			continue;
		rc = raw_set(&r, "hostile", mode, raw_modes[i].flags) < 0
			 ? 1
			 : raw_serve(&r, raw_modes[i].flags);
	}
	pvstats_close(p);
	return rc;
}
