// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the ledger's files share: obj_ledger.c (the record format, replay,
 * folds, open and close) and obj_ledger_write.c (changes, the journal's
 * appends and syncs).
 */
#ifndef SOAK_OBJ_LEDGER_INT_H
#define SOAK_OBJ_LEDGER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "obj_ledger.h"

#define MAGIC UINT64_C(0x31474c4b414f53) /* "SOAKLG1" */
/* 2 added R_VERSION_ID, 3 R_CLOSED, R_LOST_IDS and the header's boot
 * id; a ledger of format 1 or 2 (none of them) loads as it is, and the
 * open that finds one folds it into format 3. */
#define FORMAT 3
#define FORMAT_1 1

/* The journal is folded into the map when it holds more records than
 * this beyond the number of slots. */
#define FOLD_SLACK 4096
#define IO_RECORDS 4096
/* Records kept in memory while the journal cannot take them (a full or
 * failing disk; allocated then), written before any later one; past this
 * many, the next fold writes the whole state instead. */
#define HELD_MAX 1024

enum rec_type {
	R_HEADER = 1,
	R_SLOT,          /* a map entry: the acknowledged state */
	R_INTEND_PUT,
	R_INTEND_DELETE,
	R_ACK,
	R_ABORT,
	R_UNCERTAIN,
	R_SETTLE,        /* state: present or not; id, version, size */
	/* The acknowledged PUT's version id (a versioned bucket), after its
	 * R_ACK or R_SLOT: state = its encoded length, the bytes from
	 * "version" to "time_s" (VID_BYTES) = the id, a UUID as 16 bytes. */
	R_VERSION_ID,
	/* The ledger was closed cleanly here (format 3): the last record of
	 * a journal whose writer synced it and stopped.  A journal that ends
	 * otherwise, started under another boot, may have lost its last
	 * records with the host's page cache. */
	R_CLOSED,
	/* Name numbers id to size (excluded) that records a host restart
	 * took may have named (format 3): none is given again, and a
	 * listing that shows one of them is not judged. */
	R_LOST_IDS,
};

/* R_UNCERTAIN's state: 0, the pending write's outcome is not known;
 * UNCERTAIN_LOST, records about the slot were lost (entry.unknown). */
#define UNCERTAIN_LOST 2

#define VID_BYTES OBJ_LEDGER_VID_BYTES
#define VID_UUID OBJ_LEDGER_VID_UUID

/* 48 bytes, host byte order (the run directory belongs to this host). */
struct rec {
	uint32_t crc;    /* CRC32C of the rest */
	uint8_t type;
	uint8_t state;
	uint16_t reserved;
	uint32_t slot;   /* R_HEADER: the number of slots */
	uint32_t version;/* R_HEADER: FORMAT */
	uint64_t id;     /* R_HEADER: MAGIC */
	uint64_t size;   /* R_HEADER: the boot id its file was begun under (0: unknown) */
	uint64_t etag;   /* R_HEADER: the run tag */
	uint32_t time_s;
	uint32_t gen;    /* the map generation a journal belongs to */
};
_Static_assert(sizeof(struct rec) == 48, "ledger records are 48 bytes");

struct obj_ledger {
	int dir_fd;
	int journal_fd;
	char *map_name, *journal_name, *tmp_name;
	uint32_t slots;
	uint32_t gen;
	uint64_t tag;
	struct obj_ledger_entry *entries;
	/* Per slot: the length byte and VID_BYTES of R_VERSION_ID; allocated
	 * with the first version id (only versioned buckets have any). */
	uint8_t (*vids)[1 + VID_BYTES];
	uint64_t journal_records;   /* since the map */
	/* The journal's length in whole records: a failed append is cut
	 * back to it, so that no later record lands out of step. */
	off_t journal_len;
	/* Records applied but not in the journal yet, in order; or, past
	 * HELD_MAX (or a journal that could not be started), need_fold: only
	 * a fold can put the state on disk, and nothing is appended until
	 * one does.  retry_ns: when a fold is tried again. */
	struct rec *held;
	size_t n_held;
	bool need_fold;
	uint64_t retry_ns;
	uint64_t unsynced_since_ns; /* 0: all synced */
	uint64_t map_bytes;
	int error;
	/* The boot this ledger is opened under (0: unknown); of the files
	 * read, the boot and format their header gave, and whether the
	 * journal's last record is R_CLOSED. */
	uint64_t boot, file_boot;
	uint32_t file_format;
	bool closed;
	bool opened;   /* open succeeded: close marks it clean */
	struct obj_ledger_ids *lost;
	size_t n_lost;
};

/*
 * What a replay learns about damage (obj_ledger_damage.c): where the first
 * is, and, from the first on, which slots the records after the last
 * damage fix whole.  seq counts records (and damages) from the first
 * damage on; a slot is fixed when resolved_at[slot] > damage_at.
 */
struct ledger_damage {
	bool seen;
	bool in_map;
	uint64_t offset;
	uint32_t seq, damage_at;
	uint32_t *intent_at;    /* seq of the slot's last R_INTEND_PUT */
	uint32_t *resolved_at;  /* seq of the record that fixed its state */
};

/* Damage at byte offset of the map or the journal: 0, or -ENOMEM. */
int obj_ledger_damage_note(struct ledger_damage *d, uint32_t slots, bool in_map,
			   uint64_t offset);
/* A record about to be applied, after damage (nothing before any). */
void obj_ledger_damage_track(struct ledger_damage *d, const struct obj_ledger_entry *e,
			     const struct rec *r);
/* Every slot the damage leaves unknown, marked so: how many. */
uint64_t obj_ledger_damage_mark(const struct ledger_damage *d, struct obj_ledger *l);
void obj_ledger_damage_free(struct ledger_damage *d);
/* A range of name numbers set aside (R_LOST_IDS): 0, or a negative errno. */
int obj_ledger_add_lost_ids(struct obj_ledger *l, uint64_t from, uint64_t to);
/* A host restart: every slot that may hold an object unknown, names set
 * aside (in info too): 0, or -ENOMEM. */
int obj_ledger_host_restarted(struct obj_ledger *l, struct obj_ledger_info *info);

/* A record's CRC set (obj_ledger.c). */
void obj_ledger_seal(struct rec *r);
/* Where R_VERSION_ID keeps the id's bytes. */
uint8_t *obj_ledger_rec_vid(struct rec *r);
/* A record's change made to the entries: 0, or -ERANGE (bad slot). */
int obj_ledger_apply(struct obj_ledger *l, const struct rec *r);
/* obj_ledger_write.c: a file's first record; the journal begun afresh
 * for the current generation; a journal closed cleanly made ready to be
 * appended to (its R_CLOSED cut off, synced); the state written whole as a
 * new map, the journal begun anew.  0 or a negative errno. */
struct rec obj_ledger_header(const struct obj_ledger *l);
int obj_ledger_reset_journal(struct obj_ledger *l);
int obj_ledger_reopen_closed(struct obj_ledger *l);
int obj_ledger_fold(struct obj_ledger *l);
/* R_CLOSED appended and the journal synced (obj_ledger_write.c). */
int obj_ledger_mark_closed(struct obj_ledger *l);

#endif
