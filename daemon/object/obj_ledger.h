/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_OBJ_LEDGER_H
#define SOAK_OBJ_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "obj_ledger_util.h"

/*
 * The write ledger of one object workload thread: for every slot of its
 * name pool, what the server last acknowledged (the object's name number,
 * version, size, ETag and when), and a write whose outcome is not known
 * yet.  It lives in the run directory, so a restarted soakd goes on with
 * the same names, checks that what was acknowledged before is still there
 * and cleans up every object the run ever wrote.
 *
 * On disk, two files per thread, of fixed-size records with a CRC32C each:
 * "<base>.map", every slot's state as of a generation (written to a
 * temporary file, synced and renamed over the old one), and "<base>.journal",
 * every change since, appended.  An intent is appended before a PUT or
 * DELETE is sent and the outcome after it ends, so whatever the server may
 * hold is in the ledger even if soakd is killed in between (then it is
 * uncertain, see below).  The journal is synced at most OBJ_LEDGER_SYNC_NS
 * after a record (a crash of soakd loses nothing written; a power cut at
 * most that long: see host_restarted in obj_ledger_info).  A clean close
 * appends R_CLOSED, and each file's header names the boot it was begun
 * under, which is how the next open tells a host restart.  When
 * the journal outgrows the live set it is folded into a new map and
 * started afresh: disk stays within two records per slot plus a constant,
 * and memory at one entry per slot.
 *
 * A torn last record (a write a crash or a full disk cut short, with
 * nothing after it) is dropped: the intent before it keeps its slot
 * uncertain.  Damage (a record with a bad CRC or one that makes no
 * sense, as a power cut or a bad disk leaves them) is skipped and the
 * replay goes on with the whole records after it: what they say is kept.
 * The records in the damaged stretch are lost, and any slot may have been
 * named in them, so every slot that may hold an object and whose state no
 * later record fixes whole (an acknowledged PUT announced after the
 * damage, a read's settlement) is "unknown" from then on: what the server
 * holds under its name is read and taken as it is, never judged lost or
 * stale.  A deleted name stays certain: soakd never writes it again.
 */

#define OBJ_LEDGER_SYNC_NS (UINT64_C(1000000000))
/* Name numbers set aside at a host restart: more than a thread can begin
 * in the records a power cut may take (the journal is synced every
 * OBJ_LEDGER_SYNC_NS; 2^24 names is minutes of PUTs of new names at the
 * highest rates seen), and few enough that 65,536 host restarts keep
 * names below 2^40. */
#define OBJ_LEDGER_LOST_IDS (UINT64_C(1) << 24)

enum obj_ledger_state {
	OBJ_LEDGER_NONE,     /* nothing was ever acknowledged in this slot */
	OBJ_LEDGER_PRESENT,  /* a PUT of (id, version) was acknowledged */
	OBJ_LEDGER_DELETED,  /* a DELETE of id was acknowledged: must stay gone */
};

enum obj_ledger_pending {
	OBJ_PENDING_NONE,
	OBJ_PENDING_PUT,     /* a PUT of (try_id, try_version, try_size) was sent */
	OBJ_PENDING_DELETE,  /* a DELETE of id was sent */
};

struct obj_ledger_entry {
	uint64_t id;          /* name number of the acknowledged state */
	uint64_t size;        /* bytes of the acknowledged version */
	uint64_t etag;        /* hash of the ETag the server gave it; 0 unknown */
	uint64_t try_id;      /* a pending PUT's name number */
	uint64_t try_size;
	uint32_t version;
	uint32_t try_version;
	uint32_t time_s;      /* wall clock of the acknowledgement */
	uint8_t state;        /* enum obj_ledger_state */
	/* enum obj_ledger_pending.  A pending write whose transfer is over
	 * without a clear answer (timeout, connection lost, soakd killed) is
	 * "uncertain": either outcome may be what the server holds, until a
	 * read says which.  A write sent while one is uncertain (a doubtful
	 * slot rewritten or cleaned up) leaves the slot uncertain unless it
	 * is acknowledged; after an uncertain DELETE the slot is unknown. */
	uint8_t pending;
	uint8_t uncertain;
	/* Records about this slot may have been lost to damage (see above):
	 * state and pending are the last known, not necessarily the last.
	 * Until a write acknowledged or a read settles it, it is doubtful
	 * and no read of it is judged. */
	uint8_t unknown;
};

struct obj_ledger;

/* Name numbers from to to (excluded). */
struct obj_ledger_ids {
	uint64_t from, to;
};

