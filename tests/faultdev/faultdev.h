/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef FAULTDEV_H
#define FAULTDEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * faultdev: a FUSE filesystem with one disk image whose write cache, flushes,
 * errors, delays and write placement a test controls (README.md).  One mutex
 * guards everything below; delayed and stalled ops wait on fdev.wakeup,
 * which releases it.
 */

/*
 * A cached block is dirty (written since the last flush that persisted or
 * lied about it: the next honest flush persists it), doomed (a lying flush
 * acknowledged a write the image lacks: a drop loses it), or both (a doomed
 * block written again: the write the lie acknowledged is still lost at a
 * drop until an honest flush persists the block).
 */
struct fdev_block {
	uint64_t index;
	bool dirty, doomed;
	struct fdev_block *prev, *next; /* the list of cached blocks */
	unsigned char data[];
};

/* Op kinds, as a bit set, for error rules. */
enum {
	FDEV_OP_READ = 1,
	FDEV_OP_WRITE = 2,
	FDEV_OP_FLUSH = 4,
};

struct fdev_range {
	uint64_t offset, length; /* length 0: the whole device */
};

struct fdev_stats {
	uint64_t reads, writes, flushes;
	uint64_t bytes_read, bytes_written;
	uint64_t blocks_cached;    /* block writes that went into the cache */
	uint64_t blocks_persisted; /* cached blocks written to the backing file */
	uint64_t drops, blocks_dropped;
	uint64_t lies, blocks_lied;  /* lying flushes, blocks they doomed */
	uint64_t blocks_healed;      /* doomed blocks rewritten and persisted before a drop */
	uint64_t blocks_lost_acked;  /* doomed blocks a drop lost */
	uint64_t read_errors, write_errors, flush_errors;
	uint64_t delayed_ops, stalled_ops;
	uint64_t misdirected_blocks;
	uint64_t ops_while_off;
};

struct fdev {
	pthread_mutex_t lock;
	pthread_cond_t wakeup; /* "unstall" and "delay off" end waits at once */

	int backing_fd;
	uint64_t size, block_size, nblocks;

	/* The volatile write cache. */
	bool cache_on;
	struct fdev_block **blocks; /* by block index, NULL when not cached */
	struct fdev_block *head;    /* every cached block */
	uint64_t dirty_blocks, doomed_blocks; /* a block may be both */

	/* Power: off after "power off" until "power on"; every op fails. */
	bool power_off;

	/* Lies: the next lies_left flushes that find dirty blocks lie. */
	uint64_t lies_left;
	bool lie_one; /* doom only the lowest dirty block, persist the rest */

	/* Acknowledged blocks lost by drops, for the "lost" file. */
	uint64_t *lost;
	size_t nlost, lost_cap;

	/* Errors: ops of kinds error_kinds in error_range, or every error_every-th. */
	unsigned error_kinds;
	bool error_by_range;
	struct fdev_range error_range;
	uint64_t error_every;
	uint64_t op_count[3]; /* per kind, for error_every */

	/* Delays: delay_ms on reads and writes overlapping delay_range. */
	uint64_t delay_ms;
	struct fdev_range delay_range;
	bool delay_flush_only;          /* "delay DURATION flush": flushes only */
	bool stalled;
	uint64_t stalled_now;

	/* Misdirection: a write of block misdirect_from lands on misdirect_to. */
	bool misdirect_on, misdirect_once;
	uint64_t misdirect_from, misdirect_to;

	bool trace;
	char last_error[160];
	struct fdev_stats stats;
};

#define FDEV_DISK_NAME "disk.img"

/* fs.c: the FUSE operations (FUSE_USE_VERSION is set by meson.build). */
struct fuse_operations;
extern const struct fuse_operations fdev_fs_ops;

/* cache.c; callers hold fd->lock.  Return 0 or a negative errno. */
int fdev_cache_init(struct fdev *fd);
void fdev_cache_free(struct fdev *fd);
int fdev_read(struct fdev *fd, char *buf, size_t len, uint64_t offset);
int fdev_write(struct fdev *fd, const char *buf, size_t len, uint64_t offset);
int fdev_flush(struct fdev *fd);
void fdev_drop(struct fdev *fd);
/* Persist every dirty block (not doomed ones): "cache off" and "flush". */
int fdev_writeback(struct fdev *fd);

/* ctl.c */
/* Runs one or more newline-separated commands; -EINVAL with fd->last_error set. */
int fdev_command(struct fdev *fd, const char *text, size_t len);
/* The text of the read-only files; malloc'd, NUL-terminated. */
char *fdev_render_stats(struct fdev *fd, size_t *ret_len);
char *fdev_render_lost(struct fdev *fd, size_t *ret_len);
char *fdev_render_doomed(struct fdev *fd, size_t *ret_len);

#endif
