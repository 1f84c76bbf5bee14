/* The exporter's own counters that outlive a configuration: per-collector
 * drops, reload status, HTTP responses. One lock; touched once per scrape part. */
#include "selfstats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "version.h"
#include "zcodec.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct collstats collectors[SELFSTATS_COLLECTORS_MAX];
static size_t ncollectors;
static struct selfstats_reload_info reload = {.ok = true};

static const unsigned http_codes[] = {200, 400, 401, 404, 405, 413, 414, 429, 431, 500, 503};
static uint64_t http_count[sizeof(http_codes) / sizeof(http_codes[0]) + 1];

struct collstats *selfstats_collector(const char *name)
{
	struct collstats *cs = NULL;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < ncollectors; i++)
		if (strcmp(collectors[i].name, name) == 0) {
			cs = &collectors[i];
			goto out_unlock;
		}
	if (ncollectors < SELFSTATS_COLLECTORS_MAX && strlen(name) < sizeof(cs->name)) {
		cs = &collectors[ncollectors++];
		memcpy(cs->name, name, strlen(name) + 1);
	}
out_unlock:
	pthread_mutex_unlock(&lock);
	return cs;
}

void selfstats_add_drops(struct collstats *cs, const struct emitter *em)
{
	if (!cs)
		return;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < em->ndrops; i++)
		drops_add(cs->drops, &cs->ndrops, em->drops[i].reason, em->drops[i].n);
	pthread_mutex_unlock(&lock);
}

static double now_unix(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void selfstats_reload(bool ok, const char *err)
{
	double now = now_unix();
	pthread_mutex_lock(&lock);
	reload.ok = ok;
	reload.attempt_unix = now;
	if (ok)
		reload.success_unix = now;
	snprintf(reload.error, sizeof(reload.error), "%s", ok || !err ? "" : err);
	pthread_mutex_unlock(&lock);
}

void selfstats_reload_get(struct selfstats_reload_info *out)
{
	pthread_mutex_lock(&lock);
	*out = reload;
	pthread_mutex_unlock(&lock);
}

void selfstats_scraped(struct collstats *cs, const char *why, double seconds)
{
	double now = now_unix();
	if (!cs)
		return;
	pthread_mutex_lock(&lock);
	cs->scraped = true;
	cs->last_ok = !why;
	snprintf(cs->why, sizeof(cs->why), "%s", why ? why : "");
	cs->last_seconds = seconds;
	cs->last_unix = now;
	pthread_mutex_unlock(&lock);
}

void selfstats_found(struct collstats *cs, const char *line)
{
	if (!cs)
		return;
	pthread_mutex_lock(&lock);
	snprintf(cs->found, sizeof(cs->found), "%s", line);
	pthread_mutex_unlock(&lock);
}

bool selfstats_collector_get(const char *name, struct collstats *out)
{
	bool found = false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < ncollectors && !found; i++)
		if (strcmp(collectors[i].name, name) == 0) {
			*out = collectors[i];
			found = true;
		}
	pthread_mutex_unlock(&lock);
	return found;
}

void selfstats_http_response(unsigned code)
{
	size_t i, n = sizeof(http_codes) / sizeof(http_codes[0]);
	for (i = 0; i < n && http_codes[i] != code; i++)
		;
	__atomic_add_fetch(&http_count[i], 1, __ATOMIC_RELAXED);
}

static const char *const cut_reasons[SELFSTATS_CUTS] = {
    [SELFSTATS_CUT_HEAD] = "head_timeout",   [SELFSTATS_CUT_WRITE] = "write_timeout",
    [SELFSTATS_CUT_EVICTED] = "evicted",     [SELFSTATS_CUT_SLOW_READER] = "slow_reader",
    [SELFSTATS_CUT_IDLE] = "keepalive_idle", [SELFSTATS_CUT_LIFETIME] = "lifetime",
};
static uint64_t cut_count[SELFSTATS_CUTS];

void selfstats_http_cut(enum selfstats_cut why)
{
	__atomic_add_fetch(&cut_count[why], 1, __ATOMIC_RELAXED);
}

static const char *const refusal_reasons[SELFSTATS_REFUSALS] = {
    [SELFSTATS_REFUSED_AUTH] = "basic_auth",
    [SELFSTATS_REFUSED_RATE_LIMIT] = "rate_limit",
    [SELFSTATS_REFUSED_CLIENT_CERT] = "client_certificate",
    [SELFSTATS_REFUSED_FRAMING] = "ambiguous_length",
    [SELFSTATS_REFUSED_URI] = "uri_too_long",
    [SELFSTATS_REFUSED_NO_FDS] = "no_free_fd",
    [SELFSTATS_REFUSED_ADDRESS_LIMIT] = "address_limit",
    [SELFSTATS_REFUSED_NUL_PATH] = "nul_in_path",
    [SELFSTATS_REFUSED_NUL_TARGET] = "nul_in_target",
    [SELFSTATS_REFUSED_PIPELINED] = "pipelined",
    [SELFSTATS_REFUSED_NO_SLOT] = "no_slot",
    [SELFSTATS_REFUSED_AUTH_BUSY] = "auth_busy",
    [SELFSTATS_REFUSED_TLS_HANDSHAKE] = "tls_handshake_failed",
    [SELFSTATS_REFUSED_SCRAPES] = "too_many_scrapes",
    [SELFSTATS_REFUSED_HEADER_TOO_LARGE] = "header_too_large",
};
static uint64_t refusal_count[SELFSTATS_REFUSALS];
static int web_reload_ok = -1; /* -1: no web config */

