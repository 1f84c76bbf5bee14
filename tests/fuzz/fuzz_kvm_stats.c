/* Fuzzes the KVM stats parser with whole files: header, id, descriptors,
 * data, as a hostile or broken kernel interface could present them; and
 * the host view's /proc lines, whose comm field a VMM writes itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_hostview.h"
#include "kvm_metric.h"
#include "kvm_stats_desc.h"

static void drop(void *ctx, const char *reason)
{
	(void)ctx;
	(void)reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvm_stats_hdr h;
	const char *why;
	char id[64];

	uint64_t flt, rss, sched[3];
	kvm_procstat_parse((const char *)data, size, &flt, &rss);
	kvm_schedstat_parse((const char *)data, size, sched);
	if (kvm_stats_parse_header(data, size, &h, &why) < 0)
		return 0;
	if (h.id_offset < size)
		kvm_stats_parse_id(&h, data + h.id_offset, size - h.id_offset, id, sizeof(id));
	if (h.desc_offset >= size)
		return 0;
	struct kvm_stat_desc *d = calloc(h.num_desc, sizeof(*d));
	size_t n = 0, data_size = 0;
	if (kvm_stats_parse_descs(&h, data + h.desc_offset, size - h.desc_offset, d, &n, &data_size,
				  drop, NULL) == 0) {
		struct kvm_metric *m = calloc(n, sizeof(*m));
		int nm = kvm_metrics_build("kvm_vcpu", d, n, m);
		uint64_t *vals = calloc(1, data_size);
		for (int i = 0; i < nm; i++) {
			kvm_metric_value(&m[i], vals[m[i].index]);
			/* every value the emitter would read stays inside the block */
			if ((m[i].index + m[i].nvalues) * 8 > data_size ||
			    (m[i].sum_index >= 0 && (size_t)m[i].sum_index * 8 >= data_size))
				abort();
		}
		if (nm > 0)
			kvm_metrics_free(m, (size_t)nm);
		free(vals);
		free(m);
	}
	free(d);
	return 0;
}
