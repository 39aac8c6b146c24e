// SPDX-License-Identifier: GPL-2.0-only
/*
 * The check a block device passes before soakd writes to it.  The cheap,
 * certain facts come first (sysfs and the mount tables, which need no open
 * of the device), then an exclusive read-only open, then libblkid on it.
 */
#include "dev_safety.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "dev_path.h"
#include "dev_safety_int.h"
#include "dev_signatures.h"
#include "workload/workload.h"

/* How long the look for data on a device may take (dev_signatures.h), and
 * how long at the least once a reload's shared time is spent. */
#define PROBE_WAIT_NS (UINT64_C(8) * 1000000000)
#define PROBE_WAIT_MIN_NS (UINT64_C(500) * 1000000)
#define EXCL_SETTLE_NS (UINT64_C(1000) * 1000000)
#define EXCL_POLL_NS 10000000

/* What is left of the probe time the devices opened since
 * dev_safety_share_probe_wait(true) share; sharing says whether they do. */
static _Thread_local bool sharing;
static _Thread_local uint64_t shared_left_ns;

void dev_safety_share_probe_wait(bool on)
{
	sharing = on;
	shared_left_ns = PROBE_WAIT_NS;
}

/* How long the next device's probe may take: its own PROBE_WAIT_NS, or
 * what is left of the shared one, but never less than PROBE_WAIT_MIN_NS
 * (a device that answers needs a moment to). */
static uint64_t probe_wait_ns(void)
{
	if (!sharing)
		return PROBE_WAIT_NS;
	return shared_left_ns > PROBE_WAIT_MIN_NS ? shared_left_ns : PROBE_WAIT_MIN_NS;
}

static void probe_waited(uint64_t ns)
{
	if (sharing)
		shared_left_ns = shared_left_ns > ns ? shared_left_ns - ns : 0;
}

/* "8 s", "0.5 s": a wait in words. */
static void say_wait(uint64_t ns, char *ret, size_t len)
{
	if (ns % 1000000000 == 0)
		snprintf(ret, len, "%" PRIu64 " s", ns / 1000000000);
	else
		snprintf(ret, len, "%.1f s", (double)ns / 1e9);
}

const struct dev_safety_env dev_safety_host = {
	.sysfs = DEVSYS_SYSFS,
	.mountinfo = DEVSYS_MOUNTINFO,
	.swaps = DEVSYS_SWAPS,
	.dev = "/dev",
};

/* The file systems the running system cannot do without. */
static const char *const system_mounts[] = { "/", "/boot", "/boot/efi", "/usr", "/var", NULL };

int dev_safety_root_disks(const struct dev_safety_env *env, struct devsys_set *ret,
			  const char **ret_why)
{
	ret->n = 0;
	for (const char *const *mp = system_mounts; *mp; mp++) {
		struct devsys_set lower;
		struct stat st;
		dev_t dev;
		size_t before = ret->n;

		/* AT_NO_AUTOMOUNT: looking must not mount /boot/efi. */
		if (fstatat(AT_FDCWD, *mp, &st, AT_NO_AUTOMOUNT) < 0)
			continue;
		if (devsys_backing_dev(env->mountinfo, st.st_dev, &dev) < 0)
			continue;       /* tmpfs, overlay, NFS: no local disk */
		if (devsys_set_add(ret, dev) < 0)
			return -E2BIG;
		if (devsys_lower_disks(env->sysfs, dev, &lower) == 0)
			for (size_t i = 0; i < lower.n; i++)
				if (devsys_set_add(ret, lower.devs[i]) < 0)
					return -E2BIG;
		for (size_t i = before; i < ret->n; i++)
			ret_why[i] = *mp;
	}
	return 0;
}

void safety_refuse(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "refusing to write to %s: ", path);

	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

const char *safety_override_name(enum dev_safety_via via)
{
	return via == DEV_SAFETY_VIA_CLI ? "--destroy-data" : "destroy_data";
}

/* "/dev/NAME" for messages about a device the user did not name. */
void safety_dev_label(const struct dev_safety_env *env, dev_t dev, char *ret, size_t len)
{
	char name[256];

	if (devsys_name(env->sysfs, dev, name, sizeof(name)) == 0)
		snprintf(ret, len, "/dev/%s", name);
	else
		snprintf(ret, len, "device %u:%u", major(dev), minor(dev));
}

int safety_check_root_disk(const struct dev_safety_env *env, const char *path, dev_t devno,
			   enum dev_safety_via via, char *err, size_t errlen)
{
	const char *why[DEVSYS_MAX_DEVS];
	struct devsys_set root, lower;
	char disk[300];
	int r;

