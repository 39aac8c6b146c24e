/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DEV_FACTS_H
#define SOAK_DEV_FACTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

/*
 * What a run's results record about each target, read from sysfs when a
 * workload is prepared: a result without the device's model, firmware and
 * block sizes cannot be compared with another.  Strings are empty when the
 * kernel does not expose them (a loop device has no serial; SATA disks
 * behind SCSI show their serial only in VPD page 0x80).
 */

#define DEV_FACTS_STR 128

struct dev_block_facts {
	char name[64];               /* kernel name: "nvme0n1p2" */
	char disk[64];               /* its whole disk: "nvme0n1" */
	unsigned major, minor;
	bool partition;
	uint64_t size_bytes;
	uint64_t offset_bytes;       /* a partition's start on its disk */
	uint32_t logical_block_size, physical_block_size;
	uint32_t minimum_io_size, optimal_io_size;
	int rotational;              /* 1, 0, or -1 when unknown */
	bool discard;
	char scheduler[32];          /* the active one */
	char write_cache[32];        /* "write back" or "write through" */
	char model[DEV_FACTS_STR];
	char vendor[DEV_FACTS_STR];
	char serial[DEV_FACTS_STR];
	char firmware[DEV_FACTS_STR];
	char wwid[DEV_FACTS_STR];
	char dm_name[DEV_FACTS_STR]; /* device-mapper devices */
	char backing_file[PATH_MAX]; /* loop devices */
	/* A loop device over a regular file: that file, "DEVMAJ:DEVMIN:INODE"
	 * (whatever its name is or has become). */
	char backing_inode[64];
};

struct dev_facts {
	char path[PATH_MAX];
	bool is_file;
	uint64_t size_bytes;         /* the device's, or the file's */
	/* The device itself, or for a file the device under its filesystem
	 * when there is one (not on tmpfs, overlay, NFS). */
	struct dev_block_facts block;
	bool have_block;
	/* Regular files: the filesystem they are on. */
	char fs_type[64];
	char fs_source[PATH_MAX];
	char fs_mount_point[PATH_MAX];
	unsigned fs_major, fs_minor;
};

/* Facts about a block device or a regular file; a negative errno when path
 * is neither or cannot be looked at. */
int dev_facts_get(const char *path, struct dev_facts *ret);
/* The same, reading sysfs and mountinfo under other roots (tests). */
int dev_facts_get_at(const char *sysfs, const char *mountinfo, const char *path,
		     struct dev_facts *ret);
/* A block device's facts from sysfs alone. */
int dev_facts_block(const char *sysfs, dev_t devno, struct dev_block_facts *ret);

/* For a workload being prepared: malloc'd facts of the target open as fd
 * (path names it), logged as one line; NULL (with a warning logged) when
 * they cannot be read, which fails nothing. */
struct dev_facts *dev_facts_new_logged(const char *path, int fd);

json_t *dev_facts_json(const struct dev_facts *f);

/* devices.json of run_dir (the facts of its last start), parsed; NULL
 * when absent or unreadable. */
json_t *dev_facts_recorded(const char *run_dir);

/*
 * A resumed run's block device target against the facts the run recorded
 * at its last start (recorded, from dev_facts_recorded, for workload): 0
 * when it is the same device as far as the kernel can tell (serial, else
 * WWID; size; a loop device's backing file by its inode on the same file
 * system, else by its name), or nothing was recorded; -EXDEV with err
 * naming what differs when it is another device at the same path (a disk
 * swapped, a loop device attached to another file): the run's data and its
 * verify state are the other device's.
 */
int dev_facts_same_device(json_t *recorded, const char *workload, const struct dev_facts *now,
			  char *err, size_t errlen);
/* One line for the journal: "/dev/nvme0n1: 1.8 TiB, Samsung ..., ..." */
void dev_facts_format(const struct dev_facts *f, char *buf, size_t len);

#endif
