// SPDX-License-Identifier: GPL-2.0-only
/*
 * The generation map and flush epochs alone (daemon/device/verify_map.c),
 * on real files in a scratch directory: generations survive a close
 * without any flush (as after SIGKILL), writes of unflushed epochs come
 * back uncertain with the right window, a completed flush makes them
 * certain, the uncertain table survives a second crash, and its deletions
 * never lose another block.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/device/verify.h"
#include "daemon/device/verify_map.h"

static char dir[] = "/tmp/test-verify_map.XXXXXX";
static int dir_fd = -1;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	dir_fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	close(dir_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static int64_t boot = 1700000000;
static uint64_t boot_id;   /* 0: unknown, the boot time decides */

static void open_map(struct verify_map *m, const char *name, uint64_t n, bool filled)
{
	char err[256] = "";
	int r = verify_map_open(dir_fd, name, n, 0xfeed, 77, filled, boot, boot_id, m, err,
				sizeof(err));
	if (r < 0)
		fail_msg("%s", err);
}

static void test_crash_and_flush(void **state)
{
	struct verify_map m;
	(void)state;

	open_map(&m, "a", 1000, true);
	assert_true(m.created);
	assert_true(verify_map_filled(&m));
	assert_int_equal(verify_map_write(&m, 5), 1);
	assert_int_equal(verify_map_write(&m, 5), 2);
	assert_int_equal(verify_map_write(&m, 6), 1);
	/* Epoch 1 flushed: blocks 5 and 6 are durable. */
	uint64_t e = verify_map_close_epoch(&m);
	verify_map_flushed(&m, e);
	assert_int_equal(verify_map_open_writes(&m), 0);
	/* Then two more writes of 5 and one of 7, never flushed: a crash. */
	verify_map_write(&m, 5);
	verify_map_write(&m, 5);
	verify_map_write(&m, 7);
	assert_int_equal(verify_map_uncertain(&m, 5), 0);
	verify_map_close(&m);

	open_map(&m, "a", 1000, true);
	assert_false(m.created);
	assert_int_equal(verify_map_run_id(&m), 77);
	assert_int_equal(m.gens[5], 4);
	assert_int_equal(m.resumed_uncertain, 2);
	assert_int_equal(verify_map_uncertain(&m, 5), 2);   /* 2, 3 or 4 */
	assert_int_equal(verify_map_uncertain(&m, 7), 1);   /* the fill or 1 */
	assert_int_equal(verify_map_uncertain(&m, 6), 0);
	/* A second crash before anything is read: still uncertain. */
	verify_map_close(&m);
	open_map(&m, "a", 1000, true);
	assert_int_equal(verify_map_uncertain(&m, 5), 2);
	/* A read settles 5 at what it found; a write settles 7. */
	verify_map_settle(&m, 5, 3);
	assert_int_equal(verify_map_uncertain(&m, 5), 0);
	assert_int_equal(m.gens[5], 3);
	assert_int_equal(verify_map_write(&m, 7), 2);
	assert_int_equal(verify_map_uncertain(&m, 7), 0);
	/* ... unless that write is lost too: the window grows by it. */
	verify_map_close(&m);
	open_map(&m, "a", 1000, true);
	assert_int_equal(verify_map_uncertain(&m, 7), 2);
	assert_int_equal(verify_map_n_uncertain(&m), 1);
	verify_map_close(&m);

	/* Another size is another device. */
	char err[256];
	assert_true(verify_map_open(dir_fd, "a", 999, 0xfeed, 77, true, boot, 0, &m, err,
				    sizeof(err)) < 0);
	assert_non_null(strstr(err, "another device size"));
	/* As many blocks of another target (a reload or a restart changed
	 * its path): its generations are not this device's. */
	err[0] = '\0';
	assert_true(verify_map_open(dir_fd, "a", 1000, 0xbeef, 77, true, boot, 0, &m, err,
				    sizeof(err)) < 0);
	assert_non_null(strstr(err, "made for another target"));
	/* Refused without a change: its own target still opens it. */
	open_map(&m, "a", 1000, true);
	assert_false(m.created);
	assert_int_equal(verify_map_uncertain(&m, 7), 2);
	verify_map_close(&m);
}

/* A host that went down (another boot time) with the files not closed
 * cleanly: neither can be trusted; closed cleanly, or the same boot
 * (SIGKILL), they can. */
