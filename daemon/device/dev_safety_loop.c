// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loop devices and target safety (see dev_safety.h).  A loop device claims
 * nothing of what backs it, so neither kind of check below is seen by the
 * others: a loop device over the target (writes land under the loop's
 * data, which may be mounted), and a target that is a loop device over a
 * block device (writes land on that device, which may be mounted or the
 * root disk).
 */
#include "dev_safety.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <linux/major.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dev_path.h"
#include "dev_safety_int.h"

/* The kernel's 32-bit dev_t encoding (huge_encode_dev), as loop_info64
 * carries it. */
static dev_t decode_dev(uint64_t v)
{
	return makedev((unsigned)((v & 0xfff00) >> 8), (unsigned)((v & 0xff) | ((v >> 12) & 0xfff00)));
}

/* LOOP_GET_STATUS64 on io, a descriptor open for I/O: 0 or -errno. */
static int loop_status(int io, struct dev_loop_backing *ret)
{
	struct loop_info64 info;

	if (ioctl(io, LOOP_GET_STATUS64, &info) < 0)
		return -errno;
	ret->rdev = decode_dev(info.lo_rdevice);
	ret->is_blk = ret->rdev != 0;  /* 0 for a regular file */
	ret->dev = decode_dev(info.lo_device);
	ret->ino = (ino_t)info.lo_inode;
	return 0;
}

int dev_safety_loop_backing_fd(int fd, struct dev_loop_backing *ret)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISBLK(st.st_mode))
		return -ENOTTY;
	/* An ioctl needs a descriptor that is open for I/O, not O_PATH. */
	int io = dev_fd_reopen(fd, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (io < 0)
		return io;
	int r = loop_status(io, ret);
	close(io);
	return r;
}

/*
 * Asks the loop device itself first (LOOP_GET_STATUS64 gives the backing
 * inode's numbers, whatever its name has become); the path sysfs prints is
 * the fallback where the device node cannot be opened (no /dev/loopN in a
 * container, no permission).  That path is relative to the mount namespace
 * of whoever set the loop up and may name nothing, or something else, here;
 * a "(deleted)" one certainly names something else now, so it is not
 * looked up.  -ENOENT: the backing cannot be told.
 */
static int loop_backing(const struct dev_safety_env *env, const struct devsys_loop *l,
			struct dev_loop_backing *ret)
{
	char node[PATH_MAX];
	struct stat st;
	int fd, n;

	n = env->dev ? snprintf(node, sizeof(node), "%s/%s", env->dev, l->name) : -1;
	fd = n > 0 && (size_t)n < sizeof(node) ?
		     open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) : -1;
	if (fd >= 0) {
		/* A stale node in a private /dev may be another device. */
		bool ok = fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && st.st_rdev == l->devno &&
			  loop_status(fd, ret) == 0;
		close(fd);
		if (ok)
			return 0;
	}
	if (l->deleted || l->backing_file[0] != '/')
		return -ENOENT;
	if (stat(l->backing_file, &st) < 0)
		return -ENOENT;
	ret->is_blk = S_ISBLK(st.st_mode);
	ret->rdev = ret->is_blk ? st.st_rdev : 0;
	ret->dev = st.st_dev;
	ret->ino = st.st_ino;
	return 0;
}

struct loop_match {
	const struct dev_safety_env *env;
	const struct devsys_set *blocks; /* block target: these devices */
	const struct stat *file;         /* file target: this inode */
	const struct devsys_set *except; /* loop devices not to count (NULL: none) */
	dev_t loop, which;
};

static int match_loop(const struct devsys_loop *l, void *arg)
{
	struct loop_match *m = arg;
	struct dev_loop_backing b;

	if ((m->except && devsys_set_has(m->except, l->devno)) || loop_backing(m->env, l, &b) < 0)
		return 0;
	if (m->blocks && b.is_blk && devsys_set_has(m->blocks, b.rdev))
		m->which = b.rdev;
	else if (m->file && !b.is_blk && b.dev == m->file->st_dev && b.ino == m->file->st_ino)
		m->which = 0;
	else
		return 0;
	m->loop = l->devno;
	return 1;
}

static void refuse_loop(const struct dev_safety_env *env, const char *path, const char *which,
			dev_t loop, enum dev_safety_via via, char *err, size_t errlen)
{
	char label[300];

	safety_dev_label(env, loop, label, sizeof(label));
	safety_refuse(err, errlen, path, "%s the backing of the loop device %s; detach it first "
	       "(losetup -d %s; %s does not override this)", which, label, label,
	       safety_override_name(via));
}

/*
 * A loop device over the target, one of its partitions or its disk: writes
 * land under the loop device's data.  None of the other checks sees it:
 * loop does not appear in holders/, claims nothing exclusively, and what
 * is mounted is the loop device.
 */
int safety_check_loop_over_block(const struct dev_safety_env *env, const char *path,
				 dev_t devno, const struct devsys_set *self,
				 const struct devsys_set *except,
				 enum dev_safety_via via, char *err, size_t errlen)
{
	struct devsys_set blocks = *self, lower;
	struct loop_match m = { .env = env, .blocks = &blocks, .except = except };
	char which[400], label[300];
	int r;

