/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_TESTS_FAKE_SYSFS_H
#define SOAK_TESTS_FAKE_SYSFS_H

/*
 * A small sysfs tree in a temporary directory, shaped as the kernel lays
 * out block devices (seen on 6.x):
 *
 *   sda (8:0), a SATA disk behind SCSI, with partitions sda1 (8:1) and
 *   sda2 (8:2); dm-0 (253:0, "vg-root") is stacked on sda1;
 *   nvme0n1 (259:0), an NVMe namespace whose controller holds model,
 *   serial and firmware; loop3 (7:3) over a file, loop4 (7:4) over a file
 *   since deleted, loop5 (7:5) bound to nothing.  <sysfs>/block lists the
 *   disks (not partitions), as the kernel's does.
 *
 * Only the test programs include this.
 */

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake_sysfs {
	char root[256];
};

static void fake_mkdirs(const char *root, const char *rel)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

static void fake_write(const char *root, const char *rel, const void *data, size_t len)
{
	char path[1024], dir[1024];
	snprintf(dir, sizeof(dir), "%s", rel);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		fake_mkdirs(root, dir);
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fwrite(data, 1, len, f);
	fclose(f);
}

static void fake_attr(const char *root, const char *rel, const char *text)
{
	fake_write(root, rel, text, strlen(text));
}

/* A symlink at rel (under root) to target (under root), absolute. */
static void fake_link(const char *root, const char *rel, const char *target)
{
	char path[1024], to[1024], dir[1024];
	snprintf(dir, sizeof(dir), "%s", rel);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		fake_mkdirs(root, dir);
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(to, sizeof(to), "%s/%s", root, target);
	if (symlink(to, path) < 0)
		abort();
}

#define SDA "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda"
#define SDA_DEVICE "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0"
#define DM0 "devices/virtual/block/dm-0"
#define NVME_CTRL "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0"
#define NVME0N1 NVME_CTRL "/nvme0n1"
#define LOOP3 "devices/virtual/block/loop3"
#define LOOP4 "devices/virtual/block/loop4"
#define LOOP5 "devices/virtual/block/loop5"

static void fake_queue(const char *root, const char *dir, const char *lbs, const char *pbs,
		       const char *rotational, const char *scheduler)
{
	char rel[512];
	snprintf(rel, sizeof(rel), "%s/queue/logical_block_size", dir);
	fake_attr(root, rel, lbs);
	snprintf(rel, sizeof(rel), "%s/queue/physical_block_size", dir);
	fake_attr(root, rel, pbs);
	snprintf(rel, sizeof(rel), "%s/queue/rotational", dir);
	fake_attr(root, rel, rotational);
	snprintf(rel, sizeof(rel), "%s/queue/scheduler", dir);
	fake_attr(root, rel, scheduler);
	snprintf(rel, sizeof(rel), "%s/queue/minimum_io_size", dir);
	fake_attr(root, rel, pbs);
	snprintf(rel, sizeof(rel), "%s/queue/optimal_io_size", dir);
	fake_attr(root, rel, "0\n");
	snprintf(rel, sizeof(rel), "%s/queue/discard_max_bytes", dir);
	fake_attr(root, rel, "0\n");
	snprintf(rel, sizeof(rel), "%s/queue/write_cache", dir);
	fake_attr(root, rel, "write back\n");
	snprintf(rel, sizeof(rel), "%s/holders", dir);
	fake_mkdirs(root, rel);
	snprintf(rel, sizeof(rel), "%s/slaves", dir);
	fake_mkdirs(root, rel);
}

