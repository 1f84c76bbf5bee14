/* The supplier directory: a bounded, sorted listing by the transport's
 * naming rule, and the connect every gatherer does. */
#include "dci4_dir.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "growarr.h"

/* "<name>.sock" with name 1 to 64 of [A-Za-z0-9._-] (the transport's rule). */
static bool socket_name(const char *file, char *name)
{
	size_t n = strlen(file);

	if (n <= 5 || n - 5 > DCI4_NAME_MAX || strcmp(file + n - 5, ".sock") != 0)
		return false;
	n -= 5;
	for (size_t i = 0; i < n; i++) {
		char c = file[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	memcpy(name, file, n);
	name[n] = '\0';
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct dci4_dir_entry *)a)->name,
		      ((const struct dci4_dir_entry *)b)->name);
}

int dci4_dir_list(const char *dir, size_t looked_max, struct dci4_dir_entry **out, size_t *n,
		  struct dci4_dir_skipped *skipped)
{
	DIR *d = opendir(dir);
	struct growarr e;
	size_t looked = 0;
	struct dirent *de;

	*n = 0;
	*out = NULL;
	*skipped = (struct dci4_dir_skipped){0};
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	growarr_init(&e, sizeof(struct dci4_dir_entry), looked_max);
	while ((de = readdir(d)) && looked++ < looked_max) {
		struct dci4_dir_entry one = {.ino = de->d_ino};
		if (de->d_type != DT_SOCK && de->d_type != DT_UNKNOWN)
			continue;
		if (!socket_name(de->d_name, one.name)) {
			skipped->bad_names++;
			continue;
		}
		if (growarr_push(&e, &one) < 0)
			break; /* no memory: what was listed so far */
	}
	skipped->truncated = looked > looked_max;
	closedir(d);
	if (e.n > 1)
		qsort(e.p, e.n, sizeof(struct dci4_dir_entry), cmp_entry);
	*n = e.n;
	*out = growarr_take(&e);
	return 0;
}

int dci4_dial(const char *path, bool nonblock)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(path);
	int fd;

	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}
