/* The HTTP endpoints (libmicrohttpd): telemetry, landing page, health.
 * A thread per connection; caps on connections, on those of one address,
 * on request header memory and on idle time; deadlines for a whole request
 * head and a whole response (httpguard.c). A scrape slot counts only while
 * the exporter works on the request, not while a client is slow to read,
 * so no one address can keep a scraper out. */
#include "http.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <math.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emitter.h"
#include "httpguard.h"
#include "landing.h"
#include "listener.h"
#include "log.h"
#include "monoclock.h"
#include "negotiate.h"
#include "proc.h"
#include "scrape.h"
#include "selfstats.h"
#include "version.h"
#include "weblive.h"

#define HTTP_REQUEST_MEMORY (64 * 1024) /* headers and URL of one request */
#define HTTP_THREAD_STACK (512 * 1024)
/* Output of finished scrapes waiting for their clients to read it: since a
 * slot is given back once the work is done, this bounds what slow readers
 * can keep in memory (one response always passes, however large). */
#define HTTP_UNSENT_BYTES_MAX (512ull << 20)
#define HTTP_BODY_MAX (64 * 1024) /* a POST to /statistics/ */
#define STATS_PREFIX "/statistics/"
/* Query arguments a request may have. libmicrohttpd parses them into the
 * connection's HTTP_REQUEST_MEMORY; about 900 leave no room there even for
 * its error answer, and it closes the connection unanswered. */
#define HTTP_URI_ARGS_MAX 256
_Static_assert(HTTP_LISTEN_MAX <= LISTENER_SOCKETS_MAX, "a listener for every address");

struct http_server {
	struct http_options opt;
	struct httpguard *guard;
	struct MHD_Daemon *daemon[HTTP_LISTEN_MAX];
	size_t ndaemons;
	struct listener *listener;
	unsigned in_flight;
	uint64_t unsent_bytes;
	struct webgen *start_web; /* whose PEM libmicrohttpd was started with */
};

static char uri_refused; /* a request's context: answered 414 already */
static char uri_nul;	 /* a request's context: its path holds %00, to answer 400 */

/* A POST's body, gathered across the handler's calls. */
struct body {
	size_t len;
	bool too_big;
	char data[HTTP_BODY_MAX + 1];
};

/* One request, from its head to its completion. */
struct request {
	struct http_server *s;
	struct MHD_Connection *c;
	struct webgen *web; /* the web config it is served under */
	struct body *body;  /* a POST's; NULL otherwise */
	char *user;	    /* the basic-auth user it authenticated as */
};

/* Every response leaves here: the web config's headers, the deadline to
 * send it, the count by status. */
static enum MHD_Result queue(struct request *rq, unsigned code, struct MHD_Response *r)
{
	const struct webconf *w = rq->web->conf;

	for (size_t i = 0; i < w->nheaders; i++)
		MHD_add_response_header(r, w->header[i].name, w->header[i].value);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (code == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic");
	enum MHD_Result rc = MHD_queue_response(rq->c, code, r);
	MHD_destroy_response(r);
	httpguard_sending(rq->c);
	selfstats_http_response(code);
	return rc;
}

static enum MHD_Result reply(struct request *rq, unsigned code, const char *type, const char *body,
			     size_t len)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return queue(rq, code, r);
}

static enum MHD_Result reply_text(struct request *rq, unsigned code, const char *body)
{
	return reply(rq, code, "text/plain; charset=utf-8", body, strlen(body));
}

static enum MHD_Result landing(struct request *rq)
{
	struct http_server *s = rq->s;
	struct statproc_text page = {0};
	struct landing_input in = {
	    .telemetry_path = s->opt.telemetry_path,
	    .config_file = s->opt.config_file,
	    .web_config_file = s->opt.web_config_file,
	    .web = rq->web->conf,
	    .set = s->opt.current(s->opt.ctx),
	    .exporter_metrics = !s->opt.no_exporter_metrics,
	};
	enum MHD_Result ret;

	if (landing_page(&in, &page))
		ret = reply(rq, MHD_HTTP_OK, "text/html; charset=utf-8", page.p, page.len);
	else
		ret = reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	collset_put(in.set);
	statproc_text_free(&page);
	return ret;
}

/* ---- collect[] and exclude[] selection, as node_exporter has them ---- */

