/* Basic auth against bcrypt hashes, verified by libxcrypt's crypt_rn.
 * bcrypt is slow on purpose (about 50 ms at cost 10), so a successful
 * verification is remembered as a SHA-256 of user, hash and password: a
 * scrape every 15 s costs one hash, not one bcrypt. Failures are not
 * remembered, and run one at a time, as in the toolkit, so a password
 * guesser gets one core at most. Comparisons take the same time whatever
 * they compare. */
#include "webauth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_ENTRIES 64
#define DIGEST_LEN 32

struct webauth {
	pthread_mutex_t lock; /* the cache and the bucket */
	pthread_mutex_t bcrypt_lock;
	unsigned char cache[CACHE_ENTRIES][DIGEST_LEN];
	size_t ncache, next;
	/* The token bucket, and the settings it was filled for. */
	double tokens, interval;
	unsigned burst;
	uint64_t last_ns;
};

struct webauth *webauth_new(void)
{
	struct webauth *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->bcrypt_lock, NULL);
	return a;
}

void webauth_free(struct webauth *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->bcrypt_lock);
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

static bool bcrypt_matches(struct webauth *a, const char *hash, const char *password)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd)); /* 32 KiB: not on the stack */
	bool ok = false;

	if (!cd)
		return false;
	pthread_mutex_lock(&a->bcrypt_lock);
	const char *out = crypt_rn(password, hash, cd, (int)sizeof(*cd));
	pthread_mutex_unlock(&a->bcrypt_lock);
	ok = out && strlen(out) == strlen(hash) && same_bytes(out, hash, strlen(hash));
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

bool webauth_check(struct webauth *a, const struct webconf *w, const char *user,
		   const char *password)
{
	const char *hash = NULL;
	unsigned char d[DIGEST_LEN];

	if (!w->nusers)
		return true;
	if (!user || !password)
		return false;
	for (size_t i = 0; i < w->nusers; i++)
		if (strcmp(w->user[i].name, user) == 0)
			hash = w->user[i].hash;
	if (!hash) { /* as slow as a user's: the time does not tell who exists */
		bcrypt_matches(a, w->decoy_hash, password);
		return false;
	}
	if (digest(user, hash, password, d) < 0)
		return false;
	if (cached(a, d))
		return true;
	if (!bcrypt_matches(a, hash, password))
		return false;
	remember(a, d);
	return true;
}

bool webauth_rate_allow(struct webauth *a, const struct webconf *w, uint64_t now_ns)
{
	bool ok;

	if (w->rate_interval <= 0)
		return true;
	pthread_mutex_lock(&a->lock);
	if (a->interval != w->rate_interval || a->burst != w->rate_burst) {
		a->interval = w->rate_interval; /* new settings: a full bucket */
		a->burst = w->rate_burst;
		a->tokens = w->rate_burst;
		a->last_ns = now_ns;
	}
	a->tokens += (double)(now_ns - a->last_ns) / 1e9 / a->interval;
	if (a->tokens > a->burst)
		a->tokens = a->burst;
	a->last_ns = now_ns;
	ok = a->tokens >= 1;
	if (ok)
		a->tokens -= 1;
	pthread_mutex_unlock(&a->lock);
	return ok;
}
