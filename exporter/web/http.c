/* The HTTP endpoints (libmicrohttpd): telemetry, landing page, health,
 * the processing's interface. A thread per connection; each phase of a
 * connection marked for the guard, which bounds and may evict every one
 * (httpguard.c); caps on request memory and on pipelined requests. A
 * scrape slot counts only while the exporter works on the request, not
 * while a client is slow to read, so no one can keep a scraper out. */
#include "http.h"

#include <errno.h>
#include <limits.h>
#include <gnutls/gnutls.h>
#include <math.h>
#include <stdatomic.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emitter.h"
#include "httpguard.h"
#include "httproute.h"
#include "httptarget.h"
#include "landing.h"
#include "listener.h"
#include "log.h"
#include "monoclock.h"
#include "negotiate.h"
#include "processing.h"
#include "scrape.h"
#include "scrapeslots.h"
#include "selfstats.h"
#include "version.h"
#include "weblive.h"
#include "webwatch.h"

#define HTTP_REQUEST_MEMORY (64 * 1024) /* headers and URL of one request */
#define HTTP_THREAD_STACK (512 * 1024)
/* Output of finished scrapes waiting for their clients to read it: since a
 * slot is given back once the work is done, this bounds what slow readers
 * can keep in memory (one response always passes, however large). */
#define HTTP_UNSENT_BYTES_MAX (512ull << 20)
#define HTTP_BODY_MAX (64 * 1024) /* a POST to /statistics/ */
#define STATS_PREFIX HTTPROUTE_STATS_PREFIX
/* The guard's bounds beside the flags' (httpguard.h). A response is read
 * at 256 bytes a second at least once 5 s have passed, as Kestrel's
 * minimum response data rate has it; a connection lives an hour at most,
 * as nginx's keepalive_time; a new connection gets a second to send its
 * head before it can be evicted; 4 requests may wait behind an unread
 * response. */
#define HTTP_MIN_RATE 256
#define HTTP_RATE_GRACE_S 5
#define HTTP_LIFE_S 3600
#define HTTP_PROTECT_MS 1000
#define HTTP_PIPELINE_MAX 4
_Static_assert(HTTP_LISTEN_MAX <= LISTENER_SOCKETS_MAX, "a listener for every address");

struct http_server {
	struct http_options opt;
	struct httpguard *guard;
	struct MHD_Daemon *daemon[HTTP_LISTEN_MAX];
	size_t ndaemons;
	struct listener *listener;
	struct scrapeslots *slots; /* --web.max-requests, by client address */
	struct webwatch *watch;	   /* notices a daemon that serves no more */
	uint64_t unsent_bytes;
	struct webgen *start_web; /* whose PEM libmicrohttpd was started with */
};

/* A POST's body, gathered across the handler's calls. */
struct body {
	size_t len;
	bool too_big;
	char data[HTTP_BODY_MAX + 1];
};

/* One request, from its request line to its completion. */
struct request {
	struct http_server *s;
	struct MHD_Connection *c;
	struct webgen *web;	   /* the web config it is served under */
	struct body *body;	   /* a POST's; NULL otherwise */
	char *user;		   /* the basic-auth user it authenticated as */
	const char *target;	   /* in libmicrohttpd's request line */
	size_t target_len;	   /* as a string, when first seen */
	enum httptarget_fault bad; /* seen in the target at once */
	bool answered;		   /* by answer_raw: the handler has nothing to do */
	bool started;		   /* the handler has seen its head */
};

/* The request the current thread serves: libmicrohttpd runs a thread per
 * connection, and its log callback, the one place it tells of the answers
 * it sends itself, does not say which connection. */