	r = dev_safety_root_disks(env, &root, why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < root.n; i++)
		if (root.devs[i] == devno) {
			dev_t whole;
			bool is_disk = devsys_whole_disk(env->sysfs, devno, &whole) == 0 &&
				       whole == devno;
			safety_refuse(err, errlen, path, "it is %s (it holds %s); soakd never writes to the "
			       "disk the running system is on, %s or not",
			       is_disk ? "the root disk" : "a system device", why[i],
			       safety_override_name(via));
			return -EPERM;
		}
	/* A partition of the root disk, or a dm/md device built on it: its
	 * writes land on the system's disk. */
	r = devsys_lower_disks(env->sysfs, devno, &lower);
	if (r < 0 && r != -ENOENT)
		return r;
	for (size_t k = 0; r == 0 && k < lower.n; k++)
		for (size_t i = 0; i < root.n; i++)
			if (root.devs[i] == lower.devs[k]) {
				safety_dev_label(env, lower.devs[k], disk, sizeof(disk));
				safety_refuse(err, errlen, path, "it is on the root disk %s (which holds "
				       "%s); soakd never writes to the disk the running system is "
				       "on, %s or not", disk, why[i], safety_override_name(via));
				return -EPERM;
			}
	return 0;
}

/* "it is" for the device itself, "its partition /dev/X is" for one of its
 * partitions: the subject of a refusal. */
void safety_subject(const struct dev_safety_env *env, dev_t devno, dev_t dev, char *ret,
		    size_t len)
{
	char label[300];

	if (dev == devno) {
		snprintf(ret, len, "it is");
		return;
	}
	safety_dev_label(env, dev, label, sizeof(label));
	snprintf(ret, len, "its partition %s is", label);
}

/* How a holder (a device stacked on ours) calls itself. */
static void describe_holder(const struct dev_safety_env *env, dev_t holder, char *ret,
			    size_t len)
{
	char dir[PATH_MAX], name[256], dm_name[256], md_level[64];

	if (devsys_block_dir(env->sysfs, holder, dir, sizeof(dir)) < 0 ||
	    devsys_name(env->sysfs, holder, name, sizeof(name)) < 0) {
		snprintf(ret, len, "device %u:%u", major(holder), minor(holder));
		return;
	}
	if (devsys_read_attr(dir, "dm/name", dm_name, sizeof(dm_name)) == 0)
		snprintf(ret, len, "%s (device-mapper device \"%s\")", name, dm_name);
	else if (devsys_read_attr(dir, "md/level", md_level, sizeof(md_level)) == 0)
		snprintf(ret, len, "%s (md %s array)", name, md_level);
	else
		snprintf(ret, len, "%s", name);
}

/* except: loop devices over devno that do not count (those a target's
 * writes come through), or NULL. */
int safety_check_in_use(const struct dev_safety_env *env, const char *path, dev_t devno,
			const struct devsys_set *except, enum dev_safety_via via, char *err,
			size_t errlen)
{
	struct devsys_set self = { .n = 0 }, holders;
	struct devsys_mount *m;
	char which[400], what[600], swap[PATH_MAX];
	dev_t dev;
	int r;

	/* The device and, for a whole disk, its partitions. */
	r = devsys_partitions(env->sysfs, devno, &self);
	if (r < 0 && r != -ENOENT)
		return r;
	devsys_set_add(&self, devno);

	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	r = devsys_find_mount(env->mountinfo, &self, m, &dev);
	if (r > 0) {
		safety_subject(env, devno, dev, which, sizeof(which));
		safety_refuse(err, errlen, path, "%s mounted on %s (%s); unmount it first (%s does not "
		       "override this)", which, m->mount_point, m->fs_type, safety_override_name(via));
	}
	free(m);
	if (r != 0)
		return r > 0 ? -EBUSY : r;

	r = devsys_find_swap(env->swaps, &self, swap, sizeof(swap), &dev);
	if (r > 0) {
		safety_subject(env, devno, dev, which, sizeof(which));
		safety_refuse(err, errlen, path, "%s in use as swap; swapoff it first (%s does not "
		       "override this)", which, safety_override_name(via));
		return -EBUSY;
	}
	if (r < 0)
		return r;

	for (size_t i = 0; i < self.n; i++) {
		if (devsys_holders(env->sysfs, self.devs[i], &holders) < 0 || holders.n == 0)
			continue;
		describe_holder(env, holders.devs[0], what, sizeof(what));
		safety_subject(env, devno, self.devs[i], which, sizeof(which));
		safety_refuse(err, errlen, path, "%s in use by %s%s; remove what is built on it first (%s "
		       "does not override this)", which, what,
		       holders.n > 1 ? " and other devices" : "", safety_override_name(via));
		return -EBUSY;
	}
	return safety_check_loop_over_block(env, path, devno, &self, except, via, err, errlen);
}

/*
 * A claim can outlive the process that held it by some milliseconds: when a
 * process exits, io_uring releases the files registered with its rings from
 * a workqueue (seen on 6.18 when soakd is restarted at once).  So EBUSY is
 * believed only once it has lasted EXCL_SETTLE_NS.
 */
static int open_exclusive(int path_fd, int flags)
{
	struct timespec pause = { .tv_nsec = EXCL_POLL_NS };
	uint64_t waited = 0;
	int fd;

	for (;;) {
		fd = dev_fd_reopen(path_fd, flags | O_EXCL);
		if (fd >= 0 || fd != -EBUSY || waited >= EXCL_SETTLE_NS)
			return fd;
		nanosleep(&pause, NULL);
		waited += EXCL_POLL_NS;
	}
}

