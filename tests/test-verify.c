// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verified blocks alone (daemon/device/verify.c): a block round-trips; each
 * kind of damage a device can do is classified as what it is (a changed
 * byte corrupt, an old block stale, another offset's block misdirected,
 * half an old block torn, someone else's data foreign); generations wrap;
 * crash windows and racing writes accept what they must and no more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/base/crc32c.h"
#include "daemon/device/verify.h"

static _Alignas(8) uint8_t block[VERIFY_BLOCK], other[VERIFY_BLOCK];

static const struct verify_ident id = { .run = 0x1234, .workload = 7, .target = 9 };

static struct verify_expect expect(uint64_t offset, uint8_t gen)
{
	return (struct verify_expect){ .id = id, .offset = offset, .gen = gen, .known = true };
}

static enum verify_class check(const uint8_t *b, struct verify_expect e)
{
	struct verify_header h;
	return verify_check(b, &e, &h);
}

static void test_crc32c(void **state)
{
	(void)state;
	/* The standard check value of CRC-32C, and one call equals two. */
	assert_int_equal(crc32c_update(0, (const uint8_t *)"123456789", 9), 0xe3069283u);
	uint32_t half = crc32c_update(0, (const uint8_t *)"1234", 4);
	assert_int_equal(crc32c_update(half, (const uint8_t *)"56789", 5), 0xe3069283u);
	/* Long buffers (three streams joined) against a bit at a time, at
	 * every length around the parts' boundaries. */
	static uint8_t buf[3 * 4096 + 64];
	uint64_t x = 88172645463325252u;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	static const size_t lens[] = { 0, 1, 4031, 4032, 4033, 4040, 4096, 8064, 8071, 12288 };
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t want = ~0u;
		for (size_t i = 0; i < lens[k]; i++) {
			want ^= buf[i + 3];
			for (int b = 0; b < 8; b++)
				want = want & 1 ? (want >> 1) ^ 0x82f63b78u : want >> 1;
		}
		assert_int_equal(crc32c_update(0, buf + 3, lens[k]), ~want);
		/* ... and in two calls. */
		uint32_t part = crc32c_update(0, buf + 3, lens[k] / 3);
		assert_int_equal(crc32c_update(part, buf + 3 + lens[k] / 3, lens[k] - lens[k] / 3),
				 ~want);
	}
}

static void test_round_trip(void **state)
{
	(void)state;
	struct verify_header h;

	verify_encode(block, &id, 8192, 42, 3, 1000);
	assert_int_equal(verify_decode(block, sizeof(block), &h), VERIFY_DECODE_OK);
	assert_int_equal(h.offset, 8192);
	assert_int_equal(h.seq, 42);
	assert_int_equal(h.gen, 3);
	assert_int_equal(h.time_ns, 1000);
	assert_int_equal(h.run, id.run);
	assert_int_equal(check(block, expect(8192, 3)), VERIFY_OK);
	/* Short input is not a block. */
	assert_int_equal(verify_decode(block, VERIFY_BLOCK - 1, &h), VERIFY_DECODE_NOT_OURS);
	/* The same place and generation, another write: other bytes. */
	verify_encode(other, &id, 8192, 43, 3, 1000);
	assert_memory_not_equal(block + 64, other + 64, VERIFY_BLOCK - 64);
}

