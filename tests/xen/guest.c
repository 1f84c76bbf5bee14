/* A simulated guest (and toolstack) for the Xen tests, on the fake
 * hypervisor (fakexen.c) and the real cxenstored.
 *   guest add DOMID NAME       toolstack: name the domain and introduce it
 *   guest remove DOMID         toolstack: release it and remove its keys
 *   guest DOMID MODE [N]       a guest with FAKEXEN_DOMID=DOMID
 * MODE: normal (provider "network-0", sets Tx and Rx, through libpvstats;
 * withdraws on SIGTERM), many N (N providers x 2 sets x 64 counters),
 * silent (never answers), flood (answers, and signals without end),
 * badname, nonul, badtype (one bad tuple among good ones), ecfirst
 * (event-channel before the refs), outoforder (refs 0 and 2, no 1),
 * toomanyrefs (20 pages), ungranted (refs never granted), churn (a set
 * created and deleted without end), providers N (N providers). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	unsigned domid = (unsigned)atoi(argv[2]);
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

static int serve(struct pvstats *p)
{
	struct pollfd pfd = {pvstats_fd(p), POLLIN, 0};
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		if (poll(&pfd, 1, 100) > 0)
			pvstats_dispatch(p);
	return 0;
}

static int normal(struct pvstats *p)
{
	static const struct pvstats_stat net[] = {
	    {PVSTATS_U64, "bytes"},	  {PVSTATS_U64, "packets"},
	    {PVSTATS_S64, "queue delta"}, {PVSTATS_DOUBLE, "load"},
	    {PVSTATS_ASCII, "link"},
	};
	struct counters tx = {0, 5}, rx = {0, 5};
	int err;
	struct pvstats_set *a = pvstats_set_open(p, "network-0", "Tx", net, 5, update_mixed, &tx,
						 &err);
	struct pvstats_set *b = pvstats_set_open(p, "network-0", "Rx", net, 5, update_mixed, &rx,
						 &err);
	if (!a || !b) {
		fprintf(stderr, "guest: set: %s\n", strerror(-err));
		return 1;
	}
	serve(p);
	pvstats_set_withdraw(a, 300);
	pvstats_set_withdraw(b, 300);
	return 0;
}

static int many(struct pvstats *p, int providers)
{
	struct pvstats_stat st[64];
	char names[64][16], prov[32];
	struct counters *c = calloc((size_t)providers * 2, sizeof(*c));
	int err;
	for (int i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "counter %d", i);
		st[i] = (struct pvstats_stat){PVSTATS_U64, names[i]};
	}
	for (int k = 0; k < providers; k++) {
		snprintf(prov, sizeof(prov), "provider-%d", k);
		for (int s = 0; s < 2; s++) {
			c[2 * k + s].n = 64;
			if (!pvstats_set_open(p, prov, s ? "B" : "A", st, 64, update, &c[2 * k + s],
					      &err)) {
				fprintf(stderr, "guest: set: %s\n", strerror(-err));
				return 1;
			}
		}
	}
	return serve(p);
}

int main(int argc, char **argv)
{
	int err;

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
	else if (strcmp(mode, "many") == 0 && argc == 4)
		rc = many(p, atoi(argv[3]));
	pvstats_close(p);
	return rc;
}
