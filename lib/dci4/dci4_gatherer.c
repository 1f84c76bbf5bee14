/* The gatherer's side of DCI4: every reply is checked against the request
 * that caused it and against the caps, and every wait has a timeout, so a
 * hostile or dying supplier costs a bounded time and memory. */
#include "dci4_gatherer.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dci4_dir.h"

int dci4_connect(struct dci4_conn *c, const char *path, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
	c->fd = dci4_dial(path, false);
	return c->fd < 0 ? c->fd : 0;
}

void dci4_disconnect(struct dci4_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int io_full(struct dci4_conn *c, void *buf, size_t n, bool out)
{
	uint8_t *p = buf;
	while (n) {
		struct pollfd pfd = {c->fd, out ? POLLOUT : POLLIN, 0};
		if (poll(&pfd, 1, c->timeout_ms) <= 0)
			return -ETIMEDOUT;
		ssize_t r = out ? send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT)
				: recv(c->fd, p, n, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0)
			return -EPIPE; /* the supplier went away */
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One request and its reply body (malloc'd, at most DCI4_BODY_MAX). */
static int transact(struct dci4_conn *c, uint16_t op, const uint32_t *args, size_t nargs,
		    uint8_t **body, uint32_t *len)
{
	uint8_t req[DCI4_HEADER_LEN + 12], hdr[DCI4_HEADER_LEN];
	struct dci4_header h;
	int rc;

	for (size_t i = 0; i < nargs; i++)
		dci4_put32(req + DCI4_HEADER_LEN + 4 * i, args[i]);
	dci4_put_header(req, op, (uint32_t)(4 * nargs));
	if ((rc = io_full(c, req, DCI4_HEADER_LEN + 4 * nargs, true)) < 0 ||
	    (rc = io_full(c, hdr, sizeof(hdr), false)) < 0)
		return rc;
	if ((rc = dci4_get_header(hdr, sizeof(hdr), &h)) < 0)
		return rc;
	if (h.op != (op | DCI4_REPLY) || h.length < 4)
		return -EPROTO;
	if (!(*body = malloc(h.length)))
		return -ENOMEM;
	if ((rc = io_full(c, *body, h.length, false)) < 0) {
		free(*body);
		return rc;
	}
	*len = h.length;
	if (dci4_get32(*body) != DCI4_OK) {
		free(*body);
		return -EREMOTEIO;
	}
	return 0;
}

int dci4_info(struct dci4_conn *c, struct dci4_info *info)
{
	uint8_t *b;
	uint32_t len;
	int rc = transact(c, SP_INFO, NULL, 0, &b, &len);
	if (rc < 0)
		return rc;
	rc = dci4_decode_info(b, len, info);
	free(b);
	if (rc == 0 && info->max_stat >= DCI4_GATHER_STATS_MAX)
		rc = -E2BIG; /* "a billion statistics": refused before any allocation */
	return rc;
}

#define GATHER_BUFFER (64 * 1024)

/* Runs op over first..last, asking again from where a reply stopped (the
 * partial-buffer rule), until every statistic is taken. */
static int range_loop(struct dci4_conn *c, uint16_t op, uint32_t first, uint32_t last,
		      dci4_take_fn *take, void *ctx)
{
	uint32_t next = first;

	while (next <= last) {
		uint32_t args[3] = {next, last, GATHER_BUFFER}, len;
		uint8_t *b;
		int rc = transact(c, op, args, 3, &b, &len);
		if (rc < 0)
			return rc;
		uint32_t processed;
		rc = dci4_parse_range(b, len, next, last, GATHER_BUFFER, take, ctx, &processed);
		free(b);
		if (rc < 0)
			return rc;
		next += processed;
	}
	return 0;
}

static int take_desc(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct dci4_desc *descs = ctx;
	return dci4_decode_desc(p, left, &descs[stat]);
}

int dci4_describe_all(struct dci4_conn *c, uint32_t max_stat, struct dci4_desc *descs)
{
	return range_loop(c, SA_DESCRIBE, 0, max_stat, take_desc, descs);
}

struct read_ctx {
	const struct dci4_desc *descs;
	uint8_t *values;
	const size_t *offsets;
};

static int take_value(void *ctx, uint32_t stat, const uint8_t *p, size_t left)
{
	struct read_ctx *r = ctx;
	uint32_t size = r->descs[stat].size;
	if (size > left)
		return -EPROTO; /* the sizes described and the bytes sent disagree */
	memcpy(r->values + r->offsets[stat], p, size);
	return (int)size;
}

int dci4_read_range(struct dci4_conn *c, const struct dci4_desc *descs, uint32_t first,
		    uint32_t last, uint8_t *values, const size_t *offsets)
{
	struct read_ctx r = {descs, values, offsets};
	return range_loop(c, SA_READ, first, last, take_value, &r);
}