struct selection {
	struct collset *set;
	bool named[CONFIG_COLLECTORS_MAX + 1]; /* by index in set->inst */
	bool collect, exclude;		       /* which parameter was given */
	char msg[CONFIG_NAME_MAX + 64];	       /* why the request is refused */
	bool bad;
};

static enum MHD_Result select_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				  size_t key_size, const char *value, size_t value_size)
{
	struct selection *sel = cls;
	bool collect = key_size == strlen("collect[]") && memcmp(key, "collect[]", key_size) == 0;
	bool exclude = key_size == strlen("exclude[]") && memcmp(key, "exclude[]", key_size) == 0;
	(void)kind;

	if (!collect && !exclude)
		return MHD_YES;
	sel->collect |= collect;
	sel->exclude |= exclude;
	if (sel->collect && sel->exclude) {
		snprintf(sel->msg, sizeof(sel->msg), "collect[] and exclude[] cannot be combined");
		sel->bad = true;
		return MHD_NO;
	}
	/* %00 decodes to a NUL: "kvm%00x" must not pass as "kvm". */
	bool whole = value && strlen(value) == value_size;
	struct instance *in = whole ? collset_find(sel->set, value) : NULL;
	if (!in) {
		snprintf(sel->msg, sizeof(sel->msg), "unknown or disabled collector: %.*s%s",
			 CONFIG_NAME_MAX, value ? value : "", value && !whole ? "\\0..." : "");
		sel->bad = true;
		return MHD_NO; /* stop at the first unknown name */
	}
	sel->named[collset_index(sel->set, in)] = true;
	return MHD_YES;
}

/* The collectors to run: those named by collect[], or all but those named
 * by exclude[]. Returns how many, in `only`. */
static size_t select_instances(const struct selection *sel, struct instance **only)
{
	size_t n = 0;
	for (size_t i = 0; i < collset_count(sel->set); i++)
		if (sel->named[i] == sel->collect)
			only[n++] = collset_at(sel->set, i);
	return n;
}

/* The shortest deadline a scrape gets, whatever Prometheus' timeout less
 * the offset leaves. */
#define SCRAPE_DEADLINE_MIN 0.05

/* An offset that leaves a scrape no time fails every scrape's collectors:
 * said at warn, once a minute at most (a client may send any timeout). */
static void warn_offset_too_large(double timeout, double offset)
{
	static _Atomic uint64_t next_ns;
	uint64_t now = monoclock_ns(), due = next_ns;
	char t[32], o[32];

	if (now < due || !atomic_compare_exchange_strong(&next_ns, &due, now + 60000000000ull))
		return;
	snprintf(t, sizeof(t), "%g", timeout);
	snprintf(o, sizeof(o), "%g", offset);
	log_warn("scrape_timeout_offset leaves a scrape no time: its deadline is cut to 0.05 s",
		 "prometheus_timeout_seconds", t, "scrape_timeout_offset_seconds", o);
}

static double scrape_timeout(struct MHD_Connection *c, const struct config *cfg)
{
	const char *h =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds");
	char *end;
	if (!h)
		return cfg->scrape_timeout;
	double t = strtod(h, &end);
	if (end == h || *end || !isfinite(t) || t <= 0)
		return cfg->scrape_timeout;
	double left = t - cfg->timeout_offset;
	if (left > 3600)
		left = 3600;
	if (left >= SCRAPE_DEADLINE_MIN)
		return left;
	warn_offset_too_large(t, cfg->timeout_offset);
	return SCRAPE_DEADLINE_MIN;
}

struct response_ctx {
	struct http_server *s;
	struct scrape *sc;
	size_t bytes; /* counted in s->unsent_bytes */
};

/* The response owns the scrape until the body is sent (or the client is
 * cut off by the write deadline). */
static void response_done(void *cls)
{
	struct response_ctx *rc = cls;
	__atomic_sub_fetch(&rc->s->unsent_bytes, rc->bytes, __ATOMIC_ACQ_REL);
	scrape_put(rc->sc);
	free(rc);
}

