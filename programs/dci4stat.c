/* dci4stat: the generic DCI4 statistics display program. Finds every
 * supplier in the supplier directory and prints each statistic the way its
 * presentation asks.   dci4stat [-d DIR] [SUPPLIER...] */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dci4_dir.h"
#include "dci4_format.h"
#include "dci4_gatherer.h"
#include "dci4_supplier.h"

#define VALUES_MAX (16u << 20)	  /* bytes of values one supplier may describe */
#define DCI4STAT_LOOKED_MAX 65536 /* directory entries looked at */

static const char *const supplier_type[] = {"general", "network protocol", "network driver",
					    "mbuf manager"};

static void print_supplier(const char *path, const struct dci4_info *in)
{
	printf("%s: %s\n", in->title, in->description);
	printf("    module %s %u.%02u, %s, interface %u.%02u, at %s\n", in->module,
	       in->s_version / 100, in->s_version % 100,
	       in->type < 4 ? supplier_type[in->type] : "other", in->i_version / 100,
	       in->i_version % 100, path);
	if (in->features)
		printf("    features 0x%08x: DCI4 defines none, the value must be 0\n",
		       in->features);
}

/* Describes, reads and prints one supplier; returns 0 or -errno. */
static int show(const char *path)
{
	struct dci4_conn c;
	struct dci4_info info;
	struct dci4_desc *d = NULL;
	size_t *off = NULL, total = 0;
	uint8_t *values = NULL;
	int rc;

	if ((rc = dci4_connect(&c, path, 2000)) < 0)
		return rc;
	if ((rc = dci4_info(&c, &info)) < 0)
		goto out_disconnect;
	d = calloc(info.max_stat + 1, sizeof(*d));
	off = calloc(info.max_stat + 1, sizeof(*off));
	if (!d || !off) {
		rc = -ENOMEM;
		goto out_disconnect;
	}
	if ((rc = dci4_describe_all(&c, info.max_stat, d)) < 0)
		goto out_disconnect;
	for (uint32_t i = 0; i <= info.max_stat; i++) {
		off[i] = total;
		total += d[i].size;
	}
	if (total > VALUES_MAX || !(values = calloc(1, total ? total : 1))) {
		rc = -E2BIG;
		goto out_disconnect;
	}
	if ((rc = dci4_read_range(&c, d, 0, info.max_stat, values, off)) < 0)
		goto out_disconnect;
	print_supplier(path, &info);
	for (uint32_t i = 0; i <= info.max_stat; i++) {
		char text[DCI4_TEXT_MAX];
		if (d[i].type == ST_UNUSED)
			continue;
		if ((d[i].type == ST_ADDRESS || d[i].type == ST_TIME) && info.i_version < 101)
			snprintf(text, sizeof(text), "(refused: a type of interface 1.01)");
		else
			dci4_format_value(&d[i], values + off[i], text);
		printf("    %-32s %s\n", d[i].name, text);
	}
out_disconnect:
	dci4_disconnect(&c);
	free(d);
	free(off);
	free(values);
	return rc;
}

static bool wanted(const char *name, char **names, int n)
{
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *dir =
	    getenv("DCI4_SUPPLIER_DIR") ? getenv("DCI4_SUPPLIER_DIR") : DCI4_DEFAULT_DIR;
	struct dci4_dir_entry *e;
	struct dci4_dir_skipped skipped;
	char path[4096 + DCI4_NAME_MAX + 8];
	size_t n;
	int opt, failed = 0;

	static const struct option longopts[] = {
	    {"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	while ((opt = getopt_long(argc, argv, "d:h", longopts, NULL)) != -1) {
		if (opt == 'd') {
			dir = optarg;
		} else if (opt == 'h') {
			printf("usage: %s [-d DIR] [SUPPLIER...]\n\n"
			       "Shows the statistics of every DCI4 statistic supplier in DIR, or\n"
			       "of the SUPPLIERs named, each as its presentation asks.\n\n"
			       "  -d, --dir=DIR   the supplier directory (default "
			       "$DCI4_SUPPLIER_DIR, else " DCI4_DEFAULT_DIR ")\n"
			       "  -h, --help      print this and exit\n",
			       argv[0]);
			return 0;
		} else {
			fprintf(stderr, "usage: %s [-d DIR] [SUPPLIER...]; %s --help says more\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	int rc = dci4_dir_list(dir, DCI4STAT_LOOKED_MAX, &e, &n, &skipped);
	if (rc < 0) {
		fprintf(stderr, "dci4stat: %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	if (skipped.bad_names || skipped.truncated)
		fprintf(stderr,
			"dci4stat: %s: %zu sockets with names not of the transport's rule%s\n", dir,
			skipped.bad_names, skipped.truncated ? "; the listing was cut" : "");
	for (size_t i = 0; i < n; i++) {
		if (!wanted(e[i].name, argv + optind, argc - optind))
			continue;
		snprintf(path, sizeof(path), "%s/%s.sock", dir, e[i].name);
		rc = show(path);
		/* A supplier that went away while listed is not an error. */
		if (rc < 0 && rc != -ECONNREFUSED && rc != -ENOENT) {
			fprintf(stderr, "dci4stat: %s: %s\n", path, strerror(-rc));
			failed = 1;
		}
	}
	free(e);
	return failed;
}
