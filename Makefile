# binstat_exporter: `make` builds, `make check` runs every test, `make bench`
# prints figures, `make run` serves the default config. Warnings are errors.

# bash: make fuzz needs pipefail.
SHELL     := /bin/bash
VERSION   := 0.1.0
REVISION  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc
PLUGINDIR ?= $(LIBDIR)/binstat_exporter/plugins
DESTDIR   ?=

CC        ?= gcc
OPT       ?= -O2 -g
B         ?= build
SANFLAGS  ?=
CFLAGS_ALL = -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	     -Wno-missing-field-initializers $(OPT) $(SANFLAGS) -fPIC \
	     -D_GNU_SOURCE -Iinclude -Iexporter \
	     -DBS_VERSION='"$(VERSION)"' -DBS_REVISION='"$(REVISION)"' \
	     $(shell pkg-config --cflags libmicrohttpd yaml-0.1 zlib) $(CFLAGS)
LIBS       = $(shell pkg-config --libs libmicrohttpd yaml-0.1 zlib) -lpthread -ldl -lm

CORE_SRCS  = $(filter-out exporter/main.c exporter/paths.c,$(wildcard exporter/*.c))
CORE_OBJS  = $(CORE_SRCS:%.c=$(B)/%.o)
COLLECTORS = $(notdir $(wildcard collectors/*))
PLUGINS    = $(COLLECTORS:%=$(B)/plugins/%.so)
UNIT_SRCS  = $(wildcard tests/unit/test_*.c)
UNIT_BINS  = $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
TEST_PLUGINS = $(patsubst tests/plugins/%.c,$(B)/testplugins/%.so,$(wildcard tests/plugins/*.c))

SHIM       = $(B)/lib/libbinstat_kvm_shim.so
LIBDCI4    = $(B)/lib/libdci4.so

.PHONY: all check unit integration asan bench run install clean format format-check fuzz
LIBPVSTATS = $(B)/lib/libpvstats.so
all: $(B)/binstat_exporter $(PLUGINS) $(SHIM) $(LIBDCI4) $(LIBPVSTATS) $(B)/dci4stat $(B)/dci4-netdev

# The DCI4 library's sources: everything DCI4 programs link.
DCI4_SRCS = $(wildcard lib/dci4/*.c) lib/unixsock/unixsock.c
DCI4_DEPS = $(wildcard lib/dci4/*.[ch] lib/unixsock/*.[ch])
DCI4_INCS = -Ilib/dci4 -Ilib/unixsock

# dci4stat, the generic DCI4 display program, and the tests' supplier.
$(B)/dci4stat: programs/dci4stat.c $(DCI4_DEPS)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) -lpthread

$(B)/dci4-netdev: programs/dci4-netdev.c $(DCI4_DEPS)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) -lpthread

$(B)/tests/dci4_test_supplier: tests/dci4/test_supplier.c $(DCI4_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) -lpthread

# The DCI4 supplier library applications link against (docs/dci4-transport.md).
$(LIBDCI4): $(DCI4_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -shared -Wl,-soname,libdci4.so.0 -o $@ $(DCI4_SRCS) -lpthread

# The KVM preload shim a VMM loads (LD_PRELOAD): see collectors/kvm/README.md.
# Preloaded into VMMs that have no sanitizer runtime: never built with one.
$(SHIM): collectors/kvm/shim/binstat_kvm_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_ALL)) -shared -o $@ $< -ldl -lpthread

$(B)/%.o: %.c $(wildcard include/binstat/*.h exporter/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/libcore.a: $(CORE_OBJS)
	ar rcs $@ $^

$(B)/exporter/paths-build.o: exporter/paths.c exporter/version.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBS_PLUGIN_DIR='"$(CURDIR)/$(B)/plugins"' -c $< -o $@

$(B)/exporter/paths-install.o: exporter/paths.c exporter/version.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DBS_PLUGIN_DIR='"$(PLUGINDIR)"' -c $< -o $@

$(B)/binstat_exporter: $(B)/exporter/main.o $(B)/exporter/paths-build.o $(B)/libcore.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LIBS)

$(B)/install/binstat_exporter: $(B)/exporter/main.o $(B)/exporter/paths-install.o $(B)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LIBS)

# Each collector folder is one plugin; only its binstat_collector_ symbol is
# exported. A collector built on shared code in lib/ names it here.
DCI_LIBS  = lib/dci4/dci4_wire.c lib/dci4/dci4_format.c lib/statmap/statmap.c
LIBS_dci  = $(DCI_LIBS)
INCS_dci  = -Ilib/dci4 -Ilib/statmap
LIBS_kvm  = lib/unixsock/unixsock.c
INCS_kvm  = -Ilib/unixsock
LIBS_xen  = lib/statmap/statmap.c
INCS_xen  = -Ilib/statmap
LDLIBS_xen = -lxenstore -lxengnttab -lxenevtchn
.SECONDEXPANSION:
$(B)/plugins/%.so: $$(wildcard collectors/%/*.c) $$(LIBS_$$*) $(wildcard include/binstat/*.h lib/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INCS_$*) -fvisibility=hidden -shared -o $@ $(filter %.c,$^) $(LDLIBS_$*) -lm

$(B)/testplugins/%.so: tests/plugins/%.c include/binstat/collector.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $<

$(B)/tests/%: tests/unit/%.c $(B)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(B)/libcore.a $(LIBS) -lcmocka

$(B)/tests/test_dci4_%: tests/unit/test_dci4_%.c $(B)/libcore.a $(DCI4_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) $(B)/libcore.a $(LIBS) -lcmocka

# Fails every allocation of a scrape once; serves a real DCI4 supplier.
$(B)/tests/test_failmalloc: tests/unit/test_failmalloc.c $(B)/libcore.a $(DCI4_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) $(B)/libcore.a $(LIBS) -lcmocka

$(B)/tests/test_statmap: tests/unit/test_statmap.c $(B)/libcore.a $(wildcard lib/statmap/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ilib/statmap -o $@ $< lib/statmap/statmap.c $(B)/libcore.a $(LIBS) -lcmocka

# A collector's unit tests (test_<collector>_*.c) link its sources directly.
$(B)/tests/test_kvm_%: tests/unit/test_kvm_%.c $(B)/libcore.a $(wildcard collectors/kvm/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Icollectors/kvm $(INCS_kvm) -o $@ $< $(wildcard collectors/kvm/kvm_*.c) \
		$(LIBS_kvm) $(B)/libcore.a $(LIBS) -lcmocka

$(B)/tests/test_dci_%: tests/unit/test_dci_%.c $(B)/libcore.a $(wildcard collectors/dci/*.[ch] lib/*/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INCS_dci) -Icollectors/dci -o $@ $< $(wildcard collectors/dci/dci_*.c) \
		$(DCI_LIBS) $(B)/libcore.a $(LIBS) -lcmocka

# The Xen tests: a stand-in for the hypervisor beneath the real libraries,
# and simulated guests built on the provider library.
$(B)/tests/libfakexen.so: tests/xen/fakexen.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_ALL)) -shared -o $@ $< -ldl

