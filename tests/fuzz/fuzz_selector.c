/* Fuzzes the PromQL-style series selector of the processing: section: the
 * first line is the selector, the rest name=value label pairs matched
 * against it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bs_label labels[8];
	struct selector s;
	char err[256], *text = malloc(size + 1), *save = NULL;
	size_t n = 0;

	memcpy(text, data, size);
	text[size] = '\0';
	char *sel = strtok_r(text, "\n", &save);
	if (sel && selector_parse(&s, sel, err, sizeof(err)) == 0) {
		for (char *l; n < 8 && (l = strtok_r(NULL, "\n", &save));) {
			char *eq = strchr(l, '=');
			if (!eq)
				continue;
			*eq = '\0';
			labels[n++] = (struct bs_label){l, eq + 1};
		}
		selector_match(&s, n ? labels[0].value : "", labels, n);
		selector_match_name(&s, sel);
		selector_free(&s);
	}
	free(text);
	return 0;
}
