// SPDX-License-Identifier: GPL-2.0-only
/*
 * The volatile write cache of faultdev's disk image: writes land in memory
 * block by block, reads see the newest copy, an honest flush writes the
 * dirty blocks to the backing file, a lying flush marks them doomed
 * instead, and a drop forgets whatever is cached, as a drive without
 * power-loss protection does when the power goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faultdev.h"

/* Lost offsets kept for the "lost" file; more are only counted. */
#define FDEV_LOST_MAX (1u << 20)

static int pread_full(int fd, void *buf, size_t len, uint64_t offset)
{
	while (len > 0) {
		ssize_t n = pread(fd, buf, len, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			/* Past the backing file's end: the device reads zeroes. */
			memset(buf, 0, len);
			return 0;
		}
		buf = (char *)buf + n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t len, uint64_t offset)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, (off_t)offset);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf = (const char *)buf + n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int fdev_cache_init(struct fdev *fd)
{
	fd->nblocks = fd->size / fd->block_size;
	fd->blocks = calloc(fd->nblocks, sizeof(*fd->blocks));
	return fd->blocks ? 0 : -ENOMEM;
}

static void block_unlink(struct fdev *fd, struct fdev_block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		fd->head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	fd->blocks[b->index] = NULL;
	if (b->dirty)
		fd->dirty_blocks--;
	if (b->doomed)
		fd->doomed_blocks--;
}

static void block_free(struct fdev *fd, struct fdev_block *b)
{
	block_unlink(fd, b);
	free(b);
}

void fdev_cache_free(struct fdev *fd)
{
	while (fd->head)
		block_free(fd, fd->head);
	free(fd->blocks);
	fd->blocks = NULL;
	free(fd->lost);
	fd->lost = NULL;
}

/* A cached copy of block index, read from the backing file when new. */
static int block_get(struct fdev *fd, uint64_t index, struct fdev_block **ret)
{
	struct fdev_block *b = fd->blocks[index];
	int r;

	if (b) {
		*ret = b;
		return 0;
	}
	b = malloc(sizeof(*b) + fd->block_size);
	if (!b)
		return -ENOMEM;
	r = pread_full(fd->backing_fd, b->data, fd->block_size, index * fd->block_size);
	if (r < 0) {
		free(b);
		return r;
	}
	b->index = index;
	b->dirty = false;
	b->doomed = false;
	b->prev = NULL;
	b->next = fd->head;
	if (fd->head)
		fd->head->prev = b;
	fd->head = b;
	fd->blocks[index] = b;
	*ret = b;
	return 0;
}

/* A doomed block stays doomed: the write the lie acknowledged is not in the image. */
static void block_make_dirty(struct fdev *fd, struct fdev_block *b)
{
	if (!b->dirty) {
		fd->dirty_blocks++;
		b->dirty = true;
	}
}

/* The block is in the image now: a doomed one is healed. */
static void block_persisted(struct fdev *fd, struct fdev_block *b)
{
	if (b->doomed)
		fd->stats.blocks_healed++;
	block_free(fd, b);
}

/* Writes len bytes at byte within of block index (one block at most). */
static int block_store(struct fdev *fd, uint64_t index, size_t within, const char *src,
		       size_t len)
{
	struct fdev_block *b = fd->blocks[index];
	int r;

	if (fd->cache_on) {
		r = block_get(fd, index, &b);
		if (r < 0)
			return r;
		block_make_dirty(fd, b);
		memcpy(b->data + within, src, len);
		fd->stats.blocks_cached++;
		return 0;
	}
	if (!b)
		return pwrite_full(fd->backing_fd, src, len, index * fd->block_size + within);
	/* Write-through over a cached block: the whole block, then forget it. */
	block_make_dirty(fd, b);
	memcpy(b->data + within, src, len);
	r = pwrite_full(fd->backing_fd, b->data, fd->block_size, index * fd->block_size);
	if (r < 0)
		return r;
	block_persisted(fd, b);
	return 0;
}

