# The OCI image and its test (docs/operating.md, "Containers"): the .deb
# unpacked on a root of its dependencies that mmdebstrap extracts from
# Debian's mirror (cached in build-image/), imported by podman and tagged
# with the version. `make check-image` (root, podman) builds one under a tag
# of its own run (removed at its end: clones and runs share podman's store)
# and runs it as the docs say, beside a real VM, a DCI4 supplier and
# Prometheus; .ci/run runs it after `make check`.
IMAGE ?= localhost/binstat_exporter:$(VERSION)
.PHONY: image check-image clean-image

image: deb
	packaging/container/build.sh build-deb $(IMAGE)

check-image: $(B)/tests/kvm_fixture $(B)/tests/dci4_test_supplier
	tests/image/run.sh $(B)

clean: clean-image
clean-image:
	rm -rf build-image
