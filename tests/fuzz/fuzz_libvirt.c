/* Fuzzes the reader of libvirt's domain status files: the <metadata> in
 * them is written by whoever defined the domain. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_libvirt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct kvm_libvirt_conf c = {
	    .status_dir = "/nonexistent",
	    .nns = 2,
	    .ns = {{KVM_NOVA_NS_PREFIX "1.1", NULL}, {"http://example.com/acme/1.0", "acme"}},
	    .max_label_len = 64,
	};
	struct kvm_meta m;
	const char *why;

	if (kvm_libvirt_parse(&c, (const char *)data, size, 4242,
			      "6a1c4f0e-1111-4222-8333-444455556666", &m, &why) == 0)
		kvm_meta_free(&m);
	return 0;
}
