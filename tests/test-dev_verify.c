// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device engine's verify hooks (dev_verify.c) on overlapping ops: the
 * test plays the engine and a device that lands each write whenever it
 * chooses, submitting and completing reads and writes of the same blocks
 * in the orders a queue allows.  A read sees the block as it was at some
 * moment between its submit and its completion, and a write in flight may
 * land before or after the writes to its block submitted later; what any
 * such order leaves is never a lost write, and a lost write is still one.
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

#include "daemon/config/run_config.h"
#include "daemon/device/dev_engine_int.h"
#include "daemon/device/dev_verify.h"
#include "daemon/device/dev_verify_int.h"
#include "daemon/device/verify.h"
#include "daemon/device/verify_map.h"
#include "daemon/workload/workload.h"

#define N_SLOTS 8
#define N_BLOCKS 128
#define MAX_LEN (2 * VERIFY_BLOCK)
#define RUN_ID UINT64_C(0x5eed)
#define OP_READ 0
#define OP_WRITE 1

static char dir[] = "/tmp/test-dev_verify.XXXXXX";
static struct verify_config vcfg = { .on = true, .fill = true };
static struct workload_stream s;
static struct dev_stream d;
static struct dev_verify *v;
/* The device: what each block holds now. */
static uint8_t device[N_BLOCKS][VERIFY_BLOCK];

static int setup(void **state)
{
	char err[256] = "";

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	assert_int_equal(stream_stats_init(&s.stats, 2, 1), 0);
	d.n_slots = N_SLOTS;
	d.max_len = MAX_LEN;
	d.slots = calloc(N_SLOTS, sizeof(*d.slots));
	d.buffers = calloc(2 * N_SLOTS, MAX_LEN);
	v = calloc(1, sizeof(*v));
	assert_non_null(d.slots);
	assert_non_null(d.buffers);
	assert_non_null(v);
	v->slot_blocks = MAX_LEN / VERIFY_BLOCK + 1;
	v->slot_state = calloc(N_SLOTS, 1);
	v->slot_epoch = calloc(N_SLOTS, sizeof(*v->slot_epoch));
	v->slot_ring = calloc(N_SLOTS, sizeof(*v->slot_ring));
	v->slot_gen = calloc(N_SLOTS, v->slot_blocks);
	v->slot_back = calloc(N_SLOTS, v->slot_blocks);
	assert_true(v->slot_state && v->slot_epoch && v->slot_ring && v->slot_gen && v->slot_back);
	v->cfg = &vcfg;
	v->label = "test";
	v->n_blocks = N_BLOCKS;
	v->id = (struct verify_ident){ .run = RUN_ID, .workload = 1, .target = 2 };
	v->dir_fd = open(dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
	assert_true(v->dir_fd >= 0);
	if (verify_map_open(v->dir_fd, "verify-t-0", N_BLOCKS, 2, RUN_ID, true, 1700000000, 0,
			    &v->map, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	d.verify = v;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	d.verify = NULL;
	dev_verify_free(v);
	free(d.slots);
	free(d.buffers);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static uint8_t *read_buf(unsigned slot)
{
	return d.buffers + (size_t)slot * MAX_LEN;
}

static uint8_t *write_buf(unsigned slot)
{
	return d.buffers + (size_t)(N_SLOTS + slot) * MAX_LEN;
}

static void submit(unsigned slot, enum dev_io io, uint64_t block, unsigned n_blocks)
{
	d.slots[slot] = (struct dev_slot){ .offset = block * VERIFY_BLOCK,
					   .len = n_blocks * VERIFY_BLOCK, .io = (uint8_t)io,
					   .op = io == DEV_IO_WRITE ? OP_WRITE : OP_READ };
	dev_verify_submit(&d, slot);
}

/* The device takes the write in slot `slot`, whole. */
static void land(unsigned slot)
{
	const struct dev_slot *w = &d.slots[slot];

	memcpy(device[w->offset / VERIFY_BLOCK], write_buf(slot), w->len);
}

/* The device reads for slot `slot` now: what the read will return. */
static void read_now(unsigned slot)
{
	const struct dev_slot *r = &d.slots[slot];

	memcpy(read_buf(slot), device[r->offset / VERIFY_BLOCK], r->len);
}

static void complete(unsigned slot, bool error)
{
	dev_verify_complete(&s, &d, slot, error);
}

static void write_now(unsigned slot, uint64_t block)
{
	submit(slot, DEV_IO_WRITE, block, 1);
	land(slot);
	complete(slot, false);
}

/* The classes the reads found since the last call. */
static uint64_t seen[OP_VERIFY_CLASSES];

static uint64_t found(enum op_verify_class c)
{
	const uint64_t *now = stream_current(&s.stats)->ops[OP_READ].verify;
	uint64_t n = now[c] - seen[c];

	return n;
}

static void forget_found(void)
{
	memcpy(seen, stream_current(&s.stats)->ops[OP_READ].verify, sizeof(seen));
}

static void assert_nothing_wrong(void)
{
	assert_int_equal(found(OP_VERIFY_STALE), 0);
	assert_int_equal(found(OP_VERIFY_CORRUPT), 0);
	assert_int_equal(found(OP_VERIFY_TORN), 0);
	forget_found();
}

/* A read in flight across three writes of its block, each landed and
 * completed, took the block as it was at its submit. */
static void test_read_across_writes(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 10);
	submit(0, DEV_IO_READ, 10, 1);
	read_now(0);
	for (int i = 0; i < 3; i++)
		write_now(1, 10);
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_CHECKED), 1);
	assert_nothing_wrong();
}

/* A block three writes uncertain (they failed, and may not have landed),
 * read while a fourth is written: the read may see what it held before
 * all four. */
static void test_uncertain_read_races_write(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 20);
	for (int i = 0; i < 3; i++) {
		submit(1, DEV_IO_WRITE, 20, 1);
		complete(1, true);
	}
	submit(0, DEV_IO_READ, 20, 1);
	read_now(0);
	write_now(1, 20);
	complete(0, false);
	assert_nothing_wrong();
	/* The fourth write landed: nothing older is right any more. */
	submit(0, DEV_IO_READ, 20, 1);
	read_now(0);
	complete(0, false);
	assert_nothing_wrong();
}