/* A body with deflated parts, inflated as the client reads (chunked). */
static ssize_t read_body(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct response_ctx *ctx = cls;
	(void)pos;
	ssize_t n = scrape_read(ctx->sc, buf, max);
	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

/* The body straight from the chunks, zero-copy. */
static struct MHD_Response *iovec_response(struct response_ctx *ctx)
{
	const struct iovec *iov;
	size_t total, n = scrape_body(ctx->sc, &iov, &total);
	struct MHD_IoVec *miov = calloc(n ? n : 1, sizeof(*miov));
	struct MHD_Response *r;

	if (!miov)
		return NULL;
	for (size_t i = 0; i < n; i++)
		miov[i] = (struct MHD_IoVec){iov[i].iov_base, iov[i].iov_len};
	r = MHD_create_response_from_iovec(miov, (unsigned)n, response_done, ctx);
	free(miov);
	return r;
}

static enum MHD_Result send_scrape(struct request *rq, struct scrape *sc, enum expo_format f,
				   bool gz)
{
	struct http_server *s = rq->s;
	struct MHD_Response *r = NULL;
	size_t bytes = scrape_held_bytes(sc);
	uint64_t unsent = __atomic_fetch_add(&s->unsent_bytes, bytes, __ATOMIC_ACQ_REL);

	if (unsent && unsent + bytes > HTTP_UNSENT_BYTES_MAX) {
		__atomic_sub_fetch(&s->unsent_bytes, bytes, __ATOMIC_ACQ_REL);
		scrape_put(sc);
		return reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "too many responses waiting to be read\n");
	}
	struct response_ctx *ctx = malloc(sizeof(*ctx));
	if (!ctx)
		goto err_release;
	*ctx = (struct response_ctx){s, sc, bytes};
	r = scrape_body_is_text(sc)
		? iovec_response(ctx)
		: MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, read_body, ctx,
						    response_done);
	if (!r)
		goto err_release;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				f == EXPO_OPENMETRICS ? EXPO_CONTENT_TYPE_OPENMETRICS
						      : EXPO_CONTENT_TYPE_TEXT);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return queue(rq, MHD_HTTP_OK, r);
err_release:
	free(ctx);
	__atomic_sub_fetch(&s->unsent_bytes, bytes, __ATOMIC_ACQ_REL);
	scrape_put(sc);
	return reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
}

static enum MHD_Result telemetry(struct request *rq)
{
	struct http_server *s = rq->s;
	struct MHD_Connection *c = rq->c;
	struct selection sel = {0};
	char msg[128];

	if (__atomic_add_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL) > s->opt.max_requests) {
		__atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
		return reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "too many concurrent scrapes\n");
	}
	sel.set = s->opt.current(s->opt.ctx);
	if (!sel.set) {
		__atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
		return reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	}
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, select_arg, &sel);
	if (sel.bad) {
		collset_put(sel.set);
		__atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
		snprintf(msg, sizeof(msg), "%s\n", sel.msg);
		return reply_text(rq, MHD_HTTP_BAD_REQUEST, msg);
	}
	struct instance *only[CONFIG_COLLECTORS_MAX + 1];
	struct scrape_request req = {
	    .set = sel.set,
	    .only = sel.collect || sel.exclude ? only : NULL,
	    .nonly = select_instances(&sel, only),
	    .format = negotiate_format(
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT)),
	    .gzip = negotiate_gzip(
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING)),
	    .timeout_s = scrape_timeout(c, collset_config(sel.set)),
	    .no_exporter_metrics = s->opt.no_exporter_metrics,
	};
	struct scrape *sc = scrape_run(&req);
	collset_put(sel.set); /* the scrape holds its own reference */
	/* The work is done: a client slow to read holds its connection (under
	 * the write deadline), not a scrape slot. */
	__atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
	if (!sc)
		return reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return send_scrape(rq, sc, req.format, req.gzip);
}

/* ---- /statistics/: the processing's interface ---- */

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			      enum MHD_RequestTerminationCode code)
{
	struct request *rq = *con_cls;

	if (rq && *con_cls != &uri_refused && *con_cls != &uri_nul) {
		free(rq->body);
		free(rq->user);
		webgen_put(rq->web);
		free(rq);
	}
	*con_cls = NULL;
	httpguard_completed(cls, c, con_cls, code);
}

static enum MHD_Result statistics(struct request *rq, const char *path, const char *method)
{
	struct http_server *s = rq->s;
	struct body *b = rq->body;
	struct collset *set = s->opt.current(s->opt.ctx);
	struct proc_reply r;
	unsigned char addr[16];
	enum MHD_Result ret;

