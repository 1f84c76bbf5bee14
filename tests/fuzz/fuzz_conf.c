/* Fuzzes the configuration loader: YAML as an operator (or an attacker with
 * write access to it) could write it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONF_ERR_MAX];
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct config *c = config_load("fuzz.yml", text, "/plugins", err, sizeof(err));
	config_free(c);
	free(text);
	return 0;
}
