/* Listening Unix sockets at a path, made and removed safely: shared by the
 * KVM hand-over socket and the DCI4 supplier library. */
#ifndef UNIXSOCK_H
#define UNIXSOCK_H

#include <sys/types.h>

/* Which file a listener bound: removal touches only that file. */
struct unixsock_id {
	dev_t dev;
	ino_t ino;
};

/* A non-blocking, close-on-exec listening socket of `type` at `path`, with
 * the file's mode set to `mode` without following a symlink planted at the
 * path. A stale socket left at the path by an earlier run is replaced; any
 * other kind of file there is an error (-EEXIST). Returns the fd or -errno. */
int unixsock_listen(const char *path, int type, unsigned mode, int backlog, struct unixsock_id *id);
/* Removes `path` only if it is still the socket `id` names: a newer
 * listener that replaced it keeps its file. */
void unixsock_unlink(const char *path, const struct unixsock_id *id);

#endif
