// SPDX-License-Identifier: GPL-2.0-only
/* Block-device topology from a fake sysfs tree, and the /proc mount tables
 * from strings: what the safety checks decide on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "daemon/device/dev_safety.h"
#include "daemon/device/dev_sys.h"
#include "fake_sysfs.h"

static int setup(void **state)
{
	struct fake_sysfs *f = calloc(1, sizeof(*f));
	if (!f || fake_sysfs_create(f) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fake_sysfs_remove(*state);
	free(*state);
	return 0;
}

static const char *root(void **state)
{
	return ((struct fake_sysfs *)*state)->root;
}

static void test_block_dir_and_name(void **state)
{
	char dir[4096], name[64];

	assert_int_equal(devsys_block_dir(root(state), makedev(8, 1), dir, sizeof(dir)), 0);
	assert_non_null(strstr(dir, "/block/sda/sda1"));
	assert_int_equal(devsys_name(root(state), makedev(8, 1), name, sizeof(name)), 0);
	assert_string_equal(name, "sda1");
	assert_int_equal(devsys_name(root(state), makedev(253, 0), name, sizeof(name)), 0);
	assert_string_equal(name, "dm-0");
	assert_int_equal(devsys_block_dir(root(state), makedev(9, 9), dir, sizeof(dir)), -ENOENT);
}

static void test_read_attr_trims(void **state)
{
	char dir[4096], text[128];
	uint64_t v;
	dev_t dev;

	assert_int_equal(devsys_block_dir(root(state), makedev(8, 0), dir, sizeof(dir)), 0);
	assert_int_equal(devsys_read_attr(dir, "device/vendor", text, sizeof(text)), 0);
	assert_string_equal(text, "ATA");
	assert_int_equal(devsys_read_u64(dir, "size", &v), 0);
	assert_int_equal(v, UINT64_C(7814037168));
	assert_int_equal(devsys_read_devno(dir, "sda2/dev", &dev), 0);
	assert_int_equal(dev, makedev(8, 2));
	assert_int_equal(devsys_read_attr(dir, "no/such", text, sizeof(text)), -ENOENT);
	/* Not a number. */
	assert_int_equal(devsys_read_u64(dir, "device/model", &v), -EINVAL);
}

static void test_whole_disk(void **state)
{
	dev_t disk;

	assert_int_equal(devsys_whole_disk(root(state), makedev(8, 1), &disk), 0);
	assert_int_equal(disk, makedev(8, 0));
	assert_int_equal(devsys_whole_disk(root(state), makedev(8, 0), &disk), 0);
	assert_int_equal(disk, makedev(8, 0));
	assert_int_equal(devsys_whole_disk(root(state), makedev(253, 0), &disk), 0);
	assert_int_equal(disk, makedev(253, 0));
}

static void test_partitions(void **state)
{
	struct devsys_set parts;

	assert_int_equal(devsys_partitions(root(state), makedev(8, 0), &parts), 0);
	assert_int_equal(parts.n, 2);
	assert_true(devsys_set_has(&parts, makedev(8, 1)));
	assert_true(devsys_set_has(&parts, makedev(8, 2)));
	/* A partition has none, a loop device without partscan neither. */
	assert_int_equal(devsys_partitions(root(state), makedev(8, 1), &parts), 0);
	assert_int_equal(parts.n, 0);
	assert_int_equal(devsys_partitions(root(state), makedev(7, 3), &parts), 0);
	assert_int_equal(parts.n, 0);
}

static void test_holders(void **state)
{
	struct devsys_set holders;

	assert_int_equal(devsys_holders(root(state), makedev(8, 1), &holders), 0);
	assert_int_equal(holders.n, 1);
	assert_int_equal(holders.devs[0], makedev(253, 0));
	assert_int_equal(devsys_holders(root(state), makedev(8, 2), &holders), 0);
	assert_int_equal(holders.n, 0);
	/* The disk itself holds nothing directly: its partition does. */
	assert_int_equal(devsys_holders(root(state), makedev(8, 0), &holders), 0);
	assert_int_equal(holders.n, 0);
}

static void test_lower_disks(void **state)
{
	struct devsys_set lower;

	/* dm-0 -> sda1 -> sda */
	assert_int_equal(devsys_lower_disks(root(state), makedev(253, 0), &lower), 0);
	assert_int_equal(lower.n, 1);
	assert_int_equal(lower.devs[0], makedev(8, 0));
	assert_int_equal(devsys_lower_disks(root(state), makedev(8, 2), &lower), 0);
	assert_int_equal(lower.n, 1);
	assert_int_equal(lower.devs[0], makedev(8, 0));
	assert_int_equal(devsys_lower_disks(root(state), makedev(259, 0), &lower), 0);
	assert_int_equal(lower.n, 1);
	assert_int_equal(lower.devs[0], makedev(259, 0));
}

