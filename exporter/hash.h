/* A fast 64-bit hash of bytes for series identity (not for hostile keys:
 * tables using it bound their size instead of relying on spread). */
#ifndef BS_HASH_H
#define BS_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t hash_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ hash_mix(n, 0x9E3779B97F4A7C15ull);

	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = hash_mix(h ^ w, 0xA0761D6478BD642Full);
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, n);
	return hash_mix(h ^ w ^ 0xE7037ED1A0B428DBull, 0x8EBC6AF09C88C6E3ull);
}

#endif
