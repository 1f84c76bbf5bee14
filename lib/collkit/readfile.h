/* Reading a whole small file that someone else writes (a configuration, a
 * PEM file, libvirt's domain status), without being made to wait or to
 * allocate without bound. */
#ifndef READFILE_H
#define READFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Reads the regular file `path`, of at most `max` bytes, into a malloc'd
 * NUL-terminated buffer (*out, *len). It is opened non-blocking, so a FIFO
 * put in its place is refused at once rather than hanging the reader, and
 * with `nofollow` never through a symbolic link. Returns 0, or -errno:
 * -EINVAL not a regular file, -EFBIG larger than `max`, -ELOOP a link. */
int readfile_bounded(const char *path, size_t max, bool nofollow, char **out, size_t *len);

#endif
