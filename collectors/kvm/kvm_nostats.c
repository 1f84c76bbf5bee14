/* The kinds of "no stats fd" (kvm_nostats.h): one table, read by the shim
 * inside the VMM and by the collector, so the two never disagree on a
 * token. */
#include "kvm_nostats.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *reason, *token;
} kinds[KVM_NOSTATS_KINDS] = {
    [KVM_NOSTATS_UNSUPPORTED] = {"stats_fd_unsupported", "unsupported"},
    [KVM_NOSTATS_NO_FDS] = {"stats_fd_no_fds", "no_fds"},
    [KVM_NOSTATS_NO_MEMORY] = {"stats_fd_no_memory", "no_memory"},
    [KVM_NOSTATS_FAILED] = {"stats_fd_failed", "failed"},
};

enum kvm_nostats kvm_nostats_classify(int cap, int err)
{
	if (cap <= 0)
		return KVM_NOSTATS_UNSUPPORTED;
	if (err == EMFILE || err == ENFILE)
		return KVM_NOSTATS_NO_FDS;
	if (err == ENOMEM)
		return KVM_NOSTATS_NO_MEMORY;
	return KVM_NOSTATS_FAILED;
}

const char *kvm_nostats_reason(enum kvm_nostats why)
{
	return kinds[why < KVM_NOSTATS_KINDS ? why : KVM_NOSTATS_FAILED].reason;
}

const char *kvm_nostats_token(enum kvm_nostats why)
{
	return kinds[why < KVM_NOSTATS_KINDS ? why : KVM_NOSTATS_FAILED].token;
}

int kvm_nostats_parse(const char *s, size_t n)
{
	for (int i = 0; i < KVM_NOSTATS_KINDS; i++)
		if (strlen(kinds[i].token) == n && memcmp(s, kinds[i].token, n) == 0)
			return i;
	return -1;
}
