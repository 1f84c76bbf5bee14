# binstat_exporter: `make` builds, `make check` runs every test, `make bench`
# prints figures, `make run` serves the default config. Warnings are errors.
# This file builds; mk/tests.mk holds the tests, mk/bench.mk the benchmarks,
# mk/fuzz.mk the fuzzers, mk/packages.mk `make install` and the packages.

# bash: make fuzz needs pipefail.
SHELL     := /bin/bash
.DEFAULT_GOAL := all
VERSION   := 0.1.0
REVISION  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc
PLUGINDIR ?= $(LIBDIR)/binstat_exporter/plugins
SHAREDIR  ?= $(PREFIX)/share/binstat_exporter
MANDIR    ?= $(PREFIX)/share/man
SOLIBDIR  ?= $(LIBDIR)
DESTDIR   ?=

CC        ?= gcc
OPT       ?= -O2 -g
B         ?= build
SANFLAGS  ?=
# Every object: warnings are errors, and -MMD -MP writes its header
# dependencies next to it (included at the end).
# CPPFLAGS, CFLAGS and LDFLAGS from outside (dpkg-buildflags: fortify,
# stack protector, relro, bindnow) are honoured; gcc ignores the linker's
# flags when it only compiles.
CFLAGS_BASE = -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	      -Wno-missing-field-initializers $(OPT) $(SANFLAGS) -fPIC -MMD -MP \
	      -D_GNU_SOURCE -Iinclude $(CPPFLAGS) $(CFLAGS) $(LDFLAGS)
# The core (and tests of it) see the exporter's own headers and the lib/
# libraries it is built on; plugins do not.
CORE_LIBS  = statproc vstats collkit
# Gzip and spilled text are deflated by Intel ISA-L where pkg-config finds
# libisal (exporter/out/zcodec.c), by zlib otherwise or with ISAL=no.
ISAL      ?= $(call have_pkgs,libisal)
CORE_PKGS  = libmicrohttpd yaml-0.1 zlib gnutls libsystemd libxcrypt $(if $(filter yes,$(ISAL)),libisal)
CFLAGS_CORE = $(CFLAGS_BASE) $(foreach l,$(CORE_LIBS),-Ilib/$(l)) \
	     -DBS_VERSION='"$(VERSION)"' -DBS_REVISION='"$(REVISION)"' \
	     $(if $(filter yes,$(ISAL)),-DHAVE_ISAL) $(shell pkg-config --cflags $(CORE_PKGS))
LIBS       = $(shell pkg-config --libs $(CORE_PKGS)) -lpthread -ldl -lm
CORE_A     = $(foreach l,$(CORE_LIBS),$(B)/lib/lib$(l).a)

