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
 *     another program holds it open exclusively (O_EXCL fails with EBUSY).
 * Refused unless its target says "destroy_data": true (--destroy-data for
 * soakd --prep):
 *   - a device holding data: a partition table, or a filesystem, RAID, LVM,
 *     crypto or swap signature, as libblkid finds them.
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
};

extern const struct dev_safety_env dev_safety_host;

/*
 * Returns 0 when path may be written (or is not a block device, which is
 * not this module's business), else a negative errno (-EPERM for the root
 * disk and for data without destroy_data, -EBUSY for a device in use) and
 * in err: "refusing to write to PATH: REASON; HOW TO PROCEED".  Does not
 * open the device for writing; a device it refuses for being the root disk
 * is not opened at all.
 */
int dev_safety_check(const char *path, bool destroy_data, enum dev_safety_via via, char *err,
		     size_t errlen);
int dev_safety_check_env(const struct dev_safety_env *env, const char *path, bool destroy_data,
			 enum dev_safety_via via, char *err, size_t errlen);

/* The whole disks the running system lives on, each with the mount point
 * that makes it one (ret_why[i] for ret->devs[i]). */
int dev_safety_root_disks(const struct dev_safety_env *env, struct devsys_set *ret,
			  const char **ret_why);

#endif