static void test_set_bounds(void **state)
{
	struct devsys_set s = { .n = 0 };
	(void)state;

	for (unsigned i = 0; i < DEVSYS_MAX_DEVS; i++)
		assert_int_equal(devsys_set_add(&s, makedev(8, i)), 0);
	assert_int_equal(devsys_set_add(&s, makedev(8, 0)), 0); /* present: fine */
	assert_int_equal(devsys_set_add(&s, makedev(9, 0)), -E2BIG);
	assert_int_equal(s.n, DEVSYS_MAX_DEVS);
}

static void test_parse_mountinfo(void **state)
{
	struct devsys_mount m;
	(void)state;

	assert_int_equal(devsys_parse_mountinfo_line(
				 "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n", &m), 0);
	assert_int_equal(m.devno, makedev(254, 0));
	assert_string_equal(m.mount_point, "/");
	assert_string_equal(m.fs_type, "ext4");
	assert_string_equal(m.source, "/dev/vda");

	/* Optional fields before "-", a mount point with a space and a tab. */
	assert_int_equal(devsys_parse_mountinfo_line(
				 "36 35 7:3 / /mnt/soak\\040test\\011x rw,noatime shared:1 master:2 - "
				 "xfs /dev/loop3 rw,attr2\n", &m), 0);
	assert_int_equal(m.devno, makedev(7, 3));
	assert_string_equal(m.mount_point, "/mnt/soak test\tx");
	assert_string_equal(m.fs_type, "xfs");
	assert_string_equal(m.source, "/dev/loop3");

	/* btrfs: an anonymous device number; the source names the device. */
	assert_int_equal(devsys_parse_mountinfo_line(
				 "40 27 0:45 /@home /home rw - btrfs /dev/nvme0n1p3 rw,ssd\n", &m), 0);
	assert_int_equal(major(m.devno), 0);
	assert_string_equal(m.source, "/dev/nvme0n1p3");

	/* A backslash itself, and a source that is not a path. */
	assert_int_equal(devsys_parse_mountinfo_line(
				 "50 27 0:50 / /a\\134b rw - tmpfs tmpfs rw\n", &m), 0);
	assert_string_equal(m.mount_point, "/a\\b");
	assert_string_equal(m.source, "tmpfs");

	assert_int_equal(devsys_parse_mountinfo_line("", &m), -EINVAL);
	assert_int_equal(devsys_parse_mountinfo_line("27 1 254:0 / / rw ext4 /dev/vda\n", &m),
			 -EINVAL);
	assert_int_equal(devsys_parse_mountinfo_line("27 1 xx / / rw - ext4 /dev/vda rw\n", &m),
			 -EINVAL);
	assert_int_equal(devsys_parse_mountinfo_line("27 1 254:0 / / rw -\n", &m), -EINVAL);
}

static void test_parse_swaps(void **state)
{
	char name[256];
	(void)state;

	assert_int_equal(devsys_parse_swaps_line("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
						 name, sizeof(name)), -ENOENT);
	assert_int_equal(devsys_parse_swaps_line("/dev/zram0                              "
						 "partition\t4194300\t\t0\t\t100\n", name, sizeof(name)), 0);
	assert_string_equal(name, "/dev/zram0");
	assert_int_equal(devsys_parse_swaps_line("/swap\\040file file 1024 0 -2\n", name,
						 sizeof(name)), 0);
	assert_string_equal(name, "/swap file");
}

/* A mountinfo file to search: find_mount looks by st_dev first. */
static void test_find_mount(void **state)
{
	char path[300];
	struct devsys_mount m;
	struct devsys_set want = { .n = 0 };
	dev_t which = 0;

	snprintf(path, sizeof(path), "%s/mountinfo", root(state));
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("22 27 0:21 / /proc rw,relatime - proc proc rw\n"
	      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	      "garbage line\n"
	      "60 27 8:2 / /srv/data rw - ext4 /dev/sda2 rw\n"
	      "61 27 253:0 / /home rw - xfs /dev/mapper/vg-root rw\n", f);
	fclose(f);

	devsys_set_add(&want, makedev(8, 0));
	devsys_set_add(&want, makedev(8, 1));
	assert_int_equal(devsys_find_mount(path, &want, &m, &which), 0);
	devsys_set_add(&want, makedev(8, 2));
	assert_int_equal(devsys_find_mount(path, &want, &m, &which), 1);
	assert_int_equal(which, makedev(8, 2));
	assert_string_equal(m.mount_point, "/srv/data");

	assert_int_equal(devsys_mount_of(path, makedev(253, 0), &m), 0);
	assert_string_equal(m.fs_type, "xfs");
	assert_string_equal(m.mount_point, "/home");
	assert_int_equal(devsys_mount_of(path, makedev(1, 1), &m), -ENOENT);

	dev_t backing;
	assert_int_equal(devsys_backing_dev(path, makedev(254, 0), &backing), 0);
	assert_int_equal(backing, makedev(254, 0));
	/* proc has no device under it. */
	assert_int_equal(devsys_backing_dev(path, makedev(0, 21), &backing), -ENODEV);
	assert_int_equal(devsys_find_mount("/nonexistent/mountinfo", &want, &m, NULL), -ENOENT);
}

