/* A non-blocking DCI4 connection. The bytes a reply may take are fixed by
 * its request before anything is allocated, so a supplier that claims a
 * huge reply costs nothing but a counted error. */
#include "dci_link.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dci4_dir.h"

#define INFO_REPLY_MAX (44 + 3 * DCI4_STRING_MAX)

bool dci_budget_take(struct dci_budget *b, size_t n)
{
	if (!b)
		return true;
	if (n > b->max - b->used)
		return false;
	b->used += n;
	return true;
}

void dci_budget_give(struct dci_budget *b, size_t n)
{
	if (b)
		b->used -= n;
}

void dci_link_init(struct dci_link *l, struct dci_budget *budget)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->budget = budget;
	growarr_init(&l->bodybuf, 1, DCI4_BODY_MAX);
}

int dci_link_connect(struct dci_link *l, const char *path)
{
	l->fd = dci4_dial(path, true);
	return l->fd < 0 ? l->fd : 0;
}

void dci_link_close(struct dci_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->outlen = l->outoff = 0;
	l->qhead = l->qn = 0;
	l->hgot = 0;
	l->blen = l->bgot = 0;
}

void dci_link_free(struct dci_link *l)
{
	dci_link_close(l);
	dci_budget_give(l->budget, l->bodybuf.cap);
	growarr_free(&l->bodybuf);
}

int dci_link_queue(struct dci_link *l, const struct dci_req *r)
{
	if (l->qn == DCI_LINK_QUEUE_MAX)
		return -ENOSPC;
	if (l->outoff == l->outlen)
		l->outoff = l->outlen = 0;
	/* out holds at most one request per queue slot, so this fits once the
	 * sent bytes are moved out of the way. */
	if (l->outlen + DCI_REQ_LEN > sizeof(l->out)) {
		memmove(l->out, l->out + l->outoff, l->outlen - l->outoff);
		l->outlen -= l->outoff;
		l->outoff = 0;
	}
	uint8_t *p = l->out + l->outlen;
	size_t body = r->op == SP_INFO ? 0 : 12;
	dci4_put_header(p, r->op, (uint32_t)body);
	if (body) {
		dci4_put32(p + DCI4_HEADER_LEN, r->first);
		dci4_put32(p + DCI4_HEADER_LEN + 4, r->last);
		dci4_put32(p + DCI4_HEADER_LEN + 8, r->bufsize);
	}
	l->outlen += DCI4_HEADER_LEN + body;
	l->q[(l->qhead + l->qn++) % DCI_LINK_QUEUE_MAX] = *r;
	return 0;
}

int dci_link_flush(struct dci_link *l)
{
	while (l->outoff < l->outlen) {
		ssize_t r = send(l->fd, l->out + l->outoff, l->outlen - l->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return errno == EAGAIN ? 1 : 0;
		if (r <= 0)
			return -EPIPE;
		l->outoff += (size_t)r;
	}
	return 0;
}

/* 0 when n bytes are in buf (got counts them), 1 when more must come. */
static int fill(struct dci_link *l, uint8_t *buf, size_t n, size_t *got)
{
	while (*got < n) {
		ssize_t r = recv(l->fd, buf + *got, n - *got, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return 1;
		if (r <= 0)
			return -EPIPE;
		*got += (size_t)r;
	}
	return 0;
}

static uint32_t reply_max(const struct dci_req *r)
{
	return r->op == SP_INFO ? INFO_REPLY_MAX : 12 + r->bufsize;
}

/* The header is in: checks it against the request at the head. */
static int take_header(struct dci_link *l)
{
	struct dci4_header h;
	const struct dci_req *r = &l->q[l->qhead];
	int rc = dci4_get_header(l->hdr, sizeof(l->hdr), &h);

	if (rc < 0)
		return rc; /* -EMSGSIZE past any reply's cap */
	if (l->qn == 0 || h.op != (r->op | DCI4_REPLY) || h.length < 4)
		return -EPROTO;
	if (h.length > reply_max(r))
		return -EMSGSIZE;
	if (h.length > l->bodybuf.cap) {
		size_t more = h.length - l->bodybuf.cap;
		if (!dci_budget_take(l->budget, more))
			return -ENOBUFS;
		if (growarr_reserve(&l->bodybuf, h.length) < 0) {
			dci_budget_give(l->budget, more);
			return -ENOMEM;
		}
	}
	l->blen = h.length;
	l->bgot = 0;
	return 0;
}

int dci_link_recv(struct dci_link *l, struct dci_req *req, const uint8_t **body, uint32_t *len)
{
	int rc;

	if (l->hgot < DCI4_HEADER_LEN) {
		if ((rc = fill(l, l->hdr, DCI4_HEADER_LEN, &l->hgot)) != 0)
			return rc < 0 ? rc : 0;
		if ((rc = take_header(l)) < 0)
			return rc;
	}
	size_t got = l->bgot;
	rc = fill(l, l->body, l->blen, &got);
	l->bgot = (uint32_t)got;
	if (rc != 0)
		return rc < 0 ? rc : 0;
	*req = l->q[l->qhead];
	l->qhead = (l->qhead + 1) % DCI_LINK_QUEUE_MAX;
	l->qn--;
	l->hgot = 0;
	*body = l->body;
	*len = l->blen;
	uint32_t status = dci4_get32(l->body);
	if (status == DCI4_BUSY)
		return -EBUSY;
	return status == DCI4_OK ? 1 : -EREMOTEIO;
}
