// SPDX-License-Identifier: GPL-2.0-only
/*
 * faultdev's filesystem: disk.img (the device: SIZE bytes through the
 * write cache), ctl (write commands, read statistics), lost (acknowledged
 * blocks that drops lost) and doomed (blocks a lying flush left volatile).
 * Every file is opened with direct I/O, so the kernel keeps no page cache of
 * them: after a drop, a read of disk.img asks this process again.  Every op
 * on the disk passes the fault gate (stall, delay, power, errors) first.
 */
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "faultdev.h"

enum fdev_file { FILE_NONE, FILE_ROOT, FILE_DISK, FILE_CTL, FILE_LOST, FILE_DOOMED };

static const char *const file_names[] = {
	[FILE_DISK] = "/" FDEV_DISK_NAME, [FILE_CTL] = "/ctl", [FILE_LOST] = "/lost",
	[FILE_DOOMED] = "/doomed"};

/* An open ctl, lost or doomed file: the text its reads return. */
struct snapshot {
	char *text;
	size_t len;
};

static struct fdev *state(void)
{
	return fuse_get_context()->private_data;
}

static enum fdev_file file_of(const char *path)
{
	enum fdev_file f;

	if (!strcmp(path, "/"))
		return FILE_ROOT;
	for (f = FILE_DISK; f <= FILE_DOOMED; f++)
		if (!strcmp(path, file_names[f]))
			return f;
	return FILE_NONE;
}

static bool overlaps(const struct fdev_range *range, uint64_t offset, uint64_t len)
{
	if (range->length == 0)
		return true;
	return offset < range->offset + range->length && range->offset < offset + len;
}

static const char *op_name(unsigned kind)
{
	return kind == FDEV_OP_READ ? "read" : kind == FDEV_OP_WRITE ? "write" : "flush";
}

static bool error_due(struct fdev *fd, unsigned kind, uint64_t offset, uint64_t len)
{
	unsigned slot = kind == FDEV_OP_READ ? 0 : kind == FDEV_OP_WRITE ? 1 : 2;

	if (!(fd->error_kinds & kind))
		return false;
	if (fd->error_by_range)
		/* A flush has no offset: a range rule fails every flush it names. */
		return kind == FDEV_OP_FLUSH || overlaps(&fd->error_range, offset, len);
	return ++fd->op_count[slot] % fd->error_every == 0;
}