struct loops_seen {
	struct devsys_loop l[8];
	size_t n;
};

static int remember_loop(const struct devsys_loop *l, void *arg)
{
	struct loops_seen *seen = arg;

	if (seen->n == 8)
		return -E2BIG;
	seen->l[seen->n++] = *l;
	return 0;
}

static const struct devsys_loop *seen_loop(const struct loops_seen *seen, const char *name)
{
	for (size_t i = 0; i < seen->n; i++)
		if (strcmp(seen->l[i].name, name) == 0)
			return &seen->l[i];
	return NULL;
}

/* " (deleted)" comes off the end only, and a name that is nothing else
 * keeps it. */
static void test_strip_deleted(void **state)
{
	char a[] = "/var/tmp/x.img (deleted)", b[] = "/var/tmp/x.img", c[] = " (deleted)",
	     d[] = "/a (deleted)/b", e[] = "/a (deleted) (deleted)";

	(void)state;
	assert_true(devsys_strip_deleted(a));
	assert_string_equal(a, "/var/tmp/x.img");
	assert_false(devsys_strip_deleted(b));
	assert_string_equal(b, "/var/tmp/x.img");
	assert_false(devsys_strip_deleted(c));
	assert_string_equal(c, " (deleted)");
	assert_false(devsys_strip_deleted(d));
	assert_true(devsys_strip_deleted(e));
	assert_string_equal(e, "/a (deleted)");
}

/* Bound loop devices only, "(deleted)" taken off and said. */
static void test_each_loop(void **state)
{
	struct loops_seen seen = { .n = 0 };
	const struct devsys_loop *l;

	assert_int_equal(devsys_each_loop(root(state), remember_loop, &seen), 0);
	assert_int_equal(seen.n, 2);
	l = seen_loop(&seen, "loop3");
	assert_non_null(l);
	assert_int_equal(l->devno, makedev(7, 3));
	assert_string_equal(l->backing_file, "/dev/shm/soakd-loop.img");
	assert_false(l->deleted);
	l = seen_loop(&seen, "loop4");
	assert_non_null(l);
	assert_int_equal(l->devno, makedev(7, 4));
	assert_string_equal(l->backing_file, "/var/tmp/old.img");
	assert_true(l->deleted);
	assert_null(seen_loop(&seen, "loop5"));

	/* No loop driver, no sysfs: nothing to find. */
	seen.n = 0;
	assert_int_equal(devsys_each_loop("/nonexistent", remember_loop, &seen), 0);
	assert_int_equal(seen.n, 0);
}

/* A regular-file target that a loop device reads and writes is refused;
 * without device nodes (dev NULL) the backing comes from sysfs's path. */
static void test_file_backs_loop(void **state)
{
	const struct dev_safety_env env = { .sysfs = root(state), .dev = NULL };
	char backing[300], other[300], text[400], err[512];
	int fd;

	snprintf(backing, sizeof(backing), "%s/backing.img", root(state));
	snprintf(other, sizeof(other), "%s/other.img", root(state));
	fake_attr(root(state), "backing.img", "x");
	fake_attr(root(state), "other.img", "x");
	snprintf(text, sizeof(text), "%s\n", backing);
	fake_attr(root(state), LOOP3 "/loop/backing_file", text);
	/* loop4's file had other.img's name once: the name is not the file. */
	snprintf(text, sizeof(text), "%s (deleted)\n", other);
	fake_attr(root(state), LOOP4 "/loop/backing_file", text);

	fd = open(backing, O_PATH | O_CLOEXEC);
	assert_true(fd >= 0);
	err[0] = '\0';
	assert_int_equal(dev_safety_check_file_env(&env, "/srv/t.img", fd, err, sizeof(err)),
			 -EBUSY);
	close(fd);
	assert_non_null(strstr(err, "refusing to write to /srv/t.img: it is the backing of the "
				    "loop device /dev/loop3; detach it first (losetup -d "
				    "/dev/loop3; destroy_data does not override this)"));

	fd = open(other, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	err[0] = '\0';
	assert_int_equal(dev_safety_check_file_env(&env, other, fd, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_block_dir_and_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_attr_trims, setup, teardown),
		cmocka_unit_test_setup_teardown(test_whole_disk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partitions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lower_disks, setup, teardown),
		cmocka_unit_test(test_set_bounds),
		cmocka_unit_test(test_parse_mountinfo),
		cmocka_unit_test(test_parse_swaps),
		cmocka_unit_test_setup_teardown(test_find_mount, setup, teardown),
		cmocka_unit_test(test_strip_deleted),
		cmocka_unit_test_setup_teardown(test_each_loop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_backs_loop, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
