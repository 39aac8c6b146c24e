// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device verify header decoder and classifier (daemon/device/verify.c)
 * on blocks read from a device that may hold anything.  Beyond "no
 * sanitizer report": a block that decodes with a good CRC re-encodes from
 * its own header to the same header; the classifier returns a class and
 * never calls damage ok; and a block of this run at its own offset and
 * generation is always ok.
 */
#include "fuzz.h"

#include "daemon/device/verify.h"

static _Alignas(8) uint8_t block[VERIFY_BLOCK], again[VERIFY_BLOCK];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct verify_header h, h2;
	struct verify_expect e = { .id = { .run = 1, .workload = 2, .target = 3 }, .known = true };

	/* Short inputs are padded: the decoder sees the whole block. */
	memset(block, 0, sizeof(block));
	memcpy(block, data, size < sizeof(block) ? size : sizeof(block));
	enum verify_decode_result d = verify_decode(block, sizeof(block), &h);
	FUZZ_CHECK(verify_decode(data, size < VERIFY_BLOCK ? size : VERIFY_BLOCK, &h2) ==
			   (size < VERIFY_BLOCK ? VERIFY_DECODE_NOT_OURS : d));
	if (size > 3) {
		e.gen = data[size - 1];
		e.back = data[size - 2] & 127;
		e.uncertain = data[size - 3] & 1;
		e.raced = data[size - 3] & 2;
		e.known = !(data[size - 3] & 4);
		e.any_gen = data[size - 3] & 8;
		e.maybe_unwritten = data[size - 3] & 16;
	}
	if (d != VERIFY_DECODE_NOT_OURS)
		e.offset = h.offset;
	enum verify_class c = verify_check(block, &e, &h2);
	FUZZ_CHECK((unsigned)c < VERIFY_CLASSES);
	if (d == VERIFY_DECODE_OK) {
		struct verify_ident id = { h.run, h.workload, h.target };
		verify_encode(again, &id, h.offset, h.seq, h.gen, h.time_ns);
		FUZZ_CHECK(verify_decode(again, sizeof(again), &h2) == VERIFY_DECODE_OK);
		FUZZ_CHECK(memcmp(again, block, 64) == 0 || h.crc != h2.crc ||
			   memcmp(again, block, 52) != 0);
		e.id = id;
		e.gen = h.gen;
		e.known = true;
		e.raced = e.uncertain = e.any_gen = e.maybe_unwritten = false;
		FUZZ_CHECK(verify_check(block, &e, &h2) == VERIFY_OK);
	} else if (d == VERIFY_DECODE_BAD_CRC) {
		/* A bad CRC is never ok, whatever the window. */
		FUZZ_CHECK(c != VERIFY_OK && c != VERIFY_UNCERTAIN);
	} else {
		/* No header: never ok; uncertain only where the block may
		 * still hold what was there before soakd wrote it. */
		FUZZ_CHECK(c != VERIFY_OK && (c != VERIFY_UNCERTAIN || e.maybe_unwritten));
	}
	char text[256];
	verify_header_format(&h, text, sizeof(text));
	return 0;
}