static __thread struct request *thread_rq;

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
	httpguard_phase(rq->c, HTTPGUARD_SEND);
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
	struct textbuf page = {0};
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
	textbuf_free(&page);
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
	unsigned char addr[16];

	httpguard_client_addr(c, addr);
	if (!scrapeslots_take(s->slots, addr)) {
		selfstats_http_refused(SELFSTATS_REFUSED_SCRAPES);
		return reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "too many concurrent scrapes\n");
	}
	sel.set = s->opt.current(s->opt.ctx);
	if (!sel.set) {
		scrapeslots_put(s->slots, addr);
		return reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "not ready\n");
	}
	MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, select_arg, &sel);
	if (sel.bad) {
		collset_put(sel.set);
		scrapeslots_put(s->slots, addr);
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
	scrapeslots_put(s->slots, addr);
	if (!sc)
		return reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	return send_scrape(rq, sc, req.format, req.gzip);
}

/* ---- /statistics/: the processing's interface ---- */

static void request_free(void *p)
{
	struct request *rq = p;

	free(rq->body);
	free(rq->user);
	webgen_put(rq->web);
	free(rq);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			      enum MHD_RequestTerminationCode code)
{
	struct request *rq = *con_cls;

	if (rq == thread_rq)
		thread_rq = NULL;
	if (rq) {
		httpguard_request_ctx(c, NULL, NULL);
		request_free(rq);
	}
	*con_cls = NULL;
	httpguard_completed(cls, c, con_cls, code);
}

/* The /statistics/ interface's query, rebuilt from the decoded arguments
 * in their order: key=value, '&' apart. An argument whose key or value
 * holds '&' or '=' (it would read as two) or a NUL (%00: "format=json%00x"
 * must not pass as format=json), one without a key, or a query past the
 * buffer is bad. An empty argument (nothing between two '&') is skipped:
 * libmicrohttpd drops a last one, so each is, wherever it stands. */
struct iface_query {
	char buf[256];
	size_t len;
	bool bad;
};

static bool iface_arg_bad(const char *s, size_t size)
{
	return strlen(s) != size || strpbrk(s, "&=");
}

static enum MHD_Result iface_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 size_t key_size, const char *value, size_t value_size)
{
	struct iface_query *q = cls;
	size_t room = sizeof(q->buf) - q->len;
	int n;
	(void)kind;

	if (!key_size && !value)
		return MHD_YES;
	if (!key_size || iface_arg_bad(key, key_size) ||
	    (value && iface_arg_bad(value, value_size))) {
		q->bad = true;
		return MHD_NO;
	}
	n = snprintf(q->buf + q->len, room, "%s%s%s%s", q->len ? "&" : "", key, value ? "=" : "",
		     value ? value : "");
	if (n < 0 || (size_t)n >= room) {
		q->bad = true;
		return MHD_NO;
	}
	q->len += (size_t)n;
	return MHD_YES;
}

static enum MHD_Result statistics(struct request *rq, const char *path, const char *method)
{
	struct http_server *s = rq->s;
	struct body *b = rq->body;
	struct collset *set = s->opt.current(s->opt.ctx);
	struct stage_reply r;
	unsigned char addr[16];
	enum MHD_Result ret;

