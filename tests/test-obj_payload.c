// SPDX-License-Identifier: GPL-2.0-only
/* The payload generator, its verifier and the checksums over it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "daemon/object/obj_payload.h"

#define SIZE 100003 /* odd, so tails are exercised */

static uint8_t *whole(const struct obj_payload *p, size_t size)
{
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	obj_payload_fill(p, 0, buf, size);
	return buf;
}

static void test_deterministic(void **state)
{
	(void)state;
	struct obj_payload a, b, c, d;
	obj_payload_init(&a, "bucket/key", 10, 1);
	obj_payload_init(&b, "bucket/key", 10, 1);
	obj_payload_init(&c, "bucket/key", 10, 2);
	obj_payload_init(&d, "bucket/kez", 10, 1);
	uint8_t *x = whole(&a, SIZE), *y = whole(&b, SIZE), *v = whole(&c, SIZE), *n = whole(&d, SIZE);
	assert_memory_equal(x, y, SIZE);
	/* Another version or another name: different bytes after the header. */
	assert_memory_not_equal(x + 16, v + 16, 64);
	assert_memory_not_equal(x + 16, n + 16, 64);
	free(x);
	free(y);
	free(v);
	free(n);
}

static void test_random_access(void **state)
{
	(void)state;
	struct obj_payload p;
	obj_payload_init(&p, "o", 1, 7);
	uint8_t *all = whole(&p, SIZE), part[333];
	/* Any slice generated on its own equals the slice of the whole. */
	for (uint64_t off = 0; off < SIZE - sizeof(part); off += 997) {
		for (size_t len = 0; len <= sizeof(part); len += 37) {
			memset(part, 0xaa, sizeof(part));
			obj_payload_fill(&p, off, part, len);
			if (len)
				assert_memory_equal(part, all + off, len);
		}
	}
	free(all);
}

static void test_check(void **state)
{
	(void)state;
	struct obj_payload p;
	uint64_t at = 0;
	obj_payload_init(&p, "name", 4, 3);
	uint8_t *buf = whole(&p, SIZE);

	assert_true(obj_payload_check(&p, 0, buf, SIZE, &at));
	/* Pieces at odd offsets, as a ranged GET delivers them. */
	assert_true(obj_payload_check(&p, 5, buf + 5, 1, &at));
	assert_true(obj_payload_check(&p, 13, buf + 13, 3001, &at));
	/* One flipped bit anywhere is found, at its exact offset. */
	for (size_t flip = 0; flip < SIZE; flip += 4099) {
		buf[flip] ^= 0x10;
		assert_false(obj_payload_check(&p, 0, buf, SIZE, &at));
		assert_int_equal(at, flip);
		if (flip >= 3) {
			assert_false(obj_payload_check(&p, flip - 3, buf + flip - 3, 11, &at));
			assert_int_equal(at, flip);
		}
		buf[flip] ^= 0x10;
	}
	/* The last byte of an odd length. */
	buf[SIZE - 1] ^= 1;
	assert_false(obj_payload_check(&p, 0, buf, SIZE, &at));
	assert_int_equal(at, SIZE - 1);
	free(buf);
}

static void test_header(void **state)
{
	(void)state;
	struct obj_payload p, other;
	uint8_t head[16];
	uint64_t name_hash, version;
	uint64_t at;

	obj_payload_init(&p, "a/b/c", 5, 42);
	obj_payload_fill(&p, 0, head, sizeof(head));
	obj_payload_header(head, &name_hash, &version);
	assert_int_equal(name_hash, obj_name_hash("a/b/c", 5));
	assert_int_equal(version, 42);
	/* Version 41's data read where 42 was written: differs in the header. */
	obj_payload_init(&other, "a/b/c", 5, 41);
	obj_payload_fill(&other, 0, head, sizeof(head));
	assert_false(obj_payload_check(&p, 0, head, sizeof(head), &at));
	assert_int_equal(at, 8);
}

static void test_crc32c(void **state)
{
	(void)state;
	/* The standard check value of CRC-32C. */
	assert_int_equal(obj_crc32c_update(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
	/* Incremental equals one shot, over a payload. */
	struct obj_payload p;
	obj_payload_init(&p, "k", 1, 1);
	uint8_t *buf = whole(&p, SIZE);
	uint32_t crc = obj_crc32c_update(0, buf, 1000);
	crc = obj_crc32c_update(crc, buf + 1000, SIZE - 1000);
	assert_int_equal(crc, obj_crc32c_update(0, buf, SIZE));
	assert_int_equal(crc, obj_payload_crc32c(&p, SIZE));
	free(buf);
}

static void test_md5(void **state)
{
	(void)state;
	struct obj_payload p;
	uint8_t got[16], want[16];
	unsigned int len = 0;
	obj_payload_init(&p, "k", 1, 9);
	uint8_t *buf = whole(&p, SIZE);
	assert_int_equal(obj_payload_md5(&p, SIZE, got), 0);
	assert_int_equal(EVP_Digest(buf, SIZE, want, &len, EVP_md5(), NULL), 1);
	assert_memory_equal(got, want, 16);
	free(buf);
}

static void test_base64(void **state)
{
	(void)state;
	char out[16];
	obj_base64((const uint8_t *)"", 0, out);
	assert_string_equal(out, "");
	obj_base64((const uint8_t *)"f", 1, out);
	assert_string_equal(out, "Zg==");
	obj_base64((const uint8_t *)"fo", 2, out);
	assert_string_equal(out, "Zm8=");
	obj_base64((const uint8_t *)"foobar", 6, out);
	assert_string_equal(out, "Zm9vYmFy");
	obj_base64((const uint8_t[]){ 0xfb, 0xff }, 2, out);
	assert_string_equal(out, "+/8=");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_random_access),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_md5),
		cmocka_unit_test(test_base64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