	r = devsys_lower_disks(env->sysfs, devno, &lower);
	if (r < 0 && r != -ENOENT)
		return r;
	for (size_t i = 0; r == 0 && i < lower.n; i++)
		if (devsys_set_add(&blocks, lower.devs[i]) < 0)
			return -E2BIG;
	r = devsys_each_loop(env->sysfs, match_loop, &m);
	if (r <= 0)
		return r;
	if (devsys_set_has(self, m.which)) {
		safety_subject(env, devno, m.which, which, sizeof(which));
	} else {
		safety_dev_label(env, m.which, label, sizeof(label));
		snprintf(which, sizeof(which), "its disk %s is", label);
	}
	refuse_loop(env, path, which, m.loop, via, err, errlen);
	return -EBUSY;
}

int dev_safety_check_file_env(const struct dev_safety_env *env, const char *path, int fd,
			      char *err, size_t errlen)
{
	struct stat st;
	struct loop_match m = { .env = env, .file = &st };
	int r;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot access %s: %s", path, strerror(-r));
		return r;
	}
	r = devsys_each_loop(env->sysfs, match_loop, &m);
	if (r > 0) {
		refuse_loop(env, path, "it is", m.loop, DEV_SAFETY_VIA_CONFIG, err, errlen);
		return -EBUSY;
	}
	if (r < 0)
		safety_refuse(err, errlen, path, "cannot tell whether a loop device uses it: %s",
		       strerror(-r));
	return r;
}

int dev_safety_check_file(const char *path, int fd, char *err, size_t errlen)
{
	return dev_safety_check_file_env(&dev_safety_host, path, fd, err, errlen);
}

/* The loop status of the block device devno, by its node under env->dev
 * (checked to be that device), else by what sysfs says backs it (no node:
 * a container, PrivateDevices=; see loop_backing for what that path is
 * worth): 0, -ENOTTY/-ENXIO/-ENOENT when it is no bound loop device, or
 * -errno. */
static int loop_status_of(const struct dev_safety_env *env, dev_t devno,
			  struct dev_loop_backing *ret)
{
	char name[64], node[PATH_MAX];
	struct devsys_loop l = { .devno = devno };
	struct stat st;
	int r = -ENOENT;

	if (devsys_name(env->sysfs, devno, name, sizeof(name)) < 0)
		return -ENOENT;
	if (env->dev) {
		snprintf(node, sizeof(node), "%s/%s", env->dev, name);
		int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 && errno != ENOENT)
			return -errno;
		if (fd >= 0) {
			r = fstat(fd, &st) < 0 ? -errno
			    : !S_ISBLK(st.st_mode) || st.st_rdev != devno ? -ENOENT
			    : loop_status(fd, ret);
			close(fd);
			if (r != -ENOENT)
				return r;
		}
	}
	if (devsys_block_dir(env->sysfs, devno, node, sizeof(node)) < 0 ||
	    devsys_read_attr(node, "loop/backing_file", l.backing_file, sizeof(l.backing_file)) < 0)
		return -ENOENT;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.deleted = devsys_strip_deleted(l.backing_file);
	/* The node was tried already: loop_backing falls back to the path. */
	const struct dev_safety_env no_dev = { .sysfs = env->sysfs, .mountinfo = env->mountinfo,
					       .swaps = env->swaps, .dev = NULL };
	return loop_backing(&no_dev, &l, ret);
}

/*
 * Whether the loop device over `under` (the target, or a loop the target
 * stacks on) may be written: under gets every check the target itself
 * would (the root disk, mounts, swap, holders, loops over it), and a probe
 * of an exclusive claim (a mount in another namespace, RAID, dm, a
 * program's O_EXCL).  Loop claims nothing of what backs it, so none of
 * the target's own checks sees any of this.
 */
static int check_under_loop(const struct dev_safety_env *env, const char *path, dev_t loop,
			    const struct devsys_set *mine, dev_t under, enum dev_safety_via via,
			    char *err, size_t errlen)
{
	char inner[1024], label[300], loop_label[300], node[PATH_MAX], name[256];
	const char *prefix = "refusing to write to ";
	int r;

	safety_dev_label(env, under, label, sizeof(label));
	safety_dev_label(env, loop, loop_label, sizeof(loop_label));
	r = safety_check_root_disk(env, label, under, via, inner, sizeof(inner));
	if (r == 0)
		r = safety_check_in_use(env, label, under, mine, via, inner, sizeof(inner));
	if (r == 0 && env->dev && devsys_name(env->sysfs, under, name, sizeof(name)) == 0) {
		snprintf(node, sizeof(node), "%s/%s", env->dev, name);
		int fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_EXCL);
		struct stat st;
		if (fd < 0 && errno == EBUSY) {
			snprintf(inner, sizeof(inner), "%s%s: it is held exclusively by the kernel "
				 "or another program (a mount, possibly in another namespace, RAID, "
				 "device-mapper or an exclusive open); %s does not override this",
				 prefix, label, safety_override_name(via));
			r = -EBUSY;
		} else if (fd >= 0) {
			if (fstat(fd, &st) == 0 && st.st_rdev != under)
				r = 0; /* a stale node: nothing learned */
			close(fd);
		}
	}
	if (r == 0)
		return 0;
	if (r == -EPERM || r == -EBUSY) {
		const char *why = strncmp(inner, prefix, strlen(prefix)) == 0 ? inner + strlen(prefix)
									: inner;
		safety_refuse(err, errlen, path, "it writes to %s through the loop device %s, and %s",
		       label, loop_label, why);
		return r;
	}
	safety_refuse(err, errlen, path, "cannot tell whether %s, under the loop device %s, is in use: %s",
	       label, loop_label, strerror(-r));
	return r;
}

