# The benchmarks and the soak (included by the Makefile): `make bench` prints figures,
# not pass/fail; `make check` builds their programs (BENCH_BINS, testbins).
.PHONY: bench

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
$(B)/bench/bench_dci_suppliers.o: XFLAGS = $(DCI4_INCS)

$(B)/bench/bench_kvm_floor: $(B)/bench/bench_kvm_floor.o $(call coll_objs,kvm) $(call lib_a,$(kvm_LIBS))
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(call coll_link,kvm)
$(B)/bench/bench_kvm_floor.o: XFLAGS = $(call unit_incs,kvm)

# libdeflate is optional: the gzip floor then shows zlib's alone.
HAVE_LIBDEFLATE := $(call have_pkgs,libdeflate)
$(B)/bench/bench_deflate_floor: $(B)/bench/bench_deflate_floor.o $(B)/exporter/out/zcodec.o $(B)/exporter/out/blockpool.o
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(LIBS) $(if $(HAVE_LIBDEFLATE),$(shell pkg-config --libs libdeflate))
$(B)/bench/bench_deflate_floor.o: XFLAGS = $(if $(HAVE_LIBDEFLATE),-DHAVE_LIBDEFLATE)

# The t-digest beside Debian's influxdata/tdigest (tests/integration/tdigest.sh).
$(B)/bench/tdigest_compare: $(B)/bench/tdigest_compare.o $(call lib_a,vstats $(vstats_USES))
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lm

$(B)/bench/bench_writer: bench/bench_writer.c $(EXPORTER_A) $(CORE_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -O3 -o $@ $< $(EXPORTER_A) $(CORE_A) $(LIBS)

# The soak (tests/soak/run.sh): VMs, DCI4 suppliers and hostile clients
# coming and going, reloads and scrapes, for SOAK_SECONDS (10 minutes);
# the exporter's RSS, fds and threads must stay flat. Not in `make check`.
.PHONY: soak
SOAK_SECONDS ?= 600
soak: all $(B)/tests/kvm_fixture $(B)/tests/dci4_test_supplier
	tests/soak/run.sh $(B) $(SOAK_SECONDS)