	if (b && b->too_big) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body larger than 64 KiB\n");
	}
	struct proc *proc = set ? collset_builtin(set, proc_source.name) : NULL;
	if (!proc) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_NOT_FOUND, "no processing: section configured\n");
	}
	bool may_write = httpguard_client_addr(rq->c, addr) &&
			 proc_conf_may_write(collset_config(set)->processing, addr, rq->user);
	if (b && memchr(b->data, '\0', b->len)) { /* would hide what follows it */
		collset_put(set);
		return reply_text(rq, MHD_HTTP_BAD_REQUEST, "EINVAL: the body holds a NUL byte\n");
	}
	if (b)
		b->data[b->len] = '\0';
	/* The interface reads its one query argument from its path. */
	const char *format = MHD_lookup_connection_value(rq->c, MHD_GET_ARGUMENT_KIND, "format");
	char *with_query = NULL;
	if (format && asprintf(&with_query, "%s?format=%s", path, format) < 0) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	proc_iface(proc, method, with_query ? with_query : path, b ? b->data : NULL, may_write,
		   monoclock_ns(), &r);
	free(with_query);
	collset_put(set);
	ret = reply_text(rq, (unsigned)r.status, r.text.p ? r.text.p : "");
	statproc_text_free(&r.text);
	return ret;
}

static enum MHD_Result refuse_and_close(struct request *rq, unsigned code, const char *text);

static void auth_waiting(void *c)
{
	httpguard_auth_waiting(c);
}

/* The web config's users and rate limit (webauth.c). False with the
 * refusal queued in *ret. */
static bool admitted(struct request *rq, enum MHD_Result *ret)
{
	const union MHD_ConnectionInfo *fi =
	    MHD_get_connection_info(rq->c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ti =
	    MHD_get_connection_info(rq->c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct webauth_request ar = {
	    .fd = fi ? fi->connect_fd : -1,
	    .certified =
		ti && rq->web->tls && webtls_client_verified(rq->web->tls, ti->tls_session),
	    .authorization =
		MHD_lookup_connection_value(rq->c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
	    .waiting = auth_waiting,
	    .ctx = rq->c,
	};

	httpguard_client_addr(rq->c, ar.addr);
	enum webauth_verdict v = webauth_admit(weblive_auth(rq->s->opt.web), rq->web->conf, &ar,
					       monoclock_ns(), &rq->user);
	httpguard_working(rq->c);
	switch (v) {
	case WEBAUTH_PASS:
		return true;
	case WEBAUTH_RATE_LIMITED:
		selfstats_http_refused(SELFSTATS_REFUSED_RATE_LIMIT);
		*ret = reply_text(rq, MHD_HTTP_TOO_MANY_REQUESTS, "Too Many Requests\n");
		return false;
	case WEBAUTH_BUSY: /* and closed: a client that retries at once reconnects */
		selfstats_http_refused(SELFSTATS_REFUSED_AUTH_BUSY);
		*ret = refuse_and_close(rq, MHD_HTTP_TOO_MANY_REQUESTS,
					"Too Many Requests: password checks are busy\n");
		return false;
	case WEBAUTH_GONE: /* evicted or failed while waiting: counted where it was cut */
		*ret = MHD_NO;
		return false;
	case WEBAUTH_DENIED:
		break;
	}
	selfstats_http_refused(SELFSTATS_REFUSED_AUTH);
	*ret = reply_text(rq, MHD_HTTP_UNAUTHORIZED, "Unauthorized\n");
	return false;
}

static enum MHD_Result route(struct request *rq, const char *url, const char *method)
{
	struct http_server *s = rq->s;
	enum MHD_Result ret;

	/* Verifying a password is work too: not under the head deadline. */
	httpguard_working(rq->c);
	if (!admitted(rq, &ret))
		return ret;
	if (strncmp(url, STATS_PREFIX, strlen(STATS_PREFIX)) == 0)
		return statistics(rq, url + strlen(STATS_PREFIX), method);
	if (strcmp(url, s->opt.telemetry_path) == 0)
		return telemetry(rq);
	if (strcmp(url, "/") == 0)
		return landing(rq);
	if (strcmp(url, "/-/healthy") == 0)
		return reply_text(rq, MHD_HTTP_OK, "Healthy\n");
	if (strcmp(url, "/-/ready") == 0) {
		struct collset *set = s->opt.current(s->opt.ctx);
		collset_put(set);
		return set ? reply_text(rq, MHD_HTTP_OK, "Ready\n")
			   : reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "Not ready\n");
	}
	return reply_text(rq, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* libmicrohttpd calls the handler when the head is in, again for each
 * piece of a body, and once more when the request is complete. Answering
 * only then keeps the connection open for the next request (keep-alive);
 * answering at once would close it. Until then the head deadline runs, so
 * a body trickled in cannot hold the connection either. */
/* A request head's framing headers, counted. */
struct framing {
	unsigned lengths, encodings;
	const char *length; /* the first Content-Length */
	bool lengths_differ;
};

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
				     const char *value)
{
	struct framing *f = cls;
	(void)kind;

	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->lengths_differ |= f->lengths++ && strcmp(value ? value : "", f->length) != 0;
		if (!f->length)
			f->length = value ? value : "";
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->encodings++;
	}
	return MHD_YES;
}

/* RFC 9112 6.3: a body's length given both by Content-Length and by
 * Transfer-Encoding, or by two Content-Lengths that differ, is read one
 * way here and maybe another by a proxy in front (request smuggling):
 * refused, and the connection closed, so nothing after it is read. */
static bool framing_ambiguous(struct MHD_Connection *c)
{
	struct framing f = {0};

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_framing, &f);
	return (f.lengths && f.encodings) || f.lengths_differ;
}

static enum MHD_Result refuse_and_close(struct request *rq, unsigned code, const char *text)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	return queue(rq, code, r);
}