/*
 * What libblkid finds on what fd holds (a block device or a regular file),
 * read through a view of its own without O_DIRECT: 0 when it may be
 * written (nothing found, or destroy_data), else a negative errno with
 * the refusal in err.
 */
static int look_for_data(const char *path, int fd, bool destroy_data, enum dev_safety_via via,
			 char *err, size_t errlen)
{
	char signatures[DEV_SIGNATURES_LEN];
	uint64_t wait_ns = probe_wait_ns();
	char wait[32];
	int probe, r;

	say_wait(wait_ns, wait, sizeof(wait));
	uint64_t began = mono_ns();
	probe = dev_fd_reopen(fd, O_RDONLY | O_NONBLOCK);
	r = probe < 0 ? probe : dev_signatures_find(probe, wait_ns, signatures, sizeof(signatures));
	probe_waited(mono_ns() - began);
	if (r == -ETIMEDOUT) {
		safety_refuse(err, errlen, path, "it did not answer a read of its first blocks (looking for "
		       "data on it) within %s%s: it stalls, or was spinning up (then try again)",
		       wait, wait_ns < PROBE_WAIT_NS ? " (what was left of the time all the devices "
		       "of one reload may be waited for together)" : "");
		return r;
	}
	if (r == -EINPROGRESS) {
		safety_refuse(err, errlen, path, "it has not yet answered an earlier read of its first "
		       "blocks (looking for data on it, given up on): it stalls; try again once it "
		       "answers");
		return -ETIMEDOUT;
	}
	if (r < 0) {
		safety_refuse(err, errlen, path, "cannot read it to look for data on it: %s", strerror(-r));
		return r;
	}
	if (r == 0)
		return 0;
	if (destroy_data) {
		log_warning("%s holds %s: writing over it, as %s allows", path, signatures,
			    safety_override_name(via));
		return 0;
	}
	if (via == DEV_SAFETY_VIA_CLI)
		safety_refuse(err, errlen, path, "it holds %s; give --destroy-data if its data may be "
		       "destroyed", signatures);
	else
		safety_refuse(err, errlen, path, "it holds %s; add \"destroy_data\": true to this target "
		       "if its data may be destroyed", signatures);
	return -EPERM;
}

int dev_safety_file_data(const char *path, int fd, bool destroy_data, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot access %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0)
		return 0;
	/* Through /proc: fd may be an O_PATH descriptor. */
	char proc[64], mark[8];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (getxattr(proc, DEV_SAFETY_XATTR, mark, sizeof(mark)) > 0)
		return 0;
	return look_for_data(path, fd, destroy_data, DEV_SAFETY_VIA_CONFIG, err, errlen);
}

void dev_safety_mark_laid_out(int fd)
{
	/* Unmarked (no user attributes here), it is probed as any file. */
	(void)fsetxattr(fd, DEV_SAFETY_XATTR, "1", 1, 0);
}

int dev_safety_open_env(const struct dev_safety_env *env, const char *path, int path_fd,
			bool destroy_data, enum dev_safety_via via, int flags, char *err,
			size_t errlen)
{
	struct stat st;
	int fd, r;

	if (fstat(path_fd, &st) < 0) {
		snprintf(err, errlen, "cannot access %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s is not a block device", path);
		return -ENOTBLK;
	}

	/* Before anything opens it: the root disk may not even be readable. */
	r = safety_check_root_disk(env, path, st.st_rdev, via, err, errlen);
	if (r == 0)
		r = safety_check_in_use(env, path, st.st_rdev, NULL, via, err, errlen);
	if (r == -EPERM || r == -EBUSY)
		return r;
	if (r < 0) {
		safety_refuse(err, errlen, path, "cannot tell whether it is in use: %s", strerror(-r));
		return r;
	}
	/* It says why. */
	r = safety_check_loop_target(env, path, path_fd, st.st_rdev, via, err, errlen);
	if (r < 0)
		return r;

	/* Mounts in other namespaces, dm and md all claim the device: an
	 * exclusive open fails with EBUSY then.  Held from here on, the claim
	 * keeps anyone from mounting it between this check and our writes. */
	fd = open_exclusive(path_fd, flags);
	if (fd < 0) {
		r = fd;
		if (r == -EBUSY)
			safety_refuse(err, errlen, path, "it is in use: the kernel or another program holds "
			       "it exclusively (a mount, possibly in another namespace, RAID, "
			       "device-mapper or an exclusive open); %s does not override this",
			       safety_override_name(via));
		else
			safety_refuse(err, errlen, path, "cannot open it: %s", strerror(-r));
		return r;
	}
	/* libblkid reads with buffers of its own: a second view without
	 * O_DIRECT, of the very device we hold. */
	r = look_for_data(path, fd, destroy_data, via, err, errlen);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int dev_safety_open(const char *path, int path_fd, bool destroy_data, enum dev_safety_via via,
		    int flags, char *err, size_t errlen)
{
	return dev_safety_open_env(&dev_safety_host, path, path_fd, destroy_data, via, flags, err,
				   errlen);
}
