/* A supplier for the DCI4 tests: two effective suppliers in one process,
 * statistics of every type, counters moving until SIGTERM.
 *   test_supplier DIR */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dci4_supplier.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static const struct dci4_stat stats[] = {
    {ST_INTEGER64, SIF_UNSIGNED, 1, 8, SV_VOLATILE, "packets_received"},
    {ST_INTEGER32, 0, 1, 4, SV_VOLATILE, "temperature_delta"},
    {ST_INTEGER16, SIF_UNSIGNED | SIF_BIGENDIAN, 0, 4, SV_STATIC, "flags"},
    {ST_INTEGER32, SIF_UNSIGNED | SIF_BIGENDIAN, 2, 4, SV_STATIC, "netmask"},
    {ST_UNUSED, 0, 0, 0, 0, NULL},
    {ST_BOOLEAN, 0, 1, 4, SV_VARIABLE, "link_up"},
    {ST_BOOLEAN, SBF_INVERTED, 3, 4, SV_VARIABLE, "promiscuous"},
    {ST_STRING, 0, 0, 32, SV_STATIC, "driver"},
    {ST_ADDRESS, SAF_ETHERNET, 0, 8, SV_STATIC, "mac"},
    {ST_ADDRESS, SAF_IP, 0, 4, SV_VARIABLE, "ipv4"},
    {ST_TIME, STF_CTIME, 0, 8, SV_VARIABLE, "last_change"},
    {ST_TIME, STF_MONOTONIC, 1, 4, SV_VOLATILE, "uptime"},
};

int main(int argc, char **argv)
{
	struct dci4_supplier *s[2];
	int err;

	if (argc != 2)
		return 2;
	signal(SIGTERM, on_term);
	for (int i = 0; i < 2; i++) {
		char name[32], title[32];
		snprintf(name, sizeof(name), "test.unit%d", i);
		snprintf(title, sizeof(title), "unit%d", i);
		struct dci4_supplier_conf c = {argv[1],
					       name,
					       SPT_NETWORK_DRIVER,
					       102,
					       "test_supplier",
					       title,
					       "A test supplier for dci4stat"};
		if (!(s[i] =
			  dci4_supplier_open(&c, stats, sizeof(stats) / sizeof(stats[0]), &err)) ||
		    dci4_supplier_start(s[i]) < 0) {
			fprintf(stderr, "test_supplier: %s\n", strerror(-err));
			return 1;
		}
		int32_t minus = -5;
		uint16_t flags = 0x0102;
		uint32_t mask = 0xffffff00;
		uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, (uint8_t)(0x56 + i)};
		uint8_t ip[4] = {192, 168, 0, (uint8_t)(10 + i)};
		int64_t when = 1700000000;
		uint32_t yes = 1, up = 250;
		dci4_set(s[i], 1, &minus, 4);
		dci4_set(s[i], 2, &flags, 2);
		dci4_set(s[i], 3, &mask, 4);
		dci4_set(s[i], 5, &yes, 4);
		dci4_set(s[i], 6, &yes, 4);
		dci4_set(s[i], 7, "virtio_net", 11);
		dci4_set(s[i], 8, mac, 6);
		dci4_set(s[i], 9, ip, 4);
		dci4_set(s[i], 10, &when, 8);
		dci4_set(s[i], 11, &up, 4);
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		for (int i = 0; i < 2; i++)
			dci4_add(s[i], 1, (const uint32_t[]){0}, (const uint64_t[]){1});
		usleep(1000);
	}
	for (int i = 0; i < 2; i++)
		dci4_supplier_close(s[i]);
	return 0;
}
