/* The request target as libmicrohttpd first sees it, before it cuts it
 * at a NUL or parses its arguments: what is refused there. */
#ifndef BS_HTTPTARGET_H
#define BS_HTTPTARGET_H

#include <stdbool.h>
#include <stddef.h>

/* Query arguments a request may have. libmicrohttpd parses them into the
 * connection's request memory (64 KiB), a record of 64 bytes each beside
 * the target itself; past it, 0.9.75 refuses the request once per
 * argument that finds no room, then handles a connection in a state it
 * never set up (a crash at the daemon's stop). So a query is refused
 * before it is parsed when its target and records would take more than
 * half that memory: the most collect[] can name (every collector, each
 * name encoded three times over) takes 14 KiB. */
#define HTTPTARGET_ARGS_MAX 256
#define HTTPTARGET_ARG_RECORD 64
#define HTTPTARGET_QUERY_MEMORY (32 * 1024)

enum httptarget_fault {
	HTTPTARGET_OK,
	HTTPTARGET_TOO_MANY_ARGS, /* 414: more arguments or memory than allowed */
	HTTPTARGET_NUL_ENCODED,	  /* 400: the path holds %00 */
};

/* The target's faults, given as the URI callback sees it. */
enum httptarget_fault httptarget_check(const char *uri);
/* Whether a raw NUL byte cut the target: `target` is where it starts in
 * libmicrohttpd's request line, `seen` its length as a string at the URI
 * callback, `version` where the HTTP version starts in the same line
 * (libmicrohttpd's handler argument; not in the line for a request
 * without one, which has no end to compare with). */
bool httptarget_raw_nul(const char *target, size_t seen, const char *version);

#endif
