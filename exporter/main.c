/* binstat_exporter: flags, configuration, the HTTP server, and the signal
 * loop that reloads on SIGHUP and shuts down on SIGTERM/SIGINT. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <netdb.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "announce.h"
#include "cli.h"
#include "collset.h"
#include "emitter.h"
#include "http.h"
#include "listener.h"
#include "log.h"
#include "memtrim.h"
#include "monoclock.h"
#include "pipeline.h"
#include "selfstats.h"
#include "sink.h"
#include "version.h"
#include "weblive.h"

#define SHUTDOWN_GRACE_S 5

static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;
static struct collset *current;

static struct collset *current_get(void *ctx)
{
	struct collset *s;
	(void)ctx;
	pthread_mutex_lock(&current_lock);
	s = current ? collset_get(current) : NULL;
	pthread_mutex_unlock(&current_lock);
	return s;
}

/* A collector's pairs stay pairs: fields of the line, in every format. */
__attribute__((sentinel)) static void host_log(enum bs_log_level level, const char *collector,
					       const char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	log_vcollector(level, collector, msg, ap);
	va_end(ap);
}

static const struct bs_host host = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .log = host_log,
};

/* What --check-config lends: the collectors read their options only. */
static const struct bs_host check_host = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .log = host_log,
    .flags = BS_HOST_CHECK_ONLY,
};

/* Every enabled collector must start: a plugin missing or not loadable,
 * or an init that fails, refuses the whole file, at start, on reload and
 * with --check-config alike. The reasons, one per collector, go to err. */
static int all_started(struct collset *set, char *err, size_t errlen)
{
	size_t used = 0;

	err[0] = '\0';
	for (size_t i = 0; i < collset_count(set); i++) {
		struct instance_info in;
		collset_instance_info(collset_at(set, i), &in);
		if (!in.error || used >= errlen)
			continue;
		int n = snprintf(err + used, errlen - used, "%scollector %s: %s", used ? "; " : "",
				 in.name, in.error);
		used += n > 0 ? (size_t)n : 0;
	}
	return used ? -1 : 0;
}

/* Loads a configuration into a new collector set; the old one stays on error. */
static struct collset *load(const struct cli *cli, const struct bs_host *h,
			    struct conf_settle *settle, char *err, size_t errlen)
{
	struct config *cfg =
	    config_load_settled(cli->config_file, settle, bs_default_plugin_dir, err, errlen);
	struct collset *set;

	if (!cfg)
		return NULL;
	if (cli_apply_collectors(cli, cfg, err, errlen) < 0)
		goto err_free;
	if (pipeline_build(cfg, h, &set, err, errlen) < 0)
		return NULL;
	if (all_started(set, err, errlen) < 0) {
		collset_put(set);
		return NULL;
	}
	return set;
err_free:
	config_free(cfg);
	return NULL;
}

static void reload(const struct cli *cli, struct conf_settle *settle)
{
	char err[CONF_ERR_MAX];
	struct collset *set = load(cli, &host, settle, err, sizeof(err));

	if (!set) {
		log_error("reload failed, keeping the running configuration", "err", err);
		selfstats_reload(false, err);
		return;
	}
	pipeline_hand_over(set, current); /* current: written by this thread alone */
	pthread_mutex_lock(&current_lock);
	struct collset *old = current;
	current = set;
	pthread_mutex_unlock(&current_lock);
	collset_put(old);
	malloc_trim(0); /* the old generation's memory goes back to the kernel */
	selfstats_reload(true, NULL);
	log_info("configuration reloaded", "file", cli->config_file);
}

