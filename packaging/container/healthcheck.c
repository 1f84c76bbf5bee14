/* The image's health check: one HTTP GET of the exporter's /-/healthy on
 * the loopback, exit 0 on "200", 1 otherwise. The image has no shell, curl
 * or wget for a runtime's exec health check to call; this is all it needs.
 * Usage: binstat_healthcheck [PORT [PATH]]   (default 10187 /-/healthy) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { HC_TIMEOUT_S = 5 };

/* hc_port: the port argument as a number, 0 when it is not one. */
static unsigned short hc_port(const char *arg)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < 1 || v > 65535)
		return 0;
	return (unsigned short)v;
}

/* hc_connect: a TCP socket to 127.0.0.1:port with send and receive time
 * limits (a hung exporter fails the check), or -errno. */
static int hc_connect(unsigned short port)
{
	struct timeval tv = {.tv_sec = HC_TIMEOUT_S};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* hc_status: the HTTP status of GET path on fd, or -errno; reads only the
 * status line's start, whatever the body. */
static int hc_status(int fd, const char *path)
{
	char req[512], line[32];
	size_t got = 0;
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);

	if (n < 0 || (size_t)n >= sizeof(req))
		return -EINVAL;
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		return errno ? -errno : -EIO;
	while (got < sizeof(line) - 1) {
		ssize_t r = recv(fd, line + got, sizeof(line) - 1 - got, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	line[got] = '\0';
	if (strncmp(line, "HTTP/1.", 7) != 0 || got < 12)
		return -EPROTO;
	return (int)strtol(line + 9, NULL, 10);
}

int main(int argc, char **argv)
{
	unsigned short port = argc > 1 ? hc_port(argv[1]) : 10187;
	const char *path = argc > 2 ? argv[2] : "/-/healthy";
	int fd, status;

	if (port == 0 || path[0] != '/') {
		fprintf(stderr, "usage: binstat_healthcheck [PORT [PATH]]\n");
		return 2;
	}
	fd = hc_connect(port);
	if (fd < 0) {
		fprintf(stderr, "binstat_healthcheck: 127.0.0.1:%u: %s\n", port, strerror(-fd));
		return 1;
	}
	status = hc_status(fd, path);
	close(fd);
	if (status != 200) {
		fprintf(stderr, "binstat_healthcheck: GET %s: %s %d\n", path,
			status < 0 ? strerror(-status) : "HTTP", status);
		return 1;
	}
	return 0;
}
