// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening a device workload's targets: safe resolution, the block-device
 * safety checks on the descriptor, free space and quota before a regular
 * file grows, the layout with random data, and undoing a layout that
 * failed.  The device engine (dev_engine.c) gets descriptors and sizes.
 */
#include "dev_target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/quota.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "base/log.h"
#include "dev_linger.h"
#include "dev_model.h"
#include "dev_safety.h"
#include "parse.h"
#include "workload/workload.h"

#define DEV_LAYOUT_CHUNK (1u << 20)

/* How long systemd should wait beyond each progress report of a layout,
 * which may run before READY=1 or inside a reload. */
#define LAYOUT_EXTEND_USEC (UINT64_C(30) * 1000000)

#ifndef SYS_quotactl_fd
#define SYS_quotactl_fd 443     /* Linux 5.14, the same on every architecture */
#endif

static uint32_t file_dio_align(int fd)
{
	/* STATX_DIOALIGN (Linux 6.1) gives the filesystem's real direct-I/O
	 * alignment; before that, 4096 is safe on every common filesystem. */
#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif
	struct statx stx;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align)
		return stx.stx_dio_offset_align > 512 ? stx.stx_dio_offset_align : 512;
	return 4096;
}

/* The size a regular file target is laid out to. */
static uint64_t wanted_size(const struct workload_config *cfg, uint64_t current, uint32_t align)
{
	uint64_t want = cfg->file_size ? cfg->file_size : current;
	return want - want % align;
}

/* Reads need not touch the inode's access time: the kernel checks it on
 * every read otherwise (a few per cent of a small read's CPU).  Only the
 * owner or CAP_FOWNER may ask; anyone else reads as before. */
static void no_atime(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags | O_NOATIME);
}

static int open_block_device(const struct workload_config *cfg, const struct target_config *t,
			     bool writes, struct dev_target *d, char *err, size_t errlen)
{
	uint64_t bytes = 0;
	int lbs = 512;

	d->is_blockdev = true;
	if (writes)
		d->fd = dev_safety_open(t->path, d->path.fd, t->destroy_data, DEV_SAFETY_VIA_CONFIG,
					O_RDWR | O_DIRECT, err, errlen);
	else
		d->fd = dev_path_reopen(&d->path, O_RDONLY | O_DIRECT);
	if (d->fd < 0) {
		int r = d->fd;
		char holder[CONFIG_MAX_NAME + 1];
		d->fd = -1;
		if (!writes)
			snprintf(err, errlen, "cannot open %s: %s", t->path, strerror(-r));
		else if (r == -EBUSY &&
			 dev_linger_claimed_by(d->path.fd, &d->path.st, holder, sizeof(holder)))
			snprintf(err, errlen, "%s is held for writing by workload \"%s\" of this run: "
				 "two workloads cannot write one device; a reload prepares the "
				 "workloads it adds or changes before it stops the ones it removes, "
				 "so a device moves from one workload to another in two reloads "
				 "(the first without it)", t->path, holder);
		return r;
	}
	d->claimed = writes;
	if (ioctl(d->fd, BLKGETSIZE64, &bytes) < 0 || ioctl(d->fd, BLKSSZGET, &lbs) < 0) {
		snprintf(err, errlen, "cannot read the size of %s: %s", t->path, strerror(errno));
		return -errno;
	}
	d->align = (uint32_t)lbs;
	d->size = cfg->file_size && cfg->file_size < bytes ? cfg->file_size : bytes;
	no_atime(d->fd);
	return 0;
}

