/* Fuzzes the DCI4 decoders with replies a hostile supplier could send. */
#include <stdint.h>
#include <stdlib.h>

#include "dci4_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dci4_header h;
	struct dci4_info info;
	struct dci4_desc d;
	bool sgn;
	uint64_t u;
	int64_t i;
	double t;

	dci4_get_header(data, size, &h);
	dci4_decode_info(data, size, &info);
	for (size_t off = 0; off < size;) {
		int n = dci4_decode_desc(data + off, size - off, &d);
		if (n <= 0)
			break;
		if (d.size <= size - off - (size_t)n) { /* a value slot after the record */
			dci4_value_int(&d, data + off + n, &sgn, &u, &i);
			dci4_value_time(&d, data + off + n, &t);
		}
		off += (size_t)n;
	}
	return 0;
}
