# The example collector's build settings: the model for a new collector's
# module.mk, which holds all of them. Its sources are every
# collectors/<name>/*.c, built into <name>.so.
#   <name>_LIBS    libraries of lib/ it links; their headers are the only
#                  ones besides collector.h and its own it may include
#   <name>_PKGS    pkg-config packages it needs: when one is missing the
#                  plugin is skipped and `make` says so
#   <name>_LDLIBS  other linker flags
#   <name>_EXTRA   other files it builds (with their rules here), installed
#                  beside the plugins
example_LIBS :=
