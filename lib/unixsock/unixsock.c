/* Listening Unix sockets at a path. chmod(2) after bind(2) would follow a
 * symlink someone swapped in meanwhile; fchmodat with AT_SYMLINK_NOFOLLOW
 * refuses one (glibc does it through an O_PATH descriptor). */
#include "unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int remove_stale(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST; /* not ours to delete */
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int unixsock_listen(const char *path, int type, unsigned mode, int backlog, struct unixsock_id *id)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	size_t len = strlen(path);
	int fd, rc;

	if (len == 0 || len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if ((rc = remove_stale(path)) < 0)
		goto err_close_fd;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		goto err_close_fd;
	}
	errno = 0;
	if (fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW) < 0 || lstat(path, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || listen(fd, backlog) < 0) {
		rc = errno ? -errno : -EEXIST;
		goto err_unlink;
	}
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return fd;
err_unlink:
	unlink(path);
err_close_fd:
	close(fd);
	return rc;
}

void unixsock_unlink(const char *path, const struct unixsock_id *id)
{
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == id->dev &&
	    st.st_ino == id->ino)
		unlink(path);
}
