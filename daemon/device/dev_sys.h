/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_SYS_H
#define SOAK_DEV_SYS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * What the kernel says about block devices: sysfs (a device's directory,
 * its whole disk, partitions, holders and the devices under it) and the
 * mount tables in /proc.  Every function takes the sysfs root or the table's
 * path, so tests can point them at a fake tree; the real ones are below.
 * Functions return 0 or a negative errno.
 */

#define DEVSYS_SYSFS "/sys"
#define DEVSYS_MOUNTINFO "/proc/self/mountinfo"
#define DEVSYS_SWAPS "/proc/swaps"

/* Bounds on what a walk collects: far more than any real stack of devices. */
#define DEVSYS_MAX_DEVS 64
#define DEVSYS_MAX_DEPTH 8

struct devsys_set {
	dev_t devs[DEVSYS_MAX_DEVS];
	size_t n;
};

bool devsys_set_has(const struct devsys_set *s, dev_t dev);
/* Adds dev unless present; -E2BIG when full. */
int devsys_set_add(struct devsys_set *s, dev_t dev);

/* The device's directory: <sysfs>/dev/block/MAJ:MIN with symlinks resolved. */
int devsys_block_dir(const char *sysfs, dev_t devno, char *ret, size_t len);
/* Attribute `name` under dir (a relative path, e.g. "queue/rotational"),
 * without surrounding whitespace; -ENOENT when the kernel does not expose it. */
int devsys_read_attr(const char *dir, const char *name, char *ret, size_t len);
int devsys_read_u64(const char *dir, const char *name, uint64_t *ret);
/* A "MAJ:MIN" attribute, as in every block directory's "dev". */
int devsys_read_devno(const char *dir, const char *name, dev_t *ret);
/* The device's kernel name (the last part of its directory: "nvme0n1p2"). */
int devsys_name(const char *sysfs, dev_t devno, char *ret, size_t len);

/* The whole disk of a partition; devno itself for anything else. */
int devsys_whole_disk(const char *sysfs, dev_t devno, dev_t *ret);
/* The partitions of a whole disk (none for a partition). */
int devsys_partitions(const char *sysfs, dev_t disk, struct devsys_set *ret);
/* The devices stacked directly on devno (its holders/: dm, md, bcache). */
int devsys_holders(const char *sysfs, dev_t devno, struct devsys_set *ret);
/* The whole disks devno's data lives on: following slaves/ down through dm
 * and md to the bottom, each taken to its whole disk.  A plain disk or
 * partition gives its own whole disk. */
int devsys_lower_disks(const char *sysfs, dev_t devno, struct devsys_set *ret);

/* A bound loop device, as <sysfs>/block/loopN/loop/ shows it. */
struct devsys_loop {
	dev_t devno;
	char name[64];               /* "loop5" */
	char backing_file[PATH_MAX]; /* the path the kernel prints, " (deleted)" taken off */
	bool deleted;                /* the backing file's name was unlinked */
};

/* Takes " (deleted)", which the kernel prints after a path whose name was
 * unlinked (a loop's backing_file, /proc/PID/fd), off path in place;
 * returns whether it was there.  A name that is only the suffix keeps it. */
bool devsys_strip_deleted(char *path);

/* Calls fn on each bound loop device (one with loop/backing_file) until it
 * returns non-zero, and returns that; 0 when none did.  No loop driver (no
 * loop devices in <sysfs>/block) is 0. */
int devsys_each_loop(const char *sysfs, int (*fn)(const struct devsys_loop *l, void *arg),
		     void *arg);

/* One line of /proc/self/mountinfo (see proc(5)), escapes decoded. */
struct devsys_mount {
	dev_t devno;                 /* st_dev of its files; 0:N for btrfs, tmpfs, ... */
	char mount_point[PATH_MAX];
	char fs_type[64];
	char source[PATH_MAX];
};

int devsys_parse_mountinfo_line(const char *line, struct devsys_mount *ret);
/* The file name in a line of /proc/swaps; -ENOENT for its header. */
int devsys_parse_swaps_line(const char *line, char *ret, size_t len);

/* The block device under a mount whose st_dev is devno: devno itself for
 * a block device, else its source when that is a block device (btrfs uses
 * anonymous device numbers).  -ENODEV for tmpfs, overlay, network ... */
int devsys_backing_dev(const char *mountinfo, dev_t st_dev, dev_t *ret);
/* The first mount of a device in set, by st_dev or by source device.
 * Returns 1 and fills ret (and ret_dev: which one) when found, 0 when not. */
int devsys_find_mount(const char *mountinfo, const struct devsys_set *set,
		      struct devsys_mount *ret, dev_t *ret_dev);
/* The mount that a st_dev belongs to (its type, source, mount point). */
int devsys_mount_of(const char *mountinfo, dev_t st_dev, struct devsys_mount *ret);
/* A swap area on a device in set: returns 1 and its file name, 0 when none. */
int devsys_find_swap(const char *swaps, const struct devsys_set *set, char *ret, size_t len,
		     dev_t *ret_dev);

#endif
