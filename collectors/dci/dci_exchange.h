/* One scrape's conversation with every supplier at once: SP_INFO, a
 * describe when needed, and the reads, all in flight together over one
 * epoll, within one deadline. */
#ifndef DCI_EXCHANGE_H
#define DCI_EXCHANGE_H

#include <binstat/collector.h>

#include "dci_set.h"

/* Leaves each supplier DCI_DONE (values fresh), DCI_FAILED (counted by
 * reason on em) or DCI_GONE. Returns within cfg->timeout_s, or sooner
 * when the scrape's own deadline passes. */
void dci_exchange(struct dci_set *set, const struct dci_config *cfg, struct bs_emitter *em);

#endif
