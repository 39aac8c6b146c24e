/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CRC32C_H
#define SOAK_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), as S3's
 * x-amz-checksum-crc32c and soakd's device verify headers use it: the
 * SSE 4.2 instruction where the CPU has it, a table otherwise.  crc is the
 * CRC so far (0 to start); the result of one call feeds the next.
 */
uint32_t crc32c_update(uint32_t crc, const uint8_t *buf, size_t len);

#endif
