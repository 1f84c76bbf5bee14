/* The deadlines libmicrohttpd lacks: a whole request head within a time
 * (its own timeout is per idle gap, which a byte a second resets), and a
 * whole response sent within a time (likewise for a client that reads a
 * byte a second). */
#ifndef BS_HTTPGUARD_H
#define BS_HTTPGUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct httpguard;

struct httpguard_limits {
	size_t keep;	      /* past them, each new connection evicts one */
	size_t most;	      /* connections at most: none admitted past them */
	unsigned per_address; /* connections of one client address at most */
};

/* Starts the thread that cuts connections past their deadline. */
int httpguard_start(struct httpguard **out, const struct httpguard_limits *lim, double head_s,
		    double send_s);
/* Whether a client at sa may open one more connection. The limits are
 * kept here, not by libmicrohttpd: version 0.9.75 leaves a lock held when
 * it refuses a connection given to MHD_add_connection, and every
 * connection thread after it hangs. */
bool httpguard_admit(struct httpguard *g, const struct sockaddr *sa);
void httpguard_stop(struct httpguard *g);
/* The client's address as 16 bytes, IPv4 mapped; false (and zeros) if
 * unknown. */
bool httpguard_client_addr(struct MHD_Connection *c, unsigned char out[16]);
/* Cuts the connection that has made the least progress (see
 * httpguard.c), to free its fd for a new client; false if every one is
 * being served. */
bool httpguard_evict(struct httpguard *g);
/* MHD_OPTION_NOTIFY_CONNECTION, with the guard as its closure. */
void httpguard_notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		      enum MHD_ConnectionNotificationCode code);
/* MHD_OPTION_NOTIFY_COMPLETED: the connection waits for its next head. */
void httpguard_completed(void *cls, struct MHD_Connection *c, void **req_ctx,
			 enum MHD_RequestTerminationCode code);
/* The connection holds obj until it closes, then calls release(obj).
 * -1 if the connection is not tracked (obj is then not taken). */
int httpguard_hold(struct MHD_Connection *c, void *obj, void (*release)(void *));
/* The head is in and the exporter works on the request: no deadline. */
void httpguard_working(struct MHD_Connection *c);
/* The request waits for its password to be checked (webauth.c): a phase
 * that may be evicted, and is bounded, as a head is. */
void httpguard_auth_waiting(struct MHD_Connection *c);
/* The response is queued: its send deadline starts. */
void httpguard_sending(struct MHD_Connection *c);
#endif