void selfstats_http_refused(enum selfstats_refusal why)
{
	__atomic_add_fetch(&refusal_count[why], 1, __ATOMIC_RELAXED);
}

void selfstats_web_reload(bool ok)
{
	__atomic_store_n(&web_reload_ok, ok, __ATOMIC_RELAXED);
}

static void emit_web(struct bs_emitter *em)
{
	int ok = __atomic_load_n(&web_reload_ok, __ATOMIC_RELAXED);

	bs_family(em, "binstat_exporter_http_refused_total", BS_COUNTER, NULL,
		  "Requests and TLS handshakes the web config refused, by reason.");
	for (size_t i = 0; i < SELFSTATS_REFUSALS; i++) {
		struct bs_label r = {"reason", refusal_reasons[i]};
		bs_sample_u64(em, &r, 1, __atomic_load_n(&refusal_count[i], __ATOMIC_RELAXED));
	}
	if (ok < 0)
		return;
	bs_family(em, "binstat_exporter_web_config_last_reload_successful", BS_GAUGE, NULL,
		  "Whether the last read of --web.config.file succeeded (1) or was rejected and "
		  "the one before kept (0).");
	bs_sample_u64(em, NULL, 0, (uint64_t)ok);
}

static void emit_http(struct bs_emitter *em)
{
	size_t n = sizeof(http_codes) / sizeof(http_codes[0]);
	char code[16];
	struct bs_label l = {"code", code};

	bs_family(em, "binstat_exporter_http_responses_total", BS_COUNTER, NULL,
		  "HTTP responses the exporter sent, by status code.");
	for (size_t i = 0; i <= n; i++) {
		if (i < n)
			snprintf(code, sizeof(code), "%u", http_codes[i]);
		else
			memcpy(code, "other", 6);
		bs_sample_u64(em, &l, 1, __atomic_load_n(&http_count[i], __ATOMIC_RELAXED));
	}
	bs_family(em, "binstat_exporter_http_connections_cut_total", BS_COUNTER, NULL,
		  "Connections the exporter closed, by reason: too slow a request head or "
		  "reader, evicted for a new client, idle or open too long.");
	for (size_t i = 0; i < SELFSTATS_CUTS; i++) {
		struct bs_label r = {"reason", cut_reasons[i]};
		bs_sample_u64(em, &r, 1, __atomic_load_n(&cut_count[i], __ATOMIC_RELAXED));
	}
}

static void emit_drops(struct bs_emitter *em)
{
	bs_family(em, "binstat_collector_dropped_total", BS_COUNTER, NULL,
		  "Items of outside input a collector dropped or repaired, by reason.");
	for (size_t i = 0; i < ncollectors; i++) {
		const struct collstats *cs = &collectors[i];
		for (size_t j = 0; j < cs->ndrops; j++) {
			struct bs_label l[2] = {{"collector", cs->name},
						{"reason", cs->drops[j].reason}};
			bs_sample_u64(em, l, 2, cs->drops[j].n);
		}
	}
}

void selfstats_emit(struct bs_emitter *em)
{
	struct bs_label build[] = {
	    {"version", BS_VERSION},
	    {"revision", BS_REVISION},
	    {"compiler", BS_COMPILER},
	    {"deflate", zcodec_name()},
	};

	bs_family(em, "binstat_exporter_build_info", BS_GAUGE, NULL,
		  "A constant 1 labelled with the exporter's version and build (deflate: what "
		  "compresses gzip responses, isa-l or zlib).");
	bs_sample_u64(em, build, 4, 1);
	pthread_mutex_lock(&lock);
	bs_family(em, "binstat_exporter_config_last_reload_successful", BS_GAUGE, NULL,
		  "Whether the last configuration load succeeded (1) or was rejected (0).");
	bs_sample_u64(em, NULL, 0, reload.ok);
	bs_family(em, "binstat_exporter_config_last_reload_success_timestamp_seconds", BS_GAUGE,
		  "seconds", "When the configuration was last loaded successfully.");
	bs_sample_f64(em, NULL, 0, reload.success_unix);
	emit_drops(em);
	pthread_mutex_unlock(&lock);
	emit_http(em);
	emit_web(em);
}
