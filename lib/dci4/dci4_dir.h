/* Where a gatherer finds suppliers (docs/dci4-transport.md): the sockets
 * "<name>.sock" of one directory, and connecting to one of them. Shared by
 * dci4stat and the DCI collector. */
#ifndef DCI4_DIR_H
#define DCI4_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DCI4_NAME_MAX 64 /* a socket's name before ".sock" */

struct dci4_dir_entry {
	char name[DCI4_NAME_MAX + 1]; /* 1 to 64 of [A-Za-z0-9._-] */
	ino_t ino;		      /* a new socket of the same name is another supplier */
};

/* What a listing left out, for the caller to count. */
struct dci4_dir_skipped {
	size_t bad_names; /* sockets not named by the transport's rule */
	bool truncated;	  /* more than `looked_max` entries: the rest unread */
};

/* The suppliers' sockets in `dir`, sorted by name, in a malloc'd array of
 * *n (free it; NULL when none). At most `looked_max` directory entries are
 * looked at, so a directory filled by a hostile user costs a bounded scan.
 * A missing directory lists nothing. -errno when it cannot be read. */
int dci4_dir_list(const char *dir, size_t looked_max, struct dci4_dir_entry **out, size_t *n,
		  struct dci4_dir_skipped *skipped);

/* A connected socket to the supplier at `path` (non-blocking if asked), or
 * -errno. A Unix socket connects at once or fails: ECONNREFUSED for a
 * supplier gone, EAGAIN for one whose backlog is full. */
int dci4_dial(const char *path, bool nonblock);

#endif
