/* Build identity; the Makefile passes the real values. */
#ifndef BS_VERSION_H
#define BS_VERSION_H

#ifndef BS_VERSION
#define BS_VERSION "0.1.0"
#endif
#ifndef BS_REVISION
#define BS_REVISION "unknown"
#endif
#define BS_COMPILER __VERSION__

/* Where plugins are found when the config names no plugin_dir (paths.c). */
extern const char *const bs_default_plugin_dir;

#endif