static int check_config(const struct cli *cli)
{
	char err[CONF_ERR_MAX];
	struct collset *set;

	/* The web config as a start reads it (certificates, keys, users),
	 * with no socket opened: a unit's ExecStartPre must fail on what
	 * would fail its ExecStart. */
	if (cli->web_config_file) {
		struct weblive *web = weblive_open(cli->web_config_file, err, sizeof(err));
		if (!web) {
			fprintf(stderr, "cannot load the web config: %s\n", err);
			return 1;
		}
		weblive_close(web);
	}
	/* The listen addresses as a start resolves them, without a bind. */
	for (size_t i = 0; !cli->systemd_socket && i < cli->http.nlisten; i++) {
		struct addrinfo *ai;
		if (listener_resolve(cli->http.listen[i], &ai, err, sizeof(err)) < 0) {
			fprintf(stderr, "cannot start: %s\n", err);
			return 1;
		}
		freeaddrinfo(ai);
	}
	if (!(set = load(cli, &check_host, NULL, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	collset_put(set);
	printf("configuration OK\n");
	return 0;
}

/* A collector may hold an fd per vCPU of every VM on the host: take all
 * the fds the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Stopping waits for connection threads; a stuck one must not hold the
 * process past the grace period a service manager gives it. */
static void *shutdown_watchdog(void *arg)
{
	(void)arg;
	sleep(SHUTDOWN_GRACE_S - 1);
	log_warn("shutdown took too long, exiting");
	_exit(0);
	return NULL;
}

/* --web.systemd-socket: the listening sockets systemd passes (LISTEN_FDS). */
static int take_systemd_sockets(struct http_options *http, char *err, size_t errlen)
{
	int n = sd_listen_fds(1);

	if (n <= 0) {
		snprintf(err, errlen, "no socket activation file descriptors found%s",
			 n < 0 ? " (LISTEN_PID is not ours)" : "");
		return -1;
	}
	if (n > HTTP_LISTEN_MAX) {
		snprintf(err, errlen, "more than %d sockets from systemd", HTTP_LISTEN_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
			snprintf(err, errlen,
				 "socket %d from systemd is not a listening stream socket", fd);
			return -1;
		}
		http->inherited[http->ninherited++] = fd;
	}
	return 0;
}

static void notify_status(const char *state)
{
	pthread_mutex_lock(&current_lock);
	size_t n = current ? collset_count(current) : 0;
	pthread_mutex_unlock(&current_lock);
	sd_notifyf(0, "%s\nSTATUS=serving %zu collectors", state, n);
}

/* RELOADING=1 must carry the monotonic time for systemd's Type=notify-reload. */
static void notify_reloading(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000ull +
		       (unsigned long long)ts.tv_nsec / 1000);
}

/* Waits for a signal. Every second it writes the summaries of log lines
 * held back; with a watchdog, it pings it at half its period, after
 * checking that the configuration lock is not stuck. */
static int wait_signal(const sigset_t *sigs, uint64_t watchdog_usec)
{
	uint64_t step_ns =
	    watchdog_usec && watchdog_usec < 2000000 ? watchdog_usec * 500 : 1000000000u;
	struct timespec ts = monoclock_timespec(step_ns);
	uint64_t next_ping = monoclock_ns() + watchdog_usec * 500;
	int sig;

	while ((sig = sigtimedwait(sigs, NULL, &ts)) < 0) {
		log_flush_held();
		if (watchdog_usec && monoclock_ns() >= next_ping) {
			collset_put(current_get(NULL));
			sd_notify(0, "WATCHDOG=1");
			next_ping = monoclock_ns() + watchdog_usec * 500;
		}
	}
	return sig;
}

static int serve(struct cli *cli)
{
	char err[CONF_ERR_MAX];
	struct http_server *srv;
	uint64_t watchdog_usec = 0;
	sigset_t sigs;
	int sig;

	if (cli->systemd_socket && take_systemd_sockets(&cli->http, err, sizeof(err)) < 0) {
		log_error("cannot start", "err", err);
		return 1;
	}
	if (!(cli->http.web = weblive_open(cli->web_config_file, err, sizeof(err)))) {
		log_error("cannot load the web config", "err", err);
		return 1;
	}
	weblive_set_max_requests(cli->http.web, cli->http.max_requests);
	if (!(current = load(cli, &host, NULL, err, sizeof(err)))) {
		log_error("cannot load configuration", "err", err);
		goto err_close_web;
	}
	selfstats_reload(true, NULL);
	cli->http.current = current_get;
	cli->http.config_file = cli->config_file;
	cli->http.web_config_file = cli->web_config_file;
	if (http_start(&cli->http, &srv, err, sizeof(err)) < 0) {
		log_error("cannot start", "err", err);
		collset_put(current);
		goto err_close_web;
	}
	log_info("binstat_exporter started", "version", BS_VERSION, "config", cli->config_file);
	announce_start(cli, current);
	if (sd_watchdog_enabled(0, &watchdog_usec) <= 0)
		watchdog_usec = 0;
	notify_status("READY=1");
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	while ((sig = wait_signal(&sigs, watchdog_usec)) == SIGHUP) {
		/* Files saved in place are taken once they have settled:
		 * one written just before the signal is waited for, both
		 * files within the one bound. */
		struct conf_settle settle;
		conf_settle_init(&settle, CONF_SETTLE_NS + CONF_SETTLE_SLACK_NS);
		notify_reloading();
		reload(cli, &settle);
		if (cli->web_config_file)
			weblive_reload(cli->http.web, &settle);
		notify_status("READY=1");
	}
	sd_notify(0, "STOPPING=1");
	log_info("shutting down", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM");
	pthread_t wd;
	pthread_create(&wd, NULL, shutdown_watchdog, NULL);
	http_stop(srv);
	collset_put(current);
	weblive_close(cli->http.web);
	sink_pool_drain();
	emitter_pool_drain();
	log_info("stopped");
	return 0;
err_close_web:
	weblive_close(cli->http.web);
	return 1;
}

int main(int argc, char **argv)
{
	struct cli cli;
	char err[CONF_ERR_MAX];
	sigset_t sigs;

	if (cli_parse(argc, argv, &cli, err, sizeof(err)) < 0) {
		fprintf(stderr, "binstat_exporter: %s\n", err);
		return 2;
	}
	if (cli.help) {
		cli_usage(argv[0]);
		announce_help_collectors(&cli);
		return 0;
	}
	if (cli.version) {
		printf("binstat_exporter %s (revision %s, %s)\n", BS_VERSION, BS_REVISION,
		       BS_COMPILER);
		return 0;
	}
	/* A flag naming no collector is a bad flag, as node_exporter's. */
	if (announce_check_collector_flags(&cli, err, sizeof(err)) < 0) {
		fprintf(stderr, "binstat_exporter: %s\n", err);
		return 2;
	}
	log_setup(cli.log_level, cli.log_json);
	if (cli.check_config)
		return check_config(&cli);
	/* Block before any thread exists so every thread inherits the mask and
	 * only sigwait sees these. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	memtrim_setup();
	return serve(&cli);
}