/* Waits until delay_ms have passed or delays are switched off ("delay off"). */
static void delay_wait(struct fdev *fd, uint64_t delay_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(delay_ms / 1000);
	until.tv_nsec += (long)(delay_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	while (fd->delay_ms)
		if (pthread_cond_timedwait(&fd->wakeup, &fd->lock, &until) == ETIMEDOUT)
			break;
}

/*
 * What every op on the disk goes through first, in the order a device would
 * show it: a stall, a delay, no power, an injected error.  Returns 0 or
 * -EIO; takes and releases fd->lock (waits release it too).
 */
static int fault_gate(struct fdev *fd, unsigned kind, uint64_t offset, uint64_t len)
{
	int r = 0;

	pthread_mutex_lock(&fd->lock);
	if (kind == FDEV_OP_READ)
		fd->stats.reads++;
	else if (kind == FDEV_OP_WRITE)
		fd->stats.writes++;
	else
		fd->stats.flushes++;
	if (fd->trace && kind != FDEV_OP_FLUSH) /* fs_fsync traces its own */
		fprintf(stderr, "faultdev: %s %" PRIu64 " +%" PRIu64 "\n", op_name(kind), offset,
			len);
	if (fd->stalled) {
		fd->stats.stalled_ops++;
		fd->stalled_now++;
		while (fd->stalled)
			pthread_cond_wait(&fd->wakeup, &fd->lock);
		fd->stalled_now--;
	}
	if (fd->delay_ms && fd->delay_flush_only ? kind == FDEV_OP_FLUSH :
	    fd->delay_ms && (kind != FDEV_OP_FLUSH || fd->delay_range.length == 0) &&
	    overlaps(&fd->delay_range, offset, len)) {
		fd->stats.delayed_ops++;
		delay_wait(fd, fd->delay_ms);
	}
	if (fd->power_off) {
		fd->stats.ops_while_off++;
		r = -EIO;
	} else if (error_due(fd, kind, offset, len)) {
		if (kind == FDEV_OP_READ)
			fd->stats.read_errors++;
		else if (kind == FDEV_OP_WRITE)
			fd->stats.write_errors++;
		else
			fd->stats.flush_errors++;
		if (fd->trace)
			fprintf(stderr, "faultdev: EIO on %s %" PRIu64 " +%" PRIu64 "\n",
				op_name(kind), offset, len);
		r = -EIO;
	}
	pthread_mutex_unlock(&fd->lock);
	return r;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* No kernel page cache over any file: reads always reach us. */
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->auto_cache = 0;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	return state();
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct fdev *fd = state();
	enum fdev_file f = file_of(path);

	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_nlink = 1;
	switch (f) {
	case FILE_NONE:
		return -ENOENT;
	case FILE_ROOT:
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	case FILE_DISK:
		st->st_mode = S_IFREG | 0600;
		st->st_size = (off_t)fd->size;
		st->st_blocks = (blkcnt_t)(fd->size / 512);
		return 0;
	case FILE_CTL:
		st->st_mode = S_IFREG | 0600;
		return 0;
	case FILE_LOST:
	case FILE_DOOMED:
		st->st_mode = S_IFREG | 0400;
		return 0;
	}
	return -ENOENT;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	enum fdev_file f;

	if (file_of(path) != FILE_ROOT)
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (f = FILE_DISK; f <= FILE_DOOMED; f++)
		fill(buf, file_names[f] + 1, NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	enum fdev_file f = file_of(path);
	struct snapshot *snap;

	if (f == FILE_NONE)
		return -ENOENT;
	if (f == FILE_ROOT)
		return -EISDIR;
	if ((f == FILE_LOST || f == FILE_DOOMED) && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (f == FILE_DISK)
		return 0;
	snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	fi->fh = (uintptr_t)snap;
	return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct snapshot *snap = (struct snapshot *)(uintptr_t)fi->fh;

	if (snap) {
		free(snap->text);
		free(snap);
	}
	return 0;
}

static int read_snapshot(struct fdev *fd, enum fdev_file f, struct snapshot *snap, char *buf,
			 size_t size, off_t offset)
{
	/* Rendered at the first read of an open (offset 0), so one cat sees one state. */
	if (offset == 0 || !snap->text) {
		free(snap->text);
		pthread_mutex_lock(&fd->lock);
		snap->text = f == FILE_CTL	? fdev_render_stats(fd, &snap->len)
			     : f == FILE_LOST ? fdev_render_lost(fd, &snap->len)
					      : fdev_render_doomed(fd, &snap->len);
		pthread_mutex_unlock(&fd->lock);
		if (!snap->text)
			return -ENOMEM;
	}
	if ((uint64_t)offset >= snap->len)
		return 0;
	if (size > snap->len - (size_t)offset)
		size = snap->len - (size_t)offset;
	memcpy(buf, snap->text + offset, size);
	return (int)size;
}

/* Clamps [offset, offset+size) to the disk; false when it starts past the end. */
static bool clamp(struct fdev *fd, size_t *size, off_t offset)
{
	if (offset < 0 || (uint64_t)offset >= fd->size)
		return false;
	if (*size > fd->size - (uint64_t)offset)
		*size = fd->size - (uint64_t)offset;
	return true;
}

static int fs_read(const char *path, char *buf, size_t size, off_t offset,
		   struct fuse_file_info *fi)
{
	struct fdev *fd = state();
	enum fdev_file f = file_of(path);
	int r;

	if (f != FILE_DISK)
		return read_snapshot(fd, f, (struct snapshot *)(uintptr_t)fi->fh, buf, size,
				     offset);
	if (!clamp(fd, &size, offset))
		return 0;
	r = fault_gate(fd, FDEV_OP_READ, (uint64_t)offset, size);
	if (r < 0)
		return r;
	pthread_mutex_lock(&fd->lock);
	r = fdev_read(fd, buf, size, (uint64_t)offset);
	if (r == 0)
		fd->stats.bytes_read += size;
	pthread_mutex_unlock(&fd->lock);
	return r < 0 ? r : (int)size;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t offset,
		    struct fuse_file_info *fi)
{
	struct fdev *fd = state();
	enum fdev_file f = file_of(path);
	int r;

	if (f == FILE_CTL) {
		pthread_mutex_lock(&fd->lock);
		r = fdev_command(fd, buf, size);
		if (r == 0)
			fd->last_error[0] = 0;
		pthread_mutex_unlock(&fd->lock);
		return r < 0 ? r : (int)size;
	}
	if (f != FILE_DISK)
		return -EACCES;
	if (!clamp(fd, &size, offset))
		return -ENOSPC;
	r = fault_gate(fd, FDEV_OP_WRITE, (uint64_t)offset, size);
	if (r < 0)
		return r;
	pthread_mutex_lock(&fd->lock);
	r = fdev_write(fd, buf, size, (uint64_t)offset);
	if (r == 0)
		fd->stats.bytes_written += size;
	pthread_mutex_unlock(&fd->lock);
	return r < 0 ? r : (int)size;
}

/*
 * The loop driver turns a REQ_OP_FLUSH (and the post-flush the block layer
 * adds for REQ_FUA, since loop does not claim FUA) into vfs_fsync() of its
 * backing file, which FUSE sends here: the device's cache flush.
 */
static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct fdev *fd = state();
	int r;

	if (file_of(path) != FILE_DISK)
		return 0;
	r = fault_gate(fd, FDEV_OP_FLUSH, 0, 0);
	if (r < 0)
		return r;
	pthread_mutex_lock(&fd->lock);
	if (fd->trace)
		fprintf(stderr, "faultdev: fsync (datasync %d)\n", datasync);
	r = fdev_flush(fd);
	pthread_mutex_unlock(&fd->lock);
	return r;
}

/* close(2) flushes nothing: a drive's cache does not care who closes what. */
static int fs_flush(const char *path, struct fuse_file_info *fi)
{
	return 0;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct fdev *fd = state();
	enum fdev_file f = file_of(path);

	if (f == FILE_CTL)
		return 0; /* "echo cmd > ctl" opens with O_TRUNC */
	if (f == FILE_DISK)
		return (uint64_t)size == fd->size ? 0 : -EPERM;
	return -EACCES;
}

/* Discards and write-zeroes from the loop driver: zeroes through the cache. */
static int fs_fallocate(const char *path, int mode, off_t offset, off_t length,
			struct fuse_file_info *fi)
{
	static const char zeroes[65536];
	struct fdev *fd = state();
	size_t size = (size_t)length;
	int r;

	if (file_of(path) != FILE_DISK)
		return -EOPNOTSUPP;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (length <= 0 || !clamp(fd, &size, offset))
		return -EINVAL;
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		return 0;
	r = fault_gate(fd, FDEV_OP_WRITE, (uint64_t)offset, size);
	if (r < 0)
		return r;
	pthread_mutex_lock(&fd->lock);
	while (r == 0 && size > 0) {
		size_t n = size < sizeof(zeroes) ? size : sizeof(zeroes);
		r = fdev_write(fd, zeroes, n, (uint64_t)offset);
		offset += (off_t)n;
		size -= n;
	}
	pthread_mutex_unlock(&fd->lock);
	return r;
}

const struct fuse_operations fdev_fs_ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.fsync = fs_fsync,
	.flush = fs_flush,
	.truncate = fs_truncate,
	.fallocate = fs_fallocate,
};
