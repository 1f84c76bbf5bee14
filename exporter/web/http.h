/* The HTTP endpoints (libmicrohttpd): telemetry, landing page, health. */
#ifndef BS_HTTP_H
#define BS_HTTP_H

#include <stddef.h>

#include "collset.h"
#include "weblive.h"

#define HTTP_LISTEN_MAX 16
#define HTTP_CONNECTIONS_MAX 256 /* kept open at once, each with its thread */
/* Beyond them, libmicrohttpd accepts this many more, each evicting one of
 * the kept that made the least progress (httpguard.c), until they close. */
#define HTTP_CONNECTIONS_SLACK 64

struct http_options {
	int inherited[HTTP_LISTEN_MAX]; /* listening sockets from systemd, first */
	size_t ninherited;
	const char *listen[HTTP_LISTEN_MAX]; /* addresses to bind, after them */
	size_t nlisten;
	const char *telemetry_path;
	const char *config_file, *web_config_file; /* for the landing page */
	unsigned max_requests;			   /* scrapes at once; beyond them, 503 */
	unsigned connection_timeout;		   /* s a client may idle or stall */
	unsigned head_timeout;			   /* s for a whole request head */
	unsigned write_timeout;			   /* s for a run of responses to be read */
	unsigned idle_timeout;			   /* s a kept-alive connection may idle */
	unsigned max_per_address;		   /* connections open at once from one address */
	bool
	    no_exporter_metrics; /* leave out the exporter's own process_* and binstat_exporter_* */
	struct weblive *web;	 /* TLS, users, headers, rate limit */
	/* Hands out a reference to the current collectors (or NULL). */
	struct collset *(*current)(void *ctx);
	void *ctx;
};

struct http_server;

/* Binds every address first, so a busy port is a clear error at start. */
int http_start(const struct http_options *opt, struct http_server **out, char *err, size_t errlen);
void http_stop(struct http_server *s);
#endif
