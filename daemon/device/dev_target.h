/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_TARGET_H
#define SOAK_DEV_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "dev_path.h"

/*
 * A device workload's target, opened once: the path resolved safely
 * (dev_path.h), every decision made on the descriptor (what it is, the
 * block-device safety checks, its size), a regular file created or
 * extended only after the free space for it is known to be there.
 */
struct dev_target {
	int fd;                 /* open for the workload's I/O, O_DIRECT */
	bool is_blockdev;
	bool claimed;           /* a block device opened for writing: held exclusively */
	bool created;           /* this open created the file */
	uint64_t old_size;      /* a regular file's size when opened */
	uint64_t size;          /* working region: [0, size) */
	uint32_t align;         /* direct-I/O unit */
	struct dev_path path;   /* where it is, until the layout is done */
};

#define DEV_TARGET_INIT { .fd = -1, .path = DEV_PATH_INIT }

/*
 * Opens target t of workload cfg for reads, or reads and writes.  A block
 * device to be written passes dev_safety first; a missing regular file is
 * created (cfg->file_size says how big), an existing one is not yet
 * extended: dev_targets_lay_out does that once the space is checked.
 * Returns 0 or a negative errno with err naming the path and the problem.
 */
int dev_target_open(const struct workload_config *cfg, const struct target_config *t,
		    bool writes, struct dev_target *ret, char *err, size_t errlen);

/*
 * Checks that the filesystems (and the user's and group's quotas) of the
 * targets that still need laying out have room for all of them together,
 * then lays each out with random data.  On failure nothing is left half
 * done: see dev_target_undo.
 */
int dev_targets_lay_out(struct dev_target *targets, const struct target_config *cfgs, size_t n,
			char *err, size_t errlen);

/* After a failed start: removes a file the open created, shrinks one it
 * extended back to its old size. */
void dev_target_undo(struct dev_target *t);

/* Closes everything; safe on DEV_TARGET_INIT and after a failed open. */
void dev_target_close(struct dev_target *t);

/*
 * soakd --check-config: every check dev_target_open and the layout would
 * make that needs no write: unsafe paths, a missing file without
 * file_size, the root disk, mounted or held devices, signatures, free
 * space and quota.  Creates, extends and writes nothing.
 */
int dev_targets_check(const struct workload_config *cfg, bool writes, char *err, size_t errlen);

#endif
