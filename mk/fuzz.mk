# The fuzzers (included by the Makefile) of the parsers of outside input
# (libFuzzer, clang), built in build-fuzz/. `make fuzz` runs each for
# FUZZ_SECONDS; `make check` runs them briefly.
.PHONY: fuzz

FUZZ_SECONDS ?= 60
# What the fuzzers link: the daemon's folders (exporter/layers.mk), the
# collectors with a parser of outside input and what their module.mk says
# they use. The Xen collector's only where libxen is, as its plugin.
FUZZ_COLLECTORS = kvm dci $(HAVE_XEN)
FUZZ_LIBS  = $(sort $(CORE_LIBS) $(foreach c,$(FUZZ_COLLECTORS),$($(c)_LIBS)) \
	     $(foreach l,$(foreach c,$(FUZZ_COLLECTORS),$($(c)_LIBS)),$($(l)_USES)))
FUZZ_PKGS  = $(foreach c,$(FUZZ_COLLECTORS),$($(c)_PKGS))
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
	      -Iinclude -Iexporter $(EXPORTER_LAYERS:%=-Iexporter/%) $(FUZZ_COLLECTORS:%=-Icollectors/%) \
	      $(call lib_incs,$(FUZZ_LIBS)) $(shell pkg-config --cflags $(FUZZ_PKGS))
FUZZERS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(filter-out $(if $(HAVE_XEN),,tests/fuzz/fuzz_xen_%),\
	  $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_SRCS = $(EXPORTER_SRCS) $(wildcard $(FUZZ_LIBS:%=lib/%/*.c) $(FUZZ_COLLECTORS:%=collectors/%/*.c))

# The sources are compiled once, instrumented, into one archive each
# fuzzer links (not once per fuzzer: that took minutes of `make check`).
FUZZ_OBJS = $(FUZZ_SRCS:%.c=build-fuzz/obj/%.o)

build-fuzz/obj/%.o: %.c $(MAKEFILES_OWN)
	@mkdir -p $(dir $@)
	clang $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(FUZZ_CFLAGS)) -MMD -MP -c $< -o $@

build-fuzz/libfuzzed.a: $(FUZZ_OBJS)
	ar rcs $@ $^

build-fuzz/%: tests/fuzz/%.c build-fuzz/libfuzzed.a
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< build-fuzz/libfuzzed.a $(LIBS) $(shell pkg-config --libs $(FUZZ_PKGS))

# Each target a job of its own, so that `make -j2 fuzz` runs two at once
# (a fuzzer uses one core, and its time is wall-clock time).
fuzz: $(patsubst build-fuzz/%,fuzz-run-%,$(FUZZERS))
fuzz-run-%: build-fuzz/%
	@set -o pipefail; mkdir -p build-fuzz/corpus/$*; \
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=0 \
		build-fuzz/corpus/$* 2>&1 | tail -1 | sed 's/^/$*: /'
