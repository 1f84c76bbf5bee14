/* CAP_SYS_PTRACE from the permitted set into the effective one: the image's
 * exporter carries it as a file capability without the effective bit, so
 * that it starts without it too (the DCI4 collector alone needs none). */
#ifndef KVM_CAPS_H
#define KVM_CAPS_H

/* Raises CAP_SYS_PTRACE in the calling thread's effective set when its
 * permitted set holds it; threads it starts afterwards inherit it. Returns
 * 1 when raised, 0 when there was nothing to raise (held already, or not
 * permitted), or -errno. */
int kvm_caps_raise_ptrace(void);

#endif