# The Xen PV statistics provider library a guest's drivers and agents link.
$(LIBPVSTATS): $(wildcard lib/pvstats/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libpvstats.so.0 -o $@ lib/pvstats/pvstats.c \
		-lxenstore -lxengnttab -lxenevtchn

$(B)/tests/xen_guest: tests/xen/guest.c $(wildcard lib/pvstats/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ilib/pvstats -o $@ $< lib/pvstats/pvstats.c \
		-lxenstore -lxengnttab -lxenevtchn

$(B)/tests/test_xen_%: tests/unit/test_xen_%.c $(B)/libcore.a $(wildcard collectors/xen/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Icollectors/xen -o $@ $< collectors/xen/xen_page.c \
		$(B)/libcore.a $(LIBS) -lcmocka

$(B)/tests/kvm_fixture: tests/kvm/fixture.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< -lpthread

unit: $(UNIT_BINS) $(PLUGINS) $(TEST_PLUGINS)
	@set -e; for t in $(UNIT_BINS); do \
		BS_PLUGINS=$(CURDIR)/$(B)/plugins BS_TEST_PLUGINS=$(CURDIR)/$(B)/testplugins $$t; \
	done

integration: all $(TEST_PLUGINS) $(B)/tests/kvm_fixture $(B)/tests/dci4_test_supplier $(B)/tests/libfakexen.so \
	     $(B)/tests/xen_guest
	tests/integration/run.sh $(B)
	tests/integration/kvm.sh $(B)
	tests/integration/hostile_kvm.sh $(B)
	tests/integration/hostile_http.sh $(B)
	tests/integration/qemu.sh $(B)
	tests/integration/dci4.sh $(B)
	tests/integration/dci_collector.sh $(B)
	tests/integration/xen.sh $(B)
	tests/integration/faults.sh $(B)

# Every test again with the daemon, plugins and tests built under
# AddressSanitizer (leaks included) and UndefinedBehaviorSanitizer: a memory
# error aborts the daemon and a leak fails its clean exit, so the suites fail.
asan:
	WRK_SECONDS=20 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(MAKE) B=build-asan OPT="-O1 -g" \
		SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		unit integration

check: format-check unit integration asan
	$(MAKE) fuzz FUZZ_SECONDS=10
	@echo "make check: all suites passed"

# Figures, not pass/fail: the writer on one core, then scrapes over HTTP and the Go peer.
bench: all $(B)/bench/bench_writer $(B)/bench/bench_kvm_floor $(B)/tests/kvm_fixture \
       $(B)/bench/bench_dci_suppliers $(B)/tests/libfakexen.so $(B)/tests/xen_guest
	taskset -c 0 $(B)/bench/bench_writer
	bench/run.sh $(B)
	bench/kvm.sh $(B)
	bench/dci.sh $(B)
	bench/xen.sh $(B)

$(B)/bench/bench_dci_suppliers: bench/bench_dci_suppliers.c $(DCI4_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DCI4_INCS) -o $@ $< $(DCI4_SRCS) -lpthread

$(B)/bench/bench_kvm_floor: bench/bench_kvm_floor.c $(wildcard collectors/kvm/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Icollectors/kvm $(INCS_kvm) -o $@ $< $(wildcard collectors/kvm/kvm_*.c) \
		$(LIBS_kvm) -lm

$(B)/bench/bench_writer: bench/bench_writer.c $(B)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O3 -o $@ $< $(B)/libcore.a $(LIBS)

# Fuzzers of the parsers of outside input (libFuzzer, clang). `make fuzz`
# runs each for FUZZ_SECONDS; `make check` runs them briefly.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	      -Iinclude -Iexporter -Icollectors/kvm -Ilib/unixsock -Ilib/dci4 -Ilib/statmap -Icollectors/dci \
	      -Icollectors/xen
FUZZERS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SRCS = $(CORE_SRCS) $(wildcard collectors/kvm/kvm_*.c) $(DCI4_SRCS) \
	    lib/statmap/statmap.c collectors/dci/dci_layout.c collectors/xen/xen_page.c

build-fuzz/%: tests/fuzz/%.c $(FUZZ_SRCS)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS) $(LIBS)

fuzz: $(FUZZERS)
	@set -eo pipefail; for f in $(FUZZERS); do \
		mkdir -p build-fuzz/corpus/$$(basename $$f); \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=0 \
			build-fuzz/corpus/$$(basename $$f) 2>&1 | tail -1; \
	done

run: all
	$(B)/binstat_exporter --config.file=config/binstat_exporter.yml

install: $(B)/install/binstat_exporter $(PLUGINS) $(SHIM) $(LIBDCI4) $(LIBPVSTATS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(SYSCONFDIR)/binstat_exporter
	install -m 0644 $(SHIM) $(DESTDIR)$(LIBDIR)/binstat_exporter/
	install -m 0755 $(LIBDCI4) $(DESTDIR)$(LIBDIR)/libdci4.so.0
	install -d $(DESTDIR)$(PREFIX)/include/dci4
	install -m 0644 lib/dci4/dci4_wire.h lib/dci4/dci4_supplier.h $(DESTDIR)$(PREFIX)/include/dci4/
	install -m 0755 $(LIBPVSTATS) $(DESTDIR)$(LIBDIR)/libpvstats.so.0
	install -m 0644 lib/pvstats/pvstats.h -D $(DESTDIR)$(PREFIX)/include/pvstats/pvstats.h
	install -m 0755 $(B)/install/binstat_exporter $(DESTDIR)$(BINDIR)/binstat_exporter
	install -m 0755 $(B)/dci4stat $(B)/dci4-netdev $(DESTDIR)$(BINDIR)/
	install -m 0644 $(PLUGINS) $(DESTDIR)$(PLUGINDIR)/
	install -m 0644 include/binstat/collector.h -D $(DESTDIR)$(PREFIX)/include/binstat/collector.h
	test -e $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/binstat_exporter.yml || \
		install -m 0644 config/binstat_exporter.yml $(DESTDIR)$(SYSCONFDIR)/binstat_exporter/

FORMAT_SRCS = $(wildcard exporter/*.[ch] include/binstat/*.h collectors/*/*.[ch] collectors/*/*/*.c tests/kvm/*.c tests/xen/*.c tests/fuzz/*.c lib/*/*.[ch] programs/*.c tests/dci4/*.c tests/unit/*.[ch] tests/plugins/*.c bench/*.c)
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format-check: ok"

clean:
	rm -rf build build-asan build-fuzz
