/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_PAYLOAD_H
#define SOAK_OBJ_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Object payloads, generated from (name, version) so that any byte of any
 * version of any object can be recomputed on demand: PUT streams them out
 * and GET checks what comes back, a range as well as a whole object, with
 * no copy of the data kept anywhere.
 *
 * Layout, in little-endian 64-bit words: word 0 is the FNV-1a hash of the
 * name, word 1 the version, word i >= 2 a counter-based mix of (seed, i),
 * seed being a mix of the two.  The first 16 bytes therefore say which
 * object and version they belong to, which turns "corrupt" into "version 3
 * where version 5 was written" when an old version comes back.  Random
 * access costs nothing more than sequential: no state is carried.
 */

struct obj_payload {
	uint64_t name_hash;
	uint64_t version;
	uint64_t seed;
};

uint64_t obj_name_hash(const char *name, size_t len);
void obj_payload_init(struct obj_payload *p, const char *name, size_t name_len, uint64_t version);
/* Writes payload bytes [offset, offset + len) to buf. */
void obj_payload_fill(const struct obj_payload *p, uint64_t offset, uint8_t *buf, size_t len);
/*
 * Compares buf with payload bytes [offset, offset + len).  Returns true when
 * equal; otherwise false and the payload offset of the first differing byte
 * in *ret_at.
 */
bool obj_payload_check(const struct obj_payload *p, uint64_t offset, const uint8_t *buf, size_t len,
		       uint64_t *ret_at);
/* The (name hash, version) header of a payload's first 16 bytes. */
void obj_payload_header(const uint8_t head[16], uint64_t *ret_name_hash, uint64_t *ret_version);

/* Checksums S3 can verify on PUT, computed over a payload without storing it. */
uint32_t obj_crc32c_update(uint32_t crc, const uint8_t *buf, size_t len);
uint32_t obj_payload_crc32c(const struct obj_payload *p, uint64_t size);
/* The MD5 digest; 0 or -ENOMEM / -EIO. */
int obj_payload_md5(const struct obj_payload *p, uint64_t size, uint8_t ret_digest[16]);
/* Standard base64 with padding of len bytes into out (4 * ceil(len / 3) + 1 bytes). */
void obj_base64(const uint8_t *in, size_t len, char *out);

#endif
