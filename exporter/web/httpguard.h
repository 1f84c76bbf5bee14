/* The deadlines libmicrohttpd lacks: a whole request head within a time
 * (its own timeout is per idle gap, which a byte a second resets), and a
 * whole response sent within a time (likewise for a client that reads a
 * byte a second). */
#ifndef BS_HTTPGUARD_H
#define BS_HTTPGUARD_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

struct httpguard;

/* Starts the thread that cuts connections past their deadline; past
 * `keep` connections, each new one evicts the one with least progress. */
int httpguard_start(struct httpguard **out, size_t keep, double head_s, double send_s);
void httpguard_stop(struct httpguard *g);
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
/* The response is queued: its send deadline starts. */
void httpguard_sending(struct MHD_Connection *c);
#endif