/* Writes a whole answer to the connection's socket (through its TLS
 * session, if any) before libmicrohttpd has a request to answer. */
static void answer_raw(struct MHD_Connection *c, const char *text, size_t len)
{
	const union MHD_ConnectionInfo *ti =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const union MHD_ConnectionInfo *fi =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (ti && ti->tls_session)
		gnutls_record_send(ti->tls_session, text, len);
	else if (fi)
		send(fi->connect_fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (fi)
		shutdown(fi->connect_fd, SHUT_RDWR);
}

/* Whether the path, once unescaped, holds a NUL: libmicrohttpd decodes
 * %00 and hands on a string the NUL cuts, so "/metrics%00.png" would be
 * served as /metrics and a proxy's rule on the path's end bypassed. The
 * one check for every path; collect[] checks its values itself. */
static bool path_has_nul(const char *path, size_t len)
{
	for (size_t i = 0; i + 2 < len; i++)
		if (path[i] == '%' && path[i + 1] == '0' && path[i + 2] == '0')
			return true;
	return false;
}

/* MHD_OPTION_URI_LOG_CALLBACK: the request target, before libmicrohttpd
 * parses its arguments. One with more than a request may have is answered
 * 414 here and the connection closed; its context marks it, so the handler
 * never runs for it. One whose path holds %00 is marked for the handler
 * to answer 400. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	static const char answer[] = "HTTP/1.1 414 URI Too Long\r\n"
				     "Content-Type: text/plain; charset=utf-8\r\n"
				     "Content-Length: 39\r\nConnection: close\r\n\r\n"
				     "more than 256 arguments in the request\n";
	const char *q = strchr(uri, '?');
	size_t args = q ? 1 : 0;
	(void)cls;

	for (const char *p = q; p && *p && args <= HTTP_URI_ARGS_MAX; p++)
		args += *p == '&';
	if (args <= HTTP_URI_ARGS_MAX)
		return path_has_nul(uri, q ? (size_t)(q - uri) : strlen(uri)) ? &uri_nul : NULL;
	answer_raw(c, answer, sizeof(answer) - 1);
	selfstats_http_refused(SELFSTATS_REFUSED_URI);
	selfstats_http_response(MHD_HTTP_URI_TOO_LONG);
	return &uri_refused;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct request *rq = *con_cls == &uri_nul ? NULL : *con_cls;
	(void)version;

	if (*con_cls == &uri_refused)
		return MHD_NO;

	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	bool post =
	    strncmp(url, STATS_PREFIX, strlen(STATS_PREFIX)) == 0 && strcmp(method, "POST") == 0;
	if (!rq) {
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		bool nul = *con_cls == &uri_nul;
		*rq = (struct request){.s = s, .c = c, .web = weblive_get(s->opt.web)};
		*con_cls = rq;
		if (nul) { /* refused at once, any body unread */
			selfstats_http_refused(SELFSTATS_REFUSED_NUL_PATH);
			return refuse_and_close(rq, MHD_HTTP_BAD_REQUEST,
						"the path holds an encoded NUL (%00)\n");
		}
		if (framing_ambiguous(c)) {
			selfstats_http_refused(SELFSTATS_REFUSED_FRAMING);
			return refuse_and_close(rq, MHD_HTTP_BAD_REQUEST,
						"the body's length is given two ways\n");
		}
		if (!get && !post) /* only /statistics/ takes a body: refuse at once, unread */
			return reply_text(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
		return !post || (rq->body = calloc(1, sizeof(*rq->body))) ? MHD_YES : MHD_NO;
	}
	if (*upload_size) {
		struct body *b = rq->body;
		if (b && !b->too_big && *upload_size <= HTTP_BODY_MAX - b->len) {
			memcpy(b->data + b->len, upload, *upload_size);
			b->len += *upload_size;
		} else if (b) {
			b->too_big = true; /* read and dropped; refused when complete */
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return route(rq, url, method);
}

static void release_web(void *gen)
{
	webgen_put(gen);
}

/* Before its handshake, a TLS connection gets the settings of the web
 * config in force, which it holds until it closes. A connection that
 * cannot get them is cut: it must never fall back to the settings
 * libmicrohttpd was started with. */
static void tls_start(struct http_server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const union MHD_ConnectionInfo *fi =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct webgen *g = weblive_get(s->opt.web);

	if (ci && g->tls && webtls_setup(g->tls, ci->tls_session) == 0 &&
	    httpguard_hold(c, g, release_web) == 0)
		return;
	webgen_put(g);
	log_warn("TLS connection cut: cannot apply the web config to it");
	if (fi)
		shutdown(fi->connect_fd, SHUT_RDWR);
}

/* A handshake that failed is counted (and logged by webtls.c). */
static void tls_end(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);

	if (ci && ci->tls_session && webtls_handshake_failed(ci->tls_session))
		selfstats_http_refused(SELFSTATS_REFUSED_TLS_HANDSHAKE);
}

