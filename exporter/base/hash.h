/* A fast 64-bit hash of bytes (wyhash's layout: one 128-bit multiply per 16
 * bytes). Not collision resistant: a table keyed by outside input seeds it
 * with hash_seed() and still compares the keys on a match. */
#ifndef BS_HASH_H
#define BS_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_K0 0xA0761D6478BD642Full
#define HASH_K1 0xE7037ED1A0B428DBull

static inline uint64_t hash_mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t hash_r64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t hash_r32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* A random seed drawn once per process (getrandom), so outside input
 * cannot be chosen offline to collide. */
uint64_t hash_seed(void);

static inline uint64_t hash_bytes(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t a = 0, b = 0;

	seed ^= HASH_K0;
	if (n <= 16) {
		/* Overlapping loads cover 4..16 bytes without a loop or a call. */
		if (n >= 4) {
			size_t m = (n >> 3) << 2;
			a = hash_r32(p) << 32 | hash_r32(p + m);
			b = hash_r32(p + n - 4) << 32 | hash_r32(p + n - 4 - m);
		} else if (n > 0) {
			a = (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
		}
	} else {
		size_t i = n;
		for (; i > 16; i -= 16, p += 16)
			seed = hash_mix(hash_r64(p) ^ HASH_K1, hash_r64(p + 8) ^ seed);
		a = hash_r64(p + i - 16);
		b = hash_r64(p + i - 8);
	}
	return hash_mix(HASH_K1 ^ n, hash_mix(a ^ HASH_K1, b ^ seed));
}

#endif
