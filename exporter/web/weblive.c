/* The web config in force. The toolkit reads its file on every request and
 * handshake; here each new connection and request compares the identity
 * (inode, size, change time) of the file and of the PEM files it names
 * with what was loaded, and re-reads only on a change, and only once the
 * changed files have settled (conf_read_file): a file saved in place is
 * never taken half-written. Reading is done outside the lock; only the
 * swap is under it. */
#include "weblive.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conftree.h"
#include "log.h"
#include "selfstats.h"

#define WATCHED_MAX 4

struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	bool exists;
};

struct weblive {
	char *file;
	pthread_mutex_t lock;
	pthread_mutex_t reload_lock; /* one reader of the files at a time */
	struct webgen *cur;
	bool tls; /* fixed at start */
	struct webauth *auth;
	/* What was last read, good or bad, so a bad file is reported once. */
	const char *watched[WATCHED_MAX];
	struct file_id seen[WATCHED_MAX];
	size_t nwatched;
	unsigned max_requests; /* for the summary line: the flag's, UINT_MAX no limit */
};

static void file_id_of(const char *path, struct file_id *id)
{
	struct stat st;
	memset(id, 0, sizeof(*id));
	if (stat(path, &st) == 0)
		*id = (struct file_id){st.st_dev,  st.st_ino,  st.st_size,
				       st.st_mtim, st.st_ctim, true};
}

static bool file_id_same(const struct file_id *a, const struct file_id *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void gen_free(struct webgen *g)
{
	webtls_free(g->tls);
	webconf_free(g->conf);
	free(g);
}

void webgen_put(struct webgen *g)
{
	if (g && __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0)
		gen_free(g);
}

/* Reads the file and builds its TLS objects; NULL with the reason in err. */
static struct webgen *gen_load(const char *file, struct conf_settle *settle, bool tls_at_start,
			       bool first, char *err, size_t errlen)
{
	struct webgen *g = calloc(1, sizeof(*g));

	if (!g) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	g->refs = 1;
	if (!(g->conf = webconf_load_settled(file, settle, err, errlen)))
		goto err_free;
	if (!first && g->conf->tls != tls_at_start) {
		snprintf(err, errlen, "%s: TLS cannot be turned %s without a restart", file,
			 tls_at_start ? "off" : "on");
		goto err_free;
	}
	if (g->conf->tls && !(g->tls = webtls_new(g->conf, err, errlen)))
		goto err_free;
	if (g->conf->cost_min != g->conf->cost_max) {
		char lo[8], hi[8];
		snprintf(lo, sizeof(lo), "%d", g->conf->cost_min);
		snprintf(hi, sizeof(hi), "%d", g->conf->cost_max);
		log_warn("basic_auth_users' bcrypt costs differ: the time a wrong password takes "
			 "tells which cost, and so which user, it was checked against",
			 "lowest", lo, "highest", hi);
	}
	if (g->conf->extra_suites[0])
		log_warn("GnuTLS enables cipher suites by their parts: cipher_suites also enables "
			 "these",
			 "suites", g->conf->extra_suites);
	return g;
err_free:
	gen_free(g);
	return NULL;
}

/* Records the identities of the files the generation g was read from (or,
 * after a failure, of the config file and the PEM files of the one in
 * force: a fix to either is then noticed). */
static void watch(struct weblive *l, const struct webconf *conf)
{
	l->nwatched = webconf_files(conf, l->file, l->watched, WATCHED_MAX);
	for (size_t i = 0; i < l->nwatched; i++)
		file_id_of(l->watched[i], &l->seen[i]);
}

static bool changed(struct weblive *l)
{
	struct file_id now;
	bool any = false;

	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; i < l->nwatched && !any; i++) {
		file_id_of(l->watched[i], &now);
		any = !file_id_same(&now, &l->seen[i]);
	}
	pthread_mutex_unlock(&l->lock);
	return any;
}

