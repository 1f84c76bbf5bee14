/* A whole small file, read with a bound on size and no wait. */
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int readfile_bounded(const char *path, size_t max, bool nofollow, char **out, size_t *len)
{
	int fd =
	    open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
	struct stat st;
	ssize_t n = 0;
	int rc;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	rc = !S_ISREG(st.st_mode) ? -EINVAL : (size_t)st.st_size > max ? -EFBIG : 0;
	if (rc < 0)
		goto out_close;
	char *buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out_close;
	}
	/* What fstat said, at most: a file growing meanwhile is cut there. */
	for (*len = 0; *len < (size_t)st.st_size; *len += (size_t)n) {
		n = read(fd, buf + *len, (size_t)st.st_size - *len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			break;
	}
	if (n < 0) {
		rc = -errno;
		free(buf);
		*len = 0;
		goto out_close;
	}
	buf[*len] = '\0';
	*out = buf;
out_close:
	close(fd);
	return rc;
}
