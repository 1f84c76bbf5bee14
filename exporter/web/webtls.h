/* One generation of the TLS settings as GnuTLS objects: the certificate,
 * the client CA, the priority string and the client-certificate policy,
 * given to each new connection's session before its handshake. */
#ifndef BS_WEBTLS_H
#define BS_WEBTLS_H

#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "webconf.h"

struct webtls;

/* Checks the certificate against its key, and its key usage against the
 * versions and cipher suites (one no suite can serve is refused), and
 * loads the client CA. NULL with the reason in err. */
struct webtls *webtls_new(const struct webconf *w, char *err, size_t errlen);
/* Only once no session set up from it is left. */
void webtls_free(struct webtls *t);
/* Whether the session's client sent a certificate that t verified in the
 * handshake (a client that failed never gets this far). */
bool webtls_client_verified(const struct webtls *t, gnutls_session_t s);
/* At a TLS connection's close: whether it ended in a handshake that
 * failed (a client hello came, no Finished), which is then logged with
 * the client's address, peer. libmicrohttpd 0.9.75 has freed the session
 * by then: s is only a key here, never read. */
bool webtls_handshake_failed(gnutls_session_t s, const struct sockaddr *peer);
/* Gives a new session this generation's settings. */
int webtls_setup(struct webtls *t, gnutls_session_t s);

#endif
