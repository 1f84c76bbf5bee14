/* Fuzzes the web config loader (--web.config.file): the toolkit's keys,
 * users and hashes, TLS names turned into GnuTLS priorities. The file is
 * a memfd, so the loader reads it as it reads any file. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conftree.h"
#include "webconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONF_ERR_MAX], path[64];
	int fd = memfd_create("web.yml", MFD_CLOEXEC);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	webconf_free(webconf_load(path, err, sizeof(err)));
	close(fd);
	return 0;
}
