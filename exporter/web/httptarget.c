/* The request target's checks, before libmicrohttpd cuts or parses it.
 * libmicrohttpd decodes %00 and hands on a string the NUL cuts, and a raw
 * NUL byte cuts it the same way, so "/metrics%00.png" and "/metrics<NUL>.png"
 * would be served as /metrics and a proxy's rule on the path's end
 * bypassed; collect[] checks its values itself. */
#include "httptarget.h"

#include <stdint.h>
#include <string.h>

/* Request line memory: a target is never longer (http.c's request memory). */
#define LINE_MAX_BYTES (64 * 1024)

static bool encoded_nul(const char *path, size_t len)
{
	for (size_t i = 0; i + 2 < len; i++)
		if (path[i] == '%' && path[i + 1] == '0' && path[i + 2] == '0')
			return true;
	return false;
}

enum httptarget_fault httptarget_check(const char *uri)
{
	const char *q = strchr(uri, '?');
	size_t args = q ? 1 : 0;

	for (const char *p = q; p && *p && args <= HTTPTARGET_ARGS_MAX; p++)
		args += *p == '&';
	if (args > HTTPTARGET_ARGS_MAX ||
	    (q && strlen(uri) + args * HTTPTARGET_ARG_RECORD > HTTPTARGET_QUERY_MEMORY))
		return HTTPTARGET_TOO_MANY_ARGS;
	return encoded_nul(uri, q ? (size_t)(q - uri) : strlen(uri)) ? HTTPTARGET_NUL_ENCODED
								     : HTTPTARGET_OK;
}

bool httptarget_raw_nul(const char *target, size_t seen, const char *version)
{
	uintptr_t t = (uintptr_t)target, v = (uintptr_t)version;

	/* In the line, the version follows the target and one space, which
	 * libmicrohttpd overwrote with the target's end. */
	if (v <= t || v - t > LINE_MAX_BYTES)
		return false;
	return v - t - 1 != seen;
}
