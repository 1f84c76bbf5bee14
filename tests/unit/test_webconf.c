/* web-config.yml: the toolkit's keys read into settings, Go's TLS names
 * turned into GnuTLS priorities, the token bucket and the bcrypt cache. */
#include "helpers.h"

#include <crypt.h>
#include <stdio.h>
#include <unistd.h>

#include "tlsprio.h"
#include "webauth.h"
#include "webconf.h"

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
	struct webauth *a = webauth_new();
	struct webconf w = {.rate_interval = 2, .rate_burst = 2};
	const uint64_t s = 1000000000ull;
	(void)state;

	assert_true(webauth_rate_allow(a, &w, 10 * s));
	assert_true(webauth_rate_allow(a, &w, 10 * s));
	assert_false(webauth_rate_allow(a, &w, 10 * s));
	assert_false(webauth_rate_allow(a, &w, 11 * s)); /* half a token back */
	assert_true(webauth_rate_allow(a, &w, 12 * s));
	assert_true(webauth_rate_allow(a, &w, 100 * s)); /* the bucket holds 2 at most */
	assert_true(webauth_rate_allow(a, &w, 100 * s));
	assert_false(webauth_rate_allow(a, &w, 100 * s));
	w.rate_interval = 0;
	assert_true(webauth_rate_allow(a, &w, 100 * s));
	webauth_free(a);
}

/* An unknown user's password is checked against a decoy at the users'
 * highest cost: fresh random bytes at every load. */
static void test_decoy_at_the_users_cost(void **state)
{
	char err[512], yaml[1024], decoy[64];
	struct crypt_data cd = {0};
	char salt4[64], salt6[64], hash4[CRYPT_OUTPUT_SIZE], hash6[CRYPT_OUTPUT_SIZE];
	(void)state;

	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt4, sizeof(salt4)));
	assert_non_null(crypt_gensalt_rn("$2y$", 6, NULL, 0, salt6, sizeof(salt6)));
	snprintf(hash4, sizeof(hash4), "%s", crypt_rn("a", salt4, &cd, sizeof(cd)));
	snprintf(hash6, sizeof(hash6), "%s", crypt_rn("b", salt6, &cd, sizeof(cd)));
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: '%s'\n  bob: '%s'\n", hash4,
		 hash6);
	struct webconf *w = load_text(yaml, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(w->cost_min, 4);
	assert_int_equal(w->cost_max, 6);
	assert_int_equal(strlen(w->decoy_hash), 60);
	assert_memory_equal(w->decoy_hash, "$2b$06$", 7);
	snprintf(decoy, sizeof(decoy), "%s", w->decoy_hash);
	webconf_free(w);
	assert_non_null(w = load_text(yaml, err, sizeof(err)));
	assert_string_not_equal(w->decoy_hash, decoy);
	webconf_free(w);
}

static void test_auth(void **state)
{
	struct webauth *a = webauth_new();
	struct crypt_data cd = {0};
	char salt[64], hash[CRYPT_OUTPUT_SIZE];
	(void)state;

	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	assert_non_null(crypt_rn("pw", salt, &cd, sizeof(cd)));
	snprintf(hash, sizeof(hash), "%s", cd.output);
	struct webconf w = {.nusers = 1, .user = {{"alice", hash}}};

	assert_true(webauth_check(a, &w, "alice", "pw"));
	assert_true(webauth_check(a, &w, "alice", "pw")); /* from the cache */
	assert_false(webauth_check(a, &w, "alice", "pW"));
	assert_false(webauth_check(a, &w, "alice", "pw\n"));
	assert_false(webauth_check(a, &w, "bob", "pw"));
	assert_false(webauth_check(a, &w, NULL, NULL));
	/* A changed hash is not satisfied by the cache of the old one. */
	hash[10] = hash[10] == 'a' ? 'b' : 'a';
	assert_false(webauth_check(a, &w, "alice", "pw"));
	w.nusers = 0;
	assert_true(webauth_check(a, &w, NULL, NULL));
	webauth_free(a);
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
	    cmocka_unit_test(test_auth),
	    cmocka_unit_test(test_decoy_at_the_users_cost),
	};
	return cmocka_run_group_tests_name("webconf", tests, setup, teardown);
}
