// SPDX-License-Identifier: GPL-2.0-only
#include "crc32c.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

static uint32_t crc32c_table[256];
static bool have_sse42;

/*
 * The instruction has a latency of 3 cycles and a throughput of 1: three
 * independent streams over three parts of a buffer run three times as fast
 * as one, and their CRCs are joined by linearity (GF(2)):
 *
 *   crc(s, A || B) = shift(crc(s, A), |B|) ^ crc(0, B)
 *
 * where shift(t, n) = crc(t, n zero bytes), a linear map of t, tabulated
 * byte by byte for the two shifts the parts need (n = PART, 2 * PART).
 * The raw register is meant here (no pre- or post-inversion).
 */
#define PART 1344u                  /* 168 words: three parts cover a 4 KiB block's body */
static uint32_t shift_part[4][256], shift_2part[4][256];

static void crc32c_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[n] = c;
	}
#if defined(__x86_64__)
	have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t t = v << (8 * k);
			for (uint32_t n = 0; n < 2 * PART; n++) {
				t = crc32c_table[t & 0xff] ^ (t >> 8);
				if (n + 1 == PART)
					shift_part[k][v] = t;
			}
			shift_2part[k][v] = t;
		}
}

static uint32_t shift(const uint32_t table[4][256], uint32_t t)
{
	return table[0][t & 0xff] ^ table[1][(t >> 8) & 0xff] ^ table[2][(t >> 16) & 0xff] ^
	       table[3][t >> 24];
}

static uint32_t crc32c_soft(uint32_t crc, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		crc = crc32c_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *buf,
							      size_t len)
{
	uint64_t c = crc;
	for (; len >= 3 * PART; len -= 3 * PART, buf += 3 * PART) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < PART; i += 8) {
			uint64_t v0, v1, v2;
			memcpy(&v0, buf + i, 8);
			memcpy(&v1, buf + PART + i, 8);
			memcpy(&v2, buf + 2 * PART + i, 8);
			c = __builtin_ia32_crc32di(c, v0);
			c1 = __builtin_ia32_crc32di(c1, v1);
			c2 = __builtin_ia32_crc32di(c2, v2);
		}
		c = shift(shift_2part, (uint32_t)c) ^ shift(shift_part, (uint32_t)c1) ^ (uint32_t)c2;
	}
	for (; len >= 8; len -= 8, buf += 8) {
		uint64_t v;
		memcpy(&v, buf, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	for (; len; len--, buf++)
		c = __builtin_ia32_crc32qi((uint32_t)c, *buf);
	return (uint32_t)c;
}
#endif

uint32_t crc32c_update(uint32_t crc, const uint8_t *buf, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, crc32c_init);
	crc = ~crc;
#if defined(__x86_64__)
	if (have_sse42)
		return ~crc32c_hw(crc, buf, len);
#endif
	return ~crc32c_soft(crc, buf, len);
}