int dev_target_open(const struct workload_config *cfg, const struct target_config *t,
		    bool writes, struct dev_target *d, char *err, size_t errlen)
{
	int r;

	*d = (struct dev_target)DEV_TARGET_INIT;
	r = dev_path_resolve(t->path, t->allow_unsafe_path, &d->path, err, errlen);
	if (r < 0)
		return r;
	/* Decided on the descriptor: ops another stream gave up in flight
	 * may still land on this very target. */
	if (d->path.fd >= 0) {
		r = dev_linger_check_target(d->path.fd, &d->path.st, cfg->name, err, errlen);
		if (r < 0)
			return r;
	}

	if (d->path.fd < 0) {
		if (!cfg->file_size) {
			snprintf(err, errlen, "%s does not exist; set \"file_size\" to have it created",
				 t->path);
			return -ENOENT;
		}
		d->fd = dev_path_create(&d->path, O_RDWR | O_DIRECT);
		if (d->fd < 0)
			goto open_failed;
		d->created = true;
		dev_safety_mark_laid_out(d->fd);
	} else if (S_ISBLK(d->path.st.st_mode)) {
		return open_block_device(cfg, t, writes, d, err, errlen);
	} else if (S_ISREG(d->path.st.st_mode)) {
		/* Growing the file writes to it, even for a read-only load. */
		bool grows = cfg->file_size > (uint64_t)d->path.st.st_size;
		d->fd = dev_path_reopen(&d->path, (writes || grows ? O_RDWR : O_RDONLY) | O_DIRECT);
		if (d->fd < 0)
			goto open_failed;
		if (writes || grows) {
			r = dev_safety_check_file(t->path, d->fd, err, errlen);
			if (r < 0)
				return r;
		}
		/* Growing writes past its end; the load writes over what it holds. */
		if (writes) {
			r = dev_safety_file_data(t->path, d->fd, t->destroy_data, err, errlen);
			if (r < 0)
				return r;
		}
	} else {
		snprintf(err, errlen, "%s is neither a block device nor a regular file", t->path);
		return -EINVAL;
	}

	no_atime(d->fd);
	struct stat st;
	if (fstat(d->fd, &st) < 0) {
		snprintf(err, errlen, "cannot access %s: %s", t->path, strerror(errno));
		return -errno;
	}
	d->old_size = (uint64_t)st.st_size;
	d->align = file_dio_align(d->fd);
	d->size = wanted_size(cfg, d->old_size, d->align);
	return 0;

open_failed:
	r = d->fd;
	d->fd = -1;
	if (r == -EINVAL)
		snprintf(err, errlen, "cannot open %s with O_DIRECT: the filesystem does not support "
				      "direct I/O", t->path);
	else if (r == -EEXIST)
		snprintf(err, errlen, "cannot create %s: something appeared at that name while soakd "
				      "was creating it", t->path);
	else if (r == -ESTALE)
		snprintf(err, errlen, "cannot open %s: it changed while soakd was opening it",
			 t->path);
	else
		snprintf(err, errlen, "cannot open %s: %s", t->path, strerror(-r));
	return r;
}

/* The room a user or group quota leaves on the filesystem of fd, if one
 * limits it: 1 and *ret, else 0 (no quota, or quotas off). */
static int quota_room(int fd, int type, unsigned id, uint64_t *ret)
{
	struct if_dqblk dq;

	/* QCMD() shifts a signed 0x800007 into the sign bit: the same bits,
	 * built unsigned. */
	unsigned cmd = ((unsigned)Q_GETQUOTA << SUBCMDSHIFT) | ((unsigned)type & SUBCMDMASK);

	if (syscall(SYS_quotactl_fd, fd, cmd, id, &dq) < 0)
		return 0;
	if (!(dq.dqb_valid & QIF_BLIMITS) || !dq.dqb_bhardlimit)
		return 0;
	uint64_t limit = dq.dqb_bhardlimit * QIF_DQBLKSIZE;
	*ret = limit > dq.dqb_curspace ? limit - dq.dqb_curspace : 0;
	return 1;
}

struct space_need {
	dev_t fs;
	uint64_t bytes;
	int fd;                 /* any descriptor on that filesystem */
	const char *path;       /* the first target on it, for messages */
	unsigned n_targets;
};

/*
 * Whether the filesystems hold what the layouts will write: free blocks
 * available to soakd's user and, where quotas are on, the user's and the
 * group's quota.  The error gives the numbers.
 */
