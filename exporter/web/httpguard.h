/* The guard of HTTP connections: every phase of a connection bounded in
 * time, and room for a new client made by evicting, whatever its phase,
 * the connection that made the least progress for its age (httpguard.c).
 * libmicrohttpd's own timeout is per idle gap, which a byte a second
 * resets, and it never evicts. */
#ifndef BS_HTTPGUARD_H
#define BS_HTTPGUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct httpguard;

/* Where a connection is. Each has its bound (httpguard_judge). */
enum httpguard_phase {
	HTTPGUARD_HEAD, /* a request head arriving (or none yet on a new connection) */
	HTTPGUARD_BODY, /* a request body arriving */
	HTTPGUARD_AUTH, /* waiting for its credentials to be checked */
	HTTPGUARD_WORK, /* the exporter works on the request */
	HTTPGUARD_SEND, /* a response being sent */
	HTTPGUARD_IDLE, /* kept alive between requests, everything sent */
};

struct httpguard_limits {
	size_t keep;	      /* past them, each new connection evicts one */
	size_t most;	      /* connections at most: none admitted past them */
	unsigned per_address; /* connections of one client address at most */
};

/* The time bounds, in ns, and the minimum rate a response is read at. */
struct httpguard_rules {
	uint64_t head_ns;      /* a whole request head (and body, and auth wait) */
	uint64_t send_ns;      /* responses from the first of a run to the last read */
	uint64_t idle_ns;      /* kept alive with nothing to do */
	uint64_t life_ns;      /* a connection's whole life */
	uint64_t grace_ns;     /* before the minimum rate applies */
	uint64_t min_rate;     /* bytes a second a response is read at, at least */
	uint64_t protect_ns;   /* a connection younger than this is evicted last */
	unsigned pipeline_max; /* requests queued behind an unread response */
};

/* What the guard knows of one connection: its phase and its progress
 * (bytes received and bytes the client acknowledged, from TCP_INFO). */
struct httpguard_conn {
	enum httpguard_phase phase;
	uint64_t born_ns, phase_ns;   /* accepted; phase entered */
	uint64_t send_ns;	      /* the run of responses began; 0 none */
	uint64_t bytes_in, bytes_out; /* received; acknowledged by the client */
	uint64_t out_at_send, in_at_phase;
	uint64_t unsent;  /* bytes sent and not yet acknowledged (SIOCOUTQ) */
	unsigned queued;  /* requests taken while a response was still unread */
	unsigned peers;	  /* connections from its address */
	bool cut, pinned; /* shut down already; the one to make room for */
	bool blind;	  /* no TCP_INFO (not TCP): no rate to judge */
};

enum httpguard_verdict {
	HTTPGUARD_KEEP,
	HTTPGUARD_CUT_HEAD,  /* head, body or auth wait past head_ns */
	HTTPGUARD_CUT_WRITE, /* responses not read within send_ns */
	HTTPGUARD_CUT_SLOW,  /* read below min_rate after the grace */
	HTTPGUARD_CUT_IDLE,  /* idle keep-alive past idle_ns */
	HTTPGUARD_CUT_LIFE,  /* past its whole life */
};

/* The rules, pure: what becomes of connection c at now. */
enum httpguard_verdict httpguard_judge(const struct httpguard_conn *c,
				       const struct httpguard_rules *r, uint64_t now);
/* The rules, pure: what the socket shows now (bytes received, bytes
 * acknowledged, bytes unacknowledged). An idle connection that receives a
 * byte is reading a head; one whose client read everything ends its run
 * of responses. */
void httpguard_observe(struct httpguard_conn *c, uint64_t bytes_in, uint64_t bytes_out,
		       uint64_t unsent, uint64_t now);
/* The rules, pure: which of conns[0..n) to evict for a new client, -1 if
 * none may go (all cut or pinned). Its `peers` must be set. */
long httpguard_pick(struct httpguard_conn *const *conns, size_t n, const struct httpguard_rules *r,
		    uint64_t now);

/* The rules, pure: which of conns[0..n), all from one address that holds
 * its share, to evict for a newcomer from that address: an idle
 * keep-alive connection first, then the least progress for its age; -1
 * if none may go (all cut, pinned, younger than protect_ns, or worked on),
 * and only then is the newcomer refused. */
long httpguard_pick_own(struct httpguard_conn *const *conns, size_t n,
			const struct httpguard_rules *r, uint64_t now);

/* Starts the thread that cuts connections past their bounds. */
int httpguard_start(struct httpguard **out, const struct httpguard_limits *lim,
		    const struct httpguard_rules *rules);
void httpguard_stop(struct httpguard *g);

enum httpguard_admission {
	HTTPGUARD_ADMITTED,
	HTTPGUARD_ADDRESS_FULL, /* its address holds its share already */
	HTTPGUARD_NO_SLOT,	/* every slot held, and none could be evicted */
};
/* Whether a client at sa may open one more connection, evicting one of
 * its address's own if that address holds its share (httpguard_pick_own),
 * or one of any if every slot is taken. The limits are kept here, not by libmicrohttpd:
 * version 0.9.75 leaves a lock held when it refuses a connection given to
 * MHD_add_connection, and every connection thread after it hangs. */
enum httpguard_admission httpguard_admit(struct httpguard *g, const struct sockaddr *sa);
/* Cuts the connection that made the least progress, to free its fd for a
 * new client; false if none can go. */
bool httpguard_evict(struct httpguard *g);
/* The client's address as 16 bytes, IPv4 mapped; false (and zeros) if
 * unknown. */
bool httpguard_client_addr(struct MHD_Connection *c, unsigned char out[16]);
/* MHD_OPTION_NOTIFY_CONNECTION, with the guard as its closure. */
void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_NOTIFY_COMPLETED: the connection is kept alive for its next
 * request. */
void httpguard_completed(void *cls, struct MHD_Connection *c, void **req_ctx,
			 enum MHD_RequestTerminationCode code);
/* The connection holds obj until it closes, then calls release(obj).
 * -1 if the connection is not tracked (obj is then not taken). */
int httpguard_hold(struct MHD_Connection *c, void *obj, void (*release)(void *));
/* The request under way on c (NULL: none), released at the connection's
 * close if it is still there: libmicrohttpd 0.9.75 ends a connection
 * whose request it refused twice (more arguments than its memory holds)
 * without MHD_OPTION_NOTIFY_COMPLETED, so only the close can free it.
 * In the connection's thread; the close comes after that thread ended. */
void httpguard_request_ctx(struct MHD_Connection *c, void *rq, void (*release)(void *));

/* A request's head is complete. False: more requests are queued behind
 * unread responses than allowed; refuse it and close the connection. */
bool httpguard_request(struct MHD_Connection *c);
/* The connection enters phase p. For HTTPGUARD_AUTH, a wait for a
 * credentials check: whoever waits polls httpguard_is_cut and gives up
 * once it is true, so the guard can evict it like any other phase. */
void httpguard_phase(struct MHD_Connection *c, enum httpguard_phase p);
/* Whether the guard cut the connection (a deadline, or evicted). */
bool httpguard_is_cut(struct MHD_Connection *c);
#endif
