/* TLS settings as GnuTLS objects, applied per session: libmicrohttpd
 * creates each session with its own credentials, and we replace them
 * before the handshake starts, so a changed certificate, CA or policy
 * takes effect on the next connection, as with the toolkit's
 * GetConfigForClient. Client certificates are checked during the
 * handshake: a refused one never reaches a request. GnuTLS is only ever
 * asked to request a certificate: told to require one, it fails a client
 * that sends none before our callback runs, which could then neither
 * count nor log it; so the callback refuses that client itself. */
#include "webtls.h"

#include <arpa/inet.h>
#include <gnutls/x509.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conftree.h"
#include "log.h"
#include "selfstats.h"

struct webtls {
	struct webtls *next; /* in `live` */
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	gnutls_certificate_request_t request; /* IGNORE or REQUEST, never REQUIRE */
	bool require;			      /* a client without a certificate is refused */
	bool verify;			      /* against the client CA */
	char **sans;			      /* client_allowed_sans, owned */
	size_t nsans;
};

/* The generations sessions may still use, so that the verify callback,
 * which GnuTLS gives only the session, finds its settings by credentials. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct webtls *live;

static bool san_allowed(const struct webtls *t, const char *san)
{
	for (size_t i = 0; i < t->nsans; i++)
		if (strcmp(t->sans[i], san) == 0)
			return true;
	return false;
}

/* The toolkit's rule: one DNS, e-mail, IP or URI subject alternative name
 * of the client's certificate must be in the list, exactly. */
static bool sans_match(const struct webtls *t, const gnutls_datum_t *der)
{
	gnutls_x509_crt_t crt;
	char buf[1024], ip[INET6_ADDRSTRLEN];
	bool ok = false;

	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) < 0)
		goto out_deinit;
	for (unsigned i = 0; !ok; i++) {
		size_t len = sizeof(buf) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, i, buf, &len, NULL);
		if (type == GNUTLS_E_SHORT_MEMORY_BUFFER)
			continue; /* longer than any name worth allowing */
		if (type < 0)
			break;
		buf[len] = '\0';
		if (type == GNUTLS_SAN_IPADDRESS)
			ok = (len == 4 || len == 16) &&
			     inet_ntop(len == 4 ? AF_INET : AF_INET6, buf, ip, sizeof(ip)) &&
			     san_allowed(t, ip);
		else if (type == GNUTLS_SAN_DNSNAME || type == GNUTLS_SAN_RFC822NAME ||
			 type == GNUTLS_SAN_URI)
			ok = strlen(buf) == len && san_allowed(t, buf);
	}
out_deinit:
	gnutls_x509_crt_deinit(crt);
	return ok;
}

/* Go's words for a failed verification (crypto/x509's errors), so that
 * an operator coming from node_exporter reads the same reasons. */
static const char *verify_reason(unsigned status)
{
	if (status & GNUTLS_CERT_SIGNER_NOT_FOUND)
		return "certificate signed by unknown authority";
	if (status & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED))
		return "certificate has expired or is not yet valid";
	if (status & GNUTLS_CERT_PURPOSE_MISMATCH)
		return "certificate specifies an incompatible key usage";
	if (status & GNUTLS_CERT_REVOKED)
		return "certificate has been revoked";
	if (status & GNUTLS_CERT_SIGNATURE_FAILURE)
		return "certificate signature is invalid";
	if (status & GNUTLS_CERT_INSECURE_ALGORITHM)
		return "certificate signed with an insecure algorithm";
	return "certificate failed verification";
}

/* NULL: the client may go on. Otherwise why not, and in *code the error
 * the handshake fails with. */
static const char *check_client(const struct webtls *t, gnutls_session_t s, int *code)
{
	unsigned n = 0, status = 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(s, &n);

	*code = GNUTLS_E_CERTIFICATE_ERROR;
	if (!certs || !n) {
		/* What GnuTLS itself fails the handshake with when it requires one. */
		*code = gnutls_protocol_get_version(s) == GNUTLS_TLS1_3
			    ? GNUTLS_E_CERTIFICATE_REQUIRED
			    : GNUTLS_E_NO_CERTIFICATE_FOUND;
		return t->require ? "client didn't provide a certificate" : NULL;
	}
	if (t->verify) {
		gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
						 .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT};
		if (gnutls_certificate_verify_peers(s, &purpose, 1, &status) < 0)
			return "certificate failed verification";
		if (status)
			return verify_reason(status);
	}
	if (t->nsans && !sans_match(t, &certs[0]))
		return "could not find allowed SANs in client cert";
	return NULL;
}

