/* Log lines as journal entries, by journald's native protocol (no
 * libsystemd): one datagram per entry, scattered from the caller's strings
 * with sendmsg, so nothing is copied and nothing is cut. An entry too big
 * for one datagram is refused by the kernel (EMSGSIZE) and the caller
 * writes the line to stderr; lines are kept far below that size. */
#include "journal.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define JOURNAL_PAIRS_MAX 48 /* fields an entry has besides the writer's own */
#define OWN_FIELDS 3	     /* MESSAGE, PRIORITY, SYSLOG_IDENTIFIER */
#define IOV_PER_FIELD 4

/* JOURNAL_STREAM is "DEVICE:INODE" in decimal; both must be fd 2's. */
static bool stderr_is_journal(void)
{
	const char *s = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	dev = strtoull(s, &end, 10);
	if (errno || end == s || *end != ':')
		return false;
	s = end + 1;
	ino = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static const char *socket_path(void)
{
	const char *p = getenv(JOURNAL_TEST_SOCKET_ENV);
	return p && *p ? p : JOURNAL_SOCKET;
}

int journal_open(void)
{
	if (!stderr_is_journal())
		return -1;
	return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

void journal_field_name(const char *key, char *out)
{
	static const char *const own[] = {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"};
	size_t n = 0;
	bool prefix;

	for (const char *k = key; *k && n < JOURNAL_FIELD_MAX; k++) {
		char c = *k;
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			c = '_';
		out[n++] = c;
	}
	out[n] = '\0';
	prefix = out[0] == '_' || (out[0] >= '0' && out[0] <= '9') || !out[0];
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]) && !prefix; i++)
		prefix = strcmp(out, own[i]) == 0;
	if (prefix) {
		n = n > JOURNAL_FIELD_MAX - 2 ? JOURNAL_FIELD_MAX - 2 : n;
		memmove(out + 2, out, n);
		out[0] = 'X';
		out[1] = '_';
		out[n + 2] = '\0';
	}
}

struct entry {
	struct iovec iov[(JOURNAL_PAIRS_MAX + OWN_FIELDS) * IOV_PER_FIELD];
	size_t niov;
	char name[JOURNAL_PAIRS_MAX + OWN_FIELDS][JOURNAL_FIELD_MAX + 2];
	uint64_t len[JOURNAL_PAIRS_MAX + OWN_FIELDS]; /* little-endian, binary form */
	size_t nfields;
};

static void iov_add(struct entry *e, const void *p, size_t n)
{
	e->iov[e->niov++] = (struct iovec){(void *)p, n};
}

/* `name` is a valid field name; its separator is written after it here. */
static void field(struct entry *e, const char *name, const char *value)
{
	size_t i = e->nfields++;
	size_t n = strlen(name), vn = strlen(value);
	bool binary = memchr(value, '\n', vn) != NULL;

	memcpy(e->name[i], name, n);
	e->name[i][n] = binary ? '\n' : '=';
	iov_add(e, e->name[i], n + 1);
	if (binary) {
		e->len[i] = htole64((uint64_t)vn);
		iov_add(e, &e->len[i], sizeof(e->len[i]));
	}
	iov_add(e, value, vn);
	iov_add(e, "\n", 1);
}

int journal_send(int fd, int priority, const char *msg, const char *const *kv, size_t n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = socket_path();
	struct entry e;
	char prio[4];

	if (n > JOURNAL_PAIRS_MAX)
		return -E2BIG;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	e.niov = e.nfields = 0;
	snprintf(prio, sizeof(prio), "%d", priority & 7);
	field(&e, "MESSAGE", msg);
	field(&e, "PRIORITY", prio);
	field(&e, "SYSLOG_IDENTIFIER", program_invocation_short_name);
	for (size_t i = 0; i < n; i++) {
		char name[JOURNAL_FIELD_MAX + 1];
		journal_field_name(kv[2 * i], name);
		field(&e, name, kv[2 * i + 1] ? kv[2 * i + 1] : "");
	}
	struct msghdr mh = {.msg_name = &sa,
			    .msg_namelen = (socklen_t)sizeof(sa),
			    .msg_iov = e.iov,
			    .msg_iovlen = e.niov};
	/* A journald that does not keep up must not stop the thread that
	 * logs: the line goes to stderr (its stream to journald) instead. */
	return sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -errno : 0;
}