# ---- exporter/: the daemon, one archive per folder (layers.mk), each
# compiled seeing only the folders it may use. The daemon's own files and
# everything else built with CFLAGS_ALL (tests, benchmarks) see them all.
include exporter/layers.mk
CFLAGS_ALL = $(CFLAGS_CORE) -Iexporter $(EXPORTER_LAYERS:%=-Iexporter/%)
DAEMON_SRCS = $(filter-out exporter/main.c exporter/paths.c,$(wildcard exporter/*.c))
EXPORTER_SRCS = $(DAEMON_SRCS) $(foreach l,$(EXPORTER_LAYERS),$(wildcard exporter/$(l)/*.c))
# In link order: a folder's archive before those of the folders it uses.
EXPORTER_A = $(B)/exporter/libdaemon.a $(EXPORTER_LAYERS:%=$(B)/exporter/lib%.a)
define LAYER_RULES
$$(patsubst %.c,$$(B)/%.o,$$(wildcard exporter/$(1)/*.c)): \
	CFLAGS_ALL = $$(CFLAGS_CORE) -Iexporter/$(1) $$($(1)_MAY:%=-Iexporter/%)
$$(B)/exporter/lib$(1).a: $$(patsubst %.c,$$(B)/%.o,$$(wildcard exporter/$(1)/*.c))
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach l,$(EXPORTER_LAYERS),$(eval $(call LAYER_RULES,$(l))))
$(B)/exporter/libdaemon.a: $(DAEMON_SRCS:%.c=$(B)/%.o)
	@rm -f $@
	ar rcs $@ $^

# ---- lib/: code shared by collectors, programs and libraries, each built
# once into $(B)/lib/lib<name>.a. <name>_USES: the libraries whose headers
# and objects it needs itself.
LIBRARIES   = $(notdir $(wildcard lib/*))
dci4_USES   = unixsock collkit
vstats_USES = collkit
statproc_USES = collkit
pvstats_PKGS = xenstore xengnttab xenevtchn xencall
lib_a       = $(foreach l,$(1),$(B)/lib/lib$(l).a)
lib_incs    = $(foreach l,$(1),-Ilib/$(l))
define LIBRARY_RULES
$(1)_OBJS = $$(patsubst %.c,$$(B)/%.o,$$(wildcard lib/$(1)/*.c))
$$($(1)_OBJS): XFLAGS = $$(call lib_incs,$(1) $$($(1)_USES)) \
	$$(if $$($(1)_PKGS),$$(shell pkg-config --cflags $$($(1)_PKGS)))
$$(B)/lib/lib$(1).a: $$($(1)_OBJS)
	@rm -f $$@
	ar rcs $$@ $$^
endef
$(foreach l,$(LIBRARIES),$(eval $(call LIBRARY_RULES,$(l))))

# ---- collectors/: each folder is one plugin, described by its module.mk.
# Built without -Iexporter, so a collector sees only collector.h and its
# libraries; only its binstat_collector_ symbol is exported (the static
# libraries' symbols stay hidden too).
COLLECTORS_ALL = $(notdir $(wildcard collectors/*))
include $(wildcard collectors/*/module.mk)
have_pkgs = $(if $(1),$(shell pkg-config --exists $(1) && echo yes),yes)
COLLECTORS = $(foreach c,$(COLLECTORS_ALL),$(if $(call have_pkgs,$($(c)_PKGS)),$(c)))
$(foreach c,$(filter-out $(COLLECTORS),$(COLLECTORS_ALL)),\
	$(info make: not building the $(c) collector: pkg-config finds no $($(c)_PKGS) (make $(B)/plugins/$(c).so to insist)))
HAVE_XEN   = $(filter xen,$(COLLECTORS))
PLUGINS    = $(COLLECTORS:%=$(B)/plugins/%.so)
coll_objs  = $(patsubst %.c,$(B)/%.o,$(wildcard collectors/$(1)/*.c))
coll_link  = $(call lib_a,$($(1)_LIBS)) $(if $($(1)_PKGS),$(shell pkg-config --libs $($(1)_PKGS))) \
	     $($(1)_LDLIBS) -lm
define COLLECTOR_RULES
$$(call coll_objs,$(1)): XFLAGS = -fvisibility=hidden $$(call lib_incs,$$($(1)_LIBS)) \
	$$(if $$($(1)_PKGS),$$(shell pkg-config --cflags $$($(1)_PKGS)))
$$(B)/plugins/$(1).so: $$(call coll_objs,$(1)) $$(call lib_a,$$($(1)_LIBS))
	@mkdir -p $$(dir $$@)
	$$(if $$(call have_pkgs,$$($(1)_PKGS)),,$$(error the $(1) collector needs pkg-config packages $$($(1)_PKGS)))
	$$(CC) $$(CFLAGS_BASE) -shared -o $$@ $$(call coll_objs,$(1)) -Wl,--exclude-libs,ALL \
		$$(call coll_link,$(1))
endef
$(foreach c,$(COLLECTORS_ALL),$(eval $(call COLLECTOR_RULES,$(c))))

# What collectors build besides their plugin (<name>_EXTRA in module.mk),
# installed beside the plugins' folder.
EXTRAS     = $(foreach c,$(COLLECTORS),$($(c)_EXTRA))
LIBDCI4    = $(B)/lib/libdci4.so
LIBPVSTATS = $(if $(HAVE_XEN),$(B)/lib/libpvstats.so)

.PHONY: all run clean format format-check
all: $(B)/binstat_exporter $(PLUGINS) $(EXTRAS) $(LIBDCI4) $(LIBPVSTATS) $(B)/dci4stat $(B)/dci4-netdev

# The core's objects, and everything else compiled with its flags (tests,
# programs, benchmarks); XFLAGS adds a library's or a collector's own. A
# changed Makefile or mk/*.mk rebuilds everything (flags may have changed;
# a tree built before -MMD gets its dependency files).
MAKEFILES_OWN = Makefile $(wildcard mk/*.mk)
$(B)/%.o: %.c $(MAKEFILES_OWN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(XFLAGS) -c $< -o $@
$(foreach c,$(COLLECTORS_ALL),$(call coll_objs,$(c))) $(foreach l,$(LIBRARIES),$($(l)_OBJS)): \
	CFLAGS_ALL = $(CFLAGS_BASE)

# A program on lib/: its objects, then the libraries it names. DCI4_A and
# DCI4_INCS: what a DCI4 supplier or client links and includes.
DCI4_A    = $(call lib_a,dci4 $(dci4_USES))
DCI4_INCS = $(call lib_incs,dci4 $(dci4_USES))
$(B)/dci4stat $(B)/dci4-netdev: $(B)/%: $(B)/programs/%.o $(DCI4_A)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread
$(B)/programs/%.o: XFLAGS = $(DCI4_INCS)

# The DCI4 supplier library applications link against (docs/dci4-transport.md).
# Only the API of its installed headers is exported (libdci4.map).
$(LIBDCI4): $(dci4_OBJS) $(call lib_a,$(dci4_USES)) lib/dci4/libdci4.map
	$(CC) $(CFLAGS_BASE) -shared -Wl,-soname,libdci4.so.0 -o $@ $(dci4_OBJS) \
		-Wl,--version-script=lib/dci4/libdci4.map \
		-Wl,--exclude-libs,ALL $(call lib_a,$(dci4_USES)) -lpthread

$(B)/exporter/paths-build.o: exporter/paths.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBS_PLUGIN_DIR='"$(CURDIR)/$(B)/plugins"' -c $< -o $@

$(B)/exporter/paths-install.o: exporter/paths.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBS_PLUGIN_DIR='"$(PLUGINDIR)"' -c $< -o $@

$(B)/binstat_exporter: $(B)/exporter/main.o $(B)/exporter/paths-build.o $(EXPORTER_A) $(CORE_A)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LIBS)

$(B)/install/binstat_exporter: $(B)/exporter/main.o $(B)/exporter/paths-install.o $(EXPORTER_A) \
			       $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LIBS)

# The Xen PV statistics provider library a guest's drivers and agents link.
$(B)/lib/libpvstats.so: $(pvstats_OBJS)
	$(CC) $(CFLAGS_BASE) -shared -Wl,-soname,libpvstats.so.0 -o $@ $^ \
		$(shell pkg-config --libs $(pvstats_PKGS))

run: all
	$(B)/binstat_exporter --config.file=config/binstat_exporter.yml

include mk/tests.mk mk/bench.mk mk/fuzz.mk mk/packages.mk mk/image.mk

FORMAT_SRCS = $(wildcard exporter/*.[ch] exporter/*/*.[ch] include/binstat/*.h collectors/*/*.[ch] collectors/*/*/*.c tests/fixtures/*/*.c tests/fuzz/*.c lib/*/*.[ch] programs/*.c tests/unit/*.[ch] bench/*.c)
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format-check: ok"

clean:
	rm -rf build build-asan build-zlib build-fuzz build-deb build-rpm build-systemd

-include $(shell find $(B) build-fuzz/obj -name '*.d' 2>/dev/null)
