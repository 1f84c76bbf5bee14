/* One connection to a DCI4 supplier without blocking: requests queued and
 * sent as the socket takes them, replies put back together as they arrive
 * and checked against the request that caused them. */
#ifndef DCI_LINK_H
#define DCI_LINK_H

#include <stdint.h>
#include <sys/types.h>

#include "dci4_wire.h"
#include "growarr.h"

#define DCI_LINK_QUEUE_MAX 64 /* requests in flight on one connection */
#define DCI_REQ_LEN (DCI4_HEADER_LEN + 12)

struct dci_req {
	uint16_t op;
	uint32_t first, last, bufsize;
	uint32_t gen; /* the caller's: which description the request was made for */
};

/* Bytes of reply buffers and value copies all suppliers may hold at once:
 * a thousand suppliers each claiming 1 MiB replies must not cost 2 GiB. */
struct dci_budget {
	size_t used, max;
};

/* Takes n bytes from the budget (NULL: none); false when they do not fit. */
bool dci_budget_take(struct dci_budget *b, size_t n);
void dci_budget_give(struct dci_budget *b, size_t n);

struct dci_link {
	int fd;			   /* -1: not connected */
	struct dci_budget *budget; /* what the reply buffer counts against */
	uint8_t out[DCI_LINK_QUEUE_MAX * DCI_REQ_LEN];
	size_t outlen, outoff;
	struct dci_req q[DCI_LINK_QUEUE_MAX]; /* a ring of requests awaiting replies */
	unsigned qhead, qn;
	uint8_t hdr[DCI4_HEADER_LEN];
	size_t hgot;
	/* The reply being read, reserved to the longest yet (at most
	 * DCI4_BODY_MAX bytes), each byte counted against the budget. */
	GROWARR_OF(uint8_t, body, bodybuf);
	uint32_t blen, bgot;
};

void dci_link_init(struct dci_link *l, struct dci_budget *budget);
/* Connects without blocking; -errno (ECONNREFUSED or ENOENT: the supplier
 * has gone). */
int dci_link_connect(struct dci_link *l, const char *path);
/* Closes the socket and forgets everything in flight; keeps the buffer. */
void dci_link_close(struct dci_link *l);
/* Closes and frees the buffer. */
void dci_link_free(struct dci_link *l);

/* Queues a request; -ENOSPC when DCI_LINK_QUEUE_MAX are in flight. */
int dci_link_queue(struct dci_link *l, const struct dci_req *r);
/* Sends what the socket takes: 1 when bytes are left (wait for POLLOUT),
 * 0 when all went, -EPIPE when the supplier has gone. */
int dci_link_flush(struct dci_link *l);
/* Reads what has arrived. 1: a whole reply to *req is at *body (len bytes,
 * status first; valid until the next call); 0: wait for more; -errno:
 * -EPIPE (closed), -EPROTO (bad header, or a reply to no request),
 * -EMSGSIZE (longer than the request allows), -EREMOTEIO (a failure status),
 * -EBUSY (status busy), -ENOMEM. */
int dci_link_recv(struct dci_link *l, struct dci_req *req, const uint8_t **body, uint32_t *len);

#endif
