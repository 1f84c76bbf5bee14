# The KVM collector: the binary statistics fds of VMs and vCPUs (KVM_GET_STATS_FD).
# (The keys: collectors/example/module.mk.)
kvm_LIBS := unixsock collkit
kvm_PKGS := libxml-2.0

# The preload shim a VMM loads (LD_PRELOAD, see README.md). Preloaded into
# VMMs that have no sanitizer runtime: never built with one.
kvm_EXTRA := $(B)/lib/libbinstat_kvm_shim.so
$(B)/lib/libbinstat_kvm_shim.so: collectors/kvm/shim/binstat_kvm_shim.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS_BASE)) -shared -o $@ $< -ldl -lpthread
