/* --web.config.file: exporter-toolkit's web-config.yml (TLS, basic auth,
 * response headers, rate limit), parsed and checked; no TLS objects here. */
#ifndef BS_WEBCONF_H
#define BS_WEBCONF_H

#include <stdbool.h>
#include <stddef.h>

struct conf_node;

#define WEBCONF_USERS_MAX 64
#define WEBCONF_SANS_MAX 64
#define WEBCONF_HEADERS_MAX 5
#define WEBCONF_LIST_MAX 32 /* cipher suites, curves */
#define WEBCONF_PRIORITY_MAX 1024

/* Go's crypto/tls ClientAuthType, by the toolkit's names. */
enum webconf_client_auth {
	WEBCONF_NO_CLIENT_CERT,
	WEBCONF_REQUEST_CLIENT_CERT,
	WEBCONF_REQUIRE_ANY_CLIENT_CERT,
	WEBCONF_VERIFY_CLIENT_CERT_IF_GIVEN,
	WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct webconf_user {
	const char *name;
	const char *hash; /* bcrypt: $2a$, $2b$ or $2y$ */
};

struct webconf_header {
	const char *name, *value;
};

struct webconf {
	struct conf_doc *doc; /* owns the strings below but the paths */
	bool tls;	      /* tls_server_config names a certificate */
	/* PEM, inline or read from the files (which are owned here). */
	char *cert_pem, *key_pem, *client_ca_pem;
	char *cert_file, *key_file, *client_ca_file; /* relative to the file's folder */
	/* Their values in the file (NULL: not given), where the errors of
	 * loading them into GnuTLS point. */
	const struct conf_node *cert_at, *key_at, *client_ca_at;
	enum webconf_client_auth client_auth;
	const char *sans[WEBCONF_SANS_MAX]; /* client_allowed_sans */
	size_t nsans;
	/* GnuTLS's priority string for the versions, suites and curves. */
	char priority[WEBCONF_PRIORITY_MAX];
	/* Suites GnuTLS enables beyond cipher_suites: it enables them by parts. */
	char extra_suites[512];
	struct webconf_user user[WEBCONF_USERS_MAX];
	size_t nusers;
	int cost_min, cost_max; /* the users' bcrypt costs */
	struct webconf_header header[WEBCONF_HEADERS_MAX];
	size_t nheaders;
	double rate_interval; /* s between requests; 0: no limit */
	unsigned rate_burst;
};

/* Reads and checks `file`, and the certificate files it names. NULL with
 * the reason ("file:line:col: ...") in err. */
struct webconf *webconf_load(const char *file, char *err, size_t errlen);
struct conf_settle;
/* webconf_load as a reload reads it: the file and the PEM files it names
 * only once they have settled (conf_read_file). */
struct webconf *webconf_load_settled(const char *file, struct conf_settle *settle, char *err,
				     size_t errlen);
void webconf_free(struct webconf *w);

/* The files a change of which means a reload: the config and its PEM files. */
size_t webconf_files(const struct webconf *w, const char *config_file, const char **out,
		     size_t max);

#endif
