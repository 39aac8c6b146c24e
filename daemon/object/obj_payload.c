// SPDX-License-Identifier: GPL-2.0-only
/* Deterministic object payloads and the checksums computed over them. */
#include "obj_payload.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/evp.h>

#include "base/crc32c.h"

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define CHUNK 16384

/* splitmix64's finalizer: a bijection that mixes every input bit into
 * every output bit, at a few cycles per 8 bytes. */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t obj_name_hash(const char *name, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)name[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

void obj_payload_init(struct obj_payload *p, const char *name, size_t name_len, uint64_t version)
{
	p->name_hash = obj_name_hash(name, name_len);
	p->version = version;
	p->seed = mix64(p->name_hash ^ mix64(version + GOLDEN));
}

static inline uint64_t word_at(const struct obj_payload *p, uint64_t i)
{
	if (i >= 2)
		return htole64(mix64(p->seed + i * GOLDEN));
	return htole64(i == 0 ? p->name_hash : p->version);
}

void obj_payload_fill(const struct obj_payload *p, uint64_t offset, uint8_t *buf, size_t len)
{
	uint64_t i = offset / 8;
	unsigned skip = (unsigned)(offset % 8);
	uint64_t w;

	if (skip && len) {
		size_t n = 8 - skip < len ? 8 - skip : len;
		w = word_at(p, i++);
		memcpy(buf, (uint8_t *)&w + skip, n);
		buf += n;
		len -= n;
	}
	for (; len >= 8 && i < 2; len -= 8, buf += 8) {
		w = word_at(p, i++);
		memcpy(buf, &w, 8);
	}
	for (; len >= 8; len -= 8, buf += 8, i++) {
		w = htole64(mix64(p->seed + i * GOLDEN));
		memcpy(buf, &w, 8);
	}
	if (len) {
		w = word_at(p, i);
		memcpy(buf, &w, len);
	}
}

/* First differing byte of two words known to differ. */
static unsigned first_diff(uint64_t a, uint64_t b, unsigned from, unsigned n)
{
	const uint8_t *x = (const uint8_t *)&a, *y = (const uint8_t *)&b;
	for (unsigned k = from; k < from + n; k++)
		if (x[k] != y[k])
			return k - from;
	return 0;
}

bool obj_payload_check(const struct obj_payload *p, uint64_t offset, const uint8_t *buf, size_t len,
		       uint64_t *ret_at)
{
	uint64_t i = offset / 8, at = offset;
	unsigned skip = (unsigned)(offset % 8);
	uint64_t want, got;

	if (skip && len) {
		unsigned n = 8 - skip < len ? 8 - skip : (unsigned)len;
		want = word_at(p, i++);
		got = want;
		memcpy((uint8_t *)&got + skip, buf, n);
		if (got != want) {
			*ret_at = at + first_diff(got, want, skip, n);
			return false;
		}
		buf += n;
		len -= n;
		at += n;
	}
	for (; len >= 8; len -= 8, buf += 8, at += 8, i++) {
		want = word_at(p, i);
		memcpy(&got, buf, 8);
		if (got != want) {
			*ret_at = at + first_diff(got, want, 0, 8);
			return false;
		}
	}
	if (len) {
		want = word_at(p, i);
		got = want;
		memcpy(&got, buf, len);
		if (got != want) {
			*ret_at = at + first_diff(got, want, 0, (unsigned)len);
			return false;
		}
	}
	return true;
}

void obj_payload_header(const uint8_t head[16], uint64_t *ret_name_hash, uint64_t *ret_version)
{
	uint64_t a, b;
	memcpy(&a, head, 8);
	memcpy(&b, head + 8, 8);
	*ret_name_hash = le64toh(a);
	*ret_version = le64toh(b);
}

/* x-amz-checksum-crc32c: base/crc32c.c's, shared with the device verify
 * headers. */
uint32_t obj_crc32c_update(uint32_t crc, const uint8_t *buf, size_t len)
{
	return crc32c_update(crc, buf, len);
}

uint32_t obj_payload_crc32c(const struct obj_payload *p, uint64_t size)
{
	uint8_t chunk[CHUNK];
	uint32_t crc = 0;

	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		obj_payload_fill(p, off, chunk, n);
		crc = obj_crc32c_update(crc, chunk, n);
		off += n;
	}
	return crc;
}

int obj_payload_md5(const struct obj_payload *p, uint64_t size, uint8_t ret_digest[16])
{
	uint8_t chunk[CHUNK];
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int r = -EIO;

	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, EVP_md5(), NULL) != 1)
		goto out;
	for (uint64_t off = 0; off < size;) {
		size_t n = size - off < CHUNK ? (size_t)(size - off) : CHUNK;
		obj_payload_fill(p, off, chunk, n);
		if (EVP_DigestUpdate(ctx, chunk, n) != 1)
			goto out;
		off += n;
	}
	if (EVP_DigestFinal_ex(ctx, ret_digest, &dlen) == 1 && dlen == 16)
		r = 0;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

void obj_base64(const uint8_t *in, size_t len, char *out)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i = 0;

	for (; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = '=';
	}
	*out = '\0';
}
