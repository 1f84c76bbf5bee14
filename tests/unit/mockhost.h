/* The host a collector unit test plays (as collectd's plugin_mock): the
 * collector's own bs_collector, linked in, gets its options from YAML text
 * through the real configuration tree, logs into a buffer, and collects
 * into a capture. So init, collect and shutdown of a real plugin, error
 * paths included, run without the daemon, /dev/kvm or xenstored. */
#ifndef BS_TEST_MOCKHOST_H
#define BS_TEST_MOCKHOST_H

#include <dirent.h>
#include <ftw.h>

#include "conftree.h"
#include "helpers.h"

static char mock_log[8192];
static size_t mock_log_len;

__attribute__((sentinel)) static void mock_host_log(enum bs_log_level level, const char *collector,
						    const char *msg, ...)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	va_list ap;
	const char *k;

	mock_log_len += (size_t)snprintf(mock_log + mock_log_len, sizeof(mock_log) - mock_log_len,
					 "%s %s %s", names[level], collector, msg);
	va_start(ap, msg);
	while ((k = va_arg(ap, const char *)) && mock_log_len < sizeof(mock_log)) {
		const char *v = va_arg(ap, const char *);
		mock_log_len += (size_t)snprintf(mock_log + mock_log_len,
						 sizeof(mock_log) - mock_log_len, " %s=%s", k, v);
	}
	va_end(ap);
	if (mock_log_len < sizeof(mock_log) - 1)
		mock_log[mock_log_len++] = '\n';
	mock_log[mock_log_len < sizeof(mock_log) ? mock_log_len : sizeof(mock_log) - 1] = '\0';
}

struct mock {
	const struct bs_collector *c;
	struct bs_host host;
	struct conf_doc *doc;
	void *state;
	int init_rc;
};

/* Runs c->init on the options `yaml` (the collector's own map, as under
 * its name in the file; "" for none), as the host would: unknown keys are
 * an error after a successful init. Returns init's result; the message of
 * a configuration error is in m->doc->err. */
static inline int mock_init(struct mock *m, const struct bs_collector *c, const char *yaml,
			    uint32_t flags)
{
	char err[CONF_ERR_MAX];

	memset(m, 0, sizeof(*m));
	mock_log_len = 0;
	mock_log[0] = '\0';
	m->c = c;
	m->host = (struct bs_host){BS_COLLECTOR_ABI_VERSION, mock_host_log, flags};
	m->doc = conf_load("t.yml", *yaml ? yaml : "{}", err, sizeof(err));
	if (!m->doc)
		fail_msg("YAML: %s", err);
	m->init_rc = c->init(&m->host, &m->doc->root->pub, &m->state);
	if (m->init_rc == 0 && conf_check_unused(m->doc->root) < 0) {
		c->shutdown(m->state);
		m->init_rc = -EINVAL;
	}
	return m->init_rc;
}

/* One collect into a text capture; returns collect's result and the text. */
static inline int mock_collect(struct mock *m, struct capture *cap)
{
	capture_begin(cap, EXPO_TEXT, 64 << 20);
	int rc = m->c->collect(m->state, &cap->em.pub);
	capture_end(cap);
	return rc;
}

static inline void mock_shutdown(struct mock *m)
{
	if (m->init_rc == 0)
		m->c->shutdown(m->state);
	conf_free(m->doc);
	m->doc = NULL;
}

/* The configuration error init recorded ("t.yml:2:7: ..."), or "". */
static inline const char *mock_conf_error(const struct mock *m)
{
	return m->doc && m->doc->has_err ? m->doc->err : "";
}

/* A configuration init must refuse, and a part of its message: the
 * option's name, with the position where it is worth checking. */
struct mock_bad_conf {
	const char *yaml;
	const char *want;
};

/* Runs init on each case: each must fail as a configuration error
 * (-EINVAL, want in the message), which is the host's to report, so
 * nothing is logged. */
static inline void mock_expect_conf_errors(const struct bs_collector *c, uint32_t flags,
					   const struct mock_bad_conf *cases, size_t n)
{
	struct mock m;

	for (size_t i = 0; i < n; i++) {
		int rc = mock_init(&m, c, cases[i].yaml, flags);
		if (rc != -EINVAL || !strstr(mock_conf_error(&m), cases[i].want))
			fail_msg("'%s': init gave %d, error '%s', not '%s'", cases[i].yaml, rc,
				 mock_conf_error(&m), cases[i].want);
		if (mock_log_len)
			fail_msg("'%s': logged '%s'", cases[i].yaml, mock_log);
		mock_shutdown(&m);
	}
}

/* The fds this process has open: what init opened, shutdown must close. */
static inline int mock_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static inline int mock_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes a test's temporary tree: its files, sockets and folders. */
static inline void mock_rmtree(const char *dir)
{
	assert_int_equal(nftw(dir, mock_remove, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* What describe says of the collector now, against a printf format. */
__attribute__((format(printf, 2, 3))) static inline void mock_expect_describe(const struct mock *m,
									      const char *fmt, ...)
{
	char got[256], want[256];
	va_list ap;

	m->c->describe(m->state, got, sizeof(got));
	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	assert_string_equal(got, want);
}

/* Fails showing `what` when `text` lacks `want` (or, with absent, has it). */
static inline void mock_expect_in(const char *what, const char *text, const char *want, bool absent)
{
	if (!strstr(text, want) != absent)
		fail_msg("%s %s '%s':\n%s", what, absent ? "has" : "lacks", want, text);
}

/* The capture counted no drop at all. */
static inline void mock_expect_no_drops(const struct capture *cap)
{
	for (size_t i = 0; i < cap->em.ndrops; i++)
		fail_msg("dropped %llu for %s", (unsigned long long)cap->em.drops[i].n,
			 cap->em.drops[i].reason);
}

#endif
