// SPDX-License-Identifier: GPL-2.0-only
#include "crc32c.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

static uint32_t crc32c_table[256];
static bool have_sse42;

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
