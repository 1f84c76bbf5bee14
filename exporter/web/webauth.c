/* Basic auth against bcrypt hashes, as exporter-toolkit's handler checks
 * them, and its rate limit. A successful verification is remembered as a
 * SHA-256 of user, hash and password, so a scrape every 15 s costs one
 * hash, not one bcrypt, and never waits in the pool; the client it came
 * from is remembered too, and its next verifications go first in the
 * pool. Failures are not remembered, but charged to the rate buckets of
 * the name they claim and of their address (verify). An unknown user's password is checked against
 * the hash of the user of the lowest cost, so that the refusal takes a known user's time without a
 * hash made up front. Comparisons take the same time whatever they compare. */
#include "webauth.h"

#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authpool.h"
#include "log.h"
#include "monoclock.h"
#include "webrate.h"

#define CACHE_ENTRIES 64
#define DIGEST_LEN 32
#define MEASURE_COST 6
/* A cost whose check takes longer than this is warned about at load. */
#define WEBAUTH_SLOW_NS 1000000000ull
#define CERTIFIED_WHO "\001certificate" /* not a user name: users have no controls */
#define ATTEMPT_PREFIX "\002"		/* a name's guesses: no user's name starts so */
#define WEBAUTH_KEY_MAX 80		/* webrate cuts longer keys */
#define KNOWN_CLIENTS 256		/* the last clients that passed a verification */

struct webauth {
	pthread_mutex_t lock; /* the cache and the measure */
	unsigned char cache[CACHE_ENTRIES][DIGEST_LEN];
	size_t ncache, next;
	uint64_t measured_ns;			/* one bcrypt at MEASURE_COST; 0: not yet */
	unsigned char known[KNOWN_CLIENTS][16]; /* client keys, a ring */
	size_t nknown, next_known;
	struct authpool *pool;
	struct webrate *rate;
};

struct webauth *webauth_new(void)
{
	struct webauth *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	if (!(a->pool = authpool_new()) || !(a->rate = webrate_new())) {
		webauth_free(a);
		return NULL;
	}
	return a;
}

void webauth_free(struct webauth *a)
{
	if (!a)
		return;
	authpool_free(a->pool);
	webrate_free(a->rate);
	pthread_mutex_destroy(&a->lock);
	explicit_bzero(a->cache, sizeof(a->cache));
	free(a);
}

static bool same_bytes(const void *x, const void *y, size_t n)
{
	const volatile unsigned char *a = x, *b = y;
	unsigned char diff = 0;
	for (size_t i = 0; i < n; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

static int digest(const char *user, const char *hash, const char *password,
		  unsigned char out[DIGEST_LEN])
{
	gnutls_hash_hd_t h;
	/* NUL-separated: ("ab","c") and ("a","bc") differ. */
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return -1;
	gnutls_hash(h, user, strlen(user) + 1);
	gnutls_hash(h, hash, strlen(hash) + 1);
	gnutls_hash(h, password, strlen(password));
	gnutls_hash_deinit(h, out);
	return 0;
}

static bool cached(struct webauth *a, const unsigned char d[DIGEST_LEN])
{
	bool hit = false;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->ncache; i++)
		hit |= same_bytes(a->cache[i], d, DIGEST_LEN);
	pthread_mutex_unlock(&a->lock);
	return hit;
}

static void remember(struct webauth *a, const unsigned char d[DIGEST_LEN])
{
	pthread_mutex_lock(&a->lock);
	memcpy(a->cache[a->next], d, DIGEST_LEN);
	a->next = (a->next + 1) % CACHE_ENTRIES;
	if (a->ncache < CACHE_ENTRIES)
		a->ncache++;
	pthread_mutex_unlock(&a->lock);
}

/* Whether the client (its key) passed a verification lately: its next
 * ones go first in the pool. */
static bool known_client(struct webauth *a, const unsigned char key[16])
{
	bool hit = false;
	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < a->nknown && !hit; i++)
		hit = memcmp(a->known[i], key, 16) == 0;
	pthread_mutex_unlock(&a->lock);
	return hit;
}

static void remember_client(struct webauth *a, const unsigned char key[16])
{
	if (known_client(a, key))
		return;
	pthread_mutex_lock(&a->lock);
	memcpy(a->known[a->next_known], key, 16);
	a->next_known = (a->next_known + 1) % KNOWN_CLIENTS;
	if (a->nknown < KNOWN_CLIENTS)
		a->nknown++;
	pthread_mutex_unlock(&a->lock);
}

