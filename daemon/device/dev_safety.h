/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_SAFETY_H
#define SOAK_DEV_SAFETY_H

#include <stdbool.h>
#include <stddef.h>

#include "dev_sys.h"

/*
 * Whether soakd may write to a block device.  Asked before a write workload
 * or a prep opens a block device for writing; reads need no check.
 *
 * Always refused, whatever the configuration says, because writing would
 * corrupt the running system or a device stacked on this one:
 *   - the root disk: the disk holding /, /boot, /boot/efi, /usr or /var,
 *     any partition of it and anything built on it (dm, md);
 *   - a device that is mounted or used as swap, itself or a partition of it;
 *   - a device in use: another device is stacked on it or on one of its
 *     partitions (device-mapper, md RAID, bcache: sysfs holders/), or
 *     another program holds it open exclusively (O_EXCL fails with EBUSY);
 *   - the backing of a loop device: the device, a partition of it or its
 *     disk (loop shows in none of the above: not in holders/, no
 *     exclusive claim, and what is mounted is the loop device).
 * Refused unless its target says "destroy_data": true (--destroy-data for
 * soakd --prep):
 *   - a device holding data: a partition table, or a filesystem, RAID, LVM,
 *     crypto or swap signature, as libblkid finds them.  An existing regular
 *     file is asked the same (dev_safety_file_data): a disk image.
 */

/* Who is asking, so that the message says how to override. */
enum dev_safety_via {
	DEV_SAFETY_VIA_CONFIG, /* a target's "destroy_data": true */
	DEV_SAFETY_VIA_CLI,    /* soakd --prep ... --destroy-data */
};

struct dev_safety_env {
	const char *sysfs;
	const char *mountinfo;
	const char *swaps;
	const char *dev;        /* where the loop device nodes are; NULL: none */
};

extern const struct dev_safety_env dev_safety_host;

/*
 * Opens the block device behind path_fd (an O_PATH descriptor from
 * dev_path_resolve; path only names it in messages) with flags | O_EXCL
 * once it may be written, and returns the descriptor: the exclusive claim
 * holds it against mounts from the check to the last write.  Otherwise a
 * negative errno (-EPERM for the root disk and for data without
 * destroy_data, -EBUSY for a device in use, -ENOTBLK for anything but a
 * block device) and in err: "refusing to write to PATH: REASON; HOW TO
 * PROCEED".  The root disk is refused before it is opened at all.
 * --check-config asks with O_RDONLY, and closes what it gets.
 */
int dev_safety_open(const char *path, int path_fd, bool destroy_data, enum dev_safety_via via,
		    int flags, char *err, size_t errlen);
int dev_safety_open_env(const struct dev_safety_env *env, const char *path, int path_fd,
			bool destroy_data, enum dev_safety_via via, int flags, char *err,
			size_t errlen);

/*
 * Before writing, dev_safety_open reads a device's first blocks for data on
 * it, and gives the read up after 8 s (dev_signatures.h).  Between
 * dev_safety_share_probe_wait(true) and (false), the devices this thread
 * opens share those 8 s of reading, each still allowed 0.5 s at the least
 * once they are spent: a reload
 * whose replacements and their restored old definitions meet several
 * stalled devices holds soakd's loop about 8 s, not 8 s a device.
 */
void dev_safety_share_probe_wait(bool on);

/*
 * A regular-file target about to be written (or grown): refused, -EBUSY,
 * when it is the backing file of a loop device, whatever destroy_data says,
 * with err as above.  fd is any descriptor of the file (O_PATH will do):
 * the file is the inode it holds, not what its path names now.
 */
int dev_safety_check_file(const char *path, int fd, char *err, size_t errlen);
int dev_safety_check_file_env(const struct dev_safety_env *env, const char *path, int fd,
			      char *err, size_t errlen);

/*
 * An existing regular file about to be written: refused, -EPERM, when
 * libblkid finds a partition table or a filesystem, RAID, LVM, crypto or
 * swap signature in it (a raw disk image), unless destroy_data; a file
 * that does not answer within the probe time is refused, -ETIMEDOUT, as a
 * device is.  An empty file passes.  fd is any descriptor of the file.
 */
int dev_safety_file_data(const char *path, int fd, bool destroy_data, char *err, size_t errlen);

/*
 * A file soakd created and laid out carries this extended attribute, and
 * dev_safety_file_data passes it without a look: random data reads as a
 * filesystem to libblkid about once in 30,000 probes, which would refuse
 * a resumed run its own file.  Only the file's owner (root or soakd's
 * user: another's file is refused) can set it.  Where the filesystem
 * keeps no user attributes, the file is probed as any other.
 */
#define DEV_SAFETY_XATTR "user.soakd.laid_out"
void dev_safety_mark_laid_out(int fd);

/* What a loop device reads and writes: a block device (rdev) or a file
 * (dev and ino). */
struct dev_loop_backing {
	bool is_blk;
	dev_t rdev;
	dev_t dev;
	ino_t ino;
};

/*
 * When fd (any descriptor, O_PATH will do) is of a loop device or a
 * partition of one: what backs it, asked of the device (LOOP_GET_STATUS64).
 * 0, or -errno (-ENOTTY for anything but a block device; a block device
 * that is no bound loop device fails the ioctl).
 */
int dev_safety_loop_backing_fd(int fd, struct dev_loop_backing *ret);

/* The whole disks the running system lives on, each with the mount point
 * that makes it one (ret_why[i] for ret->devs[i]). */
int dev_safety_root_disks(const struct dev_safety_env *env, struct devsys_set *ret,
			  const char **ret_why);

#endif
