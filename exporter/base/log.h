/* Structured logging to stderr in logfmt or JSON, node_exporter style, or
 * to the journal, each pair a field, when stderr is the journal. */
#ifndef BS_LOG_H
#define BS_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include <binstat/collector.h>

int log_parse_level(const char *s, enum bs_log_level *out);
/* The levels log_parse_level takes, for an error message. */
const char *log_level_names(void);
/* Sets the level and format, and sends lines to the journal from now on
 * when stderr is the journal (JOURNAL_STREAM matches fd 2). */
void log_setup(enum bs_log_level min, bool json);
/* Whether lines go to the journal as entries of their own. */
bool log_to_journal(void);
/* msg, then key/value string pairs ending in NULL: each pair a field of
 * the line (logfmt, JSON, or the journal's KEY=value). */
void log_msg(enum bs_log_level level, const char *msg, ...) __attribute__((sentinel));
void log_vmsg(enum bs_log_level level, const char *msg, va_list kv);
/* A collector's line: its name is the field `collector`, then its pairs. */
void log_vcollector(enum bs_log_level level, const char *collector, const char *msg, va_list kv);
/* Writes the summaries of lines held back (more than a few of a kind in a
 * second) whose second is over; the daemon calls it every second. */
void log_flush_held(void);

#define log_debug(...) log_msg(BS_LOG_DEBUG, __VA_ARGS__, (char *)NULL)
#define log_info(...) log_msg(BS_LOG_INFO, __VA_ARGS__, (char *)NULL)
#define log_warn(...) log_msg(BS_LOG_WARN, __VA_ARGS__, (char *)NULL)
#define log_error(...) log_msg(BS_LOG_ERROR, __VA_ARGS__, (char *)NULL)

#endif
