# The KVM collector: the binary statistics fds of VMs and vCPUs (KVM_GET_STATS_FD).
# (The keys: collectors/example/module.mk.)
kvm_LIBS := unixsock collkit
kvm_PKGS := libxml-2.0

# The preload shim a VMM loads (LD_PRELOAD, see README.md). Preloaded into
# VMMs that have no sanitizer runtime: never built with one.
kvm_EXTRA := $(B)/lib/libbinstat_kvm_shim.so
# kvm_nostats.c is the one table of why a stats fd was not made, shared
# with the collector.
$(B)/lib/libbinstat_kvm_shim.so: collectors/kvm/shim/binstat_kvm_shim.c collectors/kvm/kvm_nostats.c \
				 collectors/kvm/kvm_nostats.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_BASE)) -fvisibility=hidden -shared -o $@ \
		$(filter %.c,$^) -ldl -lpthread
