/* web-config.yml with exporter-toolkit's keys and checks (web/tls_config.go,
 * web/handler.go), read strictly: an unknown key is an error, as with the
 * toolkit's UnmarshalStrict. Where GnuTLS cannot do what Go does, the
 * error says so rather than serving something weaker. */
#include "webconf.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conftree.h"
#include "tlsprio.h"

static const struct {
	const char *name;
	const char *allowed[3]; /* NULL-ended; none: any value */
} header_rules[WEBCONF_HEADERS_MAX] = {
    {"Strict-Transport-Security", {NULL}},
    {"X-Content-Type-Options", {"nosniff", NULL}},
    {"X-Frame-Options", {"deny", "sameorigin", NULL}},
    {"X-XSS-Protection", {NULL}},
    {"Content-Security-Policy", {NULL}},
};

static const char *const client_auth_names[] = {
    [WEBCONF_NO_CLIENT_CERT] = "NoClientCert",
    [WEBCONF_REQUEST_CLIENT_CERT] = "RequestClientCert",
    [WEBCONF_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
    [WEBCONF_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
    [WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

/* A relative path is relative to the web config's folder, as in the toolkit. */
static char *join_dir(const char *config_file, const char *path)
{
	char *copy = strdup(config_file), *out = NULL;

	if (!copy)
		return NULL;
	if (path[0] == '/' || asprintf(&out, "%s/%s", dirname(copy), path) < 0)
		out = path[0] == '/' ? strdup(path) : NULL;
	free(copy);
	return out;
}

static int read_pem(const struct conf_node *at, const char *what, const char *path, char **out)
{
	char err[CONF_ERR_MAX];
	size_t len;

	/* By the rule the web config itself is read by: a certificate
	 * being rewritten is not taken half-written either. */
	if (!(*out = conf_read_file(path, at->doc->settle, &len, err, sizeof(err))))
		return conf_errorf(at, "failed to read %s (%s)", what, err);
	return 0;
}

/* Of two values, the one written later in the file: where a reader of
 * the file finds the conflict. */
static const struct conf_node *later(const struct conf_node *a, const struct conf_node *b)
{
	return a->line > b->line || (a->line == b->line && a->col > b->col) ? a : b;
}

/* cert/cert_file and the like: inline PEM or a file, not both. *at: the
 * value given, for the errors of what is made of the PEM later. */
static int pem_pair(const struct conf_node *t, const char *inline_key, const char *file_key,
		    const char *config_file, char **pem, char **path, const struct conf_node **at)
{
	const char *text = NULL, *file = NULL;

	if (conf_get_str(t, inline_key, &text) == -EINVAL ||
	    conf_get_str(t, file_key, &file) == -EINVAL)
		return -EINVAL;
	if (text && *text && file && *file) /* at the second of the two */
		return conf_errorf(later(conf_child(t, inline_key), conf_child(t, file_key)),
				   "give one of %s and %s, not both", inline_key, file_key);
	*at = conf_child(t, file && *file ? file_key : inline_key);
	if (file && *file) {
		if (!(*path = join_dir(config_file, file)))
			return conf_errorf(t, "out of memory");
		return read_pem(conf_child(t, file_key), file_key, *path, pem);
	}
	if (text && *text && !(*pem = strdup(text)))
		return conf_errorf(t, "out of memory");
	return 0;
}

static int str_list(const struct conf_node *t, const char *key, const char **out, size_t max,
		    size_t *n)
{
	const struct conf_node *l = conf_child(t, key);

	*n = 0;
	if (!l || (l->kind == BS_CONF_SCALAR && !l->scalar[0]))
		return 0;
	if (l->kind != BS_CONF_SEQ)
		return conf_errorf(l, "'%s' must be a list", key);
	if (l->n > max)
		return conf_errorf(l, "more than %zu entries in '%s'", max, key);
	for (size_t i = 0; i < l->n; i++) {
		if (l->val[i]->kind != BS_CONF_SCALAR)
			return conf_errorf(l->val[i], "entries of '%s' must be strings", key);
		out[(*n)++] = l->val[i]->scalar;
	}
	return 0;
}

static int load_client_auth(struct webconf *w, const struct conf_node *t)
{
	const char *name = NULL;

	if (conf_get_str(t, "client_auth_type", &name) == -EINVAL)
		return -EINVAL;
	w->client_auth = WEBCONF_NO_CLIENT_CERT;
	if (name && strcmp(name, "RequireClientCert") == 0) /* the toolkit's old name */
		name = client_auth_names[WEBCONF_REQUIRE_ANY_CLIENT_CERT];
	for (size_t i = 0; name && *name && i <= WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT; i++) {
		if (strcmp(name, client_auth_names[i]) == 0) {
			w->client_auth = (enum webconf_client_auth)i;
			name = NULL;
		}
	}
	if (name && *name)
		return conf_errorf(conf_child(t, "client_auth_type"), "invalid ClientAuth: %s",
				   name);
	/* At client_auth_type if it says NoClientCert, else at the CA. */
	const struct conf_node *policy = conf_child(t, "client_auth_type"), *at = t;
	if (conf_child(t, "client_ca"))
		at = conf_child(t, "client_ca");
	if (conf_child(t, "client_ca_file") && conf_child(t, "client_ca_file")->scalar[0])
		at = conf_child(t, "client_ca_file");
	if (policy && policy->scalar[0])
		at = policy;
	if (w->client_ca_pem && w->client_auth == WEBCONF_NO_CLIENT_CERT)
		return conf_errorf(at, "client CA's have been configured without a Client Auth "
				       "Policy");
	/* Go would fall back to the system's roots, so that any public CA's
	 * customer could pass: refused here. */
	if (!w->client_ca_pem && (w->client_auth == WEBCONF_VERIFY_CLIENT_CERT_IF_GIVEN ||
				  w->client_auth == WEBCONF_REQUIRE_AND_VERIFY_CLIENT_CERT))
		return conf_errorf(policy, "client_auth_type %s needs client_ca_file or client_ca",
				   client_auth_names[w->client_auth]);
	return 0;
}

/* The value tlsprio_build could not honour: a version, or the element of
 * a list; the mapping only for the settings together. */
static const struct conf_node *fault_node(const struct conf_node *t, const struct tlsprio_fault *f)
{
	static const char *const keys[] = {
	    [TLSPRIO_MIN_VERSION] = "min_version",
	    [TLSPRIO_MAX_VERSION] = "max_version",
	    [TLSPRIO_SUITES] = "cipher_suites",
	    [TLSPRIO_CURVES] = "curve_preferences",
	};
	const struct conf_node *v = f->field == TLSPRIO_ALL ? NULL : conf_child(t, keys[f->field]);

	if (!v)
		return t;
	if (v->kind == BS_CONF_SEQ && f->index < v->n)
		return v->val[f->index];
	return v;
}

static int load_priority(struct webconf *w, const struct conf_node *t)
{
	const char *suites[WEBCONF_LIST_MAX], *curves[WEBCONF_LIST_MAX];
	struct tlsprio_fault fault = {TLSPRIO_ALL, 0};
	struct tlsprio_request rq = {
	    .suites = suites, .curves = curves, .server_order = true, .fault = &fault};
	char err[256];

	if (conf_get_str(t, "min_version", &rq.min_version) == -EINVAL ||
	    conf_get_str(t, "max_version", &rq.max_version) == -EINVAL ||
	    conf_get_bool(t, "prefer_server_cipher_suites", &rq.server_order) == -EINVAL ||
	    str_list(t, "cipher_suites", suites, WEBCONF_LIST_MAX, &rq.nsuites) < 0 ||
	    str_list(t, "curve_preferences", curves, WEBCONF_LIST_MAX, &rq.ncurves) < 0)
		return -EINVAL;
	if (tlsprio_build(&rq, w->priority, sizeof(w->priority), w->extra_suites,
			  sizeof(w->extra_suites), err, sizeof(err)) < 0)
		return conf_errorf(fault_node(t, &fault), "%s", err);
	return 0;
}

/* `at`: the key tls_server_config, where what is missing is reported. */
static int load_tls(struct webconf *w, const struct conf_node *at, const struct conf_node *t,
		    const char *file)
{
	if (t->kind == BS_CONF_SCALAR && !t->scalar[0])
		return 0;
	if (t->kind != BS_CONF_MAP)
		return conf_errorf(t, "'tls_server_config' must be a mapping");
	if (pem_pair(t, "cert", "cert_file", file, &w->cert_pem, &w->cert_file, &w->cert_at) < 0 ||
	    pem_pair(t, "key", "key_file", file, &w->key_pem, &w->key_file, &w->key_at) < 0 ||
	    pem_pair(t, "client_ca", "client_ca_file", file, &w->client_ca_pem, &w->client_ca_file,
		     &w->client_ca_at) < 0 ||
	    load_client_auth(w, t) < 0 ||
	    str_list(t, "client_allowed_sans", w->sans, WEBCONF_SANS_MAX, &w->nsans) < 0 ||
	    load_priority(w, t) < 0)
		return -EINVAL;
	w->tls = w->cert_pem || w->key_pem || w->client_ca_pem ||
		 w->client_auth != WEBCONF_NO_CLIENT_CERT;
	if (w->tls && !w->cert_pem)
		return conf_errorf(at, "missing one of cert or cert_file");
	if (w->tls && !w->key_pem)
		return conf_errorf(at, "missing one of key or key_file");
	return conf_check_unused(t);
}

static int load_headers(struct webconf *w, const struct conf_node *h)
{
	for (size_t i = 0; i < h->n; i++) {
		const char *v = h->val[i]->scalar;
		size_t r = 0;
		while (r < WEBCONF_HEADERS_MAX && strcmp(header_rules[r].name, h->key[i]))
			r++;
		if (r == WEBCONF_HEADERS_MAX)
			return conf_errorf(h->key_pos[i],
					   "HTTP header \"%s\" can not be configured", h->key[i]);
		if (h->val[i]->kind != BS_CONF_SCALAR || strpbrk(v, "\r\n"))
			return conf_errorf(h->val[i], "invalid value for %s", h->key[i]);
		bool ok = !header_rules[r].allowed[0];
		for (size_t a = 0; header_rules[r].allowed[a]; a++)
			ok |= strcmp(v, header_rules[r].allowed[a]) == 0;
		if (!ok)
			return conf_errorf(h->val[i], "invalid value for %s: \"%s\"", h->key[i], v);
		if (*v) /* blank: unset */
			w->header[w->nheaders++] = (struct webconf_header){header_rules[r].name, v};
		h->used[i] = true;
	}
	return 0;
}

static int load_http(struct webconf *w, const struct conf_node *h)
{
	const struct conf_node *hd;
	bool http2;

	if (h->kind != BS_CONF_MAP)
		return conf_errorf(h, "'http_server_config' must be a mapping");
	/* Accepted for the toolkit's files; this server speaks HTTP/1.1 only. */
	if (conf_get_bool(h, "http2", &http2) == -EINVAL)
		return -EINVAL;
	if ((hd = conf_child(h, "headers"))) {
		conf_null_to_map(hd);
		if (hd->kind != BS_CONF_MAP)
			return conf_errorf(hd, "'headers' must be a mapping");
		if (hd->n > WEBCONF_HEADERS_MAX)
			return conf_errorf(hd, "more than %d headers", WEBCONF_HEADERS_MAX);
		if (load_headers(w, hd) < 0)
			return -EINVAL;
	}
	return conf_check_unused(h);
}

/* A bcrypt hash: $2a$, $2b$ or $2y$, a two-digit cost, 53 characters. */
static bool bcrypt_hash_valid(const char *h)
{
	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[6] != '$')
		return false;
	int cost = (h[4] - '0') * 10 + (h[5] - '0');
	return h[4] >= '0' && h[4] <= '9' && h[5] >= '0' && h[5] <= '9' && cost >= 4 &&
	       cost <= 31 &&
	       strspn(h + 7, "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") ==
		   53;
}

static int bcrypt_cost(const char *h)
{
	return (h[4] - '0') * 10 + (h[5] - '0');
}

static int load_users(struct webconf *w, const struct conf_node *u)
{
	if (u->kind == BS_CONF_SCALAR && !u->scalar[0])
		return 0;
	if (u->kind != BS_CONF_MAP)
		return conf_errorf(u,
				   "'basic_auth_users' must be a mapping of user to bcrypt hash");
	if (u->n > WEBCONF_USERS_MAX)
		return conf_errorf(u, "more than %d users", WEBCONF_USERS_MAX);
	for (size_t i = 0; i < u->n; i++) {
		if (u->val[i]->kind != BS_CONF_SCALAR || !bcrypt_hash_valid(u->val[i]->scalar))
			return conf_errorf(u->val[i],
					   "the password of '%s' is not a bcrypt hash ($2y$, "
					   "$2b$ or $2a$; htpasswd -nBC 10 \"\" makes one)",
					   u->key[i]);
		if (strchr(u->key[i], ':'))
			return conf_errorf(u->key_pos[i], "a user name cannot contain ':'");
		w->user[w->nusers++] = (struct webconf_user){u->key[i], u->val[i]->scalar};
		u->used[i] = true;
		int cost = bcrypt_cost(u->val[i]->scalar);
		w->cost_min = w->nusers == 1 || cost < w->cost_min ? cost : w->cost_min;
		w->cost_max = cost > w->cost_max ? cost : w->cost_max;
	}
	return 0;
}

static int load_rate(struct webconf *w, const struct conf_node *r)
{
	uint64_t burst = 0;

	if (r->kind != BS_CONF_MAP)
		return conf_errorf(r, "'rate_limit' must be a mapping");
	if (conf_get_duration(r, "interval", 0, 86400, &w->rate_interval) == -EINVAL ||
	    conf_get_u64(r, "burst", 0, 1000000, &burst) == -EINVAL)
		return -EINVAL;
	/* Go's limiter with a burst of 0 refuses everything; say so instead,
	 * at the burst (or at the interval, when the burst is left out). */
	const struct conf_node *at = conf_child(r, "burst");
	if (!at)
		at = conf_child(r, "interval");
	if (w->rate_interval > 0 && burst == 0)
		return conf_errorf(at, "a rate limit with burst 0 refuses every request: give "
				       "burst: 1 or more");
	w->rate_burst = (unsigned)burst;
	return conf_check_unused(r);
}

/* The key itself, for what is missing under it. */
static const struct conf_node *key_node(const struct conf_node *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->key[i], key) == 0)
			return map->key_pos[i];
	return map;
}

struct webconf *webconf_load(const char *file, char *err, size_t errlen)
{
	return webconf_load_settled(file, NULL, err, errlen);
}

struct webconf *webconf_load_settled(const char *file, struct conf_settle *settle, char *err,
				     size_t errlen)
{
	struct webconf *w = calloc(1, sizeof(*w));
	const struct conf_node *n, *root;

	if (!w || !(w->doc = conf_load_file(file, settle, err, errlen))) {
		if (!w)
			snprintf(err, errlen, "out of memory");
		webconf_free(w);
		return NULL;
	}
	root = w->doc->root;
	conf_null_to_map(root); /* an empty file: no TLS, no users */
	if (root->kind != BS_CONF_MAP) {
		conf_errorf(root, "the web config must be a mapping");
		goto err_copy_message;
	}
	if (((n = conf_child(root, "tls_server_config")) &&
	     load_tls(w, key_node(root, "tls_server_config"), n, file) < 0) ||
	    ((n = conf_child(root, "http_server_config")) && load_http(w, n) < 0) ||
	    ((n = conf_child(root, "basic_auth_users")) && load_users(w, n) < 0) ||
	    ((n = conf_child(root, "rate_limit")) && load_rate(w, n) < 0) ||
	    conf_check_unused(root) < 0)
		goto err_copy_message;
	w->doc->settle = NULL; /* the caller's, for this load only */
	return w;
err_copy_message:
	snprintf(err, errlen, "%s", w->doc->err);
	webconf_free(w);
	return NULL;
}

void webconf_free(struct webconf *w)
{
	if (!w)
		return;
	free(w->cert_pem);
	free(w->key_pem);
	free(w->client_ca_pem);
	free(w->cert_file);
	free(w->key_file);
	free(w->client_ca_file);
	conf_free(w->doc);
	free(w);
}

size_t webconf_files(const struct webconf *w, const char *config_file, const char **out, size_t max)
{
	const char *all[] = {config_file, w ? w->cert_file : NULL, w ? w->key_file : NULL,
			     w ? w->client_ca_file : NULL};
	size_t n = 0;

	for (size_t i = 0; i < 4 && n < max; i++)
		if (all[i])
			out[n++] = all[i];
	return n;
}