static int b64_value(char c)
{
	static const char alphabet[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *at = c ? strchr(alphabet, c) : NULL;
	return at ? (int)(at - alphabet) : -1;
}

/* Standard base64 with its padding, as Go's StdEncoding; the length out. */
static bool b64_decode(const char *in, unsigned char *out, size_t outlen, size_t *len)
{
	size_t n = strlen(in), o = 0;

	if (n % 4)
		return false;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			bool last = i + 4 == n;
			if (in[i + k] == '=' && last && k >= 2 && (k == 3 || in[i + 3] == '=')) {
				v[k] = 0;
				pad++;
			} else if ((v[k] = b64_value(in[i + k])) < 0 || pad) {
				return false;
			}
		}
		unsigned bits = (unsigned)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
		if (o + 3 - (size_t)pad > outlen)
			return false;
		out[o++] = (unsigned char)(bits >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(bits >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)bits;
	}
	*len = o;
	return true;
}

bool webauth_parse_basic(const char *value, char *buf, size_t buflen, const char **user,
			 const char **password)
{
	size_t len;

	if (!value || strncasecmp(value, "Basic ", 6) != 0 || !buflen ||
	    !b64_decode(value + 6, (unsigned char *)buf, buflen - 1, &len))
		return false;
	/* A NUL would cut the password short: "pass\0junk" checked as
	 * "pass". The toolkit refuses it; so does this. */
	char *colon = memchr(buf, ':', len);
	if (!colon || memchr(buf, '\0', len))
		return false;
	buf[len] = '\0';
	*colon = '\0';
	*user = buf;
	*password = colon + 1;
	return true;
}

static const char *hash_of(const struct webconf *w, const char *user)
{
	const char *hash = NULL;

	for (size_t i = 0; i < w->nusers; i++)
		if (strcmp(w->user[i].name, user) == 0)
			hash = w->user[i].hash;
	return hash;
}

/* The lowest cost's hash: what an unknown user's password is checked against. */
static const struct webconf_user *decoy_user(const struct webconf *w)
{
	const struct webconf_user *d = &w->user[0];

	for (size_t i = 1; i < w->nusers; i++)
		if (strncmp(w->user[i].hash + 4, d->hash + 4, 2) < 0)
			d = &w->user[i];
	return d;
}

static enum webauth_verdict pool_verdict(enum authpool_result r)
{
	switch (r) {
	case AUTHPOOL_MATCH:
		return WEBAUTH_PASS;
	case AUTHPOOL_MISMATCH:
		return WEBAUTH_DENIED;
	case AUTHPOOL_GONE:
		return WEBAUTH_GONE;
	case AUTHPOOL_BUSY:
	case AUTHPOOL_LATE:
		break;
	}
	return WEBAUTH_BUSY;
}

/* One check in the pool; an unknown user's as slow as a user's, so the
 * time does not tell who exists. */
static enum webauth_verdict check(struct webauth *a, const struct webconf *w,
				  const struct webauth_request *rq, const char *user,
				  const char *password, const char *hash)
{
	if (!hash) {
		const struct webconf_user *d = decoy_user(w);
		enum webauth_verdict v = pool_verdict(authpool_verify(a->pool, rq->addr, rq->fd,
								      known_client(a, rq->addr),
								      d->name, d->hash, password));
		return v == WEBAUTH_BUSY || v == WEBAUTH_GONE ? v : WEBAUTH_DENIED;
	}
	return pool_verdict(authpool_verify(a->pool, rq->addr, rq->fd, known_client(a, rq->addr),
					    user, hash, password));
}

/* Credentials not cached. Without a user name, or certified: a token of
 * the address's shared bucket (or the certificate's) first, as the
 * toolkit takes its token before authentication. With a name (any, known
 * or not, so the answer does not tell which exist): checked while the
 * name's own bucket at the address has a token and either the shared one
 * has one too or the name failed nothing lately (its bucket full); a
 * failure is charged after the fact to both. Wrong guesses drain the
 * shared bucket and their names', never a name nobody guessed at: a
 * scraper's first check is not refused for strangers' guesses at others. */
static enum webauth_verdict verify(struct webauth *a, const struct webconf *w,
				   const struct webauth_request *rq, const char *who,
				   uint64_t now_ns, const char *user, const char *password,
				   const char *hash)
{
	double iv = w->rate_interval;
	unsigned burst = w->rate_burst;
	char key[WEBAUTH_KEY_MAX];

	if (!user || *who) {
		if (!webrate_take(a->rate, rq->addr, who, iv, burst, now_ns))
			return WEBAUTH_RATE_LIMITED;
		return user ? check(a, w, rq, user, password, hash) : WEBAUTH_DENIED;
	}
	snprintf(key, sizeof(key), ATTEMPT_PREFIX "%s", user);
	if (!webrate_do(a->rate, rq->addr, key, iv, burst, now_ns, WEBRATE_HAS) ||
	    (!webrate_do(a->rate, rq->addr, key, iv, burst, now_ns, WEBRATE_FULL) &&
	     !webrate_do(a->rate, rq->addr, "", iv, burst, now_ns, WEBRATE_HAS)))
		return WEBAUTH_RATE_LIMITED;
	enum webauth_verdict v = check(a, w, rq, user, password, hash);
	if (v == WEBAUTH_DENIED) {
		webrate_do(a->rate, rq->addr, key, iv, burst, now_ns, WEBRATE_DEBIT);
		webrate_do(a->rate, rq->addr, "", iv, burst, now_ns, WEBRATE_DEBIT);
	}
	return v;
}

