/* Go's crypto/tls names to a GnuTLS priority string. Go lists suites one
 * by one; GnuTLS enables key exchanges, ciphers and MACs, and every suite
 * made of enabled parts. The suites that adds are reported, not hidden. */
#include "tlsprio.h"

#include <gnutls/gnutls.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The suites Go's tls.CipherSuites() offers (the toolkit refuses the others). */
static const struct suite {
	const char *go;
	const char *kx, *cipher, *mac; /* GnuTLS's names of the parts */
} suites[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    /* TLS 1.3's: Go does not let them be chosen either; accepted, no effect. */
    {"TLS_AES_128_GCM_SHA256", NULL, NULL, NULL},
    {"TLS_AES_256_GCM_SHA384", NULL, NULL, NULL},
    {"TLS_CHACHA20_POLY1305_SHA256", NULL, NULL, NULL},
};

static const struct {
	const char *go, *gnutls;
} versions[] = {{"TLS10", "VERS-TLS1.0"},
		{"TLS11", "VERS-TLS1.1"},
		{"TLS12", "VERS-TLS1.2"},
		{"TLS13", "VERS-TLS1.3"}},
  curves[] = {{"CurveP256", "GROUP-SECP256R1"},
	      {"CurveP384", "GROUP-SECP384R1"},
	      {"CurveP521", "GROUP-SECP521R1"},
	      {"X25519", "GROUP-X25519"}};

#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

struct buf {
	char *p;
	size_t len, cap;
	bool full;
};

__attribute__((format(printf, 2, 3))) static void add(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->cap - b->len)
		b->full = true;
	else
		b->len += (size_t)n;
}

/* Adds ":+part" unless an earlier suite already did. */
static void add_part(struct buf *b, const char *part)
{
	size_t n = strlen(part);
	for (const char *p = b->p; (p = strstr(p, ":+")); p += 2)
		if (strncmp(p + 2, part, n) == 0 && (p[2 + n] == ':' || p[2 + n] == '\0'))
			return;
	add(b, ":+%s", part);
}

static void set_fault(const struct tlsprio_request *rq, enum tlsprio_field field, size_t index)
{
	if (rq->fault)
		*rq->fault = (struct tlsprio_fault){field, index};
}

static int version_index(const char *go, size_t dflt)
{
	if (!go)
		return (int)dflt;
	for (size_t i = 0; i < NVERSIONS; i++)
		if (strcmp(versions[i].go, go) == 0)
			return (int)i;
	return -1;
}

static const struct suite *suite_named(const char *go)
{
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (strcmp(suites[i].go, go) == 0)
			return &suites[i];
	return NULL;
}

static bool listed(const struct tlsprio_request *rq, gnutls_kx_algorithm_t kx,
		   gnutls_cipher_algorithm_t cipher, gnutls_mac_algorithm_t mac)
{
	for (size_t i = 0; i < rq->nsuites; i++) {
		const struct suite *s = suite_named(rq->suites[i]);
		if (s && s->kx && gnutls_kx_get_id(s->kx) == kx &&
		    gnutls_cipher_get_id(s->cipher) == cipher && gnutls_mac_get_id(s->mac) == mac)
			return true;
	}
	return false;
}

