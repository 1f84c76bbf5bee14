# The KVM collector (seed 000): the binary stats fds of VMs and vCPUs.
# A collector's build settings, all here: the lib/ libraries it links
# (their headers come with them), the pkg-config packages it needs (the
# plugin is skipped, and `make` says so, when one is missing), and other
# linker flags. Its sources are every collectors/<name>/*.c.
kvm_LIBS := unixsock collkit