static void test_damage(void **state)
{
	(void)state;
	/* One bit anywhere: corrupt. */
	for (size_t at = 0; at < VERIFY_BLOCK; at += 509) {
		verify_encode(block, &id, 4096, 5, 2, 0);
		block[at] ^= 0x10;
		enum verify_class c = check(block, expect(4096, 2));
		/* The magic itself gone: not soakd's any more. */
		assert_int_equal(c, at < 8 ? VERIFY_FOREIGN : VERIFY_CORRUPT);
	}
	/* An older generation, put back: stale (a lost write). */
	verify_encode(block, &id, 4096, 5, 2, 0);
	assert_int_equal(check(block, expect(4096, 3)), VERIFY_STALE);
	/* The fill, where a write was acknowledged: stale too. */
	verify_encode(block, &id, 4096, 0, 0, 0);
	assert_int_equal(check(block, expect(4096, 1)), VERIFY_STALE);
	/* A generation soakd never wrote yet: damage, not a lost write. */
	verify_encode(block, &id, 4096, 5, 4, 0);
	assert_int_equal(check(block, expect(4096, 3)), VERIFY_CORRUPT);
	/* Another offset's block, or another target's: misdirected. */
	verify_encode(block, &id, 12288, 5, 2, 0);
	assert_int_equal(check(block, expect(4096, 2)), VERIFY_MISDIRECTED);
	struct verify_ident other_target = id;
	other_target.target++;
	verify_encode(block, &other_target, 4096, 5, 2, 0);
	assert_int_equal(check(block, expect(4096, 2)), VERIFY_MISDIRECTED);
	/* Another run's: foreign; zeros: foreign, or unchecked if never written. */
	struct verify_ident other_run = id;
	other_run.run++;
	verify_encode(block, &other_run, 4096, 5, 2, 0);
	assert_int_equal(check(block, expect(4096, 2)), VERIFY_FOREIGN);
	memset(block, 0, sizeof(block));
	assert_int_equal(check(block, expect(4096, 2)), VERIFY_FOREIGN);
	struct verify_expect never = expect(4096, 0);
	never.known = false;
	assert_int_equal(check(block, never), VERIFY_UNCHECKED);
}

static void test_torn(void **state)
{
	(void)state;
	/* The second half from the write before: torn, whichever half. */
	verify_encode(block, &id, 4096, 6, 3, 0);
	verify_encode(other, &id, 4096, 5, 2, 0);
	memcpy(block + VERIFY_BLOCK / 2, other + VERIFY_BLOCK / 2, VERIFY_BLOCK / 2);
	assert_int_equal(check(block, expect(4096, 3)), VERIFY_TORN);
	verify_encode(block, &id, 4096, 6, 3, 0);
	memcpy(block, other, VERIFY_BLOCK / 2);
	assert_int_equal(check(block, expect(4096, 3)), VERIFY_TORN);
	/* A sector of another place's block is damage, not a torn write. */
	verify_encode(block, &id, 4096, 6, 3, 0);
	verify_encode(other, &id, 8192, 5, 2, 0);
	memcpy(block + 1024, other + 1024, 512);
	assert_int_equal(check(block, expect(4096, 3)), VERIFY_CORRUPT);
	/* Racing a write, a mix is expected: not judged. */
	verify_encode(block, &id, 4096, 6, 3, 0);
	verify_encode(other, &id, 4096, 5, 2, 0);
	memcpy(block + 2048, other + 2048, 2048);
	struct verify_expect raced = expect(4096, 3);
	raced.raced = true;
	raced.back = 1;
	assert_int_equal(check(block, raced), VERIFY_UNCHECKED);
	/* Its last write failed, or a crash left it unflushed: torn is one
	 * thing it may be, not judged; a sector of another place still is. */
	struct verify_expect unsure = expect(4096, 3);
	unsure.uncertain = true;
	unsure.back = 1;
	assert_int_equal(check(block, unsure), VERIFY_UNCHECKED);
	verify_encode(other, &id, 8192, 5, 2, 0);
	memcpy(block + 1024, other + 1024, 512);
	assert_int_equal(check(block, unsure), VERIFY_CORRUPT);
}

