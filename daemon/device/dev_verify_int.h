/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A verified stream's state, shared by dev_verify.c (the I/O path) and
 * dev_verify_setup.c (filling, opening the state, resuming).
 */
#ifndef SOAK_DEV_VERIFY_INT_H
#define SOAK_DEV_VERIFY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "config/run_config.h"
#include "verify.h"
#include "verify_map.h"
#include "workload/stats.h"

struct dev_verify {
	const struct verify_config *cfg;
	const char *label;              /* the target's path */
	char name[96];                  /* "verify-WORKLOAD-N": the state files' names */
	struct verify_ident id;
	uint64_t n_blocks;
	struct verify_map map;          /* gens NULL until opened */
	int dir_fd;                     /* the run directory the state is in */
	uint64_t fill_run_id;           /* the fill's run id, for a new map */
	bool fill_pending;              /* filled, and no map has taken it yet */

	/* Flush epochs (dev_verify_tick). */
	uint64_t next_flush_ns;
	/* After failed flushes: no new one before flush_retry_ns, the wait
	 * doubling from FLUSH_BACKOFF_MIN_NS to FLUSH_BACKOFF_MAX_NS (0:
	 * the last flush succeeded). */
	uint64_t flush_retry_ns, flush_backoff_ns;
	bool closing, flushing;
	uint64_t closing_epoch;
	unsigned writes_inflight[2];    /* by epoch parity */
	unsigned n_reads, n_writes;     /* in flight */
	/* Map ring entries promised to "pre_read" reads in flight: each
	 * becomes a write of its blocks when it completes, unchecked. */
	uint64_t preread_blocks;
	uint8_t *slot_state;            /* per slot: in flight */
	uint64_t *slot_epoch;
	uint64_t *slot_ring;            /* per write slot: its first map ring entry */
	/*
	 * Per slot and block of its op (slot_blocks a slot): a write's
	 * generation, and how uncertain the block was before it; a read's
	 * view at its submit, the map's generation and how far behind it
	 * the device might have been then (DEV_VERIFY_WRITING set: a write
	 * to the block was in flight).
	 */
	size_t slot_blocks;
	uint8_t *slot_gen, *slot_back;

	/* After a host restart: every block read back once, whatever
	 * generation of this run it holds taken as the truth. */
	bool adopt_all;

	unsigned logged[VERIFY_CLASSES];
	bool dropped_logged;            /* the note that stale became uncertain */
	bool spill_logged;              /* the note that marks are held in memory */
	unsigned saved;
	uint64_t flush_errors;
	/* What the resume's check found, for the first interval. */
	uint64_t resume_counts[OP_VERIFY_CLASSES];
	uint64_t resume_corrupt;
};

#define DEV_VERIFY_WRITING 0x80

/* A read's view of its block at its submit (slot_gen, slot_back). */
struct dev_verify_seen {
	uint8_t gen, back;
};

/* Checks block b as read into `block`, logs and saves the first failures,
 * settles an uncertain block; returns its class.  seen: what a read in
 * flight saw at its submit (NULL: nothing wrote to the device meanwhile,
 * as in the checks at a resume). */
enum verify_class dev_verify_block(struct dev_verify *v, uint64_t b, const uint8_t *block,
				   const struct dev_verify_seen *seen);
/* Adds a class to an op's verify counters and its corrupt total. */
void dev_verify_count(uint64_t *verify, uint64_t *corrupt, enum verify_class c);

#endif