/* Who a client is for its share of the pool and its rate buckets: an
 * IPv4 address, or an IPv6 address's /64, which one subscriber is given
 * whole (so 2^64 addresses are one client, not 2^64 clients). */
static void client_key(const unsigned char addr[16], unsigned char key[16])
{
	static const unsigned char v4mapped[12] = {[10] = 0xff, [11] = 0xff};

	memcpy(key, addr, 16);
	if (memcmp(addr, v4mapped, 12) != 0)
		memset(key + 8, 0, 8);
}

enum webauth_verdict webauth_admit(struct webauth *a, const struct webconf *w,
				   const struct webauth_request *in, uint64_t now_ns,
				   char **user_out)
{
	struct webauth_request keyed = *in, *rq = &keyed;
	const char *who = rq->certified ? CERTIFIED_WHO : "";
	const char *user = NULL, *password = NULL, *hash = NULL;
	unsigned char d[DIGEST_LEN];
	size_t buflen = rq->authorization ? strlen(rq->authorization) + 1 : 1;
	char *buf = NULL;
	enum webauth_verdict v;

	*user_out = NULL;
	client_key(in->addr, keyed.addr);
	if (!w->nusers)
		return webrate_take(a->rate, rq->addr, who, w->rate_interval, w->rate_burst, now_ns)
			   ? WEBAUTH_PASS
			   : WEBAUTH_RATE_LIMITED;
	if (!(buf = malloc(buflen)))
		return WEBAUTH_BUSY;
	if (webauth_parse_basic(rq->authorization, buf, buflen, &user, &password))
		hash = hash_of(w, user);
	else
		user = password = NULL;
	if (hash && digest(user, hash, password, d) == 0 && cached(a, d)) {
		/* Verified before: its own bucket, nobody else's requests in it. */
		v = webrate_take(a->rate, rq->addr, user, w->rate_interval, w->rate_burst, now_ns)
			? WEBAUTH_PASS
			: WEBAUTH_RATE_LIMITED;
	} else {
		v = verify(a, w, rq, who, now_ns, user, password, hash);
		if (v == WEBAUTH_PASS && hash && digest(user, hash, password, d) == 0) {
			remember(a, d);
			remember_client(a, rq->addr);
			/* Counted in the user's own bucket too: its share of the
			 * rate is the same whether it was cached or not. */
			webrate_take(a->rate, rq->addr, user, w->rate_interval, w->rate_burst,
				     now_ns);
		}
	}
	if (v == WEBAUTH_PASS)
		*user_out = strdup(user);
	explicit_bzero(buf, buflen);
	free(buf);
	return v;
}

/* One bcrypt at a low cost, timed once: the estimate of the others. */
static uint64_t measured(struct webauth *a)
{
	pthread_mutex_lock(&a->lock);
	/* A fixed salt: only the time matters. The quickest of three: the
	 * first call pays for setting up, and a busy core slows any one. */
	static const char probe[] = "$2b$06$abcdefghijklmnopqrstuu";
	uint64_t best = a->measured_ns;
	for (int i = 0; i < 3 && !a->measured_ns; i++) {
		uint64_t t0 = monoclock_ns();
		authpool_bcrypt_matches(probe, "probe");
		uint64_t t = monoclock_ns() - t0 + 1;
		best = i == 0 || t < best ? t : best;
	}
	a->measured_ns = best;
	uint64_t m = a->measured_ns;
	pthread_mutex_unlock(&a->lock);
	return m;
}

void webauth_configure(struct webauth *a, const struct webconf *w)
{
	uint32_t said = 0; /* bit c: cost c warned about already */

	if (!w->nusers)
		return;
	authpool_start(a->pool);
	uint64_t m = measured(a);
	for (size_t i = 0; i < w->nusers; i++) {
		int cost = (w->user[i].hash[4] - '0') * 10 + (w->user[i].hash[5] - '0');
		double est = (double)m * (double)(1ull << cost) / (double)(1ull << MEASURE_COST);
		if (est < WEBAUTH_SLOW_NS || (said & (1u << cost)))
			continue;
		said |= 1u << cost;
		char c[8], secs[32], probe_ms[32];
		snprintf(c, sizeof(c), "%d", cost);
		snprintf(secs, sizeof(secs), "%.1f", est / 1e9);
		snprintf(probe_ms, sizeof(probe_ms), "%.2f", (double)m / 1e6);
		log_warn("a bcrypt cost this host cannot check in reasonable time: each first "
			 "request of this user (and of an unknown user, if it is the lowest cost) "
			 "takes about this long in the pool, and others wait behind it; a cost of "
			 "10 to 12 is enough",
			 "user", w->user[i].name, "cost", c, "estimated_seconds", secs,
			 "measured_ms_at_cost_6", probe_ms);
	}
}
