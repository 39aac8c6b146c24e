/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_VERIFY_H
#define SOAK_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Device data verification: what a verified block holds and how a block
 * read back is judged.  No I/O here (verify_map.c keeps the state,
 * dev_verify.c wires both into the engine), so the encoder, the decoder
 * and the classifier are tested and fuzzed alone.
 *
 * A verify block is 4 KiB at a 4 KiB-aligned offset.  Its first 64 bytes
 * are the header (little-endian):
 *
 *     0  magic "SOAKVFY1"         32  seq: the write's number on this target
 *     8  run id (hash)            40  time: CLOCK_REALTIME ns of the write
 *    16  workload (hash)          48  gen: the block's generation (below),
 *    20  target (hash)                version, 2 reserved bytes
 *    24  offset in bytes          52  CRC-32C of the whole block, this field 0
 *
 * Each later 512-byte sector starts with a tag, the write's seq and the
 * sector's own offset, so a block whose sectors come from different
 * writes is told apart (torn) from one whose bytes changed (corrupt).
 * The rest is generated from (run, offset, seq): nothing is kept to check
 * a block but its generation, and the CRC alone catches a changed byte.
 *
 * Generations: 0 is the fill (written everywhere before the run, by
 * "prep" or "fill"); a write then counts 1, 2, ... 255, 1, 2, ...  A
 * generation compares modulo 255: one up to 127 writes behind is older
 * (stale), the rest newer.  A lost write shows as stale unless exactly a
 * multiple of 255 writes to that one block were all lost.
 */

#define VERIFY_BLOCK 4096u
#define VERIFY_SECTOR 512u
#define VERIFY_HEADER_BYTES 64u
#define VERIFY_MAGIC UINT64_C(0x315946564b414f53) /* "SOAKVFY1" */
#define VERIFY_VERSION 1

enum verify_class {
	VERIFY_OK,
	VERIFY_CORRUPT,       /* CRC mismatch, the sectors all from one write */
	VERIFY_STALE,         /* a valid block, older than the last write acknowledged */
	VERIFY_MISDIRECTED,   /* a valid block of this run naming another offset or target */
	VERIFY_TORN,          /* sectors from different writes */
	VERIFY_FOREIGN,       /* not soakd's, or another run's */
	VERIFY_UNCERTAIN,     /* written in a flush epoch a crash left open, by two writes at
			       * once, or by a failed write: old or new is right */
	VERIFY_UNCHECKED,     /* never written by this run (no fill), or read racing a write */
	VERIFY_CLASSES,
};

const char *verify_class_name(enum verify_class c);

/* Whose blocks these are. */
struct verify_ident {
	uint64_t run;
	uint32_t workload;
	uint32_t target;
};

struct verify_header {
	uint64_t magic;
	uint64_t run;
	uint32_t workload;
	uint32_t target;
	uint64_t offset;
	uint64_t seq;
	uint64_t time_ns;
	uint8_t gen;
	uint8_t version;
	uint32_t crc;
};

/* 64-bit FNV-1a, for run, workload and target names. */
uint64_t verify_hash(const char *s);

/* The generation after g (fill 0 counts as before 1). */
static inline uint8_t verify_next_gen(uint8_t g)
{
	return g == 255 ? 1 : (uint8_t)(g + 1);
}

/* How many writes lead from generation `from` to `to` (0..254), or -1 when
 * `to` cannot follow `from` (to is the fill, from is not). */
int verify_gen_steps(uint8_t from, uint8_t to);

/* Writes a whole block (VERIFY_BLOCK bytes, 8-byte aligned). */
void verify_encode(uint8_t *block, const struct verify_ident *id, uint64_t offset, uint64_t seq,
		   uint8_t gen, uint64_t time_ns);

enum verify_decode_result {
	VERIFY_DECODE_OK,
	VERIFY_DECODE_NOT_OURS,   /* no magic, or a version this soakd does not know */
	VERIFY_DECODE_BAD_CRC,    /* header fields are set but not to be trusted */
};
/* Reads the header of a block of `len` bytes (any; short is NOT_OURS) and
 * checks its CRC over VERIFY_BLOCK bytes. */
enum verify_decode_result verify_decode(const uint8_t *block, size_t len,
					struct verify_header *ret);
/* With a bad CRC: whether the sector tags name more than one write, each
 * tag consistent with the block's offset (torn), rather than one. */
bool verify_sectors_torn(const uint8_t *block, const struct verify_header *h);

/* What soakd expects of a block it reads. */
struct verify_expect {
	struct verify_ident id;
	uint64_t offset;
	uint8_t gen;          /* the map's generation */
	bool known;           /* written by this run (or filled) */
	/* Accepts a generation up to `back` writes behind gen: a crash left
	 * the block's last writes unflushed (uncertain), or a write to it was
	 * in flight while it was read (raced).  Counted in steps, not from a
	 * lowest generation, so the fill and a wrapped 255 both fit. */
	bool uncertain, raced;
	uint8_t back;             /* at most 127 */
	/* The window reaches back to before soakd's first write (no fill):
	 * anything at all may be there. */
	bool maybe_unwritten;
	/* After a host restart the map itself is in doubt: any generation of
	 * this run at this place is accepted (uncertain). */
	bool any_gen;
};

enum verify_class verify_check(const uint8_t *block, const struct verify_expect *e,
			       struct verify_header *ret_found);

/* "offset=... seq=... gen=..." of a header, for logs (no block bytes are
 * ever printed raw). */
void verify_header_format(const struct verify_header *h, char *buf, size_t len);

#endif