	if (b && b->too_big) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_CONTENT_TOO_LARGE, "body larger than 64 KiB\n");
	}
	struct processing *proc = set ? collset_builtin(set, processing_collector()->name) : NULL;
	if (!proc) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_NOT_FOUND, "no processing: section configured\n");
	}
	bool may_write = httpguard_client_addr(rq->c, addr) &&
			 processing_conf_may_write(collset_config(set)->processing, addr, rq->user);
	if (b && memchr(b->data, '\0', b->len)) { /* would hide what follows it */
		collset_put(set);
		return reply_text(rq, MHD_HTTP_BAD_REQUEST, "EINVAL: the body holds a NUL byte\n");
	}
	if (b)
		b->data[b->len] = '\0';
	if (strchr(path, '?')) { /* %3F: the interface would read what follows as the query */
		collset_put(set);
		return reply_text(rq, MHD_HTTP_BAD_REQUEST,
				  "EINVAL: the path holds an encoded ? (%3F)\n");
	}
	/* The interface reads its query arguments (format=, meta=,
	 * objdump=, clone=, dstmaxsz=) from its path, and refuses any other. */
	struct iface_query q = {.len = 0};
	MHD_get_connection_values_n(rq->c, MHD_GET_ARGUMENT_KIND, iface_arg, &q);
	if (q.bad) {
		collset_put(set);
		return reply_text(
		    rq, MHD_HTTP_BAD_REQUEST,
		    "EINVAL: the query is over 255 bytes, or an argument has no key or "
		    "holds &, = or a NUL\n");
	}
	char *with_query = NULL;
	if (q.len && asprintf(&with_query, "%s?%s", path, q.buf) < 0) {
		collset_put(set);
		return reply_text(rq, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	processing_iface(proc, method, with_query ? with_query : path, b ? b->data : NULL,
			 may_write, monoclock_ns(), &r);
	free(with_query);
	collset_put(set);
	if (r.type)
		ret = reply(rq, (unsigned)r.status, r.type, r.text.p, r.text.len);
	else
		ret = reply_text(rq, (unsigned)r.status, r.text.p ? r.text.p : "");
	textbuf_free(&r.text);
	return ret;
}

static enum MHD_Result refuse_and_close(struct request *rq, unsigned code, const char *text);

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
	};

	httpguard_client_addr(rq->c, ar.addr);
	enum webauth_verdict v = webauth_admit(weblive_auth(rq->s->opt.web), rq->web->conf, &ar,
					       monoclock_ns(), &rq->user);
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

	/* A wait for a password check is a phase the guard bounds and may
	 * evict, as any other. */
	httpguard_phase(rq->c, HTTPGUARD_AUTH);
	if (!admitted(rq, &ret))
		return ret;
	if (httpguard_is_cut(rq->c)) /* evicted while it waited: no work for no one */
		return MHD_NO;
	httpguard_phase(rq->c, HTTPGUARD_WORK);
	switch (httproute_of(url, method, s->opt.telemetry_path)) {
	case HTTPROUTE_STATISTICS:
		return statistics(rq, url + strlen(STATS_PREFIX), method);
	case HTTPROUTE_TELEMETRY:
		return telemetry(rq);
	case HTTPROUTE_LANDING:
		return landing(rq);
	case HTTPROUTE_HEALTHY:
		return reply_text(rq, MHD_HTTP_OK, "Healthy\n");
	case HTTPROUTE_READY: {
		struct collset *set = s->opt.current(s->opt.ctx);
		collset_put(set);
		return set ? reply_text(rq, MHD_HTTP_OK, "Ready\n")
			   : reply_text(rq, MHD_HTTP_SERVICE_UNAVAILABLE, "Not ready\n");
	}
	case HTTPROUTE_METHOD_NOT_ALLOWED:
		return reply_text(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	default:
		return reply_text(rq, MHD_HTTP_NOT_FOUND, "not found\n");
	}
}

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

/* MHD_OPTION_URI_LOG_CALLBACK: the request target, before libmicrohttpd
 * cuts it at a NUL or parses its arguments; the request starts here. One
 * with more than a request may have is answered 414 here and the
 * connection closed, so the handler never runs for it; one whose path
 * holds %00 is marked for the handler to answer 400. */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *c)
{
	static const char answer[] = "HTTP/1.1 414 URI Too Long\r\n"
				     "Content-Type: text/plain; charset=utf-8\r\n"
				     "Content-Length: 45\r\nConnection: close\r\n\r\n"
				     "more than 256 arguments, or too long a query\n";
	struct http_server *s = cls;
	struct request *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL; /* the handler tries again */
	*rq = (struct request){.s = s,
			       .c = c,
			       .web = weblive_get(s->opt.web),
			       .target = uri,
			       .target_len = strlen(uri),
			       .bad = httptarget_check(uri)};
	thread_rq = rq;
	httpguard_request_ctx(c, rq, request_free);
	if (rq->bad == HTTPTARGET_TOO_MANY_ARGS) {
		/* libmicrohttpd parses the query after this returns, into the
		 * request memory it would overrun (httptarget.h): it is cut
		 * here, in libmicrohttpd's own writable copy of the line (it
		 * writes the NUL at the '?' itself), so none is parsed. */
		char *q = strchr(uri, '?');
		if (q)
			q[1] = '\0';
		answer_raw(c, answer, sizeof(answer) - 1);
		rq->answered = true;
		selfstats_http_refused(SELFSTATS_REFUSED_URI);
		selfstats_http_response(MHD_HTTP_URI_TOO_LONG);
	}
	return rq;
}

