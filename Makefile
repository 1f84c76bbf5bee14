# binstat_exporter: `make` builds, `make check` runs every test, `make bench`
# prints figures, `make run` serves the default config. Warnings are errors.

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
ISAL      ?= $(shell pkg-config --exists libisal && echo yes)
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
CORE_SRCS  = $(DAEMON_SRCS) $(foreach l,$(EXPORTER_LAYERS),$(wildcard exporter/$(l)/*.c))
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

UNIT_SRCS  = $(filter-out $(if $(HAVE_XEN),,tests/unit/test_xen_%),$(wildcard tests/unit/test_*.c))
UNIT_BINS  = $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
TEST_PLUGINS = $(patsubst tests/plugins/%.c,$(B)/testplugins/%.so,$(wildcard tests/plugins/*.c))

# What collectors build besides their plugin (<name>_EXTRA in module.mk),
# installed beside the plugins' folder.
EXTRAS     = $(foreach c,$(COLLECTORS),$($(c)_EXTRA))
LIBDCI4    = $(B)/lib/libdci4.so
LIBPVSTATS = $(if $(HAVE_XEN),$(B)/lib/libpvstats.so)
XEN_TESTS  = $(if $(HAVE_XEN),$(B)/tests/libfakexen.so $(B)/tests/xen_guest)

.PHONY: all check unit integration content testbins asan zlib-fallback deb rpm bench run install clean format format-check fuzz test checksrc check-packages check-systemd
all: $(B)/binstat_exporter $(PLUGINS) $(EXTRAS) $(LIBDCI4) $(LIBPVSTATS) $(B)/dci4stat $(B)/dci4-netdev

# The core's objects, and everything else compiled with its flags (tests,
# programs, benchmarks); XFLAGS adds a library's or a collector's own. A
# changed Makefile rebuilds everything (flags may have changed; a tree built
# before -MMD gets its dependency files).
$(B)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(XFLAGS) -c $< -o $@
$(foreach c,$(COLLECTORS_ALL),$(call coll_objs,$(c))) $(foreach l,$(LIBRARIES),$($(l)_OBJS)): \
	CFLAGS_ALL = $(CFLAGS_BASE)

# A program on lib/: its objects, then the libraries it names.
DCI4_A = $(call lib_a,dci4 unixsock collkit)
$(B)/dci4stat $(B)/dci4-netdev: $(B)/%: $(B)/programs/%.o $(DCI4_A)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread
$(B)/programs/%.o: XFLAGS = $(call lib_incs,dci4 unixsock collkit)

$(B)/tests/dci4_test_supplier: $(B)/tests/dci4/test_supplier.o $(DCI4_A)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread
$(B)/tests/dci4/%.o: XFLAGS = $(call lib_incs,dci4 unixsock collkit)

# The DCI4 supplier library applications link against (docs/dci4-transport.md).
# Only the API of its installed headers is exported (libdci4.map).
$(LIBDCI4): $(dci4_OBJS) $(call lib_a,unixsock collkit) lib/dci4/libdci4.map
	$(CC) $(CFLAGS_BASE) -shared -Wl,-soname,libdci4.so.0 -o $@ $(dci4_OBJS) \
		-Wl,--version-script=lib/dci4/libdci4.map \
		-Wl,--exclude-libs,ALL $(call lib_a,unixsock collkit) -lpthread

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

$(B)/testplugins/%.so: tests/plugins/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -shared -o $@ $<

# ---- unit tests (cmocka). tests/unit/case_filter.c, linked into each,
# runs only the cases BS_TEST_CASE names (`make test T=suite:case`).
# test_<collector>_*.c link that collector's objects and libraries;
# test_<library>_*.c that library; the rest the core alone.
UNIT_MAIN = $(B)/tests/unit/case_filter.o
unit_for = $(firstword $(foreach c,$(COLLECTORS_ALL) $(LIBRARIES),$(if $(filter test_$(c) test_$(c)_%,$(1)),$(c))))
unit_deps = $(if $(filter $(COLLECTORS_ALL),$(1)),$(call coll_objs,$(1)) $(call lib_a,$($(1)_LIBS)),\
	    $(if $(1),$(call lib_a,$(1) $($(1)_USES))))
unit_incs = $(if $(filter $(COLLECTORS_ALL),$(1)),-Icollectors/$(1) $(call lib_incs,$($(1)_LIBS)),\
	    $(if $(1),$(call lib_incs,$(1) $($(1)_USES))))
unit_link = $(if $(filter $(COLLECTORS_ALL),$(1)),$(call coll_link,$(1)),\
	    $(if $($(1)_PKGS),$(shell pkg-config --libs $($(1)_PKGS))))
define UNIT_RULES
$$(B)/tests/$(1): $$(B)/tests/unit/$(1).o $$(UNIT_MAIN) $$(call unit_deps,$$(call unit_for,$(1))) $$(EXPORTER_A) \
		 $$(CORE_A)
	$$(CC) $$(CFLAGS_ALL) -o $$@ -Wl,--start-group $$^ -Wl,--end-group $$(call unit_link,$$(call unit_for,$(1))) $$(LIBS) -lcmocka
$$(B)/tests/unit/$(1).o: XFLAGS = $$(call unit_incs,$$(call unit_for,$(1)))
endef
$(foreach t,$(notdir $(basename $(wildcard tests/unit/test_*.c))),$(eval $(call UNIT_RULES,$(t))))
# Fails every allocation of a scrape once; serves a real DCI4 supplier.
$(B)/tests/unit/test_failmalloc.o: XFLAGS = $(call lib_incs,dci4 unixsock collkit)
$(B)/tests/test_failmalloc: $(DCI4_A)

# The Xen tests: a stand-in for the hypervisor beneath the real libraries,
# and simulated guests built on the provider library.
$(B)/tests/libfakexen.so: tests/xen/fakexen.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_BASE)) -shared -o $@ $< -ldl

# The Xen PV statistics provider library a guest's drivers and agents link.
$(B)/lib/libpvstats.so: $(pvstats_OBJS)
	$(CC) $(CFLAGS_BASE) -shared -Wl,-soname,libpvstats.so.0 -o $@ $^ \
		$(shell pkg-config --libs $(pvstats_PKGS))

$(B)/tests/xen_guest: $(B)/tests/xen/guest.o $(B)/lib/libpvstats.a
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(shell pkg-config --libs $(pvstats_PKGS))
$(B)/tests/xen/%.o: XFLAGS = $(call lib_incs,pvstats)

$(B)/tests/kvm_fixture: $(B)/tests/kvm/fixture.o
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread

unit: $(UNIT_BINS) $(PLUGINS) $(TEST_PLUGINS)
	@set -e; for t in $(UNIT_BINS); do \
		BS_PLUGINS=$(CURDIR)/$(B)/plugins BS_TEST_PLUGINS=$(CURDIR)/$(B)/testplugins $$t; \
	done

# Everything the suites run, so that it can be built in parallel first
# while the suites themselves run one at a time.
# The benchmarks' programs too, so that a change that breaks them fails
# `make check` rather than a later `make bench`.
BENCH_BINS = $(B)/bench/bench_writer $(B)/bench/bench_kvm_floor $(B)/bench/bench_deflate_floor \
	     $(B)/bench/bench_dci_suppliers $(B)/bench/tdigest_compare
testbins: all $(UNIT_BINS) $(TEST_PLUGINS) $(B)/tests/kvm_fixture $(B)/tests/dci4_test_supplier \
	  $(XEN_TESTS) $(BENCH_BINS)

INTEGRATION = run cli web webauth systemd landing kvm hostile_kvm kvm_perm hostile_http qemu dci4 \
	      dci_collector xen faults processing statistics tdigest
integration: testbins
	@set -e; for s in $(INTEGRATION); do echo "tests/integration/$$s.sh $(B)"; \
		tests/integration/$$s.sh $(B); done

# What is shipped beside the code: the dashboards against live data, the
# rules, the fleet set-up (two hosts into one central server). The
# packages are `make check-packages`'s. Once, not again under the sanitizers: these test files, not code.
content: testbins
	tests/integration/dashboards.sh $(B)
	tests/integration/monitoring.sh $(B)
	tests/integration/fleet.sh $(B)

# Every test again with the daemon, plugins and tests built under
# AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer: a memory
# error aborts the daemon and a leak fails its clean exit, so the suites fail.
# All but tdigest.sh, whose accuracy table runs bench/tdigest_compare, not
# the daemon (test_tdigest runs the digest itself under the sanitizers).
ASAN_MAKE = $(MAKE) B=build-asan OPT="-O1 -g" \
	    SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
asan:
	$(ASAN_MAKE) -j2 testbins
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(ASAN_MAKE) unit integration \
		INTEGRATION="$(filter-out tdigest,$(INTEGRATION))"

# The suites of the sinks' codec again as a build without ISA-L has it
# (zlib), in a tree of their own.
ZLIB_SUITES = $(patsubst %,tests/unit/%.c,test_zcodec test_sink test_scrape)
zlib-fallback:
	$(MAKE) ISAL=no B=build-zlib UNIT_SRCS="$(ZLIB_SUITES)" -j2 unit

# The style guide's bans, checked on the tree (tools/checksrc says which),
# the Markdown files' local links and anchors (tools/mdlinks),
# and the checker itself against planted problems.
checksrc:
	@tools/checksrc
	@tools/checksrc --self-test tests/checksrc/bad.c.txt
	@tools/checksrc --self-test tests/checksrc/layer.c.txt exporter/out/selftest.c
	@tools/mdlinks $$(git ls-files "*.md")

check: format-check checksrc
	$(MAKE) -j2 testbins
	$(MAKE) unit integration content
	$(MAKE) zlib-fallback
	$(MAKE) asan
	$(MAKE) -j2 build-fuzz/libfuzzed.a
	$(MAKE) -j2 fuzz FUZZ_SECONDS=10
	@echo "make check: all suites passed"

# The packages (tests/integration/deb.sh: the .deb and .rpm built, lintian,
# installed and purged, the -dev package used out of the tree), and the
# packaged units under a real systemd as PID 1 (tests/systemd/run.sh): a
# Debian root from mmdebstrap (cached in build-systemd/), booted by
# systemd-nspawn with /dev/kvm, the .deb installed there. Root and Debian's
# mirror needed; .ci/run runs both after `make check`, which stays quick.
check-packages: testbins
	tests/integration/deb.sh $(B)

check-systemd: $(B)/tests/kvm_fixture
	tests/systemd/run.sh $(B)

# Figures, not pass/fail: the writer against its Go peer, then scrapes over HTTP.
bench: all $(TEST_PLUGINS) $(BENCH_BINS) $(B)/tests/kvm_fixture $(XEN_TESTS)
	bench/writer.sh $(B)
	bench/run.sh $(B)
	bench/kvm.sh $(B)
	bench/dci.sh $(B)
	bench/xen.sh $(B)
	bench/processing.sh $(B)

$(B)/bench/bench_dci_suppliers: $(B)/bench/bench_dci_suppliers.o $(DCI4_A)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread
$(B)/bench/bench_dci_suppliers.o: XFLAGS = $(call lib_incs,dci4 unixsock collkit)

$(B)/bench/bench_kvm_floor: $(B)/bench/bench_kvm_floor.o $(call coll_objs,kvm) $(call lib_a,$(kvm_LIBS))
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(call coll_link,kvm)
$(B)/bench/bench_kvm_floor.o: XFLAGS = $(call unit_incs,kvm)

# libdeflate is optional: the gzip floor then shows zlib's alone.
HAVE_LIBDEFLATE := $(shell pkg-config --exists libdeflate && echo 1)
$(B)/bench/bench_deflate_floor: $(B)/bench/bench_deflate_floor.o $(B)/exporter/out/zcodec.o $(B)/exporter/out/blockpool.o
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(LIBS) $(if $(HAVE_LIBDEFLATE),$(shell pkg-config --libs libdeflate))
$(B)/bench/bench_deflate_floor.o: XFLAGS = $(if $(HAVE_LIBDEFLATE),-DHAVE_LIBDEFLATE)

# The t-digest beside Debian's influxdata/tdigest (tests/integration/tdigest.sh).
$(B)/bench/tdigest_compare: $(B)/bench/tdigest_compare.o $(call lib_a,vstats $(vstats_USES))
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lm

$(B)/bench/bench_writer: bench/bench_writer.c $(EXPORTER_A) $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O3 -o $@ $< $(EXPORTER_A) $(CORE_A) $(LIBS)

# Fuzzers of the parsers of outside input (libFuzzer, clang). `make fuzz`
# runs each for FUZZ_SECONDS; `make check` runs them briefly.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	      -Iinclude -Iexporter $(EXPORTER_LAYERS:%=-Iexporter/%) -Icollectors/kvm -Ilib/unixsock -Ilib/dci4 -Ilib/statmap -Ilib/collkit -Ilib/statproc -Ilib/vstats \
	      -Icollectors/dci \
	      -Icollectors/xen -Ilib/pvstats $(shell pkg-config --cflags libxml-2.0)
FUZZERS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SRCS = $(CORE_SRCS) $(wildcard collectors/kvm/kvm_*.c lib/dci4/*.c lib/unixsock/*.c lib/collkit/*.c \
	    lib/statproc/*.c lib/vstats/*.c) \
	    lib/statmap/statmap.c collectors/dci/dci_layout.c collectors/xen/xen_page.c

# The sources are compiled once, instrumented, into one archive each
# fuzzer links (not once per fuzzer: that took minutes of `make check`).
FUZZ_OBJS = $(FUZZ_SRCS:%.c=build-fuzz/obj/%.o)

build-fuzz/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	clang $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(FUZZ_CFLAGS)) -MMD -MP -c $< -o $@

build-fuzz/libfuzzed.a: $(FUZZ_OBJS)
	ar rcs $@ $^

build-fuzz/%: tests/fuzz/%.c build-fuzz/libfuzzed.a
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< build-fuzz/libfuzzed.a $(LIBS) $(shell pkg-config --libs libxml-2.0)

# Each target a job of its own, so that `make -j2 fuzz` runs two at once
# (a fuzzer uses one core, and its time is wall-clock time).
fuzz: $(patsubst build-fuzz/%,fuzz-run-%,$(FUZZERS))
fuzz-run-%: build-fuzz/%
	@set -o pipefail; mkdir -p build-fuzz/corpus/$*; \
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=0 \
		build-fuzz/corpus/$* 2>&1 | tail -1 | sed 's/^/$*: /'

# One suite, or one case of a unit suite: `make test T=test_conf`,
# `make test T=test_conf:yaml_errors` (a cmocka pattern), `make test T=kvm`
# (tests/integration/kvm.sh).
test: all $(TEST_PLUGINS) $(B)/tests/kvm_fixture $(B)/tests/dci4_test_supplier $(XEN_TESTS) \
      $(B)/bench/tdigest_compare
	@test -n "$(T)" || { echo "usage: make test T=suite[:case]" >&2; exit 2; }
	@suite=$(firstword $(subst :, ,$(T))); case=$(word 2,$(subst :, ,$(T))); \
	if [ -f tests/unit/$$suite.c ]; then \
		$(MAKE) --no-print-directory $(B)/tests/$$suite && \
		BS_TEST_CASE="$$case" BS_PLUGINS=$(CURDIR)/$(B)/plugins \
			BS_TEST_PLUGINS=$(CURDIR)/$(B)/testplugins $(B)/tests/$$suite; \
	elif [ -f tests/integration/$$suite.sh ]; then \
		tests/integration/$$suite.sh $(B); \
	else echo "make test: no suite $$suite in tests/unit or tests/integration" >&2; exit 2; fi

run: all
	$(B)/binstat_exporter --config.file=config/binstat_exporter.yml

# install_lib NAME,FILE,DESCRIPTION,HEADERS,PRIVATE_LIBS: a shared library
# with its soname link, the link to build against, its headers and a
# pkg-config file.
define install_lib
install -d $(DESTDIR)$(SOLIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/$(1)
	install -m 0644 $(2) $(DESTDIR)$(SOLIBDIR)/lib$(1).so.0
	ln -sf lib$(1).so.0 $(DESTDIR)$(SOLIBDIR)/lib$(1).so
	install -m 0644 $(addprefix lib/$(1)/,$(4)) $(DESTDIR)$(PREFIX)/include/$(1)/
	printf 'prefix=$(PREFIX)\nlibdir=$(SOLIBDIR)\nincludedir=$${prefix}/include\n\nName: lib$(1)\nDescription: $(3)\nVersion: $(VERSION)\nLibs: -L$${libdir} -l$(1)\nLibs.private: $(5)\nCflags: -I$${includedir}/$(1)\n' \
		>$(DESTDIR)$(SOLIBDIR)/pkgconfig/lib$(1).pc
endef

# binstat-collector.pc: what an out-of-tree collector builds with
# (`pkg-config --cflags binstat-collector`) and where its plugin goes
# (`pkg-config --variable=plugindir binstat-collector`). Architecture-
# independent, as the header is: under share/.
COLLECTOR_ABI := $(shell awk '$$2 == "BS_COLLECTOR_ABI_VERSION" { print $$3 }' include/binstat/collector.h)
COLLECTOR_PC = prefix=$(PREFIX)\nincludedir=$${prefix}/include\nplugindir=$(PLUGINDIR)\nabi_version=$(COLLECTOR_ABI)\n\nName: binstat-collector\nDescription: binstat_exporter collector plugin ABI (collector.h)\nVersion: $(VERSION)\nCflags: -I$${includedir}\n

install: $(B)/install/binstat_exporter $(PLUGINS) $(EXTRAS) $(LIBDCI4) $(LIBPVSTATS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(SYSCONFDIR)/binstat_exporter
	$(if $(EXTRAS),install -m 0644 $(EXTRAS) $(DESTDIR)$(LIBDIR)/binstat_exporter/)
	$(call install_lib,dci4,$(LIBDCI4),DCI4 statistic supplier library,dci4_wire.h dci4_supplier.h,-lpthread)
	$(if $(LIBPVSTATS),$(call install_lib,pvstats,$(LIBPVSTATS),Xen PV statistics provider library,pvstats.h pvstats_wire.h,))
	install -m 0755 $(B)/install/binstat_exporter $(DESTDIR)$(BINDIR)/binstat_exporter
	install -m 0755 $(B)/dci4stat $(B)/dci4-netdev $(DESTDIR)$(BINDIR)/
	install -m 0644 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/
	install -m 0644 include/binstat/collector.h -D $(DESTDIR)$(PREFIX)/include/binstat/collector.h
	install -d $(DESTDIR)$(PREFIX)/share/pkgconfig
	printf '$(COLLECTOR_PC)' >$(DESTDIR)$(PREFIX)/share/pkgconfig/binstat-collector.pc
	test -e $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/binstat_exporter.yml || \
		install -m 0644 config/binstat_exporter.yml $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/
	install -d $(DESTDIR)$(SHAREDIR)/dashboards $(DESTDIR)$(SHAREDIR)/monitoring/tests \
		$(DESTDIR)$(SHAREDIR)/monitoring/fleet $(DESTDIR)$(SHAREDIR)/examples
	install -m 0644 dashboards/*.json dashboards/README.md $(DESTDIR)$(SHAREDIR)/dashboards/
	install -m 0644 monitoring/*.yml monitoring/README.md $(DESTDIR)$(SHAREDIR)/monitoring/
	install -m 0644 monitoring/tests/*.yml $(DESTDIR)$(SHAREDIR)/monitoring/tests/
	install -m 0644 monitoring/fleet/*.yml $(DESTDIR)$(SHAREDIR)/monitoring/fleet/
	install -m 0644 config/examples/*.yml config/web-config.yml packaging/systemd/xen-as-root.conf \
		$(DESTDIR)$(SHAREDIR)/examples/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 man/*.5 $(DESTDIR)$(MANDIR)/man5/

# The Debian packages, built in a copy of the tracked files (as they are in
# the work tree), never in the tree itself; lintian then checks them.
deb:
	rm -rf build-deb && mkdir -p build-deb/src
	git ls-files -z | xargs -0 tar -cf - | tar -xf - -C build-deb/src
	cp -r packaging/debian build-deb/src/debian
	cp packaging/systemd/binstat_exporter.default build-deb/src/debian/binstat-exporter.default
	for u in service socket; do cp packaging/systemd/binstat_exporter.$$u \
		build-deb/src/debian/binstat-exporter.binstat_exporter.$$u; done
	cd build-deb/src && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b
	lintian --fail-on error,warning,info --info \
		build-deb/*.changes

# The RPM packages from packaging/rpm's spec, from a tarball of the tracked
# files; Debian's rpmbuild builds them (its own dependency checks off: the
# build dependencies are Debian's packages here).
rpm:
	rm -rf build-rpm && mkdir -p build-rpm/SOURCES
	git ls-files -z | xargs -0 tar --transform 's,^,binstat_exporter-$(VERSION)/,' \
		-czf build-rpm/SOURCES/binstat_exporter-$(VERSION).tar.gz
	rpmbuild -bb --nodeps --define "_topdir $(CURDIR)/build-rpm" --define "debug_package %{nil}" \
		packaging/rpm/binstat_exporter.spec

FORMAT_SRCS = $(wildcard exporter/*.[ch] exporter/*/*.[ch] include/binstat/*.h collectors/*/*.[ch] collectors/*/*/*.c tests/kvm/*.c tests/xen/*.c tests/fuzz/*.c lib/*/*.[ch] programs/*.c tests/dci4/*.c tests/unit/*.[ch] tests/plugins/*.c bench/*.c)
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format-check: ok"

clean:
	rm -rf build build-asan build-zlib build-fuzz build-deb build-rpm build-systemd

-include $(shell find $(B) build-fuzz/obj -name '*.d' 2>/dev/null)
