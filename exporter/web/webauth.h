/* basic_auth_users: bcrypt verification with a cache of the successful
 * ones, and the rate limit, as exporter-toolkit's handler does them. */
#ifndef BS_WEBAUTH_H
#define BS_WEBAUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "webconf.h"

struct webauth;

struct webauth *webauth_new(void);
void webauth_free(struct webauth *a);
/* Whether user and password match w's users (true when w has none). */
bool webauth_check(struct webauth *a, const struct webconf *w, const char *user,
		   const char *password);
/* Takes a token from the bucket w's rate_limit describes; false: refuse. */
bool webauth_rate_allow(struct webauth *a, const struct webconf *w, uint64_t now_ns);

#endif