int fdev_read(struct fdev *fd, char *buf, size_t len, uint64_t offset)
{
	/* Runs of uncached blocks are read from the backing file in one go. */
	uint64_t run_start = offset;
	size_t run_len = 0;
	int r;

	while (len > 0) {
		uint64_t index = offset / fd->block_size;
		size_t within = offset % fd->block_size;
		size_t n = fd->block_size - within;
		struct fdev_block *b = fd->blocks[index];

		if (n > len)
			n = len;
		if (b) {
			if (run_len > 0) {
				r = pread_full(fd->backing_fd, buf - run_len, run_len, run_start);
				if (r < 0)
					return r;
				run_len = 0;
			}
			memcpy(buf, b->data + within, n);
		} else {
			if (run_len == 0)
				run_start = offset;
			run_len += n;
		}
		buf += n;
		offset += n;
		len -= n;
	}
	if (run_len > 0)
		return pread_full(fd->backing_fd, buf - run_len, run_len, run_start);
	return 0;
}

int fdev_write(struct fdev *fd, const char *buf, size_t len, uint64_t offset)
{
	int r;

	while (len > 0) {
		uint64_t index = offset / fd->block_size;
		size_t within = offset % fd->block_size;
		size_t n = fd->block_size - within;

		if (n > len)
			n = len;
		if (fd->misdirect_on && index == fd->misdirect_from) {
			index = fd->misdirect_to;
			fd->stats.misdirected_blocks++;
			if (fd->misdirect_once)
				fd->misdirect_on = false;
		}
		r = block_store(fd, index, within, buf, n);
		if (r < 0)
			return r;
		buf += n;
		offset += n;
		len -= n;
	}
	return 0;
}

int fdev_writeback(struct fdev *fd)
{
	struct fdev_block *b = fd->head, *next;
	int r;

	for (; b; b = next) {
		next = b->next;
		if (!b->dirty)
			continue;
		r = pwrite_full(fd->backing_fd, b->data, fd->block_size, b->index * fd->block_size);
		if (r < 0)
			return r;
		block_persisted(fd, b);
		fd->stats.blocks_persisted++;
	}
	return 0;
}

/* Block b's write is acknowledged by a lie: no longer dirty, doomed. */
static void block_doom(struct fdev *fd, struct fdev_block *b)
{
	b->dirty = false;
	fd->dirty_blocks--;
	if (!b->doomed) {
		b->doomed = true;
		fd->doomed_blocks++;
	}
	fd->stats.blocks_lied++;
}

/* A lying flush: acknowledged, but its dirty blocks (or the lowest one) stay volatile. */
static int flush_lie(struct fdev *fd)
{
	struct fdev_block *b, *next, *lowest = NULL;

	for (b = fd->head; b; b = next) {
		next = b->next;
		if (!b->dirty)
			continue;
		if (fd->lie_one) {
			if (!lowest || b->index < lowest->index)
				lowest = b;
			continue;
		}
		block_doom(fd, b);
	}
	if (lowest)
		block_doom(fd, lowest);
	fd->stats.lies++;
	fd->lies_left--;
	return fd->lie_one ? fdev_writeback(fd) : 0;
}

int fdev_flush(struct fdev *fd)
{
	/* A lie is spent only on a flush that has something to lie about. */
	if (fd->lies_left > 0 && fd->dirty_blocks > 0)
		return flush_lie(fd);
	return fdev_writeback(fd);
}

static void lost_record(struct fdev *fd, uint64_t index)
{
	fd->stats.blocks_lost_acked++;
	if (fd->nlost == fd->lost_cap) {
		size_t cap = fd->lost_cap ? fd->lost_cap * 2 : 64;
		uint64_t *lost;

		if (cap > FDEV_LOST_MAX)
			return;
		lost = realloc(fd->lost, cap * sizeof(*lost));
		if (!lost)
			return;
		fd->lost = lost;
		fd->lost_cap = cap;
	}
	fd->lost[fd->nlost++] = index;
}

void fdev_drop(struct fdev *fd)
{
	fd->stats.drops++;
	while (fd->head) {
		if (fd->head->doomed)
			lost_record(fd, fd->head->index);
		fd->stats.blocks_dropped++;
		block_free(fd, fd->head);
	}
}
