/* web-config.yml: the toolkit's keys read into settings, Go's TLS names
 * turned into GnuTLS priorities, the token buckets, the Authorization
 * header and the bcrypt cache. */
#include "helpers.h"

#include <crypt.h>
#include <stdio.h>
#include <unistd.h>

#include "tlsprio.h"
#include "webauth.h"
#include "webconf.h"
#include "webrate.h"

static char dir[] = "/tmp/bs-webconf-XXXXXX";

static struct webconf *load_text(const char *yaml, char *err, size_t errlen)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(yaml, f);
	fclose(f);
	return webconf_load(path, err, errlen);
}

static void test_empty_and_users(void **state)
{
	char err[512];
	struct webconf *w = load_text("", err, sizeof(err));
	(void)state;

	assert_non_null(w);
	assert_false(w->tls);
	assert_int_equal(w->nusers, 0);
	webconf_free(w);
	w = load_text("basic_auth_users:\n  alice: "
		      "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG\n"
		      "http_server_config:\n  http2: false\n  headers:\n    X-XSS-Protection: ''\n"
		      "    Strict-Transport-Security: max-age=31536000\n",
		      err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(w->nusers, 1);
	assert_string_equal(w->user[0].name, "alice");
	assert_int_equal(w->nheaders, 1); /* a blank value unsets */
	assert_string_equal(w->header[0].name, "Strict-Transport-Security");
	webconf_free(w);
}

static void test_bad_hashes(void **state)
{
	static const char *const bad[] = {
	    "s3cret",
	    "$1$abc$defghijklmnopqrstuvwxyz",				    /* MD5 crypt */
	    "$2x$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG", /* $2x$ */
	    "$2y$03$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG", /* cost 3 */
	    "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7z",  /* short */
	    "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7z!", /* alphabet */
	};
	char yaml[256], err[512];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: '%s'\n", bad[i]);
		assert_null(load_text(yaml, err, sizeof(err)));
		assert_non_null(strstr(err, "not a bcrypt hash"));
	}
}

static void test_priority(void **state)
{
	const char *suites[] = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
				"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
				"TLS_AES_128_GCM_SHA256"};
	const char *curves[] = {"X25519", "CurveP256"};
	struct tlsprio_request rq = {.server_order = true};
	char prio[1024], extra[512], err[256];
	(void)state;

	/* The toolkit's defaults: TLS 1.2 and 1.3. */
	assert_int_equal(
	    tlsprio_build(&rq, prio, sizeof(prio), extra, sizeof(extra), err, sizeof(err)), 0);
	assert_string_equal(prio, "NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3");
	assert_string_equal(extra, "");

	rq = (struct tlsprio_request){.min_version = "TLS12",
				      .max_version = "TLS12",
				      .suites = suites,
				      .nsuites = 3,
				      .curves = curves,
				      .ncurves = 2};
	assert_int_equal(
	    tlsprio_build(&rq, prio, sizeof(prio), extra, sizeof(extra), err, sizeof(err)), 0);
	assert_string_equal(prio, "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:-CIPHER-ALL:-MAC-ALL"
				  ":+ECDHE-RSA:+ECDHE-ECDSA:+AES-128-GCM:+AEAD"
				  ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1");
	assert_string_equal(extra, ""); /* exactly the two suites listed */

	/* With TLS 1.3 its ciphers stay, and they add TLS 1.2 suites: named. */
	rq.max_version = "TLS13";
	assert_int_equal(
	    tlsprio_build(&rq, prio, sizeof(prio), extra, sizeof(extra), err, sizeof(err)), 0);
	assert_non_null(strstr(extra, "TLS_ECDHE_RSA_AES_256_GCM_SHA384"));
	assert_null(strstr(extra, "AES_128_GCM"));

	rq.min_version = "TLS13", rq.max_version = "TLS12";
	assert_int_equal(
	    tlsprio_build(&rq, prio, sizeof(prio), extra, sizeof(extra), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "above max_version"));
	rq.min_version = NULL, rq.max_version = NULL;
	curves[0] = "X25519MLKEM768"; /* Go has it; GnuTLS 3.7 does not */
	assert_int_equal(
	    tlsprio_build(&rq, prio, sizeof(prio), extra, sizeof(extra), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown curve X25519MLKEM768"));
}

static void test_rate_limit(void **state)
{
	struct webrate *r = webrate_new();
	const unsigned char one[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
	const unsigned char two[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 2};
	const uint64_t s = 1000000000ull;
	(void)state;

	assert_true(webrate_take(r, one, "", 2, 2, 10 * s));
	assert_true(webrate_take(r, one, "", 2, 2, 10 * s));
	assert_false(webrate_take(r, one, "", 2, 2, 10 * s));
	assert_false(webrate_take(r, one, "", 2, 2, 11 * s)); /* half a token back */
	assert_true(webrate_take(r, one, "", 2, 2, 12 * s));
	/* Another address, and a user of the same address: buckets of their own. */
	assert_true(webrate_take(r, two, "", 2, 2, 12 * s));
	assert_true(webrate_take(r, one, "alice", 2, 2, 12 * s));
	assert_true(webrate_take(r, one, "alice", 2, 2, 12 * s));
	assert_false(webrate_take(r, one, "alice", 2, 2, 12 * s));
	assert_true(webrate_take(r, one, "", 2, 2, 100 * s)); /* the bucket holds 2 at most */
	assert_true(webrate_take(r, one, "", 2, 2, 100 * s));
	assert_false(webrate_take(r, one, "", 2, 2, 100 * s));
	assert_true(webrate_take(r, one, "", 0, 2, 100 * s)); /* no limit */
	webrate_free(r);
}

/* An IPv6 /64 is one client, as one subscriber is given it whole; IPv4
 * addresses are each their own. */
static void test_rate_per_client(void **state)
{
	struct webauth *a = webauth_new();
	struct webconf w = {.rate_interval = 60, .rate_burst = 1};
	struct webauth_request rq = {.fd = -1, .addr = {0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
	char *user = NULL;
	(void)state;

	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_PASS);
	rq.addr[15] = 2; /* the same /64 */
	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_RATE_LIMITED);
	rq.addr[7] = 1; /* another /64 */
	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_PASS);
	memset(rq.addr, 0, 16);
	rq.addr[10] = rq.addr[11] = 0xff;
	rq.addr[12] = 127, rq.addr[15] = 1; /* 127.0.0.1 */
	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_PASS);
	rq.addr[15] = 2; /* 127.0.0.2: its own */
	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_PASS);
	assert_int_equal(webauth_admit(a, &w, &rq, 1, &user), WEBAUTH_RATE_LIMITED);
	webauth_free(a);
}

