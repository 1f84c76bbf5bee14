/* Fuzzes the reader of stats(3)'s statsblob V1 bytes: any bytes are
 * walked as stats_v1_blob_iter walks a blob, every field and each
 * statistic's data touched, and nothing may be read past them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vstats_sbv1_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so that ASan sees a read past it */
	uint8_t *b = malloc(size ? size : 1);
	struct vstats_sbv1_hdr h;
	volatile unsigned sum = 0;

	memcpy(b, data, size);
	if (vstats_sbv1_walk_hdr(b, size, &h) == 0) {
		for (int32_t i = 0; i < h.nvois; i++) {
			struct vstats_sbv1_voi v;
			if (vstats_sbv1_walk_voi(b, &h, i, &v) < 0)
				continue;
			for (int j = 0; j <= v.voistatmaxid; j++) {
				struct vstats_sbv1_voistat vs;
				if (vstats_sbv1_walk_voistat(b, &h, &v, j, &vs) < 0 || !vs.data)
					continue;
				for (uint16_t k = 0; k < vs.dsz; k++)
					sum += vs.data[k];
				sum += (unsigned)vstats_sbv1_stype_name(vs.stype)[0];
				sum += (unsigned)vstats_sbv1_dtype_name(vs.dtype)[0];
			}
		}
	}
	free(b);
	return 0;
}
