/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_VERIFY_MAP_H
#define SOAK_VERIFY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What soakd must remember to check a device's blocks, across crashes:
 * two files per target in the run directory, both mapped MAP_SHARED (the
 * page cache holds them; a SIGKILL loses nothing, RSS is what the kernel
 * chooses to keep resident, and nothing is copied into anonymous memory):
 *
 *   verify-WORKLOAD-N.map    one byte per 4 KiB block: its generation
 *                            (verify.h), set when a write is submitted;
 *   verify-WORKLOAD-N.state  a header (run id, the write counter, the flush
 *                            epochs), a ring of the writes made since the
 *                            last completed flush (block, generation before
 *                            the write), and a hash table of the blocks that
 *                            are uncertain.
 *
 * Flush epochs: writes are stamped with the open epoch; a flush closes
 * it, waits for its writes to complete, syncs the device, and on success
 * records the epoch as flushed, freeing its ring entries.  After a crash,
 * every block with an entry of an unflushed epoch is uncertain (unless
 * the entry is a FUA write that completed: durable already): the device
 * may hold any generation from before its first such write to the map's.
 * A block becomes certain when it is read (and what it holds is adopted)
 * or written again; until then it stays in the uncertain table, which is
 * in the file too, so a second crash before that read forgets nothing.
 * When the ring fills before a flush completes, the caller must flush
 * synchronously (verify_map_ring_full).  When the uncertain table is full
 * (more than 3/4 of VERIFY_MAP_UNCERTAIN blocks: far more than a ring),
 * further marks are kept exactly in memory, the spill (up to 512Ki
 * blocks, 16 MiB; past that they are lost), and move into the table as it
 * empties (verify_map_sync_async); the file counts the marks only memory
 * holds, so the next open knows it lost them (verify_map_unc_lost) if
 * this process ends first.
 */

#define VERIFY_MAP_RING 65536u
#define VERIFY_MAP_UNCERTAIN (4 * VERIFY_MAP_RING)

struct verify_map_state;    /* the .state file's layout */
struct verify_map_slot;

struct verify_map {
	uint8_t *gens;              /* n_blocks bytes, MAP_SHARED */
	uint64_t n_blocks;
	struct verify_map_state *st;
	size_t map_len, st_len;
	bool created;               /* a new map: nothing written yet */
	/* The host restarted (boot_wall_s moved) and the files were not
	 * closed cleanly: neither the map nor the ring can be trusted. */
	bool host_restarted;
	int64_t boot_wall_s;        /* this opener's boot (verify_map_open) */
	uint64_t boot_id;
	uint64_t resumed_uncertain; /* blocks a crash left uncertain, at open */
	/* Uncertain marks the full table could not take, in memory: an
	 * open-addressing table of spill_cap (a power of 2) slots. */
	struct verify_map_slot *spill;
	size_t spill_cap, spill_n;
	/* Marks lost: held only in memory by an earlier process (the file's
	 * count at open), or no memory to hold them. */
	uint64_t lost;
};

/*
 * Opens (resume) or creates the files NAME.map and NAME.state in the
 * directory dir_fd for a target of n_blocks blocks, identified by `target`
 * (verify_hash of its path).  A new map gets run_id and `filled` (every
 * block holds generation 0).  An existing one must be for as many blocks
 * and the same target (one from before targets were recorded takes this
 * one); its open epochs turn into uncertain blocks.
 * boot_id is the kernel's boot id (the first 64 bits; 0: unknown) and
 * boot_wall_s when the host booted (CLOCK_REALTIME - CLOCK_BOOTTIME, which
 * a clock step moves: used where either opener had no boot id): a map not
 * closed cleanly under another boot sets host_restarted.
 * Returns 0 or -errno with err set.
 */
int verify_map_open(int dir_fd, const char *name, uint64_t n_blocks, uint32_t target,
		    uint64_t run_id, bool filled, int64_t boot_wall_s, uint64_t boot_id,
		    struct verify_map *ret, char *err, size_t errlen);
void verify_map_close(struct verify_map *m);
/* Syncs both files and marks them clean (nothing written since): a host
 * restart then leaves them trustworthy.  verify_map_dirty before writing
 * again: it puts the mark back, on disk, before it returns. */
int verify_map_sync_clean(struct verify_map *m);
int verify_map_dirty(struct verify_map *m);
/* After a host restart (host_restarted) the files stay marked as written
 * under another boot, and not closed cleanly, until this: a check owed
 * after the restart is owed again at the next open, however this process
 * ends before it is done (a stop, SIGKILL, the watchdog, a crash).  Call
 * once the check is done; it marks the files as this boot's. */
int verify_map_trusted(struct verify_map *m);

uint64_t verify_map_run_id(const struct verify_map *m);
bool verify_map_filled(const struct verify_map *m);
/* The next write number (seq) on this target. */
uint64_t verify_map_next_seq(struct verify_map *m);

/* A write of block b is being submitted: records it in the open epoch and
 * returns its new generation.  Call verify_map_ring_full first. */
uint8_t verify_map_write(struct verify_map *m, uint64_t block);
bool verify_map_ring_full(const struct verify_map *m);
/* Ring positions: the next write's (verify_map_write records it there);
 * the writes at [from, to) are durable, FUA writes that completed: a crash
 * before the next flush leaves them certain (entries a flush has freed
 * already are skipped). */
uint64_t verify_map_head(const struct verify_map *m);
/* How uncertain the block was before the write at ring position pos (0
 * once its epoch is flushed). */
uint8_t verify_map_prev_back(const struct verify_map *m, uint64_t pos);
void verify_map_durable(struct verify_map *m, uint64_t from, uint64_t to);

/* Epochs: the open one; closing it (returns the closed one) for a flush;
 * a flush of `epoch` completed. */
uint64_t verify_map_epoch(const struct verify_map *m);
uint64_t verify_map_close_epoch(struct verify_map *m);
void verify_map_flushed(struct verify_map *m, uint64_t epoch);
uint64_t verify_map_flushed_epoch(const struct verify_map *m);
/* Entries of epochs not yet flushed. */
uint64_t verify_map_open_writes(const struct verify_map *m);

/* Uncertain blocks: how many generations back block b may be (0: it is
 * certain); marking one (keeps the larger window); settling one at gen. */
uint8_t verify_map_uncertain(const struct verify_map *m, uint64_t block);
/* -ENOSPC when neither the table nor memory could take it (counted lost). */
int verify_map_mark_uncertain(struct verify_map *m, uint64_t block, uint8_t back);
void verify_map_settle(struct verify_map *m, uint64_t block, uint8_t gen);
/* Uncertain blocks, in table order, then the spill's: *cursor starts at
 * 0; returns false at the end (resume: "touched").  Settling the returned
 * block is allowed. */
bool verify_map_next_uncertain(const struct verify_map *m, size_t *cursor, uint64_t *ret_block);
uint64_t verify_map_n_uncertain(const struct verify_map *m);
/* Of them, held only in memory (the table is full). */
uint64_t verify_map_n_spilled(const struct verify_map *m);
/* Blocks that should be marked uncertain and are not, since the map was
 * made: from the first, a block older than the map says may be one of
 * them, so it cannot be called stale. */
uint64_t verify_map_unc_lost(const struct verify_map *m);

/* Moves what the spill holds into the table as far as it has room, then
 * starts writeback of both files (no wait): at each flush. */
void verify_map_sync_async(struct verify_map *m);

#endif
