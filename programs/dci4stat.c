/* dci4stat: the generic DCI4 statistics display program. Finds every
 * supplier in the supplier directory and prints each statistic the way its
 * presentation asks.   dci4stat [-d DIR] [SUPPLIER...] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dci4_format.h"
#include "dci4_gatherer.h"
#include "dci4_supplier.h"

#define VALUES_MAX (16u << 20) /* bytes of values one supplier may describe */

static const char *const supplier_type[] = {"general", "network protocol", "network driver",
					    "mbuf manager"};

static void print_supplier(const char *path, const struct dci4_info *in)
{
	printf("%s: %s\n", in->title, in->description);
	printf("    module %s %u.%02u, %s, interface %u.%02u, at %s\n", in->module,
	       in->s_version / 100, in->s_version % 100,
	       in->type < 4 ? supplier_type[in->type] : "other", in->i_version / 100,
	       in->i_version % 100, path);
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
		goto out;
	d = calloc(info.max_stat + 1, sizeof(*d));
	off = calloc(info.max_stat + 1, sizeof(*off));
	if (!d || !off) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = dci4_describe_all(&c, info.max_stat, d)) < 0)
		goto out;
	for (uint32_t i = 0; i <= info.max_stat; i++) {
		off[i] = total;
		total += d[i].size;
	}
	if (total > VALUES_MAX || !(values = calloc(1, total ? total : 1))) {
		rc = -E2BIG;
		goto out;
	}
	if ((rc = dci4_read_range(&c, d, 0, info.max_stat, values, off)) < 0)
		goto out;
	print_supplier(path, &info);
	for (uint32_t i = 0; i <= info.max_stat; i++) {
		char text[DCI4_TEXT_MAX];
		if (d[i].type == ST_UNUSED)
			continue;
		dci4_format_value(&d[i], values + off[i], text);
		printf("    %-32s %s\n", d[i].name, text);
	}
out:
	dci4_disconnect(&c);
	free(d);
	free(off);
	free(values);
	return rc;
}

static bool wanted(const char *path, char **names, int n)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (n == 0)
		return true;
	for (int i = 0; i < n; i++)
		if (strncmp(base, names[i], strlen(names[i])) == 0 &&
		    strcmp(base + strlen(names[i]), ".sock") == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const char *dir =
	    getenv("DCI4_SUPPLIER_DIR") ? getenv("DCI4_SUPPLIER_DIR") : DCI4_DEFAULT_DIR;
	char *paths[DCI4_GATHER_SUPPLIERS_MAX];
	int opt, failed = 0;

	while ((opt = getopt(argc, argv, "d:h")) != -1) {
		if (opt == 'd') {
			dir = optarg;
		} else {
			fprintf(stderr, "usage: %s [-d DIR] [SUPPLIER...]\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	int n = dci4_list_suppliers(dir, paths, DCI4_GATHER_SUPPLIERS_MAX);
	if (n < 0) {
		fprintf(stderr, "dci4stat: %s: %s\n", dir, strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (wanted(paths[i], argv + optind, argc - optind)) {
			int rc = show(paths[i]);
			/* A supplier that went away while listed is not an error. */
			if (rc < 0 && rc != -ECONNREFUSED && rc != -ENOENT) {
				fprintf(stderr, "dci4stat: %s: %s\n", paths[i], strerror(-rc));
				failed = 1;
			}
		}
		free(paths[i]);
	}
	return failed;
}
