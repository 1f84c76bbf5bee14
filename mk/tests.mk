# The tests (included by the Makefile): `make unit`, `make integration`,
# `make content`, `make asan`, `make zlib-fallback`, `make check`, `make test
# T=suite[:case]`, `make checksrc`, `make check-systemd`; the fixtures the
# suites run (tests/fixtures/, tests/README.md).
.PHONY: check unit integration content testbins asan zlib-fallback test checksrc check-systemd

UNIT_SRCS  = $(filter-out $(if $(HAVE_XEN),,tests/unit/test_xen_%),$(wildcard tests/unit/test_*.c))
UNIT_BINS  = $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
TEST_PLUGINS = $(patsubst tests/fixtures/plugins/%.c,$(B)/testplugins/%.so,$(wildcard tests/fixtures/plugins/*.c))
XEN_TESTS  = $(if $(HAVE_XEN),$(B)/tests/libfakexen.so $(B)/tests/xen_guest)

# ---- unit tests (cmocka). tests/unit/case_filter.c, linked into each,
# runs only the cases BS_TEST_CASE names (`make test T=suite:case`).
# test_<collector>_*.c link that collector's objects and libraries;
# test_<library>_*.c that library; the rest the core alone (tests/README.md).
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
# Rewrites a file in place around a read of it (test_torn_read_read_again).
$(B)/tests/test_conf: LIBS += -Wl,--wrap=readfile_bounded
# Fails every allocation of a scrape once; serves a real DCI4 supplier.
$(B)/tests/unit/test_failmalloc.o: XFLAGS = $(DCI4_INCS)
$(B)/tests/test_failmalloc: $(DCI4_A)

# ---- fixtures (tests/fixtures/): the suites' DCI4 supplier, plugins, KVM
# VMM, and the Xen tests' stand-in for the hypervisor beneath the real
# libraries with simulated guests built on the provider library.
$(B)/tests/dci4_test_supplier: $(B)/tests/fixtures/dci4/test_supplier.o $(DCI4_A)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lpthread
$(B)/tests/fixtures/dci4/%.o: XFLAGS = $(DCI4_INCS)

$(B)/testplugins/%.so: tests/fixtures/plugins/%.c $(MAKEFILES_OWN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -shared -o $@ $<

$(B)/tests/libfakexen.so: tests/fixtures/xen/fakexen.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_BASE)) -shared -o $@ $< -ldl

$(B)/tests/xen_guest: $(B)/tests/fixtures/xen/guest.o $(B)/lib/libpvstats.a
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(shell pkg-config --libs $(pvstats_PKGS))
$(B)/tests/fixtures/xen/%.o: XFLAGS = $(call lib_incs,pvstats)

$(B)/tests/kvm_fixture: $(B)/tests/fixtures/kvm/fixture.o
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

INTEGRATION = run config cli web systemd landing kvm hostile_kvm kvm_perm hostile_http http_phases webauth qemu dci4 \
	      dci_collector xen faults processing statistics tdigest
integration: testbins
	@set -e; for s in $(INTEGRATION); do echo "tests/integration/$$s.sh $(B)"; \
		tests/integration/$$s.sh $(B); done

# What is shipped beside the code: the dashboards against live data, the
# rules, the fleet set-up (two hosts into one central server). The
# packages are `make check-packages`'s (mk/packages.mk). Once, not again
# under the sanitizers: these test files, not code.
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
	@tools/checksrc --self-test tests/checksrc/words.c.txt
	@tools/mdlinks --self-test tests/checksrc/render.md.txt
	@tools/mdlinks $$(git ls-files "*.md")

check: format-check checksrc
	$(MAKE) -j2 testbins
	$(MAKE) unit integration content
	$(MAKE) zlib-fallback
	$(MAKE) asan
	$(MAKE) -j2 build-fuzz/libfuzzed.a
	$(MAKE) -j2 fuzz FUZZ_SECONDS=10
	@echo "make check: all suites passed"

# The packaged units under a real systemd as PID 1 (tests/systemd/run.sh):
# a Debian root from mmdebstrap (cached in build-systemd/), booted by
# systemd-nspawn with /dev/kvm, the .deb installed there. Root and Debian's
# mirror needed; .ci/run runs it after `make check-packages`.
check-systemd: $(B)/tests/kvm_fixture
	tests/systemd/run.sh $(B)

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