/* What the ledger was opened with and what it found. */
struct obj_ledger_info {
	char tag[OBJ_LEDGER_TAG_LEN + 1];  /* the run tag of its names */
	bool resumed;                      /* it held a ledger already */
	uint64_t records_replayed;
	uint64_t present, uncertain, deleted;
	/* Of the uncertain, those unknown (records lost to damage). */
	uint64_t unknown;
	bool torn;                         /* its last record was cut short */
	uint64_t damaged;                  /* records with a bad CRC or no sense, skipped */
	/* Where the first damage is: in the map (else the journal), at this
	 * byte offset; meaningful when torn or damaged. */
	bool damage_in_map;
	uint64_t damage_offset;
	/* The ledger was last written under another boot and not closed
	 * cleanly: the host went down (a power cut, a crash, a reset) with
	 * up to OBJ_LEDGER_SYNC_NS of records in its page cache.  Any of its
	 * objects may have been written since what the ledger holds, so
	 * every slot that may hold one is unknown (as after damage), and
	 * names it may have begun are set aside: lost_ids. */
	bool host_restarted;
	struct obj_ledger_ids lost_ids;
};

/*
 * Opens (creating if need be) the ledger "<base>.map" / "<base>.journal"
 * in the directory dir_fd, for `slots` slots.  tag is the run tag to record
 * if the ledger is new; an existing ledger's own tag is returned in
 * ret_info.  boot is the kernel's boot id (host_boot_id(); 0 if unknown),
 * which tells a host restart.  A ledger for another number of slots is
 * refused.  Returns 0 or a negative errno with err saying what and why.
 */
int obj_ledger_open(int dir_fd, const char *base, uint32_t slots, const char *tag, uint64_t boot,
		    struct obj_ledger **ret, struct obj_ledger_info *ret_info, char *err,
		    size_t errlen);
/* Syncs, marks the ledger closed cleanly (when every record is on disk)
 * and closes; NULL is fine. */
void obj_ledger_close(struct obj_ledger *l);

uint32_t obj_ledger_slots(const struct obj_ledger *l);
/* The name numbers host restarts set aside (none is given again): *ret
 * and how many ranges; and whether id is in one. */
size_t obj_ledger_lost_ids(const struct obj_ledger *l, const struct obj_ledger_ids **ret);
bool obj_ledger_id_lost(const struct obj_ledger *l, uint64_t id);
const struct obj_ledger_entry *obj_ledger_get(const struct obj_ledger *l, uint32_t slot);

/*
 * Changes.  Each appends one journal record (write(2) before returning, so
 * a PUT is never sent before its intent is written); they return 0 or a
 * negative errno from the disk, which the caller counts and reports (the
 * in-memory state changes either way).  A record the disk did not take
 * (ENOSPC, EFBIG, EIO) leaves the journal at its last whole record and is
 * held, in order, with those after it, until a later change or
 * obj_ledger_flush writes them (past a bound, a fold writes the state).
 */
int obj_ledger_intend_put(struct obj_ledger *l, uint32_t slot, uint64_t id, uint32_t version,
			  uint64_t size);
int obj_ledger_intend_delete(struct obj_ledger *l, uint32_t slot);
/* The pending write was acknowledged (etag: a hash of its ETag, or 0). */
int obj_ledger_ack(struct obj_ledger *l, uint32_t slot, uint64_t etag, uint64_t wall_ns);
/* A versioned bucket: the version id (x-amz-version-id) of the PUT just
 * acknowledged in slot.  Kept when it is a UUID (MinIO) or at most 32
 * bytes (AWS); -E2BIG otherwise (then reads take the latest version). */
int obj_ledger_set_version_id(struct obj_ledger *l, uint32_t slot, const char *vid);
/* The version id of slot's acknowledged PUT into buf (at least
 * OBJ_LEDGER_VID_MAX bytes); "" when none is kept. */
void obj_ledger_version_id(const struct obj_ledger *l, uint32_t slot, char *buf, size_t len);
/* The pending write certainly did not happen (the server refused it). */
int obj_ledger_abort(struct obj_ledger *l, uint32_t slot);
/* The pending write ended without a clear answer: uncertain until read. */
int obj_ledger_uncertain(struct obj_ledger *l, uint32_t slot);
/* A read settled what the server holds: (id, version, size) present, or
 * (present false) nothing under the slot's name. */
int obj_ledger_settle(struct obj_ledger *l, uint32_t slot, bool present, uint64_t id,
		      uint32_t version, uint64_t size, uint64_t wall_ns);

/* Syncs the journal if its oldest unsynced record is older than
 * OBJ_LEDGER_SYNC_NS (or always, with force); folds the journal into a new
 * map when it outgrew it.  Returns 0 or a negative errno. */
int obj_ledger_flush(struct obj_ledger *l, uint64_t now_ns, bool force);

/* For status and tests: bytes on disk, and journal records since the map. */
uint64_t obj_ledger_disk_bytes(const struct obj_ledger *l);
uint64_t obj_ledger_journal_records(const struct obj_ledger *l);
/* The last disk error (0 if none), for reporting once. */
int obj_ledger_error(const struct obj_ledger *l);

#endif
