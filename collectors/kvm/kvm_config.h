/* The KVM collector's options (collectors/kvm/README.md lists them). */
#ifndef KVM_CONFIG_H
#define KVM_CONFIG_H

#include "kvm_state.h"

/* Reads conf into k (its set initialised with the caps): 0 or -EINVAL,
 * the error said at the option's position. */
int kvm_config_read(struct kvm_collector *k, const struct bs_conf *conf);

#endif