static const char *client_auth_name(enum webconf_client_auth a)
{
	static const char *const names[] = {
	    "NoClientCert",
	    "RequestClientCert",
	    "RequireAnyClientCert",
	    "VerifyClientCertIfGiven",
	    "RequireAndVerifyClientCert",
	};
	return (size_t)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

/* The "web endpoint" line: what guards the endpoint under generation g. */
static void log_endpoint(const struct weblive *l, const struct webgen *g)
{
	const struct webconf *w = g->conf;
	char users[24], rate[64], maxreq[16];

	snprintf(users, sizeof(users), "%zu", w->nusers);
	if (w->rate_interval > 0)
		snprintf(rate, sizeof(rate), "one request per %.3f s, burst %u", w->rate_interval,
			 w->rate_burst);
	else
		snprintf(rate, sizeof(rate), "off");
	if (l->max_requests == UINT_MAX)
		snprintf(maxreq, sizeof(maxreq), "no limit");
	else
		snprintf(maxreq, sizeof(maxreq), "%u", l->max_requests);
	log_info("web endpoint", "web_config", l->file, "tls", w->tls ? "on" : "off", "client_auth",
		 w->tls ? client_auth_name(w->client_auth) : "off", "basic_auth",
		 w->nusers ? "on" : "off", "users", users, "rate_limit", rate, "max_requests",
		 maxreq);
}

void weblive_set_max_requests(struct weblive *l, unsigned max_requests)
{
	l->max_requests = max_requests;
}

void weblive_log_endpoint(struct weblive *l)
{
	struct webgen *g = weblive_get(l);
	log_endpoint(l, g);
	webgen_put(g);
}

/* Reads the files again and puts what they say in force. `asked`: at a
 * SIGHUP, which waited for the files to settle and reports every outcome;
 * else at a request, which never waits: a file still being written is
 * tried again at a later request, unreported, and what was seen stays so
 * that the change is still a change then. */
static bool reload_locked(struct weblive *l, struct conf_settle *settle, bool asked)
{
	char err[CONF_ERR_MAX];
	struct webgen *g;
	struct webgen *old = NULL;

	settle->unsettled = false; /* the main config's, at a SIGHUP */
	g = gen_load(l->file, settle, l->tls, false, err, sizeof(err));
	if (!g && settle->unsettled && !asked)
		return false;
	/* An empty web config is taken at start, as exporter-toolkit takes it.
	 * At a reload, while the one in force holds users or TLS, it is most
	 * likely a file caught between its truncation and its rewrite: taken,
	 * it would drop every password. */
	if (g && g->conf->doc->empty && !l->cur->conf->doc->empty) {
		snprintf(err, sizeof(err),
			 "%s: empty at a reload while the web config in force has settings "
			 "(a file being rewritten reads empty: replace it by rename; "
			 "no settings are written {})",
			 l->file);
		gen_free(g);
		g = NULL;
	}
	pthread_mutex_lock(&l->lock);
	if (g) {
		old = l->cur;
		l->cur = g;
	}
	/* The PEM files of the generation in force stay watched on failure;
	 * a file still being written stays a change, for a request to take. */
	if (!settle->unsettled)
		watch(l, l->cur->conf);
	pthread_mutex_unlock(&l->lock);
	webgen_put(old);
	selfstats_web_reload(g != NULL);
	if (!g) {
		log_error("web config rejected, keeping the last good one", "err", err);
		return false;
	}
	webauth_configure(l->auth, g->conf);
	/* The whole summary, as at start: a change of users, client
	 * certificates or rate limit is seen in the log. */
	log_endpoint(l, g);
	return true;
}

bool weblive_reload(struct weblive *l, struct conf_settle *settle)
{
	pthread_mutex_lock(&l->reload_lock);
	bool ok = reload_locked(l, settle, true);
	pthread_mutex_unlock(&l->reload_lock);
	return ok;
}

struct weblive *weblive_open(const char *file, char *err, size_t errlen)
{
	struct weblive *l = calloc(1, sizeof(*l));

	if (!l || !(l->auth = webauth_new()) || !(l->file = strdup(file ? file : ""))) {
		snprintf(err, errlen, "out of memory");
		goto err_close;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_mutex_init(&l->reload_lock, NULL);
	if (!file) { /* an empty config: plain HTTP, no users, nothing watched */
		if (!(l->cur = calloc(1, sizeof(*l->cur))) ||
		    !(l->cur->conf = calloc(1, sizeof(*l->cur->conf)))) {
			snprintf(err, errlen, "out of memory");
			goto err_close;
		}
		l->cur->refs = 1;
		return l;
	}
	if (!(l->cur = gen_load(file, NULL, false, true, err, errlen)))
		goto err_close;
	l->tls = l->cur->conf->tls;
	watch(l, l->cur->conf);
	selfstats_web_reload(true);
	webauth_configure(l->auth, l->cur->conf);
	return l;
err_close:
	weblive_close(l);
	return NULL;
}

void weblive_close(struct weblive *l)
{
	if (!l)
		return;
	webgen_put(l->cur);
	webauth_free(l->auth);
	free(l->file);
	pthread_mutex_destroy(&l->lock);
	pthread_mutex_destroy(&l->reload_lock);
	free(l);
}

struct webgen *weblive_get(struct weblive *l)
{
	struct webgen *g;

	/* A change seen by many requests at once is read by one of them;
	 * the others go on with the generation in force. */
	if (l->nwatched && changed(l) && pthread_mutex_trylock(&l->reload_lock) == 0) {
		struct conf_settle now;
		conf_settle_init(&now, 0); /* a request never waits */
		if (changed(l))		   /* not already read by the one before */
			reload_locked(l, &now, false);
		pthread_mutex_unlock(&l->reload_lock);
	}
	pthread_mutex_lock(&l->lock);
	g = l->cur;
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&l->lock);
	return g;
}

bool weblive_tls(const struct weblive *l)
{
	return l->tls;
}

struct webauth *weblive_auth(struct weblive *l)
{
	return l->auth;
}