/* Four writes of a block in flight at once; the first lands last. */
static void test_first_of_four_lands_last(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 30);
	for (unsigned i = 1; i <= 4; i++)
		submit(i, DEV_IO_WRITE, 30, 1);
	for (unsigned i = 2; i <= 4; i++)
		land(i);
	land(1);
	for (unsigned i = 1; i <= 4; i++)
		complete(i, false);
	submit(0, DEV_IO_READ, 30, 1);
	read_now(0);
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_UNCERTAIN), 1);
	assert_nothing_wrong();
	/* Read, it is certain again: the same read finds it right. */
	submit(0, DEV_IO_READ, 30, 1);
	read_now(0);
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_UNCERTAIN), 0);
	assert_nothing_wrong();
}

/* Of two writes of a block that completed, one landed last: a device that
 * holds what was there before both lost them both. */
static void test_two_writes_lost(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 40);
	submit(1, DEV_IO_WRITE, 40, 1);
	submit(2, DEV_IO_WRITE, 40, 1);
	complete(1, false);
	complete(2, false);
	submit(0, DEV_IO_READ, 40, 1);
	read_now(0);
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_STALE), 1);
	forget_found();
}

/* A write fails while a later one to its block is in flight, and a read
 * comes before that one lands: the block holds what it held before both. */
static void test_failed_write_under_later_one(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 50);
	submit(1, DEV_IO_WRITE, 50, 1);
	submit(2, DEV_IO_WRITE, 50, 1);
	complete(1, true);
	submit(0, DEV_IO_READ, 50, 1);
	read_now(0);
	complete(0, false);
	assert_nothing_wrong();
	land(2);
	complete(2, false);
}

/* A block two failed writes left uncertain, read while a third write is
 * in flight: that write settled the map, but until it lands the device
 * may hold what it held before all three. */
static void test_read_under_write_of_uncertain_block(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 55);
	for (int i = 0; i < 2; i++) {
		submit(1, DEV_IO_WRITE, 55, 1);
		complete(1, true);
	}
	submit(1, DEV_IO_WRITE, 55, 1);
	submit(0, DEV_IO_READ, 55, 1);
	read_now(0);
	complete(0, false);
	assert_nothing_wrong();
	land(1);
	complete(1, false);
}

/* A lost write with nothing in flight is stale; so is one in a block of a
 * read whose other block raced a write. */
static void test_lost_write_still_found(void **state)
{
	(void)state;
	forget_found();
	write_now(1, 60);
	submit(1, DEV_IO_WRITE, 60, 1);
	complete(1, false);
	submit(0, DEV_IO_READ, 60, 1);
	read_now(0);
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_STALE), 1);
	forget_found();

	write_now(1, 70);
	write_now(1, 71);
	submit(1, DEV_IO_WRITE, 70, 1);
	complete(1, false);                       /* lost */
	submit(0, DEV_IO_READ, 70, 2);
	read_now(0);
	write_now(2, 71);                         /* races the read's second block */
	complete(0, false);
	assert_int_equal(found(OP_VERIFY_STALE), 1);
	forget_found();
}

/* A stream that ends between closing an epoch and queuing its flush: the
 * last flush covers that epoch, and the next start waits on nothing. */
static void test_finish_while_closing(void **state)
{
	char path[sizeof(dir) + 16];

	(void)state;
	snprintf(path, sizeof(path), "%s/device", dir);
	d.fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(d.fd >= 0);
	write_now(1, 90);
	v->closing_epoch = verify_map_close_epoch(&v->map);
	v->closing = true;
	submit(1, DEV_IO_WRITE, 91, 1);
	complete(1, false);
	dev_verify_finish(&s, &d);
	assert_false(v->closing);
	assert_int_equal(verify_map_open_writes(&v->map), 0);
	assert_int_equal(verify_map_dirty(&v->map), 0);
	close(d.fd);
	d.fd = -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_across_writes),
		cmocka_unit_test(test_uncertain_read_races_write),
		cmocka_unit_test(test_first_of_four_lands_last),
		cmocka_unit_test(test_two_writes_lost),
		cmocka_unit_test(test_failed_write_under_later_one),
		cmocka_unit_test(test_read_under_write_of_uncertain_block),
		cmocka_unit_test(test_lost_write_still_found),
		cmocka_unit_test(test_finish_while_closing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