/* The TLS 1.2 suites the priority enables that cipher_suites does not list. */
static int find_extra(const struct tlsprio_request *rq, const char *prio, char *extra,
		      size_t extralen, char *err, size_t errlen)
{
	gnutls_priority_t pc;
	const char *where = NULL;
	struct buf b = {extra, 0, extralen, false};
	unsigned sidx;

	extra[0] = '\0';
	if (gnutls_priority_init(&pc, prio, &where) < 0) {
		snprintf(err, errlen, "GnuTLS refuses the priority string at '%s'",
			 where ? where : "?");
		return -1;
	}
	for (unsigned i = 0;; i++) {
		int rc = gnutls_priority_get_cipher_suite_index(pc, i, &sidx);
		if (rc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (rc < 0)
			continue;
		gnutls_kx_algorithm_t kx;
		gnutls_cipher_algorithm_t cipher;
		gnutls_mac_algorithm_t mac;
		gnutls_protocol_t minv;
		const char *name = gnutls_cipher_suite_info(sidx, NULL, &kx, &cipher, &mac, &minv);
		if (name && minv < GNUTLS_TLS1_3 && kx != GNUTLS_KX_UNKNOWN &&
		    !listed(rq, kx, cipher, mac))
			add(&b, "%s%s", b.len ? ", " : "", name);
	}
	gnutls_priority_deinit(pc);
	return 0;
}

static int add_suites(const struct tlsprio_request *rq, struct buf *b, bool tls13, char *err,
		      size_t errlen)
{
	bool any = false;

	for (size_t i = 0; i < rq->nsuites; i++) {
		const struct suite *s = suite_named(rq->suites[i]);
		if (!s) {
			set_fault(rq, TLSPRIO_SUITES, i);
			snprintf(err, errlen,
				 "unknown cipher suite %s (want one of Go's "
				 "tls.CipherSuites())",
				 rq->suites[i]);
			return -1;
		}
		any |= s->kx != NULL;
	}
	if (!any)
		return 0; /* none listed, or TLS 1.3's only: the defaults */
	add(b, ":-KX-ALL:-CIPHER-ALL:-MAC-ALL");
	for (size_t p = 0; p < 3; p++)
		for (size_t i = 0; i < rq->nsuites; i++) {
			const struct suite *s = suite_named(rq->suites[i]);
			if (s->kx)
				add_part(b, p == 0 ? s->kx : p == 1 ? s->cipher : s->mac);
		}
	if (!tls13)
		return 0;
	/* TLS 1.3 takes its ciphers from the same list: keep all of them. */
	add_part(b, "AES-128-GCM");
	add_part(b, "AES-256-GCM");
	add_part(b, "CHACHA20-POLY1305");
	add_part(b, "AEAD");
	return 0;
}

static int add_curves(const struct tlsprio_request *rq, struct buf *b, char *err, size_t errlen)
{
	if (!rq->ncurves)
		return 0;
	add(b, ":-GROUP-ALL");
	for (size_t i = 0; i < rq->ncurves; i++) {
		size_t j = 0;
		while (j < sizeof(curves) / sizeof(curves[0]) &&
		       strcmp(curves[j].go, rq->curves[i]))
			j++;
		if (j == sizeof(curves) / sizeof(curves[0])) {
			set_fault(rq, TLSPRIO_CURVES, i);
			snprintf(err, errlen, "unknown curve %s (GnuTLS has CurvePxxx and X25519)",
				 rq->curves[i]);
			return -1;
		}
		add(b, ":+%s", curves[j].gnutls);
	}
	return 0;
}

int tlsprio_build(const struct tlsprio_request *rq, char *out, size_t outlen, char *extra,
		  size_t extralen, char *err, size_t errlen)
{
	struct buf b = {out, 0, outlen, false};
	int lo = version_index(rq->min_version, 2), hi = version_index(rq->max_version, 3);

	set_fault(rq, TLSPRIO_ALL, 0);
	if (lo < 0 || hi < 0) {
		set_fault(rq, lo < 0 ? TLSPRIO_MIN_VERSION : TLSPRIO_MAX_VERSION, 0);
		snprintf(err, errlen, "unknown TLS version %s (want TLS10, TLS11, TLS12 or TLS13)",
			 lo < 0 ? rq->min_version : rq->max_version);
		return -1;
	}
	if (lo > hi) {
		/* At the one written: a default is not in the file. */
		set_fault(rq, rq->min_version ? TLSPRIO_MIN_VERSION : TLSPRIO_MAX_VERSION, 0);
		snprintf(err, errlen, "min_version %s is above max_version %s", versions[lo].go,
			 versions[hi].go);
		return -1;
	}
	add(&b, "NORMAL%s:-VERS-ALL", rq->server_order ? ":%SERVER_PRECEDENCE" : "");
	for (int v = lo; v <= hi; v++)
		add(&b, ":+%s", versions[v].gnutls);
	size_t before = b.len;
	if (add_suites(rq, &b, hi == 3, err, errlen) < 0)
		return -1;
	bool suites_listed = b.len > before;
	if (add_curves(rq, &b, err, errlen) < 0)
		return -1;
	if (b.full) {
		snprintf(err, errlen, "TLS settings too long");
		return -1;
	}
	extra[0] = '\0';
	return suites_listed ? find_extra(rq, out, extra, extralen, err, errlen) : 0;
}
