/* The hand-over socket, the fourth way the KVM stats interface was designed
 * for: "the stats data reading workload can be handed over to other
 * unprivileged process". Everything a peer sends is checked: the magic, each
 * line, the numbers, and exactly one fd a message. */
#include "kvm_handover.h"

#include "kvm_nostats.h"
#include "kvm_procfd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int parse_int(const char *s, size_t n, long max, long *out)
{
	char num[16];
	char *end;
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	long v = strtol(num, &end, 10);
	if (*end || v < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Copies a value into dst unless it holds a byte below space (a label value
 * may be anything printable; the emitter escapes it). */
static int copy_value(char *dst, size_t dstlen, const char *s, size_t n)
{
	if (n >= dstlen)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

int kvm_handover_parse(const char *buf, size_t len, struct kvm_handover_msg *m)
{
	size_t magic = strlen(KVM_HANDOVER_MAGIC);
	const char *p = buf + magic, *end = buf + len;

	memset(m, 0, sizeof(*m));
	m->vcpu = -1;
	m->nostats = -1;
	if (len < magic || memcmp(buf, KVM_HANDOVER_MAGIC, magic) != 0)
		return -EINVAL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *eq = memchr(p, '=', (size_t)(eol - p));
		long v;
		if (!eq)
			return -EINVAL;
		size_t klen = (size_t)(eq - p), vlen = (size_t)(eol - eq - 1);
		int rc;
		if (klen == 4 && memcmp(p, "name", 4) == 0)
			rc = copy_value(m->ident.name, sizeof(m->ident.name), eq + 1, vlen);
		else if (klen == 4 && memcmp(p, "uuid", 4) == 0)
			rc = copy_value(m->ident.uuid, sizeof(m->ident.uuid), eq + 1, vlen);
		else if (klen == 3 && memcmp(p, "vmm", 3) == 0)
			rc = copy_value(m->ident.vmm, sizeof(m->ident.vmm), eq + 1, vlen);
		else if (klen == 3 && memcmp(p, "pid", 3) == 0) {
			rc = parse_int(eq + 1, vlen, 4194304, &v);
			m->pid = (pid_t)v;
		} else if (klen == 4 && memcmp(p, "vcpu", 4) == 0) {
			rc = parse_int(eq + 1, vlen, 1 << 20, &v);
			m->vcpu = (int)v;
		} else if (klen == 11 && memcmp(p, "no_stats_fd", 11) == 0) {
			m->nostats = kvm_nostats_parse(eq + 1, vlen);
			rc = m->nostats < 0 ? -EINVAL : 0;
		} else
			rc = -EINVAL;
		if (rc < 0)
			return rc;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

#define RECV_FDS_MAX 4 /* room for fds in one message; one is taken */

int kvm_handover_recv(int conn, struct kvm_handover_msg *m, int *fd)
{
	char buf[KVM_HANDOVER_MSG_MAX];
	union {
		char space[CMSG_SPACE(RECV_FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.space,
			     .msg_controllen = sizeof(ctl.space)};
	int nfds = 0, fds[RECV_FDS_MAX];

	*fd = -1;
	ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -EPIPE;
	/* The fds come before any verdict on the text: a zero-length message
	 * may carry some too, and every fd received must be closed or kept. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && nfds < RECV_FDS_MAX; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (n == 0 && nfds == 0 && !(msg.msg_flags & MSG_CTRUNC))
		return -EPIPE; /* the end of the stream */
	/* The kernel cuts the fds short before our room is full only when it
	 * cannot install one (no fd left: EMFILE, ENFILE): lost, not malformed.
	 * More fds than the room fills it. */
	if ((msg.msg_flags & MSG_CTRUNC) && nfds < RECV_FDS_MAX) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return -EMFILE;
	}
	/* A truncated message or control block, or other than one fd (none
	 * for a report): refused. */
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    kvm_handover_parse(buf, (size_t)n, m) < 0 || nfds != (m->nostats < 0 ? 1 : 0)) {
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return -EINVAL;
	}
	*fd = nfds ? fds[0] : -1;
	return 1;
}

static bool on_list(const uint64_t *list, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == id)
			return true;
	return false;
}

/* Whether any supplementary group of the peer is listed. */
static bool groups_listed(int conn, const uint64_t *gids, size_t ngids)
{
	gid_t small[64], *g = small;
	socklen_t len = sizeof(small);
	bool found = false;

	if (getsockopt(conn, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0) {
		if (errno != ERANGE || !(g = malloc(len))) /* len: the size needed */
			return false;
		if (getsockopt(conn, SOL_SOCKET, SO_PEERGROUPS, g, &len) < 0)
			len = 0;
	}
	for (size_t i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = on_list(gids, ngids, g[i]);
	if (g != small)
		free(g);
	return found;
}

int kvm_handover_peer(int conn, const uint64_t *uids, size_t nuids, const uint64_t *gids,
		      size_t ngids, struct kvm_handover_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	if (on_list(uids, nuids, cred.uid) || on_list(gids, ngids, cred.gid) ||
	    (ngids && groups_listed(conn, gids, ngids)))
		return 0;
	return -EACCES;
}

bool kvm_handover_may_name(const char *proc, const struct kvm_handover_peer *peer, pid_t pid)
{
	uid_t u[3];

	if (pid == peer->pid || peer->uid == 0)
		return true;
	return kvm_proc_uids(proc, pid, u) && u[0] == peer->uid && u[1] == peer->uid &&
	       u[2] == peer->uid;
}
