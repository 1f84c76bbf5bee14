/* The image's health check: one HTTP GET of the exporter's /-/healthy,
 * exit 0 on "200", 1 otherwise. The image has no shell, curl or wget for a
 * runtime's exec health check to call; this is all it needs. With basic
 * auth in --web.config.file every path answers 401 without credentials:
 * the probe sends them from a file (BINSTAT_HEALTHCHECK_AUTH_FILE) or the
 * environment (BINSTAT_HEALTHCHECK_AUTH), "USER:PASSWORD", never from its
 * arguments, which any user of the host sees in ps.
 * Usage: binstat_healthcheck [PORT|HOST:PORT|[V6]:PORT [PATH]]
 * (default 127.0.0.1:10187 /-/healthy; HOST is a numeric address) */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { HC_TIMEOUT_S = 5, HC_CRED_MAX = 512, HC_HOST_MAX = 64 };

struct hc_target {
	char host[HC_HOST_MAX]; /* numeric, without brackets */
	char port[8];
	char hostport[HC_HOST_MAX + 12]; /* for the Host header */
};

/* hc_target_parse: PORT, HOST:PORT or [V6]:PORT into t; -EINVAL when it
 * is none of them or the port is not 1-65535. */
static int hc_target_parse(const char *arg, struct hc_target *t)
{
	const char *colon = strrchr(arg, ':'), *port = colon ? colon + 1 : arg;
	size_t hlen = colon ? (size_t)(colon - arg) : 0;
	const char *host = arg;
	char *end = NULL;
	long v;

	if (!colon) {
		host = "127.0.0.1";
		hlen = strlen(host);
	} else if (hlen >= 2 && arg[0] == '[' && arg[hlen - 1] == ']') {
		host = arg + 1;
		hlen -= 2;
	}
	errno = 0;
	v = strtol(port, &end, 10);
	if (errno != 0 || end == port || *end != '\0' || v < 1 || v > 65535 || hlen == 0 ||
	    hlen >= sizeof(t->host))
		return -EINVAL;
	snprintf(t->host, sizeof(t->host), "%.*s", (int)hlen, host);
	snprintf(t->port, sizeof(t->port), "%ld", v);
	snprintf(t->hostport, sizeof(t->hostport), strchr(t->host, ':') ? "[%s]:%s" : "%s:%s",
		 t->host, t->port);
	return 0;
}

/* hc_connect: a TCP socket to the target with send and receive time
 * limits (a hung exporter fails the check), or -errno. */
static int hc_connect(const struct hc_target *t)
{
	struct timeval tv = {.tv_sec = HC_TIMEOUT_S};
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	int fd, e;

	if (getaddrinfo(t->host, t->port, &hints, &ai) != 0 || !ai)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		goto err_free_ai;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		e = errno;
		goto err_close_fd;
	}
	freeaddrinfo(ai);
	return fd;
err_close_fd:
	close(fd);
err_free_ai:
	freeaddrinfo(ai);
	return -e;
}

/* hc_creds: "USER:PASSWORD" into out from the file BINSTAT_HEALTHCHECK_AUTH_FILE
 * names (its first line) or else BINSTAT_HEALTHCHECK_AUTH; 0 with out
 * empty when neither is set, or -errno (unreadable, too long, no ':'). */
static int hc_creds(char *out, size_t len)
{
	const char *file = getenv("BINSTAT_HEALTHCHECK_AUTH_FILE");
	const char *env = getenv("BINSTAT_HEALTHCHECK_AUTH");
	size_t n = 0;

	out[0] = '\0';
	if (file && file[0]) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		ssize_t r;

		if (fd < 0)
			return -errno;
		r = read(fd, out, len - 1);
		close(fd);
		if (r < 0)
			return -EIO;
		n = (size_t)r;
		out[n] = '\0';
		n = strcspn(out, "\r\n");
		if (n == len - 1)
			return -E2BIG;
		out[n] = '\0';
	} else if (env && env[0]) {
		n = strlen(env);
		if (n >= len)
			return -E2BIG;
		memcpy(out, env, n + 1);
	} else {
		return 0;
	}
	return strchr(out, ':') ? 0 : -EINVAL;
}

/* hc_base64: src's base64 into out (4/3 of it and a NUL must fit). */
static void hc_base64(const char *src, char *out)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strlen(src), o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
}

/* hc_status: the HTTP status of GET path on fd, with the credentials when
 * there are, or -errno; reads only the status line's start. */
static int hc_status(int fd, const struct hc_target *t, const char *path, const char *creds)
{
	char req[2048], auth[HC_CRED_MAX * 4 / 3 + 64] = "", line[32];
	size_t got = 0;
	int n;

	if (creds[0]) {
		char enc[HC_CRED_MAX * 4 / 3 + 8];

		hc_base64(creds, enc);
		snprintf(auth, sizeof(auth), "Authorization: Basic %s\r\n", enc);
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\n%s\r\n", path, t->hostport,
		     auth);
	explicit_bzero(auth, sizeof(auth));
	if (n < 0 || (size_t)n >= sizeof(req))
		return -EINVAL;
	ssize_t sent = send(fd, req, (size_t)n, MSG_NOSIGNAL);
	explicit_bzero(req, sizeof(req));
	if (sent != n)
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
	struct hc_target t;
	const char *path = argc > 2 ? argv[2] : "/-/healthy";
	char creds[HC_CRED_MAX];
	int fd, status, rc;
	bool sent_creds;

	if (argc > 3 || hc_target_parse(argc > 1 ? argv[1] : "10187", &t) != 0 ||
	    path[0] != '/' || strpbrk(path, " \r\n")) {
		fprintf(stderr, "usage: binstat_healthcheck [PORT|HOST:PORT|[V6]:PORT [PATH]]\n"
				"credentials: BINSTAT_HEALTHCHECK_AUTH_FILE=FILE (USER:PASSWORD) "
				"or BINSTAT_HEALTHCHECK_AUTH=USER:PASSWORD\n");
		return 2;
	}
	if ((rc = hc_creds(creds, sizeof(creds))) < 0) {
		fprintf(stderr, "binstat_healthcheck: credentials: %s\n", strerror(-rc));
		return 2;
	}
	fd = hc_connect(&t);
	if (fd < 0) {
		fprintf(stderr, "binstat_healthcheck: %s: %s\n", t.hostport, strerror(-fd));
		return 1;
	}
	sent_creds = creds[0] != '\0';
	status = hc_status(fd, &t, path, creds);
	explicit_bzero(creds, sizeof(creds));
	close(fd);
	if (status != 200) {
		fprintf(stderr, "binstat_healthcheck: GET %s: %s %d%s\n", path,
			status < 0 ? strerror(-status) : "HTTP", status,
			status == 401 ? (sent_creds ? "" : " (no credentials given)") : "");
		return 1;
	}
	return 0;
}
