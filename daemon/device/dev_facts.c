// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device facts from sysfs.  Attributes of the queue and of the hardware
 * live on the whole disk, so a partition reads them from its disk; where a
 * fact lives differs by transport, so each is looked for in the places the
 * kernel's drivers put it.
 */
#include "dev_facts.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/log.h"
#include "dev_safety.h"
#include "dev_sys.h"

/* Replaces what would garble a log line or a JSON consumer. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

/* The first of names that dir has, trimmed and printable. */
static void read_first(const char *dir, const char *const *names, char *ret, size_t len)
{
	ret[0] = '\0';
	for (; *names; names++)
		if (devsys_read_attr(dir, *names, ret, len) == 0 && ret[0]) {
			printable(ret);
			return;
		}
	ret[0] = '\0';
}

/*
 * SCSI (and SATA through libata) expose the unit serial number only as VPD
 * page 0x80: a 4-byte header whose bytes 2-3 give the length, then ASCII.
 */
static void read_vpd80(const char *dir, char *ret, size_t len)
{
	char path[PATH_MAX];
	unsigned char page[4 + 252];
	ssize_t n;
	int fd;

	ret[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/device/vpd_pg80", dir) >= (int)sizeof(path))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, page, sizeof(page));
	close(fd);
	if (n < 4 || page[1] != 0x80)
		return;
	size_t serial_len = (size_t)page[2] << 8 | page[3];
	if (serial_len > (size_t)n - 4)
		serial_len = (size_t)n - 4;
	const unsigned char *s = page + 4;
	while (serial_len && (*s == ' ' || *s == '\0')) {
		s++;
		serial_len--;
	}
	while (serial_len && (s[serial_len - 1] == ' ' || s[serial_len - 1] == '\0'))
		serial_len--;
	if (serial_len >= len)
		serial_len = len - 1;
	memcpy(ret, s, serial_len);
	ret[serial_len] = '\0';
	printable(ret);
}

static uint32_t read_u32(const char *dir, const char *name)
{
	uint64_t v;
	return devsys_read_u64(dir, name, &v) == 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* "none [mq-deadline] kyber" -> "mq-deadline"; "none" alone -> "none". */
static void active_scheduler(const char *dir, char *ret, size_t len)
{
	char all[256];
	ret[0] = '\0';
	if (devsys_read_attr(dir, "queue/scheduler", all, sizeof(all)) < 0)
		return;
	const char *from = all, *open = strchr(all, '['), *close = open ? strchr(open, ']') : NULL;
	size_t n = strlen(all);
	if (open && close) {
		from = open + 1;
		n = (size_t)(close - from);
	}
	if (n >= len)
		n = len - 1;
	memcpy(ret, from, n);
	ret[n] = '\0';
}

int dev_facts_block(const char *sysfs, dev_t devno, struct dev_block_facts *ret)
{
	static const char *const model_at[] = { "device/model", "device/name", NULL };
	static const char *const vendor_at[] = { "device/vendor", NULL };
	static const char *const serial_at[] = { "serial", "device/serial", NULL };
	static const char *const firmware_at[] = { "device/firmware_rev", "device/rev",
						   "device/fwrev", NULL };
	static const char *const wwid_at[] = { "wwid", "device/wwid", NULL };
	char dir[PATH_MAX], disk_dir[PATH_MAX];
	dev_t disk;
	uint64_t sectors, v;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->major = major(devno);
	ret->minor = minor(devno);
	ret->rotational = -1;
	r = devsys_block_dir(sysfs, devno, dir, sizeof(dir));
	if (r < 0)
		return r;
	r = devsys_whole_disk(sysfs, devno, &disk);
	if (r < 0)
		return r;
	r = devsys_block_dir(sysfs, disk, disk_dir, sizeof(disk_dir));
	if (r < 0)
		return r;
	ret->partition = disk != devno;
	devsys_name(sysfs, devno, ret->name, sizeof(ret->name));
	devsys_name(sysfs, disk, ret->disk, sizeof(ret->disk));

	/* sysfs counts sizes in 512-byte sectors whatever the block size. */
	if (devsys_read_u64(dir, "size", &sectors) == 0)
		ret->size_bytes = sectors * 512;
	if (ret->partition && devsys_read_u64(dir, "start", &sectors) == 0)
		ret->offset_bytes = sectors * 512;

	ret->logical_block_size = read_u32(disk_dir, "queue/logical_block_size");
	ret->physical_block_size = read_u32(disk_dir, "queue/physical_block_size");
	ret->minimum_io_size = read_u32(disk_dir, "queue/minimum_io_size");
	ret->optimal_io_size = read_u32(disk_dir, "queue/optimal_io_size");
	if (devsys_read_u64(disk_dir, "queue/rotational", &v) == 0)
		ret->rotational = v != 0;
	ret->discard = devsys_read_u64(disk_dir, "queue/discard_max_bytes", &v) == 0 && v > 0;
	active_scheduler(disk_dir, ret->scheduler, sizeof(ret->scheduler));
	read_first(disk_dir, (const char *const[]){ "queue/write_cache", NULL }, ret->write_cache,
		   sizeof(ret->write_cache));

	read_first(disk_dir, model_at, ret->model, sizeof(ret->model));
	read_first(disk_dir, vendor_at, ret->vendor, sizeof(ret->vendor));
	read_first(disk_dir, serial_at, ret->serial, sizeof(ret->serial));
	if (!ret->serial[0])
		read_vpd80(disk_dir, ret->serial, sizeof(ret->serial));
	read_first(disk_dir, firmware_at, ret->firmware, sizeof(ret->firmware));
	read_first(dir, wwid_at, ret->wwid, sizeof(ret->wwid));
	if (!ret->wwid[0])
		read_first(disk_dir, wwid_at, ret->wwid, sizeof(ret->wwid));
	read_first(dir, (const char *const[]){ "dm/name", NULL }, ret->dm_name,
		   sizeof(ret->dm_name));
	read_first(disk_dir, (const char *const[]){ "loop/backing_file", NULL },
		   ret->backing_file, sizeof(ret->backing_file));
	return 0;
}

/* Facts about what st describes; path only names it. */
static int facts_of(const char *sysfs, const char *mountinfo, const char *path,
		    const struct stat *stp, struct dev_facts *ret)
{
	const struct stat st = *stp;
	struct devsys_mount *m;
	dev_t backing;
	int r;

	memset(ret, 0, sizeof(*ret));
	snprintf(ret->path, sizeof(ret->path), "%s", path);
	if (S_ISBLK(st.st_mode)) {
		r = dev_facts_block(sysfs, st.st_rdev, &ret->block);
		if (r < 0)
			return r;
		ret->have_block = true;
		ret->size_bytes = ret->block.size_bytes;
		return 0;
	}
	if (!S_ISREG(st.st_mode))
		return -EINVAL;

	ret->is_file = true;
	ret->size_bytes = (uint64_t)st.st_size;
	ret->fs_major = major(st.st_dev);
	ret->fs_minor = minor(st.st_dev);
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (devsys_mount_of(mountinfo, st.st_dev, m) == 0) {
		snprintf(ret->fs_type, sizeof(ret->fs_type), "%s", m->fs_type);
		snprintf(ret->fs_source, sizeof(ret->fs_source), "%s", m->source);
		snprintf(ret->fs_mount_point, sizeof(ret->fs_mount_point), "%s", m->mount_point);
		printable(ret->fs_source);
		printable(ret->fs_mount_point);
	}
	free(m);
	if (devsys_backing_dev(mountinfo, st.st_dev, &backing) == 0 &&
	    dev_facts_block(sysfs, backing, &ret->block) == 0)
		ret->have_block = true;
	return 0;
}

int dev_facts_get_at(const char *sysfs, const char *mountinfo, const char *path,
		     struct dev_facts *ret)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return facts_of(sysfs, mountinfo, path, &st, ret);
}

int dev_facts_get(const char *path, struct dev_facts *ret)
{
	return dev_facts_get_at(DEVSYS_SYSFS, DEVSYS_MOUNTINFO, path, ret);
}

/* An empty string is "not exposed": null, so every key is always there. */
static json_t *string_or_null(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

static json_t *block_json(const struct dev_block_facts *b)
{
	char dev[32];
	json_t *j;

	snprintf(dev, sizeof(dev), "%u:%u", b->major, b->minor);
	j = json_pack("{s:s,s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:o,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
		      "name", b->name, "disk", b->disk, "dev", dev, "partition", b->partition,
		      "size_bytes", (json_int_t)b->size_bytes,
		      "logical_block_size", (json_int_t)b->logical_block_size,
		      "physical_block_size", (json_int_t)b->physical_block_size,
		      "minimum_io_size", (json_int_t)b->minimum_io_size,
		      "optimal_io_size", (json_int_t)b->optimal_io_size,
		      "rotational", b->rotational < 0 ? json_null() : json_boolean(b->rotational),
		      "discard", b->discard,
		      "scheduler", string_or_null(b->scheduler),
		      "write_cache", string_or_null(b->write_cache),
		      "model", string_or_null(b->model), "vendor", string_or_null(b->vendor),
		      "serial", string_or_null(b->serial), "firmware", string_or_null(b->firmware),
		      "wwid", string_or_null(b->wwid));
	if (!j)
		return NULL;
	if (b->partition)
		json_object_set_new(j, "offset_bytes", json_integer((json_int_t)b->offset_bytes));
	if (b->dm_name[0])
		json_object_set_new(j, "dm_name", json_string(b->dm_name));
	if (b->backing_file[0])
		json_object_set_new(j, "backing_file", json_string(b->backing_file));
	if (b->backing_inode[0])
		json_object_set_new(j, "backing_inode", json_string(b->backing_inode));
	return j;
}

json_t *dev_facts_json(const struct dev_facts *f)
{
	json_t *j;

	if (!f->is_file) {
		j = f->have_block ? block_json(&f->block) : json_object();
		if (j) {
			json_object_set_new(j, "path", json_string(f->path));
			json_object_set_new(j, "kind", json_string("block"));
		}
		return j;
	}
	char dev[32];
	snprintf(dev, sizeof(dev), "%u:%u", f->fs_major, f->fs_minor);
	json_t *fs = json_pack("{s:o,s:o,s:o,s:s}", "type", string_or_null(f->fs_type),
			       "source", string_or_null(f->fs_source),
			       "mount_point", string_or_null(f->fs_mount_point), "dev", dev);
	if (fs && f->have_block)
		json_object_set_new(fs, "disk", block_json(&f->block));
	return json_pack("{s:s,s:s,s:I,s:o*}", "path", f->path, "kind", "file", "size_bytes",
			 (json_int_t)f->size_bytes, "filesystem", fs);
}

/* Sizes for people, rounded: "1.8 TiB", "64 MiB". */
static void human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 && u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	*off = n < 0 ? len : *off + (size_t)n;
}

void dev_facts_format(const struct dev_facts *f, char *buf, size_t len)
{
	const struct dev_block_facts *b = &f->block;
	char size[32];
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	human_size(f->size_bytes, size, sizeof(size));
	if (f->is_file) {
		append(buf, len, &off, "%s: file of %s on %s %s (%u:%u) mounted on %s", f->path, size,
		       f->fs_type[0] ? f->fs_type : "unknown", f->fs_source[0] ? f->fs_source : "-",
		       f->fs_major, f->fs_minor, f->fs_mount_point[0] ? f->fs_mount_point : "-");
		if (!f->have_block)
			return;
		append(buf, len, &off, "; disk %s:", b->disk);
	} else {
		append(buf, len, &off, "%s: %s, %s", f->path, size, b->name);
		if (b->partition)
			append(buf, len, &off, " (partition of %s at byte %" PRIu64 ")", b->disk,
			       b->offset_bytes);
		append(buf, len, &off, ",");
	}
	append(buf, len, &off, " model %s, serial %s, firmware %s, logical block %u, physical "
	       "block %u, %s, scheduler %s, write cache %s",
	       b->model[0] ? b->model : "-", b->serial[0] ? b->serial : "-",
	       b->firmware[0] ? b->firmware : "-", b->logical_block_size, b->physical_block_size,
	       b->rotational < 0 ? "rotational unknown"
	       : b->rotational	  ? "rotational"
				  : "non-rotational",
	       b->scheduler[0] ? b->scheduler : "-", b->write_cache[0] ? b->write_cache : "-");
	if (b->backing_file[0])
		append(buf, len, &off, ", backed by %s", b->backing_file);
	if (b->dm_name[0])
		append(buf, len, &off, ", device-mapper \"%s\"", b->dm_name);
}

struct dev_facts *dev_facts_new_logged(const char *path, int fd)
{
	struct dev_facts *f = malloc(sizeof(*f));
	char line[1024];
	int r;

	if (!f) {
		log_warning("%s: no device facts: out of memory", path);
		return NULL;
	}
	struct stat st;
	r = fstat(fd, &st) < 0 ? -errno : facts_of(DEVSYS_SYSFS, DEVSYS_MOUNTINFO, path, &st, f);
	if (r < 0) {
		log_warning_errno(r, "%s: cannot read its device facts", path);
		free(f);
		return NULL;
	}
	struct dev_loop_backing b;
	if (!f->is_file && f->have_block && f->block.backing_file[0] &&
	    dev_safety_loop_backing_fd(fd, &b) == 0 && !b.is_blk)
		snprintf(f->block.backing_inode, sizeof(f->block.backing_inode), "%u:%u:%" PRIu64,
			 major(b.dev), minor(b.dev), (uint64_t)b.ino);
	dev_facts_format(f, line, sizeof(line));
	log_info("device %s", line);
	return f;
}

json_t *dev_facts_recorded(const char *run_dir)
{
	int dir = open(run_dir, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int fd = dir >= 0 ? openat(dir, "devices.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	struct stat st;
	json_t *j = NULL;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		j = json_loadfd(fd, 0, NULL);
	if (fd >= 0)
		close(fd);
	if (dir >= 0)
		close(dir);
	return j;
}

/* Two loop devices' backing names as sysfs prints them, " (deleted)" or
 * not. */
static bool same_backing_name(const char *a, const char *b)
{
	char x[PATH_MAX], y[PATH_MAX];

	snprintf(x, sizeof(x), "%s", a);
	snprintf(y, sizeof(y), "%s", b);
	devsys_strip_deleted(x);
	devsys_strip_deleted(y);
	return strcmp(x, y) == 0;
}

int dev_facts_same_device(json_t *recorded, const char *workload, const struct dev_facts *now,
			  char *err, size_t errlen)
{
	json_t *all = !now->is_file && now->have_block ? recorded : NULL;
	json_t *e, *then = NULL;
	const char *what = NULL, *was = "", *is = "";
	size_t i;

	json_array_foreach(all, i, e) {
		json_t *dev = json_object_get(e, "device");
		const char *w = json_string_value(json_object_get(e, "workload"));
		const char *path = json_string_value(json_object_get(dev, "path"));
		if (w && path && json_is_object(dev) && strcmp(w, workload) == 0 &&
		    strcmp(path, now->path) == 0)
			then = dev;
	}
	/* What the kernel does not tell now (a VPD page unread) is no
	 * difference; nor is a WWID's text where a serial is known (a kernel
	 * quirk can change it for the same device). */
	const char *serial = then ? json_string_value(json_object_get(then, "serial")) : NULL;
	const char *wwid = then ? json_string_value(json_object_get(then, "wwid")) : NULL;
	const char *inode = then ? json_string_value(json_object_get(then, "backing_inode")) : NULL;
	const char *file = then ? json_string_value(json_object_get(then, "backing_file")) : NULL;
	const char *now_inode = now->block.backing_inode;
	/* "MAJ:MIN:INO": the file system's device number may change with a
	 * reboot (dm minors, btrfs, NFS); the inode is only compared on the
	 * same one, the name otherwise. */
	const char *ino_then = inode ? strrchr(inode, ':') : NULL;
	const char *ino_now = now_inode[0] ? strrchr(now_inode, ':') : NULL;
	bool same_fs = ino_then && ino_now && ino_then - inode == ino_now - now_inode &&
		       strncmp(inode, now_inode, (size_t)(ino_then - inode)) == 0;
	if (serial && now->block.serial[0] && strcmp(serial, now->block.serial) != 0) {
		what = "serial";
		was = serial;
		is = now->block.serial;
	} else if (!serial && !now->block.serial[0] && wwid && now->block.wwid[0] &&
		   strcmp(wwid, now->block.wwid) != 0) {
		what = "WWID";
		was = wwid;
		is = now->block.wwid;
	} else if (same_fs && strcmp(ino_then, ino_now) != 0) {
		snprintf(err, errlen, "%s is not the device this run began on: its backing file "
			 "\"%s\" is another file (inode %s) than the run's \"%s\" (inode %s), a "
			 "loop device attached to another file; put that one back, or start a new "
			 "run (soakd --new-run) to write to this one", now->path,
			 now->block.backing_file, ino_now + 1, file ? file : "?", ino_then + 1);
		return -EXDEV;
	} else if (!same_fs && file && now->block.backing_file[0] &&
		   !same_backing_name(file, now->block.backing_file)) {
		what = "backing file";
		was = file;
		is = now->block.backing_file;
	}
	if (what) {
		snprintf(err, errlen, "%s is not the device this run began on: its %s is \"%s\", "
			 "the run's was \"%s\" (a disk swapped, or a loop device attached to "
			 "another file); put that device back, or start a new run (soakd --new-run) "
			 "to write to this one", now->path, what, is, was);
		return -EXDEV;
	}
	json_t *size = then ? json_object_get(then, "size_bytes") : NULL;
	int r = 0;
	if (json_is_integer(size) && (uint64_t)json_integer_value(size) != now->block.size_bytes) {
		snprintf(err, errlen, "%s is not the device this run began on: it holds %" PRIu64
			 " bytes, the run's held %" PRIu64 "; put that device back, or start a new "
			 "run (soakd --new-run) to write to this one", now->path,
			 now->block.size_bytes, (uint64_t)json_integer_value(size));
		r = -EXDEV;
	}
	return r;
}
