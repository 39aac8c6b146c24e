// SPDX-License-Identifier: GPL-2.0-only
/* Device facts from a fake sysfs tree: where each transport keeps them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "daemon/device/dev_facts.h"
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

static void test_sata_partition(void **state)
{
	struct dev_block_facts b;

	assert_int_equal(dev_facts_block(root(state), makedev(8, 1), &b), 0);
	assert_string_equal(b.name, "sda1");
	assert_string_equal(b.disk, "sda");
	assert_true(b.partition);
	assert_int_equal(b.size_bytes, UINT64_C(1048576) * 512);
	assert_int_equal(b.offset_bytes, UINT64_C(2048) * 512);
	/* Queue and identity come from the disk. */
	assert_int_equal(b.logical_block_size, 512);
	assert_int_equal(b.physical_block_size, 4096);
	assert_int_equal(b.rotational, 1);
	assert_string_equal(b.scheduler, "mq-deadline");
	assert_string_equal(b.write_cache, "write back");
	assert_string_equal(b.model, "ST4000NM0035-1V4");
	assert_string_equal(b.vendor, "ATA");
	assert_string_equal(b.firmware, "TN03");
	/* SCSI: the serial from VPD page 0x80, padding stripped. */
	assert_string_equal(b.serial, "ZC12ABCD");
	assert_string_equal(b.wwid, "naa.5000c500a1b2c3d4");
}

static void test_nvme(void **state)
{
	struct dev_block_facts b;

	assert_int_equal(dev_facts_block(root(state), makedev(259, 0), &b), 0);
	assert_string_equal(b.name, "nvme0n1");
	assert_false(b.partition);
	assert_int_equal(b.size_bytes, UINT64_C(3907029168) * 512);
	assert_int_equal(b.logical_block_size, 4096);
	assert_int_equal(b.rotational, 0);
	assert_true(b.discard);
	assert_string_equal(b.scheduler, "none");
	assert_string_equal(b.model, "Samsung SSD 980 PRO 2TB");
	assert_string_equal(b.serial, "S6B0NL0T123456X");
	assert_string_equal(b.firmware, "5B2QGXA7");
	assert_string_equal(b.wwid, "eui.0025388b91b2c3d4");
}

static void test_loop_and_dm(void **state)
{
	struct dev_block_facts b;

	assert_int_equal(dev_facts_block(root(state), makedev(7, 3), &b), 0);
	assert_string_equal(b.model, "");
	assert_string_equal(b.serial, "");
	assert_string_equal(b.backing_file, "/dev/shm/soakd-loop.img");
	assert_string_equal(b.write_cache, "write through");

	assert_int_equal(dev_facts_block(root(state), makedev(253, 0), &b), 0);
	assert_string_equal(b.dm_name, "vg-root");
	assert_int_equal(dev_facts_block(root(state), makedev(9, 9), &b), -ENOENT);
}

static void test_json(void **state)
{
	struct dev_facts f = { .size_bytes = 0 };
	json_t *j;

	snprintf(f.path, sizeof(f.path), "/dev/loop3");
	assert_int_equal(dev_facts_block(root(state), makedev(7, 3), &f.block), 0);
	f.have_block = true;
	f.size_bytes = f.block.size_bytes;
	j = dev_facts_json(&f);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/dev/loop3");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "block");
	assert_string_equal(json_string_value(json_object_get(j, "dev")), "7:3");
	assert_int_equal(json_integer_value(json_object_get(j, "size_bytes")), 131072 * 512);
	assert_int_equal(json_integer_value(json_object_get(j, "logical_block_size")), 512);
	assert_true(json_is_false(json_object_get(j, "rotational")));
	/* Not exposed: present, and null. */
	assert_true(json_is_null(json_object_get(j, "serial")));
	assert_true(json_is_null(json_object_get(j, "model")));
	assert_string_equal(json_string_value(json_object_get(j, "backing_file")),
			    "/dev/shm/soakd-loop.img");
	assert_null(json_object_get(j, "offset_bytes"));
	json_decref(j);

	char line[1024];
	dev_facts_format(&f, line, sizeof(line));
	assert_non_null(strstr(line, "/dev/loop3: 64 MiB, loop3,"));
	assert_non_null(strstr(line, "serial -"));
	assert_non_null(strstr(line, "backed by /dev/shm/soakd-loop.img"));
	/* A short buffer truncates, never overflows. */
	dev_facts_format(&f, line, 16);
	assert_int_equal(strlen(line), 15);
}

/* A regular file: its filesystem from mountinfo, found by st_dev. */
static void test_regular_file(void **state)
{
	char file[300], mountinfo[300];
	struct dev_facts f;
	struct stat st;

	snprintf(file, sizeof(file), "%s/data.img", root(state));
	fake_attr(root(state), "data.img", "0123456789");
	assert_int_equal(stat(file, &st), 0);
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", root(state));
	FILE *m = fopen(mountinfo, "w");
	assert_non_null(m);
	fprintf(m, "1 0 %u:%u / /srv/soak rw - xfs /dev/sdz9 rw\n", major(st.st_dev),
		minor(st.st_dev));
	fclose(m);

	assert_int_equal(dev_facts_get_at(root(state), mountinfo, file, &f), 0);
	assert_true(f.is_file);
	assert_int_equal(f.size_bytes, 10);
	assert_string_equal(f.fs_type, "xfs");
	assert_string_equal(f.fs_source, "/dev/sdz9");
	assert_string_equal(f.fs_mount_point, "/srv/soak");

	json_t *j = dev_facts_json(&f);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "file");
	json_t *fs = json_object_get(j, "filesystem");
	assert_string_equal(json_string_value(json_object_get(fs, "type")), "xfs");
	json_decref(j);

	/* Neither a file nor a block device. */
	assert_int_equal(dev_facts_get_at(root(state), mountinfo, root(state), &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sata_partition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loop_and_dm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_regular_file, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
