/* Compiled twice by the Makefile: the build tree's plugin folder for the
 * binary in build/, the library folder for the installed one. */
#include "version.h"

#ifndef BS_PLUGIN_DIR
#define BS_PLUGIN_DIR "/usr/lib/binstat_exporter/plugins"
#endif

const char *const bs_default_plugin_dir = BS_PLUGIN_DIR;
