/* Log lines as journal entries, by journald's native protocol: one
 * datagram of FIELD=VALUE lines, each pair of a line a field of its own. */
#ifndef BS_JOURNAL_H
#define BS_JOURNAL_H

#include <stddef.h>

/* journald's native socket. BINSTAT_TEST_JOURNAL_SOCKET replaces it, for
 * the tests only (a socket they bind themselves); it is read only when
 * stderr already is the journal, so it can only move lines that would
 * have gone to the journal. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"
#define JOURNAL_TEST_SOCKET_ENV "BINSTAT_TEST_JOURNAL_SOCKET"

/* A journal field name has at most this many characters. */
#define JOURNAL_FIELD_MAX 64

/* An unbound datagram socket for journal_send when stderr is the journal
 * (systemd's JOURNAL_STREAM names fd 2's device and inode, as
 * sd_journal_stream_fd(3) says to check), else -1: log to stderr. */
int journal_open(void);

/* The journal field of a log key: upper-cased, each character but A-Z,
 * 0-9 and _ made _; "X_" before a name that then starts with _ or a
 * digit (journald keeps those for itself or refuses them), or is empty,
 * MESSAGE, PRIORITY or SYSLOG_IDENTIFIER (the writer's own); cut at
 * JOURNAL_FIELD_MAX. `out`
 * holds JOURNAL_FIELD_MAX + 1 bytes. */
void journal_field_name(const char *key, char *out);

/* One entry: MESSAGE=msg, PRIORITY=priority (syslog's), SYSLOG_IDENTIFIER,
 * then each of the n pairs kv[2i]=kv[2i+1] as a field. A value holding a
 * newline is sent in the protocol's binary form (name, newline, 64-bit
 * little-endian length, value). Returns 0, or -errno when journald did
 * not take it (gone, full, or the entry too big for one datagram): the
 * caller writes the line to stderr instead. */
int journal_send(int fd, int priority, const char *msg, const char *const *kv, size_t n);

#endif