static int check_space(struct space_need *need, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		struct statfs sfs;
		uint64_t room, quota;
		const char *limit = "free on its filesystem";
		char need_text[32], room_text[32];

		if (fstatfs(need[i].fd, &sfs) < 0) {
			snprintf(err, errlen, "cannot tell the free space for %s: %s", need[i].path,
				 strerror(errno));
			return -errno;
		}
		room = (uint64_t)sfs.f_bavail * (uint64_t)sfs.f_bsize;
		if (quota_room(need[i].fd, USRQUOTA, geteuid(), &quota) > 0 && quota < room) {
			room = quota;
			limit = "left in soakd's user quota";
		}
		if (quota_room(need[i].fd, GRPQUOTA, getegid(), &quota) > 0 && quota < room) {
			room = quota;
			limit = "left in soakd's group quota";
		}
		if (need[i].bytes <= room)
			continue;
		format_size(need[i].bytes, need_text, sizeof(need_text));
		format_size(room, room_text, sizeof(room_text));
		snprintf(err, errlen, "not enough space to lay out %s%s: it needs %s (%" PRIu64
			 " bytes) and only %s (%" PRIu64 " bytes) is %s; lower \"file_size\" or "
			 "make room", need[i].path,
			 need[i].n_targets > 1 ? " and the other targets on its filesystem" : "",
			 need_text, need[i].bytes, room_text, room, limit);
		return -ENOSPC;
	}
	return 0;
}

/* Adds bytes for a target on filesystem fs to the list. */
static int add_need(struct space_need *need, size_t *n, dev_t fs, uint64_t bytes, int fd,
		    const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (need[i].fs == fs) {
			need[i].bytes += bytes;
			need[i].n_targets++;
			return 0;
		}
	if (*n == CONFIG_MAX_TARGETS)
		return -E2BIG;
	need[(*n)++] = (struct space_need){ .fs = fs, .bytes = bytes, .fd = fd, .path = path,
				      .n_targets = 1 };
	return 0;
}

/* A layout of many GiB takes minutes: tell systemd it progresses (STATUS,
 * more start or reload time, and the watchdog, since the main loop waits
 * for it). */
static void layout_progress(const char *path, uint64_t done, uint64_t from, uint64_t size,
			    bool watchdog)
{
	unsigned pct = size > from ? (unsigned)((done - from) * 100 / (size - from)) : 100;

	sd_notifyf(0, "STATUS=laying out %s: %u%%\nEXTEND_TIMEOUT_USEC=%" PRIu64, path, pct,
		   LAYOUT_EXTEND_USEC);
	if (watchdog)
		sd_notify(0, "WATCHDOG=1");
}

/* Extends a regular file to `size` with random data, so reads hit the
 * device rather than holes the filesystem answers with zeros.  Progress
 * goes to soakd every chunk (status, the control socket, a stop); a stop
 * fails the layout, which the caller undoes (dev_target_undo) as any
 * other failure. */
static int lay_out_file(int fd, const char *path, uint64_t from, uint64_t size, uint32_t align,
			char *err, size_t errlen)
{
	uint8_t *chunk;
	uint64_t rng = 0x9e3779b97f4a7c15u ^ size;
	int r = 0;

	if (posix_memalign((void **)&chunk, 4096, DEV_LAYOUT_CHUNK)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	from -= from % align;
	log_info("laying out %s: %" PRIu64 " MiB of random data", path, (size - from) >> 20);
	/* Every second, or every half watchdog period if that is shorter. */
	uint64_t reported_ns = mono_ns(), every_ns = UINT64_C(1000000000), watchdog_usec = 0;
	bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0;
	if (watchdog && watchdog_usec * 500 < every_ns)
		every_ns = watchdog_usec * 500;
	for (uint64_t off = from; off < size;) {
		struct workload_progress wp = { .target = path, .what = "layout", .done = off - from,
						.total = size - from, .unit = "bytes" };
		if (!workload_progress(&wp)) {
			r = -ECANCELED;
			snprintf(err, errlen, "stopped while laying out %s (%" PRIu64 " of %" PRIu64
				 " MiB written)", path, (off - from) >> 20, (size - from) >> 20);
			break;
		}
		if (mono_ns() - reported_ns >= every_ns) {
			layout_progress(path, off, from, size, watchdog);
			reported_ns = mono_ns();
		}
		size_t len = size - off < DEV_LAYOUT_CHUNK ? (size_t)(size - off) : DEV_LAYOUT_CHUNK;
		dev_rng_fill(&rng, chunk, len);
		ssize_t n = pwrite(fd, chunk, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			snprintf(err, errlen, "cannot lay out %s at offset %" PRIu64 ": %s", path, off,
				 strerror(-r));
			break;
		}
		off += (uint64_t)n;
	}
	if (r == 0 && fdatasync(fd) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot sync %s: %s", path, strerror(errno));
	}
	free(chunk);
	return r;
}

/* Bytes the layout of a regular file target still has to write. */
static uint64_t layout_bytes(const struct dev_target *d)
{
	if (d->is_blockdev || d->size <= d->old_size)
		return 0;
	return d->size - (d->old_size - d->old_size % d->align);
}

int dev_targets_lay_out(struct dev_target *targets, const struct target_config *cfgs, size_t n,
			char *err, size_t errlen)
{
	struct space_need need[CONFIG_MAX_TARGETS];
	size_t n_need = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		uint64_t bytes = layout_bytes(&targets[i]);
		if (bytes && add_need(need, &n_need, targets[i].path.st.st_dev, bytes, targets[i].fd,
				      cfgs[i].path) < 0) {
			snprintf(err, errlen, "too many filesystems");
			return -E2BIG;
		}
	}
	r = check_space(need, n_need, err, errlen);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct dev_target *d = &targets[i];
		if (layout_bytes(d)) {
			r = lay_out_file(d->fd, cfgs[i].path, d->old_size, d->size, d->align, err,
					 errlen);
			if (r < 0)
				return r;
		}
		/* Laid out: from here on the file is the run's, and stays. */
		dev_path_close(&d->path);
	}
	return 0;
}