static int fake_sysfs_create(struct fake_sysfs *f)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(f->root, sizeof(f->root), "%s/soakd-sysfs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->root))
		return -errno;
	const char *r = f->root;

	/* sda: SATA through SCSI; serial only in VPD page 0x80. */
	fake_attr(r, SDA "/dev", "8:0\n");
	fake_attr(r, SDA "/size", "7814037168\n");
	fake_queue(r, SDA, "512\n", "4096\n", "1\n", "none [mq-deadline] kyber bfq\n");
	fake_link(r, SDA "/device", SDA_DEVICE);
	fake_attr(r, SDA_DEVICE "/model", "ST4000NM0035-1V4\n");
	fake_attr(r, SDA_DEVICE "/vendor", "ATA     \n");
	fake_attr(r, SDA_DEVICE "/rev", "TN03\n");
	fake_attr(r, SDA_DEVICE "/wwid", "naa.5000c500a1b2c3d4\n");
	static const unsigned char vpd80[] = { 0x00, 0x80, 0x00, 0x14, ' ', ' ', ' ', ' ', ' ',
					       ' ', ' ', ' ', ' ', ' ', ' ', ' ', 'Z', 'C',
					       '1', '2', 'A', 'B', 'C', 'D' };
	fake_write(r, SDA_DEVICE "/vpd_pg80", vpd80, sizeof(vpd80));
	fake_attr(r, SDA "/sda1/dev", "8:1\n");
	fake_attr(r, SDA "/sda1/partition", "1\n");
	fake_attr(r, SDA "/sda1/start", "2048\n");
	fake_attr(r, SDA "/sda1/size", "1048576\n");
	fake_mkdirs(r, SDA "/sda1/slaves");
	fake_attr(r, SDA "/sda2/dev", "8:2\n");
	fake_attr(r, SDA "/sda2/partition", "2\n");
	fake_attr(r, SDA "/sda2/start", "1050624\n");
	fake_attr(r, SDA "/sda2/size", "2097152\n");
	fake_mkdirs(r, SDA "/sda2/holders");
	fake_link(r, "dev/block/8:0", SDA);
	fake_link(r, "dev/block/8:1", SDA "/sda1");
	fake_link(r, "dev/block/8:2", SDA "/sda2");

	/* dm-0 on sda1. */
	fake_attr(r, DM0 "/dev", "253:0\n");
	fake_attr(r, DM0 "/size", "1048576\n");
	fake_attr(r, DM0 "/dm/name", "vg-root\n");
	fake_attr(r, DM0 "/dm/uuid", "LVM-abc\n");
	fake_queue(r, DM0, "512\n", "4096\n", "1\n", "none\n");
	fake_link(r, DM0 "/slaves/sda1", SDA "/sda1");
	fake_link(r, SDA "/sda1/holders/dm-0", DM0);
	fake_link(r, "dev/block/253:0", DM0);

	/* nvme0n1: the controller holds the identity. */
	fake_attr(r, NVME0N1 "/dev", "259:0\n");
	fake_attr(r, NVME0N1 "/size", "3907029168\n");
	fake_attr(r, NVME0N1 "/wwid", "eui.0025388b91b2c3d4\n");
	fake_queue(r, NVME0N1, "4096\n", "4096\n", "0\n", "[none] mq-deadline\n");
	fake_attr(r, NVME0N1 "/queue/discard_max_bytes", "2199023255040\n");
	fake_link(r, NVME0N1 "/device", NVME_CTRL);
	fake_attr(r, NVME_CTRL "/model", "Samsung SSD 980 PRO 2TB                 \n");
	fake_attr(r, NVME_CTRL "/serial", "S6B0NL0T123456X     \n");
	fake_attr(r, NVME_CTRL "/firmware_rev", "5B2QGXA7\n");
	fake_link(r, "dev/block/259:0", NVME0N1);

	/* loop3 over a file: no identity at all. */
	fake_attr(r, LOOP3 "/dev", "7:3\n");
	fake_attr(r, LOOP3 "/size", "131072\n");
	fake_attr(r, LOOP3 "/loop/backing_file", "/dev/shm/soakd-loop.img\n");
	fake_queue(r, LOOP3, "512\n", "512\n", "0\n", "[none] mq-deadline\n");
	fake_attr(r, LOOP3 "/queue/write_cache", "write through\n");
	fake_link(r, "dev/block/7:3", LOOP3);

	/* loop4: its file was unlinked; loop5: unbound, so no loop/ at all. */
	fake_attr(r, LOOP4 "/dev", "7:4\n");
	fake_attr(r, LOOP4 "/size", "2048\n");
	fake_attr(r, LOOP4 "/loop/backing_file", "/var/tmp/old.img (deleted)\n");
	fake_queue(r, LOOP4, "512\n", "512\n", "0\n", "[none] mq-deadline\n");
	fake_link(r, "dev/block/7:4", LOOP4);
	fake_attr(r, LOOP5 "/dev", "7:5\n");
	fake_attr(r, LOOP5 "/size", "0\n");
	fake_queue(r, LOOP5, "512\n", "512\n", "0\n", "[none] mq-deadline\n");
	fake_link(r, "dev/block/7:5", LOOP5);

	fake_link(r, "block/sda", SDA);
	fake_link(r, "block/dm-0", DM0);
	fake_link(r, "block/nvme0n1", NVME0N1);
	fake_link(r, "block/loop3", LOOP3);
	fake_link(r, "block/loop4", LOOP4);
	fake_link(r, "block/loop5", LOOP5);
	return 0;
}

static int fake_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void fake_sysfs_remove(struct fake_sysfs *f)
{
	const char *base = strrchr(f->root, '/');
	if (!base || strncmp(base, "/soakd-sysfs.", 13) != 0)
		return;
	nftw(f->root, fake_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