static void notify(void *cls, struct MHD_Connection *c, void **socket_ctx,
		   enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED && weblive_tls(s->opt.web))
		tls_end(c);
	httpguard_notify(s->guard, c, socket_ctx, code);
	if (code == MHD_CONNECTION_NOTIFY_STARTED && weblive_tls(s->opt.web))
		tls_start(s, c);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("http", "detail", msg);
}

int http_parse_listen(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s;
	size_t hl;

	if (!colon || !colon[1] || strlen(colon + 1) >= portlen)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl && s[0] == '[') {
		if (s[hl - 1] != ']')
			return -EINVAL;
		h = s + 1;
		hl -= 2;
	} else if (memchr(s, ':', hl)) {
		return -EINVAL; /* a bare IPv6 address needs brackets */
	}
	if (hl >= hostlen)
		return -EINVAL;
	const char *p = colon + 1;
	char *end;
	long n = strtol(p, &end, 10);
	if (*end || p[0] < '0' || p[0] > '9' || n < 1 || n > 65535)
		return -ERANGE;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, p, strlen(p) + 1); /* fits: checked above */
	return 0;
}

const char *http_listen_error(int rc)
{
	return rc == -ERANGE ? "the port must be a number from 1 to 65535"
			     : "want host:port, [v6]:port or :port";
}

