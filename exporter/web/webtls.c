/* TLS settings as GnuTLS objects, applied per session: libmicrohttpd
 * creates each session with its own credentials, and we replace them
 * before the handshake starts, so a changed certificate, CA or policy
 * takes effect on the next connection, as with the toolkit's
 * GetConfigForClient. Client certificates are checked during the
 * handshake: a refused one never reaches a request. */
#include "webtls.h"

#include <arpa/inet.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "selfstats.h"

struct webtls {
	struct webtls *next; /* in `live` */
	gnutls_certificate_credentials_t cred;
	gnutls_priority_t prio;
	gnutls_certificate_request_t request;
	bool verify; /* against the client CA */
	char **sans; /* client_allowed_sans, owned */
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

static const char *check_client(const struct webtls *t, gnutls_session_t s)
{
	unsigned n = 0, status = 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(s, &n);

	if (!certs || !n)
		return t->request == GNUTLS_CERT_REQUIRE ? "no client certificate" : NULL;
	if (t->verify) {
		gnutls_typed_vdata_st purpose = {.type = GNUTLS_DT_KEY_PURPOSE_OID,
						 .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT};
		if (gnutls_certificate_verify_peers(s, &purpose, 1, &status) < 0 || status)
			return "client certificate not signed by the client CA, expired or not "
			       "for client authentication";
	}
	if (t->nsans && !sans_match(t, &certs[0]))
		return "no allowed subject alternative name in the client certificate";
	return NULL;
}

static int verify_client(gnutls_session_t s)
{
	gnutls_certificate_credentials_t cred = NULL;
	struct webtls *found = NULL;
	const char *why = "unknown TLS settings";

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
		why = check_client(found, s);
	if (!why)
		return 0;
	selfstats_http_refused(SELFSTATS_REFUSED_CLIENT_CERT);
	log_debug("TLS handshake refused", "err", why);
	return GNUTLS_E_CERTIFICATE_ERROR;
}

static int load_credentials(struct webtls *t, const struct webconf *w, char *err, size_t errlen)
{
	gnutls_datum_t cert = {(unsigned char *)w->cert_pem, (unsigned)strlen(w->cert_pem)};
	gnutls_datum_t key = {(unsigned char *)w->key_pem, (unsigned)strlen(w->key_pem)};
	int rc;

	if ((rc = gnutls_certificate_allocate_credentials(&t->cred)) < 0 ||
	    (rc = gnutls_certificate_set_x509_key_mem2(t->cred, &cert, &key, GNUTLS_X509_FMT_PEM,
						       NULL, 0)) < 0) {
		snprintf(err, errlen, "failed to load the certificate (%s) and key (%s): %s",
			 w->cert_file ? w->cert_file : "inline",
			 w->key_file ? w->key_file : "inline", gnutls_strerror(rc));
		return -1;
	}
	if (!w->client_ca_pem)
		return 0;
	gnutls_datum_t ca = {(unsigned char *)w->client_ca_pem, (unsigned)strlen(w->client_ca_pem)};
	if ((rc = gnutls_certificate_set_x509_trust_mem(t->cred, &ca, GNUTLS_X509_FMT_PEM)) <= 0) {
		snprintf(err, errlen, "no usable certificate in the client CA (%s)%s%s",
			 w->client_ca_file ? w->client_ca_file : "inline", rc < 0 ? ": " : "",
			 rc < 0 ? gnutls_strerror(rc) : "");
		return -1;
	}
	return 0;
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
	for (; t->nsans < w->nsans; t->nsans++)
		if (!(t->sans[t->nsans] = strdup(w->sans[t->nsans]))) {
			snprintf(err, errlen, "out of memory");
			goto err_free;
		}
	t->request = w->client_auth == WEBCONF_NO_CLIENT_CERT ? GNUTLS_CERT_IGNORE
		     : w->client_auth == WEBCONF_REQUIRE_ANY_CLIENT_CERT ||
			     w->client_auth == WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT
			 ? GNUTLS_CERT_REQUIRE
			 : GNUTLS_CERT_REQUEST;
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
	if (t->request != GNUTLS_CERT_IGNORE)
		gnutls_session_set_verify_function(s, verify_client);
	return 0;
}
