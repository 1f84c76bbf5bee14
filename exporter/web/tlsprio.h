/* Go's crypto/tls names, as web-config.yml uses them (TLS12, cipher suites,
 * curves), turned into a GnuTLS priority string. */
#ifndef BS_TLSPRIO_H
#define BS_TLSPRIO_H

#include <stdbool.h>
#include <stddef.h>

/* Which setting tlsprio_build could not honour, so that its error can
 * point at that value in the file. */
enum tlsprio_field {
	TLSPRIO_ALL, /* the settings together */
	TLSPRIO_MIN_VERSION,
	TLSPRIO_MAX_VERSION,
	TLSPRIO_SUITES, /* suites[index] */
	TLSPRIO_CURVES, /* curves[index] */
};

struct tlsprio_fault {
	enum tlsprio_field field;
	size_t index;
};

struct tlsprio_request {
	const char *min_version, *max_version; /* "TLS10" ... "TLS13"; NULL: default */
	const char *const *suites;	       /* cipher_suites, in preference order */
	size_t nsuites;
	const char *const *curves; /* curve_preferences */
	size_t ncurves;
	bool server_order;	     /* prefer_server_cipher_suites */
	struct tlsprio_fault *fault; /* NULL, or where an error is set */
};

/* Writes the priority string to out. GnuTLS enables suites by their parts
 * (key exchange, cipher, MAC), so a list may enable suites it does not
 * name: those go to extra ("" if none). Returns 0, or -1 with err naming
 * the value GnuTLS cannot honour, and rq->fault (if set) saying which. */
int tlsprio_build(const struct tlsprio_request *rq, char *out, size_t outlen, char *extra,
		  size_t extralen, char *err, size_t errlen);

#endif