int http_resolve_listen(const char *addr, struct addrinfo **out, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	int rc;

	*out = NULL;
	if ((rc = http_parse_listen(addr, host, sizeof(host), port, sizeof(port))) < 0) {
		snprintf(err, errlen, "bad listen address '%s': %s", addr, http_listen_error(rc));
		return -EINVAL;
	}
	hints.ai_family = host[0] ? AF_UNSPEC : AF_INET6;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, out);
	if (rc != 0 && !host[0]) {
		hints.ai_family = AF_INET; /* a host without IPv6 */
		rc = getaddrinfo(NULL, port, &hints, out);
	}
	if (rc != 0) {
		*out = NULL;
		snprintf(err, errlen, "listen address '%s': %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

/* Binds one listen address; ":port" means every address, IPv6 and IPv4. */
static int bind_listen(const char *addr, int *family, char *err, size_t errlen)
{
	char host[256], port[16];
	struct addrinfo *ai = NULL;
	int fd = -1, one = 1, zero = 0, rc;

	if ((rc = http_resolve_listen(addr, &ai, err, errlen)) < 0)
		return rc;
	http_parse_listen(addr, host, sizeof(host), port, sizeof(port)); /* it passed above */
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		goto err_close;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6 && !host[0])
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0)
		goto err_close;
	*family = ai->ai_family;
	freeaddrinfo(ai);
	return fd;
err_close:
	snprintf(err, errlen, "cannot listen on '%s': %s", addr, strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return -errno;
}

/* "127.0.0.1:9100" or "[::]:9100", for logs. */
static void describe_socket(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(out, len, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

int http_start(const struct http_options *opt, struct http_server **out, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	int fds[HTTP_LISTEN_MAX], family[HTTP_LISTEN_MAX];
	size_t nfds = 0;

	if (!s)
		return -ENOMEM;
	s->opt = *opt;
	s->start_web = weblive_get(opt->web);
	struct httpguard_limits lim = {.keep = HTTP_CONNECTIONS_MAX,
				       .most = HTTP_CONNECTIONS_MAX + HTTP_CONNECTIONS_SLACK,
				       .per_address = opt->max_per_address};
	if (httpguard_start(&s->guard, &lim, opt->head_timeout, opt->write_timeout) < 0) {
		snprintf(err, errlen, "cannot start the HTTP deadline thread");
		webgen_put(s->start_web);
		free(s);
		return -ENOMEM;
	}
	for (; nfds < opt->ninherited; nfds++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		fds[nfds] = opt->inherited[nfds];
		family[nfds] = getsockname(fds[nfds], (struct sockaddr *)&ss, &len) == 0
				   ? ss.ss_family
				   : AF_INET;
	}
	for (size_t i = 0; i < opt->nlisten && nfds < HTTP_LISTEN_MAX; i++, nfds++) {
		fds[nfds] = bind_listen(opt->listen[i], &family[nfds], err, errlen);
		if (fds[nfds] < 0)
			goto err_stop;
	}
	for (size_t i = 0; i < nfds; i++) {
		/* poll, not select: collectors may hold thousands of fds, so ours
		 * are numbered far above FD_SETSIZE. */
		/* listener.c accepts: libmicrohttpd would spin when out of fds. */
		unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				 MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_USE_POLL |
				 MHD_USE_NO_LISTEN_SOCKET |
				 (family[i] == AF_INET6 ? MHD_USE_IPv6 : 0) |
				 (weblive_tls(opt->web) ? MHD_USE_TLS : 0);
		const struct webconf *w = s->start_web->conf;
		/* Without TLS, libmicrohttpd takes the PEM options as unknown. */
		enum MHD_OPTION key_opt = w->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END;
		s->daemon[i] = MHD_start_daemon(
		    flags, 0, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		    MHD_OPTION_NOTIFY_CONNECTION, notify, s,
		    /* twice what httpguard_admit lets through, closing ones included,
		     * so never reached (0.9.75 hangs when it refuses one) */
		    MHD_OPTION_CONNECTION_LIMIT,
		    (unsigned)(4 * (HTTP_CONNECTIONS_MAX + HTTP_CONNECTIONS_SLACK)),
		    MHD_OPTION_THREAD_STACK_SIZE, (size_t)HTTP_THREAD_STACK,
		    MHD_OPTION_NOTIFY_COMPLETED, request_completed, s->guard,
		    MHD_OPTION_URI_LOG_CALLBACK, uri_seen, NULL, MHD_OPTION_STRICT_FOR_CLIENT, 1,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_REQUEST_MEMORY,
		    MHD_OPTION_CONNECTION_TIMEOUT, opt->connection_timeout, key_opt, w->key_pem,
		    MHD_OPTION_HTTPS_MEM_CERT, w->cert_pem, MHD_OPTION_END);
		char where[INET6_ADDRSTRLEN + 16];
		describe_socket(fds[i], where, sizeof(where));
		if (!s->daemon[i]) {
			snprintf(err, errlen, "cannot start HTTP server on %s", where);
			goto err_stop;
		}
		s->ndaemons++;
		log_info("listening", "address", where, "tls", w->tls ? "on" : "off");
	}
	if (listener_start(&s->listener, fds, s->daemon, nfds, s->guard) < 0) { /* it closed fds */
		snprintf(err, errlen, "cannot start the HTTP listener thread");
		http_stop(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
err_stop:
	for (size_t j = 0; j < nfds; j++)
		close(fds[j]);
	http_stop(s);
	return -EINVAL;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	listener_stop(s->listener); /* no new connection, then the daemons end theirs */
	for (size_t i = 0; i < s->ndaemons; i++)
		MHD_stop_daemon(s->daemon[i]);
	httpguard_stop(s->guard);
	webgen_put(s->start_web);
	free(s);
}