/* The head is in: what is refused before any body is read. */
static enum MHD_Result head_in(struct request *rq, const char *url, const char *method,
			       const char *version)
{
	if (rq->bad == HTTPTARGET_NUL_ENCODED) {
		selfstats_http_refused(SELFSTATS_REFUSED_NUL_PATH);
		return refuse_and_close(rq, MHD_HTTP_BAD_REQUEST,
					"the path holds an encoded NUL (%00)\n");
	}
	if (rq->target && httptarget_raw_nul(rq->target, rq->target_len, version)) {
		selfstats_http_refused(SELFSTATS_REFUSED_NUL_TARGET);
		return refuse_and_close(rq, MHD_HTTP_BAD_REQUEST,
					"the request target holds a NUL byte\n");
	}
	if (framing_ambiguous(rq->c)) {
		selfstats_http_refused(SELFSTATS_REFUSED_FRAMING);
		return refuse_and_close(rq, MHD_HTTP_BAD_REQUEST,
					"the body's length is given two ways\n");
	}
	if (!httpguard_request(rq->c)) {
		selfstats_http_refused(SELFSTATS_REFUSED_PIPELINED);
		return refuse_and_close(rq, MHD_HTTP_TOO_MANY_REQUESTS,
					"too many requests queued on one connection\n");
	}
	/* only /statistics/ takes a body: refused at once, unread */
	if (httproute_of(url, method, rq->s->opt.telemetry_path) == HTTPROUTE_METHOD_NOT_ALLOWED)
		return reply_text(rq, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (!httproute_takes_body(url, method)) /* answered once the request is complete */
		return MHD_YES;
	httpguard_phase(rq->c, HTTPGUARD_BODY);
	return (rq->body = calloc(1, sizeof(*rq->body))) ? MHD_YES : MHD_NO;
}

/* libmicrohttpd calls the handler when the head is in, again for each
 * piece of a body, and once more when the request is complete. Answering
 * only then keeps the connection open for the next request (keep-alive);
 * answering at once would close it. Until then the head or body phase's
 * bound runs, so a body trickled in cannot hold the connection either. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct request *rq = *con_cls;

	if (!rq) { /* the URI callback had no memory */
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*rq = (struct request){.s = s, .c = c, .web = weblive_get(s->opt.web)};
		*con_cls = rq;
	}
	if (rq->answered)
		return MHD_NO;
	if (!rq->started) {
		rq->started = true;
		return head_in(rq, url, method, version);
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

/* A handshake that failed is counted (and logged by webtls.c). At the
 * close libmicrohttpd 0.9.75 has already freed the session (gnutls_deinit
 * comes before this notification): only its pointer, as a key, and the
 * client's address, still held, are used. */
static void tls_end(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const union MHD_ConnectionInfo *ai =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	if (ci && ci->tls_session &&
	    webtls_handshake_failed(ci->tls_session, ai ? ai->client_addr : NULL))
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

/* libmicrohttpd answers some requests itself (a target or a header past
 * the request memory: 414, 431; a Content-Length that is not a number:
 * 400), and says so only in its log, in the connection's thread. Each is
 * counted here by its status. Version 0.9.75 writes the status line and
 * headers of its 400 for a malformed Content-Length twice: that one is
 * answered here, once, before it writes anything, and the socket shut so
 * that its own answer goes nowhere. */
static void mhd_answered(const char *msg)
{
	static const char bad_length[] = "HTTP/1.1 400 Bad Request\r\n"
					 "Content-Type: text/plain; charset=utf-8\r\n"
					 "Content-Length: 35\r\nConnection: close\r\n\r\n"
					 "the Content-Length is not a number\n";
	static const char said[] = "Error processing request (HTTP response code is ";
	unsigned code;

	if (strncmp(msg, "Failed to parse `Content-Length'", 32) == 0 && thread_rq &&
	    !thread_rq->answered) {
		answer_raw(thread_rq->c, bad_length, sizeof(bad_length) - 1);
		thread_rq->answered = true;
	} else if (strncmp(msg, said, sizeof(said) - 1) == 0 &&
		   sscanf(msg + sizeof(said) - 1, "%u", &code) == 1) {
		selfstats_http_response(code);
		if (code == MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE)
			selfstats_http_refused(SELFSTATS_REFUSED_HEADER_TOO_LARGE);
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	mhd_answered(msg);
	log_debug("http", "detail", msg);
}

/* libmicrohttpd's timeout, per idle gap: the guard bounds every phase,
 * and an idle keep-alive connection waits --web.idle-timeout, so this
 * only backs them up. */
static unsigned mhd_timeout(const struct http_options *opt)
{
	return opt->connection_timeout > opt->idle_timeout + 5 ? opt->connection_timeout
							       : opt->idle_timeout + 5;
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
	struct httpguard_rules rules = {
	    .head_ns = opt->head_timeout * 1000000000ull,
	    .send_ns = opt->write_timeout * 1000000000ull,
	    .idle_ns = opt->idle_timeout * 1000000000ull,
	    .life_ns = HTTP_LIFE_S * 1000000000ull,
	    .grace_ns = HTTP_RATE_GRACE_S * 1000000000ull,
	    .min_rate = HTTP_MIN_RATE,
	    .protect_ns = HTTP_PROTECT_MS * 1000000ull,
	    .pipeline_max = HTTP_PIPELINE_MAX,
	};
	if (!(s->slots = scrapeslots_new(opt->max_requests)) ||
	    httpguard_start(&s->guard, &lim, &rules) < 0) {
		snprintf(err, errlen, "cannot start the HTTP deadline thread");
		scrapeslots_free(s->slots);
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
		fds[nfds] = listener_bind(opt->listen[i], &family[nfds], err, errlen);
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
		    /* No limit of libmicrohttpd's own: 0.9.75 returns from its
		     * "connection limit" refusal holding its connection lock,
		     * and its listen thread then waits on that lock for ever. A
		     * limit is reachable: connections given with
		     * MHD_add_connection queue untracked until that thread takes
		     * them, and finished ones count until it joins them. Each
		     * holds an fd, so UINT_MAX is never reached; the guard and
		     * listener.c's fd reserve bound the connections. */
		    MHD_OPTION_CONNECTION_LIMIT, UINT_MAX, MHD_OPTION_THREAD_STACK_SIZE,
		    (size_t)HTTP_THREAD_STACK, MHD_OPTION_NOTIFY_COMPLETED, request_completed,
		    s->guard, MHD_OPTION_URI_LOG_CALLBACK, uri_seen, s,
		    MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		    (size_t)HTTP_REQUEST_MEMORY, MHD_OPTION_CONNECTION_TIMEOUT, mhd_timeout(opt),
		    key_opt, w->key_pem, MHD_OPTION_HTTPS_MEM_CERT, w->cert_pem, MHD_OPTION_END);
		char where[LISTENER_DESCRIBE_MAX];
		listener_describe(fds[i], where, sizeof(where));
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
	if (webwatch_start(&s->watch, s->daemon, s->ndaemons) < 0) {
		snprintf(err, errlen, "cannot start the HTTP watchdog thread");
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
	webwatch_stop(s->watch);
	listener_stop(s->listener); /* no new connection, then the daemons end theirs */
	for (size_t i = 0; i < s->ndaemons; i++)
		MHD_stop_daemon(s->daemon[i]);
	httpguard_stop(s->guard);
	scrapeslots_free(s->slots);
	webgen_put(s->start_web);
	free(s);
}
