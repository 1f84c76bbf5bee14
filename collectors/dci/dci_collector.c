/* The DCI collector plugin: every DCI4 supplier in the supplier directory
 * (docs/dci4-transport.md), its statistics typed and named by the mapping
 * rules. collect syncs the set with the directory, talks to every supplier
 * at once (dci_exchange.c) and writes what came back (dci_emit.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <binstat/collector.h>

#include "dci_emit.h"
#include "dci_exchange.h"
#include "dci_set.h"

/* The rules' keys, in the order the layout passes their values. */
static const char *const rule_keys[] = {"module", "title", "supplier", "stat"};

struct dci_collector {
	const struct bs_host *host;
	struct dci_config cfg;
	struct dci_set set;
	struct famgroup fam;
	int last_dir_error;
};

static int read_config(struct dci_config *cfg, const struct bs_conf *conf)
{
	const struct bs_conf_ops *c = conf->ops;

	*cfg = (struct dci_config){
	    .dir = "/run/dci4",
	    .timeout_s = 2,
	    .describe_interval_s = 600,
	    .max_suppliers = 1024,
	    .max_stats = 4096,
	    .max_stats_total = 262144,
	    .max_label_len = 128,
	    .max_buffer_mib = 256,
	};
	if (c->get_str(conf, "supplier_dir", &cfg->dir) == -EINVAL ||
	    c->get_duration(conf, "timeout_seconds", 0.01, 600, &cfg->timeout_s) == -EINVAL ||
	    c->get_duration(conf, "describe_interval_seconds", 0, 86400 * 7,
			    &cfg->describe_interval_s) == -EINVAL ||
	    c->get_u64(conf, "max_suppliers", 1, 65536, &cfg->max_suppliers) == -EINVAL ||
	    c->get_u64(conf, "max_statistics", 1, 65535, &cfg->max_stats) == -EINVAL ||
	    c->get_u64(conf, "max_statistics_total", 1, 16777216, &cfg->max_stats_total) ==
		-EINVAL ||
	    c->get_u64(conf, "max_label_length", 8, 1024, &cfg->max_label_len) == -EINVAL ||
	    c->get_u64(conf, "max_buffer_mib", 1, 65536, &cfg->max_buffer_mib) == -EINVAL)
		return -EINVAL;
	return statmap_init(&cfg->map, c->child(conf, "rules"), rule_keys, 4);
}

static void dci_shutdown(void *state)
{
	struct dci_collector *k = state;
	if (!k)
		return;
	famgroup_free(&k->fam);
	dci_set_free(&k->set);
	statmap_free(&k->cfg.map);
	free(k);
}

static int dci_init(const struct bs_host *host, const struct bs_conf *conf, void **state)
{
	struct dci_collector *k = calloc(1, sizeof(*k));
	int rc;

	if (!k)
		return -ENOMEM;
	k->host = host;
	k->set.epfd = -1;
	if ((rc = read_config(&k->cfg, conf)) < 0 || (rc = dci_set_init(&k->set)) < 0) {
		dci_shutdown(k);
		return rc;
	}
	k->set.budget.max = (size_t)k->cfg.max_buffer_mib << 20;
	*state = k;
	return 0;
}

static int dci_collect(void *state, struct bs_emitter *em)
{
	struct dci_collector *k = state;
	int rc = dci_set_sync(&k->set, &k->cfg, em);

	if (rc < 0) {
		if (rc != k->last_dir_error)
			k->host->log(BS_LOG_ERROR, "dci", "cannot read the supplier directory",
				     "dir", k->cfg.dir, "error", strerror(-rc), (char *)NULL);
		k->last_dir_error = rc;
		return rc;
	}
	k->last_dir_error = 0;
	dci_exchange(&k->set, &k->cfg, em);
	return dci_emit(&k->set, &k->cfg, &k->fam, em);
}

/* The set is only touched by collect, which the host keeps apart. */
static void dci_describe(void *state, char *buf, size_t len)
{
	struct dci_collector *k = state;
	size_t up = 0;

	for (size_t i = 0; i < k->set.n; i++)
		up += k->set.sup[i]->state == DCI_DONE;
	snprintf(buf, len, "%zu suppliers in %s, %zu answering; %zu statistics described", k->set.n,
		 k->cfg.dir, up, k->set.stats_total);
}

BS_COLLECTOR_EXPORT const struct bs_collector binstat_collector_dci = {
    .abi_version = BS_COLLECTOR_ABI_VERSION,
    .name = "dci",
    .description = "DCI4 statistic suppliers (RISC OS DCI4 statistics on Linux)",
    .init = dci_init,
    .collect = dci_collect,
    .shutdown = dci_shutdown,
    .describe = dci_describe,
};