/* A request with an Authorization header, from 127.0.0.1. */
static enum webauth_verdict admit(struct webauth *a, const struct webconf *w, const char *header,
				  char **user)
{
	struct webauth_request rq = {
	    .addr = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1}, .fd = -1, .authorization = header};
	free(*user);
	*user = NULL;
	return webauth_admit(a, w, &rq, 1, user);
}

static void test_auth(void **state)
{
	struct webauth *a = webauth_new();
	struct crypt_data cd = {0};
	char salt[64], hash[CRYPT_OUTPUT_SIZE], *user = NULL;
	(void)state;

	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("pw", salt, &cd, sizeof(cd)));
	snprintf(hash, sizeof(hash), "%s", cd.output);
	struct webconf w = {.nusers = 1, .user = {{"alice", hash}}};

	/* alice:pw, alice:pW, alice:pw\n, bob:pw, alice:pw\0junk */
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHc=", &user), WEBAUTH_PASS);
	assert_string_equal(user, "alice");
	assert_int_equal(admit(a, &w, "basic YWxpY2U6cHc=", &user), WEBAUTH_PASS); /* cached */
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cFc=", &user), WEBAUTH_DENIED);
	assert_null(user);
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHcK", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic Ym9iOnB3", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHcAanVuaw==", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, NULL, &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHc", &user), WEBAUTH_DENIED); /* unpadded */
	assert_int_equal(admit(a, &w, "Bearer YWxpY2U6cHc=", &user), WEBAUTH_DENIED);
	/* A changed hash is not satisfied by the cache of the old one. */
	hash[10] = hash[10] == 'a' ? 'b' : 'a';
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHc=", &user), WEBAUTH_DENIED);
	w.nusers = 0;
	assert_int_equal(admit(a, &w, NULL, &user), WEBAUTH_PASS);
	free(user);
	webauth_free(a);
}

/* Wrong guesses drain the bucket of the name they claim and the address's
 * shared one, never the checks of a name nobody guessed at, nor the
 * requests of a user verified before (a bucket of its own). */