/* The chain of devices from the loop device `loop` (a whole disk; its
 * status b, or r < 0) down, each checked by check_under_loop.  mine: the
 * loop devices the target's writes come through (not "over" the devices
 * they stack on, as another user's would be), this chain's added. */
static int check_chain(const struct dev_safety_env *env, const char *path, dev_t loop,
		       struct dev_loop_backing b, int r, struct devsys_set *mine,
		       enum dev_safety_via via, char *err, size_t errlen)
{
	char label[300];

	for (unsigned depth = 0;; depth++) {
		if (r == -ENOTTY || r == -ENXIO || r == -EINVAL || r == -ENOENT)
			return 0;       /* no loop device, or one without a backing */
		if (r < 0) {
			safety_dev_label(env, loop, label, sizeof(label));
			safety_refuse(err, errlen, path, "cannot tell what the loop device %s writes "
				      "to: %s", label, strerror(-r));
			return r;
		}
		if (!b.is_blk)
			return 0;
		if (depth == DEVSYS_MAX_DEPTH) {
			safety_refuse(err, errlen, path, "it is a loop device over more than %d others",
				      DEVSYS_MAX_DEPTH);
			return -ELOOP;
		}
		if (!devsys_set_has(mine, loop) && devsys_set_add(mine, loop) < 0) {
			safety_refuse(err, errlen, path, "it goes through more than %d loop devices",
				      DEVSYS_MAX_DEVS);
			return -E2BIG;
		}
		r = check_under_loop(env, path, loop, mine, b.rdev, via, err, errlen);
		if (r < 0)
			return r;
		/* On down if what is under it is a loop device too (or a
		 * partition of one: its disk's loop device is the one over
		 * the next device); only a loop device is asked. */
		dev_t next;
		if (devsys_whole_disk(env->sysfs, b.rdev, &next) < 0)
			next = b.rdev;
		if (major(next) != LOOP_MAJOR)
			return 0;
		loop = next;
		r = loop_status_of(env, next, &b);
	}
}

/* A loop device (or a partition of one) over a block device, through any
 * number of loops, and a dm or md device built on loop devices: each
 * device under them is checked as the target would be (check_under_loop).
 * A loop over a regular file writes that file, which is what it is for. */
int safety_check_loop_target(const struct dev_safety_env *env, const char *path, int path_fd,
			     dev_t devno, enum dev_safety_via via, char *err, size_t errlen)
{
	struct dev_loop_backing b = { 0 };
	struct devsys_set lower, mine = { .n = 0 };
	dev_t whole;
	int r;

	if (devsys_whole_disk(env->sysfs, devno, &whole) < 0)
		whole = devno;
	if (devsys_lower_disks(env->sysfs, devno, &lower) < 0)
		lower.n = 0;
	/* Every loop device of the target is its own: a dm device over two
	 * loops on one disk is not refused for the second. */
	for (size_t i = 0; i < lower.n; i++)
		if (major(lower.devs[i]) == LOOP_MAJOR && !devsys_set_has(&mine, lower.devs[i]) &&
		    devsys_set_add(&mine, lower.devs[i]) < 0) {
			safety_refuse(err, errlen, path, "it is built on more than %d loop devices",
				      DEVSYS_MAX_DEVS);
			return -E2BIG;
		}
	/* Writes to a partition come through its disk's loop device. */
	if (major(whole) == LOOP_MAJOR) {
		/* Not to be opened at all (a unit's DeviceAllow=): the open
		 * for the writes that follows says so, as for any device.
		 * Anything else that fails (the ioctl) is no answer. */
		int io = dev_fd_reopen(path_fd, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (io == -EPERM || io == -EACCES)
			return 0;
		if (io >= 0)
			close(io);
		r = dev_safety_loop_backing_fd(path_fd, &b);
		r = check_chain(env, path, whole, b, r, &mine, via, err, errlen);
		if (r < 0)
			return r;
	}
	/* A dm or md device built on loop devices: each one's chain. */
	for (size_t i = 0; i < lower.n; i++) {
		if (major(lower.devs[i]) != LOOP_MAJOR || lower.devs[i] == whole)
			continue;
		r = loop_status_of(env, lower.devs[i], &b);
		r = check_chain(env, path, lower.devs[i], b, r, &mine, via, err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}
