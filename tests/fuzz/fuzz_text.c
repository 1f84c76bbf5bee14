/* Fuzzes the small text parsers that read outside input: the hand-over
 * message, KVM uevents, VMM command lines, Accept headers, label escaping. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_discover.h"
#include "kvm_handover.h"
#include "kvm_uevent.h"
#include "names.h"
#include "negotiate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvm_handover_msg m;
	struct kvm_identity id;
	pid_t pid;
	struct names_repairs rep = {0};
	bool cut;

	kvm_handover_parse((const char *)data, size, &m);
	kvm_uevent_parse((const char *)data, size, &pid);
	kvm_cmdline_identity((const char *)data, size, &id);
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	negotiate_format(s);
	negotiate_gzip(s);
	char *out = malloc(3 * size + 3);
	char *end = names_escape(out, s, size, true, &rep, &cut);
	if ((size_t)(end - out) > 3 * size)
		abort();
	free(out);
	free(s);
	return 0;
}