/* An address as Go's "TLS handshake error from ADDR" gives it; "?" if
 * none. */
static void addr_name(const struct sockaddr *sa, char *out, size_t outlen)
{
	char host[INET6_ADDRSTRLEN], port[8];
	socklen_t len = !sa			    ? 0
			: sa->sa_family == AF_INET  ? sizeof(struct sockaddr_in)
			: sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						    : 0;

	snprintf(out, outlen, "?");
	if (!len || getnameinfo(sa, len, host, sizeof(host), port, sizeof(port),
				NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return;
	snprintf(out, outlen, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* The client of a session under way (its handshake). */
static void peer_name(gnutls_session_t s, char *out, size_t outlen)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd = gnutls_transport_get_int(s);

	if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		snprintf(out, outlen, "?");
	else
		addr_name((struct sockaddr *)&ss, out, outlen);
}

static int verify_client(gnutls_session_t s)
{
	gnutls_certificate_credentials_t cred = NULL;
	struct webtls *found = NULL;
	const char *why = "unknown TLS settings";
	char remote[INET6_ADDRSTRLEN + 16];
	int code = GNUTLS_E_CERTIFICATE_ERROR;

	/* Only the lookup is locked: the connection holds its generation
	 * until it closes, so `found` outlives this handshake, and the
	 * verification of one client does not hold up another's. */
	pthread_mutex_lock(&live_lock);
	if (gnutls_credentials_get(s, GNUTLS_CRD_CERTIFICATE, (void **)&cred) == 0)
		for (struct webtls *t = live; t && !found; t = t->next)
			if (t->cred == cred)
				found = t;
	pthread_mutex_unlock(&live_lock);
	if (found)
		why = check_client(found, s, &code);
	if (!why)
		return 0;
	selfstats_http_refused(SELFSTATS_REFUSED_CLIENT_CERT);
	peer_name(s, remote, sizeof(remote));
	/* At info, as Go's server logs it; the log holds back more than a
	 * few a second, so a client retrying in a loop cannot fill a disk. */
	log_info("TLS handshake refused", "reason", "client_certificate", "remote", remote, "err",
		 why);
	return code;
}

/* "file:line:col: " of a value of the web config, as its other errors. */
static size_t where(const struct webconf *w, const struct conf_node *at, char *err, size_t errlen)
{
	int n = at ? snprintf(err, errlen, "%s:%u:%u: ", w->doc->file, at->line, at->col) : 0;

	return n > 0 && (size_t)n < errlen ? (size_t)n : 0;
}

/* Which of the two a failure to load them is about: a certificate that
 * does not parse alone, else the key (unparsable, or not the
 * certificate's). */
static const struct conf_node *cert_or_key(const struct webconf *w, const gnutls_datum_t *cert)
{
	gnutls_x509_crt_t *list = NULL;
	unsigned n = 0;

	if (gnutls_x509_crt_list_import2(&list, &n, cert, GNUTLS_X509_FMT_PEM, 0) < 0)
		return w->cert_at;
	for (unsigned i = 0; i < n; i++)
		gnutls_x509_crt_deinit(list[i]);
	gnutls_free(list);
	return w->key_at;
}

static int load_credentials(struct webtls *t, const struct webconf *w, char *err, size_t errlen)
{
	gnutls_datum_t cert = {(unsigned char *)w->cert_pem, (unsigned)strlen(w->cert_pem)};
	gnutls_datum_t key = {(unsigned char *)w->key_pem, (unsigned)strlen(w->key_pem)};
	size_t at;
	int rc;

	if ((rc = gnutls_certificate_allocate_credentials(&t->cred)) < 0 ||
	    (rc = gnutls_certificate_set_x509_key_mem2(t->cred, &cert, &key, GNUTLS_X509_FMT_PEM,
						       NULL, 0)) < 0) {
		at = where(w, cert_or_key(w, &cert), err, errlen);
		snprintf(err + at, errlen - at,
			 "failed to load the certificate (%s) and key (%s): %s",
			 w->cert_file ? w->cert_file : "inline",
			 w->key_file ? w->key_file : "inline", gnutls_strerror(rc));
		return -1;
	}
	if (!w->client_ca_pem)
		return 0;
	gnutls_datum_t ca = {(unsigned char *)w->client_ca_pem, (unsigned)strlen(w->client_ca_pem)};
	if ((rc = gnutls_certificate_set_x509_trust_mem(t->cred, &ca, GNUTLS_X509_FMT_PEM)) <= 0) {
		at = where(w, w->client_ca_at, err, errlen);
		snprintf(err + at, errlen - at, "no usable certificate in the client CA (%s)%s%s",
			 w->client_ca_file ? w->client_ca_file : "inline", rc < 0 ? ": " : "",
			 rc < 0 ? gnutls_strerror(rc) : "");
		return -1;
	}
	return 0;
}

/* What the certificate's key may do in a handshake: sign (every ECDHE and
 * DHE suite, and TLS 1.3) and, for RSA, encipher (the RSA key exchange
 * suites). GnuTLS honours the key usage of its own certificate, as Go does
 * not: a certificate for key encipherment alone fails every handshake
 * that needs a signature. */
struct key_use {
	bool rsa, sign, encipher;
	unsigned ku; /* the key usage bits; 0 with has_ku false */
	bool has_ku;
};

static int key_use_of(gnutls_certificate_credentials_t cred, struct key_use *u)
{
	gnutls_datum_t der;
	gnutls_x509_crt_t crt;
	unsigned critical = 0;
	int rc;

	if ((rc = gnutls_certificate_get_crt_raw(cred, 0, 0, &der)) < 0)
		return rc;
	if ((rc = gnutls_x509_crt_init(&crt)) < 0)
		return rc;
	if ((rc = gnutls_x509_crt_import(crt, &der, GNUTLS_X509_FMT_DER)) < 0)
		goto out_deinit;
	int pk = gnutls_x509_crt_get_pk_algorithm(crt, NULL);
	u->rsa = pk == GNUTLS_PK_RSA;
	rc = gnutls_x509_crt_get_key_usage(crt, &u->ku, &critical);
	u->has_ku = rc >= 0;
	u->sign = !u->has_ku || (u->ku & GNUTLS_KEY_DIGITAL_SIGNATURE);
	u->encipher = u->rsa && (!u->has_ku || (u->ku & GNUTLS_KEY_KEY_ENCIPHERMENT));
	rc = 0;
out_deinit:
	gnutls_x509_crt_deinit(crt);
	return rc;
}

/* Of the suites the priority enables, how many the key can serve, and how
 * many of those are RSA key exchange (TLS 1.2 at most, no forward secrecy). */
static void usable_suites(gnutls_priority_t prio, const struct key_use *u, unsigned *usable,
			  unsigned *rsa_kx)
{
	const unsigned *protos = NULL;
	int nprotos = gnutls_priority_protocol_list(prio, &protos);
	bool tls12 = false, tls13 = false;
	unsigned sidx;

	for (int i = 0; i < nprotos; i++) {
		tls13 |= protos[i] == GNUTLS_TLS1_3;
		tls12 |= protos[i] != GNUTLS_TLS1_3;
	}
	*usable = *rsa_kx = 0;
	for (unsigned i = 0;; i++) {
		int rc = gnutls_priority_get_cipher_suite_index(prio, i, &sidx);
		if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (rc < 0)
			continue;
		gnutls_kx_algorithm_t kx;
		gnutls_protocol_t minv;
		if (!gnutls_cipher_suite_info(sidx, NULL, &kx, NULL, NULL, &minv))
			continue;
		if (minv == GNUTLS_TLS1_3) {
			*usable += tls13 && u->sign;
		} else if (kx == GNUTLS_KX_RSA) {
			*usable += tls12 && u->encipher;
			*rsa_kx += tls12 && u->encipher;
		} else if (kx == GNUTLS_KX_ECDHE_RSA || kx == GNUTLS_KX_DHE_RSA) {
			*usable += tls12 && u->rsa && u->sign;
		} else if (kx == GNUTLS_KX_ECDHE_ECDSA) {
			*usable += tls12 && !u->rsa && u->sign;
		}
	}
}

/* Refuses a certificate no configured suite can use; one that only RSA key
 * exchange can use is served with those suites, and said. */
static int check_key_use(struct webtls *t, const struct webconf *w, char *err, size_t errlen)
{
	struct key_use u = {0};
	unsigned usable, rsa_kx;
	char kubuf[16];
	size_t at;

	if (key_use_of(t->cred, &u) < 0)
		return 0; /* GnuTLS took it; it will say more at the handshake */
	usable_suites(t->prio, &u, &usable, &rsa_kx);
	snprintf(kubuf, sizeof(kubuf), "0x%02x", u.ku);
	if (!usable) {
		at = where(w, w->cert_at, err, errlen);
		snprintf(err + at, errlen - at,
			 "the certificate (%s) can complete no handshake with the configured "
			 "versions and cipher_suites: its key usage (%s) %s",
			 w->cert_file ? w->cert_file : "inline", kubuf,
			 u.rsa && u.encipher
			     ? "allows key encipherment only: enable TLS12 and an "
			       "RSA key exchange suite (TLS_RSA_WITH_AES_128_GCM_SHA256"
			       "), or reissue it with digitalSignature"
			     : "does not allow digital signatures: reissue it with "
			       "digitalSignature");
		return -1;
	}
	if (rsa_kx == usable)
		log_warn("the TLS certificate's key usage allows key encipherment only: it is "
			 "served with the RSA key exchange suites alone (TLS 1.2, no forward "
			 "secrecy); a client offering only ECDHE suites or TLS 1.3 fails the "
			 "handshake. Reissue it with digitalSignature",
			 "cert", w->cert_file ? w->cert_file : "inline", "key_usage", kubuf);
	return 0;
}

/* Where each session's handshake got to, by the session's address (the
 * session's own pointer is libmicrohttpd's): set from the handshake hook,
 * read and cleared at the connection's close. Past HANDSHAKES_MAX at once
 * a session goes untracked (its failure uncounted). */
#define HANDSHAKES_MAX 4096 /* a power of two, above the connections kept */
enum { HS_FREE, HS_STARTED, HS_HELLO, HS_DONE };
static struct {
	gnutls_session_t s;
	unsigned char state;
} handshakes[HANDSHAKES_MAX];

/* With live_lock held: s's slot, or a free one; NULL if full. */
static unsigned char *handshake_slot(gnutls_session_t s, bool add)
{
	size_t h = ((uintptr_t)s >> 4) * 0x9e3779b97f4a7c15ull >> 52;

	for (size_t i = 0; i < HANDSHAKES_MAX; i++) {
		size_t k = (h + i) & (HANDSHAKES_MAX - 1);
		if (handshakes[k].state != HS_FREE && handshakes[k].s == s)
			return &handshakes[k].state;
		if (handshakes[k].state == HS_FREE && add) {
			handshakes[k].s = s;
			return &handshakes[k].state;
		}
		if (handshakes[k].state == HS_FREE)
			return NULL;
	}
	return NULL;
}

static int handshake_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
			  const gnutls_datum_t *msg)
{
	(void)msg;
	/* The hello before it is processed (its processing is where a
	 * handshake with no usable suite fails), Finished after. */
	if (!incoming || (htype == GNUTLS_HANDSHAKE_CLIENT_HELLO) != (when == GNUTLS_HOOK_PRE) ||
	    (htype != GNUTLS_HANDSHAKE_CLIENT_HELLO && htype != GNUTLS_HANDSHAKE_FINISHED))
		return 0;
	pthread_mutex_lock(&live_lock);
	unsigned char *st = handshake_slot(s, false);
	if (st)
		*st = htype == GNUTLS_HANDSHAKE_FINISHED ? HS_DONE : HS_HELLO;
	pthread_mutex_unlock(&live_lock);
	return 0;
}

/* Open addressing without tombstones: the entries after a freed one move
 * up, so that a search may stop at the first free slot. */
static void handshake_forget(unsigned char *st)
{
	size_t k = (size_t)((unsigned char *)st - &handshakes[0].state) / sizeof(handshakes[0]);

	handshakes[k].state = HS_FREE;
	for (size_t j = (k + 1) & (HANDSHAKES_MAX - 1); handshakes[j].state != HS_FREE;
	     j = (j + 1) & (HANDSHAKES_MAX - 1)) {
		typeof(handshakes[0]) e = handshakes[j];
		handshakes[j].state = HS_FREE;
		*handshake_slot(e.s, true) = e.state;
	}
}

bool webtls_handshake_failed(gnutls_session_t s, const struct sockaddr *peer)
{
	char remote[INET6_ADDRSTRLEN + 16];

	pthread_mutex_lock(&live_lock);
	unsigned char *st = handshake_slot(s, false), state = st ? *st : HS_FREE;
	if (st)
		handshake_forget(st);
	pthread_mutex_unlock(&live_lock);
	/* A client that never sent a whole hello (or was evicted before) made
	 * no handshake to fail. */
	if (state != HS_HELLO)
		return false;
	addr_name(peer, remote, sizeof(remote));
	log_info("TLS handshake failed", "remote", remote, "err",
		 "the client's hello came and the handshake never finished: no cipher suite or "
		 "version the client offered can be served with the certificate, or the client "
		 "refused it");
	return true;
}

struct webtls *webtls_new(const struct webconf *w, char *err, size_t errlen)
{
	struct webtls *t = calloc(1, sizeof(*t));
	const char *where = NULL;

	if (!t || !(t->sans = calloc(w->nsans ? w->nsans : 1, sizeof(*t->sans)))) {
		snprintf(err, errlen, "out of memory");
		goto err_free;
	}
	if (load_credentials(t, w, err, errlen) < 0)
		goto err_free;
	if (gnutls_priority_init(&t->prio, w->priority, &where) < 0) {
		snprintf(err, errlen, "GnuTLS refuses the TLS settings at '%s'",
			 where ? where : "?");
		goto err_free;
	}
	if (check_key_use(t, w, err, errlen) < 0)
		goto err_free;
	for (; t->nsans < w->nsans; t->nsans++)
		if (!(t->sans[t->nsans] = strdup(w->sans[t->nsans]))) {
			snprintf(err, errlen, "out of memory");
			goto err_free;
		}
	t->request =
	    w->client_auth == WEBCONF_NO_CLIENT_CERT ? GNUTLS_CERT_IGNORE : GNUTLS_CERT_REQUEST;
	t->require = w->client_auth == WEBCONF_REQUIRE_ANY_CLIENT_CERT ||
		     w->client_auth == WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT;
	t->verify = w->client_auth == WEBCONF_VERIFY_CLIENT_CERT_IF_GIVEN ||
		    w->client_auth == WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT;
	pthread_mutex_lock(&live_lock);
	t->next = live;
	live = t;
	pthread_mutex_unlock(&live_lock);
	return t;
err_free:
	webtls_free(t);
	return NULL;
}

void webtls_free(struct webtls *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&live_lock);
	for (struct webtls **p = &live; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_mutex_unlock(&live_lock);
	for (size_t i = 0; i < t->nsans; i++)
		free(t->sans[i]);
	free(t->sans);
	if (t->prio)
		gnutls_priority_deinit(t->prio);
	if (t->cred)
		gnutls_certificate_free_credentials(t->cred);
	free(t);
}

int webtls_setup(struct webtls *t, gnutls_session_t s)
{
	int rc;

	if ((rc = gnutls_priority_set(s, t->prio)) < 0 ||
	    (rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred)) < 0)
		return rc;
	gnutls_certificate_server_set_request(s, t->request);
	pthread_mutex_lock(&live_lock);
	unsigned char *st = handshake_slot(s, true);
	if (st)
		*st = HS_STARTED;
	pthread_mutex_unlock(&live_lock);
	gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_BOTH,
					   handshake_hook);
	if (t->request != GNUTLS_CERT_IGNORE)
		gnutls_session_set_verify_function(s, verify_client);
	return 0;
}

bool webtls_client_verified(const struct webtls *t, gnutls_session_t s)
{
	unsigned n = 0;

	return t->verify && gnutls_certificate_get_peers(s, &n) && n > 0;
}