static void test_rate_per_user(void **state)
{
	struct webauth *a = webauth_new();
	struct crypt_data cd = {0};
	char salt[64], hash[CRYPT_OUTPUT_SIZE], *user = NULL;
	(void)state;

	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("pw", salt, &cd, sizeof(cd)));
	snprintf(hash, sizeof(hash), "%s", cd.output);
	struct webconf w = {.nusers = 2,
			    .user = {{"alice", hash}, {"bob", hash}},
			    .rate_interval = 60,
			    .rate_burst = 2};
	/* bob:x twice drains bob's bucket and, charged after the fact, the
	 * address's shared one (no credentials: refused on it); mallory:x,
	 * a name nobody guessed at (unknown, checked all the same), is
	 * checked once, then refused with the shared bucket empty */
	for (int i = 0; i < 2; i++)
		assert_int_equal(admit(a, &w, "Basic Ym9iOng=", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic Ym9iOng=", &user), WEBAUTH_RATE_LIMITED);
	assert_int_equal(admit(a, &w, NULL, &user), WEBAUTH_RATE_LIMITED);
	assert_int_equal(admit(a, &w, "Basic bWFsbG9yeTp4", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic bWFsbG9yeTp4", &user), WEBAUTH_RATE_LIMITED);
	/* alice, not verified yet: her guesses' bucket is untouched */
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHc=", &user), WEBAUTH_PASS);
	/* a stranger who knows her name drains the bucket of guesses at it ... */
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6eA==", &user), WEBAUTH_DENIED);
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6eA==", &user), WEBAUTH_RATE_LIMITED);
	/* ... not hers, now that she is verified */
	assert_int_equal(admit(a, &w, "Basic YWxpY2U6cHc=", &user), WEBAUTH_PASS);
	free(user);
	webauth_free(a);
}

/* The header's parts: a NUL anywhere in them refuses the header. */
static void test_parse_basic(void **state)
{
	char buf[64];
	const char *u, *p;
	(void)state;

	assert_true(webauth_parse_basic("Basic YTpiOmM=", buf, sizeof(buf), &u, &p));
	assert_string_equal(u, "a");
	assert_string_equal(p, "b:c");
	assert_true(webauth_parse_basic("Basic Og==", buf, sizeof(buf), &u, &p)); /* ":" */
	assert_string_equal(u, "");
	assert_false(webauth_parse_basic("Basic YQBiOmM=", buf, sizeof(buf), &u, &p));
	assert_false(webauth_parse_basic("Basic YWJj", buf, sizeof(buf), &u, &p)); /* no ':' */
	assert_false(webauth_parse_basic("Basic Y=Jj", buf, sizeof(buf), &u, &p));
	assert_false(webauth_parse_basic("Basic", buf, sizeof(buf), &u, &p));
}

/* err is "DIR/web.yml:" then want, exactly. */
static void expect_at(const char *yaml, const char *want)
{
	char err[512], full[768];
	struct webconf *w = load_text(yaml, err, sizeof(err));

	if (w)
		fail_msg("accepted: %s", yaml);
	snprintf(full, sizeof(full), "%s/web.yml:%s", dir, want);
	assert_string_equal(err, full);
}

/* Every error points at the value at fault (a list's element), not at
 * the mapping's first key; what is missing, at the section's key. */
static void test_errors_point_at_values(void **state)
{
	/* Five lines; each case's fault is on line 6 or after. */
#define TLS5 "tls_server_config:\n  cert: c\n  key: k\n  prefer_server_cipher_suites: true\n  # -\n"
	(void)state;

	expect_at(TLS5 "  min_version: TLS14\n",
		  "6:16: unknown TLS version TLS14 (want TLS10, TLS11, TLS12 or TLS13)");
	expect_at(TLS5 "  max_version: SSL3\n",
		  "6:16: unknown TLS version SSL3 (want TLS10, TLS11, TLS12 or TLS13)");
	expect_at(TLS5 "  max_version: TLS12\n  min_version: TLS13\n",
		  "7:16: min_version TLS13 is above max_version TLS12");
	/* min_version left at its default (TLS12): at the one written. */
	expect_at(TLS5 "  max_version: TLS11\n",
		  "6:16: min_version TLS12 is above max_version TLS11");
	expect_at(TLS5 "  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		       "    - TLS_RSA_WITH_RC4_128_SHA\n",
		  "8:7: unknown cipher suite TLS_RSA_WITH_RC4_128_SHA (want one of Go's "
		  "tls.CipherSuites())");
	expect_at(TLS5 "  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_BOGUS]\n",
		  "6:43: unknown cipher suite TLS_BOGUS (want one of Go's tls.CipherSuites())");
	expect_at(TLS5 "  curve_preferences: [X25519, CurveP999]\n",
		  "6:31: unknown curve CurveP999 (GnuTLS has CurvePxxx and X25519)");
	expect_at(TLS5 "  curve_preferences:\n    - CurveP256\n    - X25519MLKEM768\n",
		  "8:7: unknown curve X25519MLKEM768 (GnuTLS has CurvePxxx and X25519)");
	expect_at(TLS5 "  cipher_suites: TLS_AES_128_GCM_SHA256\n",
		  "6:18: 'cipher_suites' must be a list");
	expect_at(TLS5 "  curve_preferences: [[X25519]]\n",
		  "6:23: entries of 'curve_preferences' must be strings");
	expect_at("tls_server_config:\n  cert: c\n  key: k\n  prefer_server_cipher_suites: maybe\n",
		  "4:32: 'prefer_server_cipher_suites' must be true or false, not 'maybe'");
	expect_at(TLS5 "  cert_file: c.pem\n", "6:14: give one of cert and cert_file, not both");
	expect_at(TLS5 "  client_ca: x\n",
		  "6:14: client CA's have been configured without a Client Auth Policy");
	expect_at(TLS5 "  client_auth_type: NoClientCert\n  client_ca: x\n",
		  "6:21: client CA's have been configured without a Client Auth Policy");
	expect_at(TLS5 "  client_auth_type: RequireAndVerifyClientCert\n",
		  "6:21: client_auth_type RequireAndVerifyClientCert needs client_ca_file or "
		  "client_ca");
	expect_at(TLS5 "  client_auth_type: Sometimes\n", "6:21: invalid ClientAuth: Sometimes");
	expect_at(TLS5 "  client_allowed_sans: a\n", "6:24: 'client_allowed_sans' must be a list");
	expect_at(TLS5 "  certfile: x\n", "6:3: unknown key 'certfile'");
	expect_at("\n\ntls_server_config:\n  cert: c\n", "3:1: missing one of key or key_file");
	expect_at("tls_server_config:\n  key: k\n", "1:1: missing one of cert or cert_file");
	expect_at("tls_server_config:\n  cert: c\n  key: k\n  cert_file: /nonexistent/c.pem\n"
		  "  cert: d\n",
		  "5:3: duplicate key 'cert'");
	expect_at("rate_limit:\n  interval: 1s\n  burst: 0\n",
		  "3:10: a rate limit with burst 0 refuses every request: give burst: 1 or more");
	expect_at("rate_limit:\n  interval: 1s\n",
		  "2:13: a rate limit with burst 0 refuses every request: give burst: 1 or more");
	expect_at("rate_limit:\n  interval: 1s\n  burst: -1\n",
		  "3:10: 'burst' must be a whole number, not '-1'");
	expect_at("http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: allow\n",
		  "4:22: invalid value for X-Frame-Options: \"allow\"");
	expect_at("http_server_config:\n  headers:\n    X-Evil: 1\n",
		  "3:5: HTTP header \"X-Evil\" can not be configured");
	expect_at("http_server_config:\n  http2: sometimes\n",
		  "2:10: 'http2' must be true or false, not 'sometimes'");
	expect_at("basic_auth_users:\n  bob: "
		  "'$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG'\n"
		  "  alice: s3cret\n",
		  "3:10: the password of 'alice' is not a bcrypt hash ($2y$, $2b$ or $2a$; "
		  "htpasswd -nBC 10 \"\" makes one)");
#undef TLS5
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[256];
	(void)state;
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	unlink(path);
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_and_users),
	    cmocka_unit_test(test_bad_hashes),
	    cmocka_unit_test(test_priority),
	    cmocka_unit_test(test_rate_limit),
	    cmocka_unit_test(test_rate_per_client),
	    cmocka_unit_test(test_auth),
	    cmocka_unit_test(test_rate_per_user),
	    cmocka_unit_test(test_parse_basic),
	    cmocka_unit_test(test_errors_point_at_values),
	};
	return cmocka_run_group_tests_name("webconf", tests, setup, teardown);
}