static void test_host_restart(void **state)
{
	struct verify_map m;
	(void)state;

	open_map(&m, "d", 100, true);
	verify_map_write(&m, 1);
	verify_map_close(&m);
	open_map(&m, "d", 100, true);
	assert_false(m.host_restarted);         /* same boot: a SIGKILL */
	verify_map_close(&m);
	boot += 3600;
	open_map(&m, "d", 100, true);
	assert_true(m.host_restarted);
	assert_int_equal(verify_map_sync_clean(&m), 0);
	verify_map_close(&m);
	boot += 3600;
	open_map(&m, "d", 100, true);
	assert_false(m.host_restarted);         /* a clean stop, then a reboot */
	assert_int_equal(m.gens[1], 1);
	verify_map_close(&m);

	/* With the kernel's boot id: a step of the wall clock within one
	 * boot (NTP, a VM paused) is no restart, and another boot is one
	 * whatever the clocks say. */
	boot_id = 0x1111;
	open_map(&m, "d", 100, true);
	verify_map_close(&m);
	boot += 600;
	open_map(&m, "d", 100, true);
	assert_false(m.host_restarted);
	verify_map_close(&m);
	boot_id = 0x2222;
	open_map(&m, "d", 100, true);
	assert_true(m.host_restarted);
	/* The process ended before the check a host restart asks for was
	 * done (SIGKILL, the watchdog, a stop): it is owed at the next open,
	 * in this same boot, and at the one after. */
	verify_map_close(&m);
	open_map(&m, "d", 100, true);
	assert_true(m.host_restarted);
	verify_map_close(&m);
	open_map(&m, "d", 100, true);
	assert_true(m.host_restarted);
	/* Done: the files are this boot's, and a SIGKILL from here on is
	 * no restart. */
	assert_int_equal(verify_map_trusted(&m), 0);
	assert_false(m.host_restarted);
	verify_map_write(&m, 2);
	verify_map_close(&m);
	open_map(&m, "d", 100, true);
	assert_false(m.host_restarted);
	verify_map_close(&m);
	boot_id = 0;
}

static void test_ring_full(void **state)
{
	struct verify_map m;
	(void)state;

	open_map(&m, "b", 16, false);
	for (unsigned i = 0; i < VERIFY_MAP_RING; i++) {
		assert_false(verify_map_ring_full(&m));
		verify_map_write(&m, i % 16);
	}
	assert_true(verify_map_ring_full(&m));
	/* Generations wrapped many times: 1..255, never 0 again. */
	assert_int_not_equal(m.gens[3], 0);
	assert_int_equal(m.gens[3], (VERIFY_MAP_RING / 16 - 1) % 255 + 1);
	uint64_t e = verify_map_close_epoch(&m);
	verify_map_flushed(&m, e);
	assert_false(verify_map_ring_full(&m));
	verify_map_close(&m);
}

static void test_table(void **state)
{
	struct verify_map m;
	static uint8_t want[100000];
	uint64_t rng = 88172645463325252u;
	(void)state;

	open_map(&m, "c", sizeof(want), false);
	for (int i = 0; i < 300000; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		uint64_t b = rng % sizeof(want);
		if (rng >> 63) {
			uint8_t back = (uint8_t)(1 + (rng >> 40) % 100);
			assert_int_equal(verify_map_mark_uncertain(&m, b, back), 0);
			if (back > want[b])
				want[b] = back;
		} else {
			verify_map_settle(&m, b, 1);
			want[b] = 0;
		}
	}
	uint64_t n = 0;
	for (size_t b = 0; b < sizeof(want); b++) {
		assert_int_equal(verify_map_uncertain(&m, b), want[b]);
		n += want[b] != 0;
	}
	assert_int_equal(verify_map_n_uncertain(&m), n);
	size_t cursor = 0, seen = 0;
	uint64_t b;
	while (verify_map_next_uncertain(&m, &cursor, &b)) {
		assert_int_not_equal(want[b], 0);
		seen++;
		cursor++;
	}
	assert_int_equal(seen, n);
	verify_map_close(&m);
}

/* A full table's further marks are held in memory, exactly; the file
 * counts them, so a process that ends with them held leaves them lost
 * for the next; as the table empties they move into it. */