static void test_generations(void **state)
{
	(void)state;
	assert_int_equal(verify_next_gen(0), 1);
	assert_int_equal(verify_next_gen(254), 255);
	assert_int_equal(verify_next_gen(255), 1);
	assert_int_equal(verify_gen_steps(3, 3), 0);
	assert_int_equal(verify_gen_steps(255, 1), 1);
	assert_int_equal(verify_gen_steps(250, 4), 9);
	assert_int_equal(verify_gen_steps(0, 7), 7);
	assert_int_equal(verify_gen_steps(7, 0), -1);
	/* Across the wrap: 255 is one write behind 1. */
	verify_encode(block, &id, 0, 9, 255, 0);
	assert_int_equal(check(block, expect(0, 1)), VERIFY_STALE);
	assert_int_equal(check(block, expect(0, 255)), VERIFY_OK);
}

static void test_windows(void **state)
{
	(void)state;
	/* A crash left gens 2..4 unflushed after 1: any of 1..4 is uncertain, 5
	 * is damage, 0 (the fill) a lost flushed write. */
	struct verify_expect e = expect(0, 4);
	e.uncertain = true;
	e.back = 3;
	for (uint8_t g = 1; g <= 4; g++) {
		verify_encode(block, &id, 0, g, g, 0);
		assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	}
	verify_encode(block, &id, 0, 9, 5, 0);
	assert_int_equal(check(block, e), VERIFY_CORRUPT);
	verify_encode(block, &id, 0, 0, 0, 0);
	assert_int_equal(check(block, e), VERIFY_STALE);
	/* Across the wrap: 254 flushed, then 255, 1, 2. */
	e = expect(0, 2);
	e.uncertain = true;
	e.back = 3;
	verify_encode(block, &id, 0, 9, 255, 0);
	assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	verify_encode(block, &id, 0, 9, 253, 0);
	assert_int_equal(check(block, e), VERIFY_STALE);
	/* Early in the first cycle, the fill fits the window too. */
	e = expect(0, 1);
	e.uncertain = true;
	e.back = 1;
	verify_encode(block, &id, 0, 0, 0, 0);
	assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	/* The first write of a block never filled, left unflushed: whatever
	 * was there before is uncertain too, not foreign. */
	e = expect(0, 1);
	e.uncertain = e.maybe_unwritten = true;
	e.back = 1;
	memset(block, 0xa5, sizeof(block));
	assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	e.maybe_unwritten = false;
	assert_int_equal(check(block, e), VERIFY_FOREIGN);
	/* After a host restart: any generation, older or newer, of this run
	 * at this place; damage is still damage. */
	e = expect(0, 9);
	e.any_gen = e.uncertain = true;
	verify_encode(block, &id, 0, 9, 40, 0);
	assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	verify_encode(block, &id, 0, 9, 3, 0);
	assert_int_equal(check(block, e), VERIFY_UNCERTAIN);
	block[700] ^= 1;
	assert_int_equal(check(block, e), VERIFY_CORRUPT);
	verify_encode(block, &id, 4096, 9, 3, 0);
	assert_int_equal(check(block, e), VERIFY_MISDIRECTED);
	/* A read racing one write: old or new is fine, and counted ok. */
	e = expect(0, 6);
	e.raced = true;
	e.back = 1;
	verify_encode(block, &id, 0, 9, 5, 0);
	assert_int_equal(check(block, e), VERIFY_OK);
	verify_encode(block, &id, 0, 9, 4, 0);
	assert_int_equal(check(block, e), VERIFY_STALE);
}

static void test_format(void **state)
{
	(void)state;
	struct verify_header h;
	char text[256];

	verify_encode(block, &id, 4096, 77, 2, 5);
	assert_int_equal(verify_decode(block, sizeof(block), &h), VERIFY_DECODE_OK);
	verify_header_format(&h, text, sizeof(text));
	assert_non_null(strstr(text, "offset=4096 seq=77 gen=2"));
	assert_string_equal(verify_class_name(VERIFY_MISDIRECTED), "misdirected");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),       cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_damage),       cmocka_unit_test(test_torn),
		cmocka_unit_test(test_generations),  cmocka_unit_test(test_windows),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
