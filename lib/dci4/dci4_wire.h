/* The DCI4 statistics wire format on Linux (docs/dci4-transport.md):
 * pure encoders and decoders shared by the supplier library and the
 * collector. Decoders check every byte a peer sent. */
#ifndef DCI4_WIRE_H
#define DCI4_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCI4_HEADER_LEN 12
#define DCI4_VERSION 1
#define DCI4_REPLY 0x8000u
#define DCI4_BODY_MAX (DCI4_BUFFER_MAX + 12) /* a reply body: status, processed, used, buffer */
#define DCI4_BUFFER_MAX (1u << 20)
#define DCI4_STRING_MAX 256 /* bytes with the NUL: names, module, title, description */
#define DCI4_VALUE_MAX 4096 /* the largest value size */

/* The specification's numbers. */
enum { SA_DESCRIBE = 0, SA_READ = 1, SP_INFO = 2 };
enum { DCI4_OK = 0, DCI4_BAD_REQUEST = 1, DCI4_UNSUPPORTED = 2, DCI4_BUSY = 3 };
enum {
	ST_UNUSED,
	ST_BOOLEAN,
	ST_STRING,
	ST_INTEGER8,
	ST_INTEGER16,
	ST_INTEGER32,
	ST_INTEGER64,
	ST_ADDRESS,
	ST_TIME,
};
enum { SV_STATIC, SV_VARIABLE, SV_VOLATILE };
enum { SPT_GENERAL_SUPPLIER, SPT_NETWORK_PROTOCOL, SPT_NETWORK_DRIVER, SPT_MBUF_MANAGER };
#define SBF_INVERTED 1u
#define SIF_UNSIGNED 1u
#define SIF_BIGENDIAN 2u
enum { SAF_ETHERNET, SAF_IP, SAF_ECONET };
enum { STF_5BYTE, STF_CTIME, STF_MONOTONIC };

struct dci4_header {
	uint16_t version;
	uint16_t op;
	uint32_t length;
};

/* The provider structure (dci4_spctl) without its RISC OS pointers. */
struct dci4_info {
	uint32_t i_version, features, max_stat, type, s_version;
	uint8_t reset[8];
	char module[DCI4_STRING_MAX], title[DCI4_STRING_MAX], description[DCI4_STRING_MAX];
};

/* One statistic's description (dci4_stdesc) with its name inline. */
struct dci4_desc {
	uint32_t type, format, presentation, size, volatility, name_tag, spare;
	char name[DCI4_STRING_MAX];
};

/* Little-endian framing fields. */
void dci4_put32(uint8_t *p, uint32_t v);
uint32_t dci4_get32(const uint8_t *p);

void dci4_put_header(uint8_t out[DCI4_HEADER_LEN], uint16_t op, uint32_t length);
/* Checks magic, version and the length cap; -EPROTO or -EMSGSIZE. */
int dci4_get_header(const uint8_t *buf, size_t len, struct dci4_header *h);

/* Encoders return the bytes written, or -ENOSPC. */
int dci4_encode_info(const struct dci4_info *info, uint8_t *out, size_t cap);
int dci4_decode_info(const uint8_t *body, size_t len, struct dci4_info *info);

/* Bytes a describe record takes; the partial-buffer rule compares it. */
size_t dci4_desc_record_len(const struct dci4_desc *d);
int dci4_encode_desc(const struct dci4_desc *d, uint8_t *out, size_t cap);
/* Decodes one record at buf; returns its length, or -EPROTO when it
 * overruns len, has a bad size, a name without its NUL or spare bits set. */
int dci4_decode_desc(const uint8_t *buf, size_t len, struct dci4_desc *d);

/* Takes the record of statistic `stat` at p (`left` bytes remain); returns
 * the bytes it used, or -errno. */
typedef int dci4_take_fn(void *ctx, uint32_t stat, const uint8_t *p, size_t left);
/* Checks an SA_DESCRIBE or SA_READ reply body (status first) to a request
 * for first..last with a buffer of bufsize bytes, and hands each record to
 * take in order; *processed says how many (ask again from first+processed). */
int dci4_parse_range(const uint8_t *body, size_t len, uint32_t first, uint32_t last,
		     uint32_t bufsize, dci4_take_fn *take, void *ctx, uint32_t *processed);

/* An integer value of slot (d->size bytes) as the description says: width
 * from the type, byte order and signedness from the format. */
int dci4_value_int(const struct dci4_desc *d, const uint8_t *slot, bool *is_signed, uint64_t *u,
		   int64_t *i);
/* A time value in Unix seconds (absolute) or seconds (relative/monotonic). */
int dci4_value_time(const struct dci4_desc *d, const uint8_t *slot, double *seconds);

#endif
