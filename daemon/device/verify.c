// SPDX-License-Identifier: GPL-2.0-only
/* Verified blocks: encoding, decoding and judging them (see verify.h). */
#include "verify.h"

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/crc32c.h"

#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define OFF_CRC 52u
#define TAG_BYTES 16u

static const char *const class_names[VERIFY_CLASSES] = {
	[VERIFY_OK] = "ok", [VERIFY_CORRUPT] = "corrupt", [VERIFY_STALE] = "stale",
	[VERIFY_MISDIRECTED] = "misdirected", [VERIFY_TORN] = "torn",
	[VERIFY_FOREIGN] = "foreign", [VERIFY_UNCERTAIN] = "uncertain",
	[VERIFY_UNCHECKED] = "unchecked",
};

const char *verify_class_name(enum verify_class c)
{
	return (unsigned)c < VERIFY_CLASSES ? class_names[c] : "?";
}

uint64_t verify_hash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
	return h;
}

int verify_gen_steps(uint8_t from, uint8_t to)
{
	if (from == to)
		return 0;
	if (to == 0)
		return -1;
	if (from == 0)
		return to;          /* the fill, then `to` writes (mod 255: at most 255) */
	return (to - from + 255) % 255;
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64toh(v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint32_t block_crc(const uint8_t *block)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32c_update(0, block, OFF_CRC);

	crc = crc32c_update(crc, zero, sizeof(zero));
	return crc32c_update(crc, block + OFF_CRC + 4, VERIFY_BLOCK - OFF_CRC - 4);
}

/* xorshift64 in four lanes (a word of each in turn), so the CPU runs them
 * side by side: the data only has to differ from write to write and from
 * block to block, the CRC covers it. */
static void fill_words(uint8_t *p, size_t len, uint64_t state[4])
{
	uint64_t x0 = state[0], x1 = state[1], x2 = state[2], x3 = state[3];
	size_t i = 0;

#define XS(x) (x ^= x << 13, x ^= x >> 7, x ^= x << 17)
	for (; i + 32 <= len; i += 32) {
		XS(x0);
		XS(x1);
		XS(x2);
		XS(x3);
		memcpy(p + i, &x0, 8);
		memcpy(p + i + 8, &x1, 8);
		memcpy(p + i + 16, &x2, 8);
		memcpy(p + i + 24, &x3, 8);
	}
	for (; i + 8 <= len; i += 8) {
		XS(x0);
		memcpy(p + i, &x0, 8);
	}
#undef XS
	state[0] = x0;
	state[1] = x1;
	state[2] = x2;
	state[3] = x3;
}

void verify_encode(uint8_t *block, const struct verify_ident *id, uint64_t offset, uint64_t seq,
		   uint8_t gen, uint64_t time_ns)
{
	uint64_t seed = id->run ^ (offset * GOLDEN) ^ (seq * UINT64_C(0xbf58476d1ce4e5b9));
	uint64_t state[4];

	for (int k = 0; k < 4; k++)
		state[k] = (seed ^ ((uint64_t)(k + 1) * UINT64_C(0x94d049bb133111eb))) | 1;

	memset(block, 0, VERIFY_HEADER_BYTES);
	put64(block, VERIFY_MAGIC);
	put64(block + 8, id->run);
	put32(block + 16, id->workload);
	put32(block + 20, id->target);
	put64(block + 24, offset);
	put64(block + 32, seq);
	put64(block + 40, time_ns);
	block[48] = gen;
	block[49] = VERIFY_VERSION;
	fill_words(block + VERIFY_HEADER_BYTES, VERIFY_SECTOR - VERIFY_HEADER_BYTES, state);
	for (uint32_t s = VERIFY_SECTOR; s < VERIFY_BLOCK; s += VERIFY_SECTOR) {
		put64(block + s, seq);
		put64(block + s + 8, offset + s);
		fill_words(block + s + TAG_BYTES, VERIFY_SECTOR - TAG_BYTES, state);
	}
	put32(block + OFF_CRC, block_crc(block));
}

enum verify_decode_result verify_decode(const uint8_t *block, size_t len,
					struct verify_header *ret)
{
	if (len < VERIFY_BLOCK || get64(block) != VERIFY_MAGIC || block[49] != VERIFY_VERSION)
		return VERIFY_DECODE_NOT_OURS;
	*ret = (struct verify_header){
		.magic = VERIFY_MAGIC, .run = get64(block + 8), .workload = get32(block + 16),
		.target = get32(block + 20), .offset = get64(block + 24), .seq = get64(block + 32),
		.time_ns = get64(block + 40), .gen = block[48], .version = block[49],
		.crc = get32(block + OFF_CRC),
	};
	return block_crc(block) == ret->crc ? VERIFY_DECODE_OK : VERIFY_DECODE_BAD_CRC;
}

bool verify_sectors_torn(const uint8_t *block, const struct verify_header *h)
{
	bool other = false;

	for (uint32_t s = VERIFY_SECTOR; s < VERIFY_BLOCK; s += VERIFY_SECTOR) {
		/* A tag that names another place is damage, not a torn write. */
		if (get64(block + s + 8) != h->offset + s)
			return false;
		if (get64(block + s) != h->seq)
			other = true;
	}
	return other;
}

enum verify_class verify_check(const uint8_t *block, const struct verify_expect *e,
			       struct verify_header *ret_found)
{
	struct verify_header h = { 0 };
	enum verify_decode_result d = verify_decode(block, VERIFY_BLOCK, &h);

	*ret_found = h;
	bool open_window = e->uncertain || e->raced;
	if (e->maybe_unwritten && open_window &&
	    (d == VERIFY_DECODE_NOT_OURS || (d == VERIFY_DECODE_OK && h.run != e->id.run)))
		return e->uncertain ? VERIFY_UNCERTAIN : VERIFY_UNCHECKED;
	if (d == VERIFY_DECODE_NOT_OURS)
		return e->known ? VERIFY_FOREIGN : VERIFY_UNCHECKED;
	if (d == VERIFY_DECODE_BAD_CRC) {
		/* A read racing a write may see sectors of both; so may a
		 * block whose last write failed or was unflushed at a crash
		 * (a device promises whole sectors, not whole blocks): not
		 * judged, and left uncertain. */
		bool torn = verify_sectors_torn(block, &h);
		if (e->raced || (e->uncertain && torn))
			return VERIFY_UNCHECKED;
		return torn ? VERIFY_TORN : VERIFY_CORRUPT;
	}
	if (h.run != e->id.run)
		return e->known ? VERIFY_FOREIGN : VERIFY_UNCHECKED;
	if (h.offset != e->offset || h.target != e->id.target || h.workload != e->id.workload)
		return VERIFY_MISDIRECTED;
	if (!e->known)
		return VERIFY_UNCHECKED;
	if (e->any_gen)
		return VERIFY_UNCERTAIN;
	if (h.gen == e->gen)
		return e->uncertain ? VERIFY_UNCERTAIN : VERIFY_OK;
	int behind = verify_gen_steps(h.gen, e->gen);
	/* Anything up to `back` writes behind was right at some point since
	 * the last flush (or during the read). */
	if (open_window && behind >= 1 && behind <= e->back && behind <= 127)
		return e->uncertain ? VERIFY_UNCERTAIN : VERIFY_OK;
	if (behind >= 1 && behind <= 127)
		return VERIFY_STALE;
	/* Newer than any write soakd made to it: not a lost write, damage. */
	return VERIFY_CORRUPT;
}

void verify_header_format(const struct verify_header *h, char *buf, size_t len)
{
	if (!h->magic) {
		snprintf(buf, len, "no soakd header");
		return;
	}
	snprintf(buf, len,
		 "run=%016" PRIx64 " workload=%08" PRIx32 " target=%08" PRIx32 " offset=%" PRIu64
		 " seq=%" PRIu64 " gen=%u time_ns=%" PRIu64 " crc=%08" PRIx32,
		 h->run, h->workload, h->target, h->offset, h->seq, h->gen, h->time_ns, h->crc);
}