void dev_target_undo(struct dev_target *d)
{
	if (d->fd < 0 || d->path.dir_fd < 0)
		return;
	if (d->created)
		dev_path_remove_created(&d->path, d->fd);
	else if (!d->is_blockdev && d->size > d->old_size)
		/* What the layout wrote, given back; the file as it was. */
		(void)!ftruncate(d->fd, (off_t)d->old_size);
}

void dev_target_close(struct dev_target *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	dev_path_close(&d->path);
}

int dev_targets_check(const struct workload_config *cfg, bool writes, char *err, size_t errlen)
{
	struct dev_path paths[CONFIG_MAX_TARGETS];
	struct space_need need[CONFIG_MAX_TARGETS];
	size_t n_need = 0, opened = 0;
	int r = 0;

	for (size_t i = 0; i < cfg->n_targets && r == 0; i++) {
		const struct target_config *t = &cfg->targets[i];
		struct dev_path *p = &paths[opened];

		r = dev_path_resolve(t->path, t->allow_unsafe_path, p, err, errlen);
		if (r < 0)
			break;
		opened++;
		if (p->fd < 0) {
			if (!cfg->file_size) {
				snprintf(err, errlen, "%s does not exist; set \"file_size\" to have "
					 "it created", t->path);
				r = -ENOENT;
			} else {
				/* The directory's filesystem gets the whole file. */
				r = add_need(need, &n_need, p->dir_st.st_dev,
					     wanted_size(cfg, 0, 4096), p->dir_fd, t->path);
			}
		} else if (S_ISBLK(p->st.st_mode)) {
			if (writes) {
				/* The same checks as a start, through a read-only open. */
				int fd = dev_safety_open(t->path, p->fd, t->destroy_data,
							 DEV_SAFETY_VIA_CONFIG, O_RDONLY | O_NONBLOCK,
							 err, errlen);
				r = fd < 0 ? fd : 0;
				if (fd >= 0)
					close(fd);
			}
		} else if (S_ISREG(p->st.st_mode)) {
			uint64_t size = (uint64_t)p->st.st_size, want = wanted_size(cfg, size, 4096);
			if (writes || want > size)
				r = dev_safety_check_file(t->path, p->fd, err, errlen);
			if (r == 0 && writes)
				r = dev_safety_file_data(t->path, p->fd, t->destroy_data, err, errlen);
			if (r == 0 && want > size)
				r = add_need(need, &n_need, p->st.st_dev, want - size, p->fd, t->path);
		} else {
			snprintf(err, errlen, "%s is neither a block device nor a regular file",
				 t->path);
			r = -EINVAL;
		}
		if (r == -E2BIG)
			snprintf(err, errlen, "too many filesystems");
	}
	if (r == 0)
		r = check_space(need, n_need, err, errlen);
	for (size_t i = 0; i < opened; i++)
		dev_path_close(&paths[i]);
	return r;
}
