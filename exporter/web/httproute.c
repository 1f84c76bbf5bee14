/* The request router's table: path and method to an endpoint. Only
 * /statistics/ takes a POST; everything else answers GET and HEAD. */
#include "httproute.h"

#include <string.h>

bool httproute_takes_body(const char *path, const char *method)
{
	return strncmp(path, HTTPROUTE_STATS_PREFIX, strlen(HTTPROUTE_STATS_PREFIX)) == 0 &&
	       strcmp(method, "POST") == 0;
}

enum httproute httproute_of(const char *path, const char *method, const char *telemetry_path)
{
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

	if (!get && !httproute_takes_body(path, method))
		return HTTPROUTE_METHOD_NOT_ALLOWED;
	if (strncmp(path, HTTPROUTE_STATS_PREFIX, strlen(HTTPROUTE_STATS_PREFIX)) == 0)
		return HTTPROUTE_STATISTICS;
	if (strcmp(path, telemetry_path) == 0)
		return HTTPROUTE_TELEMETRY;
	if (strcmp(path, "/") == 0)
		return HTTPROUTE_LANDING;
	if (strcmp(path, "/-/healthy") == 0)
		return HTTPROUTE_HEALTHY;
	if (strcmp(path, "/-/ready") == 0)
		return HTTPROUTE_READY;
	return HTTPROUTE_NOT_FOUND;
}
