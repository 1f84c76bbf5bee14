/* Structured logging to stderr in logfmt or JSON, node_exporter style. */
#ifndef BS_LOG_H
#define BS_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include <binstat/collector.h>

int log_parse_level(const char *s, enum bs_log_level *out);
void log_setup(enum bs_log_level min, bool json);
/* msg, then key/value string pairs ending in NULL. */
void log_msg(enum bs_log_level level, const char *msg, ...) __attribute__((sentinel));
void log_vmsg(enum bs_log_level level, const char *msg, va_list kv);
/* Writes the summaries of lines held back (more than a few of a kind in a
 * second) whose second is over; the daemon calls it every second. */
void log_flush_held(void);

#define log_debug(...) log_msg(BS_LOG_DEBUG, __VA_ARGS__, (char *)NULL)
#define log_info(...) log_msg(BS_LOG_INFO, __VA_ARGS__, (char *)NULL)
#define log_warn(...) log_msg(BS_LOG_WARN, __VA_ARGS__, (char *)NULL)
#define log_error(...) log_msg(BS_LOG_ERROR, __VA_ARGS__, (char *)NULL)

#endif