static void test_table_full(void **state)
{
	const uint64_t limit = VERIFY_MAP_UNCERTAIN / 4 * 3, extra = 10000;
	struct verify_map m;
	(void)state;

	open_map(&m, "full", limit + extra, false);
	for (uint64_t b = 0; b < limit; b++)
		assert_int_equal(verify_map_mark_uncertain(&m, b, 1), 0);
	assert_int_equal(verify_map_n_spilled(&m), 0);
	/* Marking a block already in it still works. */
	assert_int_equal(verify_map_mark_uncertain(&m, 7, 3), 0);
	assert_int_equal(verify_map_uncertain(&m, 7), 3);
	for (uint64_t b = limit; b < limit + extra; b++)
		assert_int_equal(verify_map_mark_uncertain(&m, b, (uint8_t)(1 + b % 50)), 0);
	assert_int_equal(verify_map_mark_uncertain(&m, limit + 1, 99), 0);
	assert_int_equal(verify_map_n_spilled(&m), extra);
	assert_int_equal(verify_map_n_uncertain(&m), limit + extra);
	assert_int_equal(verify_map_unc_lost(&m), 0);
	for (uint64_t b = limit; b < limit + extra; b++)
		assert_int_equal(verify_map_uncertain(&m, b), b == limit + 1 ? 99 : 1 + b % 50);
	/* Read back: settled, in the table or in memory. */
	verify_map_settle(&m, limit + 2, 0);
	verify_map_settle(&m, 3, 0);
	assert_int_equal(verify_map_uncertain(&m, limit + 2), 0);
	assert_int_equal(verify_map_uncertain(&m, 3), 0);
	assert_int_equal(verify_map_n_spilled(&m), extra - 1);
	size_t cursor = 0, seen = 0;
	uint64_t got;
	while (verify_map_next_uncertain(&m, &cursor, &got)) {
		assert_int_not_equal(verify_map_uncertain(&m, got), 0);
		seen++;
		cursor++;
	}
	assert_int_equal(seen, limit + extra - 2);
	/* Ended with marks in memory (a crash): the next open lost them. */
	verify_map_close(&m);
	open_map(&m, "full", limit + extra, false);
	assert_int_equal(verify_map_unc_lost(&m), extra - 1);
	assert_int_equal(verify_map_n_spilled(&m), 0);
	verify_map_close(&m);

	/* Room made in the table: a flush moves the marks into it, and a
	 * restart keeps them all. */
	unlinkat(dir_fd, "full2.state", 0);
	unlinkat(dir_fd, "full2.map", 0);
	open_map(&m, "full2", limit + extra, false);
	for (uint64_t b = 0; b < limit + extra; b++)
		assert_int_equal(verify_map_mark_uncertain(&m, b, (uint8_t)(1 + b % 50)), 0);
	for (uint64_t b = 0; b < extra / 2; b++)
		verify_map_settle(&m, b, 0);
	verify_map_sync_async(&m);
	assert_int_equal(verify_map_n_spilled(&m), extra / 2);
	for (uint64_t b = extra / 2; b < extra; b++)
		verify_map_settle(&m, b, 0);
	verify_map_sync_async(&m);
	assert_int_equal(verify_map_n_spilled(&m), 0);
	assert_int_equal(verify_map_n_uncertain(&m), limit);
	verify_map_close(&m);
	open_map(&m, "full2", limit + extra, false);
	assert_int_equal(verify_map_unc_lost(&m), 0);
	assert_int_equal(verify_map_n_uncertain(&m), limit);
	for (uint64_t b = 0; b < limit + extra; b++)
		assert_int_equal(verify_map_uncertain(&m, b), b < extra ? 0 : 1 + b % 50);
	verify_map_close(&m);

	/* Memory holds 2^19 marks at most: past them, marks are lost. */
	const uint64_t spill = UINT64_C(1) << 19, over = 13;
	unlinkat(dir_fd, "full3.state", 0);
	unlinkat(dir_fd, "full3.map", 0);
	open_map(&m, "full3", limit + spill + over, false);
	for (uint64_t b = 0; b < limit + spill; b++)
		assert_int_equal(verify_map_mark_uncertain(&m, b, 1), 0);
	for (uint64_t b = limit + spill; b < limit + spill + over; b++)
		assert_int_equal(verify_map_mark_uncertain(&m, b, 1), -ENOSPC);
	assert_int_equal(verify_map_n_spilled(&m), spill);
	assert_int_equal(verify_map_unc_lost(&m), over);
	verify_map_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_and_flush),
		cmocka_unit_test(test_ring_full),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_host_restart),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
