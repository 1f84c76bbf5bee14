/* The watchdog of the HTTP servers: notices a libmicrohttpd daemon that
 * no longer takes connections, says so, and ends the process so that the
 * service manager starts it again (webwatch.c). */
#ifndef BS_WEBWATCH_H
#define BS_WEBWATCH_H

#include <microhttpd.h>
#include <stddef.h>

#define WEBWATCH_PERIOD_S 5 /* between two probes of a daemon */
#define WEBWATCH_BOUND_S 15 /* a probe waits this long for its answer */
#define WEBWATCH_MISSES 2   /* failed probes in a row that end the process */
#define WEBWATCH_N_MAX 16   /* daemons watched at most */

struct webwatch;

/* Watches daemon[0..n), which must outlive the watchdog. */
int webwatch_start(struct webwatch **out, struct MHD_Daemon *const *daemon, size_t n);
void webwatch_stop(struct webwatch *w);
#endif
