/* The web config in force: re-read when it or a file it names changes
 * (checked on each new connection and request) and on SIGHUP. A bad file
 * keeps the last good one, and says why once. */
#ifndef BS_WEBLIVE_H
#define BS_WEBLIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "webauth.h"
#include "webconf.h"
#include "webtls.h"

/* One loaded file: what a connection or a request holds while it runs. */
struct webgen {
	int refs;
	struct webconf *conf;
	struct webtls *tls; /* NULL without TLS */
};

struct weblive;

/* NULL file: no web config (plain HTTP, no auth). NULL with err on a bad file. */
struct weblive *weblive_open(const char *file, char *err, size_t errlen);
void weblive_close(struct weblive *l);
/* The generation in force, re-read first if a file changed. A reference:
 * give it back with webgen_put. */
struct webgen *weblive_get(struct weblive *l);
void webgen_put(struct webgen *g);
/* Re-reads now (SIGHUP), waiting for files being written to settle until
 * the rule's deadline; false if a file was bad, which is logged. */
struct conf_settle;
bool weblive_reload(struct weblive *l, struct conf_settle *settle);
/* The --web.max-requests value the "web endpoint" line reports
 * (UINT_MAX: no limit). */
void weblive_set_max_requests(struct weblive *l, unsigned max_requests);
/* Logs the "web endpoint" line: the file, TLS, client certificates, basic
 * auth and its users, the rate limit and max requests in force. Written
 * at start and after every reload that took a new file. */
void weblive_log_endpoint(struct weblive *l);
/* Whether connections are served with TLS; fixed at start, as in the toolkit. */
bool weblive_tls(const struct weblive *l);
struct webauth *weblive_auth(struct weblive *l);

#endif
