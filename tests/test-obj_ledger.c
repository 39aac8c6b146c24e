// SPDX-License-Identifier: GPL-2.0-only
/* The object write ledger: what survives a reopen, a torn record, a fold,
 * and what a million objects cost in memory and on disk. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/object/obj_ledger.h"
#include "daemon/object/obj_payload.h"

#define TAG "0123456789abcdef"

/*
 * Linked with -Wl,--wrap=write (tests/meson.build): while write_budget is
 * not negative, writes take at most that many bytes in all, then fail with
 * ENOSPC, as on a file system that fills up in the middle of a record.
 */
ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
static long write_budget = -1;

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (write_budget < 0)
		return __real_write(fd, buf, n);
	if (write_budget == 0) {
		errno = ENOSPC;
		return -1;
	}
	ssize_t r = __real_write(fd, buf, n < (size_t)write_budget ? n : (size_t)write_budget);
	if (r > 0)
		write_budget -= r;
	return r;
}

static char dir[200];
static int dir_fd = -1;
/* The boot id the ledgers are opened under: a test changes it to play a
 * host restart. */
static uint64_t test_boot = 0x1111;

static int setup(void **state)
{
	(void)state;
	write_budget = -1; /* a test that failed may have left it set */
	test_boot = 0x1111;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(dir, sizeof(dir), "%s/test-ledger-XXXXXX", tmp);
	if (!mkdtemp(dir))
		return -1;
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dir_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[300];
	close(dir_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct obj_ledger *open_ok(uint32_t slots, const char *tag, struct obj_ledger_info *info)
{
	struct obj_ledger *l = NULL;
	char err[256] = "";
	int r = obj_ledger_open(dir_fd, "w.0", slots, tag, test_boot, &l, info, err, sizeof(err));
	if (r < 0)
		fail_msg("open: %s (%d)", err, r);
	return l;
}

static off_t file_size(const char *name)
{
	struct stat st;
	return fstatat(dir_fd, name, &st, 0) == 0 ? st.st_size : -1;
}

static void test_new_then_resumed_keeps_tag_and_state(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(8, TAG, &info);
	assert_false(info.resumed);
	assert_string_equal(info.tag, TAG);

	/* Slot 0: acknowledged.  1: acknowledged, then deleted.  2: a PUT
	 * refused.  3: a PUT in flight when soakd dies.  4: a PUT that timed
	 * out.  5: overwritten twice. */
	for (uint32_t s = 0; s < 6; s++) {
		assert_int_equal(obj_ledger_intend_put(l, s, 10 + s, 1, 100 * s), 0);
		if (s != 2 && s != 3)
			assert_int_equal(obj_ledger_ack(l, s, 77, 5000000000ull), 0);
	}
	obj_ledger_abort(l, 2);
	obj_ledger_intend_put(l, 4, 14, 2, 5);
	obj_ledger_uncertain(l, 4);
	obj_ledger_intend_delete(l, 1);
	obj_ledger_ack(l, 1, 0, 6000000000ull);
	obj_ledger_intend_put(l, 5, 15, 2, 7);
	obj_ledger_ack(l, 5, 78, 0);
	obj_ledger_intend_put(l, 5, 15, 3, 9);
	obj_ledger_ack(l, 5, 79, 0);
	obj_ledger_close(l);

	/* Another tag is asked for: the ledger's own wins. */
	l = open_ok(8, "ffffffffffffffff", &info);
	assert_true(info.resumed);
	assert_string_equal(info.tag, TAG);
	const struct obj_ledger_entry *e = obj_ledger_get(l, 0);
	assert_int_equal(e->state, OBJ_LEDGER_PRESENT);
	assert_int_equal(e->id, 10);
	assert_int_equal(e->etag, 77);
	assert_int_equal(e->time_s, 5);
	assert_false(e->uncertain);
	assert_int_equal(obj_ledger_get(l, 1)->state, OBJ_LEDGER_DELETED);
	assert_int_equal(obj_ledger_get(l, 1)->id, 11);
	assert_int_equal(obj_ledger_get(l, 2)->state, OBJ_LEDGER_NONE);
	assert_int_equal(obj_ledger_get(l, 2)->pending, OBJ_PENDING_NONE);
	/* In flight at the "crash": uncertain now, with what was tried. */
	e = obj_ledger_get(l, 3);
	assert_int_equal(e->state, OBJ_LEDGER_NONE);
	assert_int_equal(e->pending, OBJ_PENDING_PUT);
	assert_true(e->uncertain);
	assert_int_equal(e->try_id, 13);
	assert_int_equal(e->try_size, 300);
	assert_true(obj_ledger_get(l, 4)->uncertain);
	assert_int_equal(obj_ledger_get(l, 4)->state, OBJ_LEDGER_PRESENT);
	e = obj_ledger_get(l, 5);
	assert_int_equal(e->version, 3);
	assert_int_equal(e->size, 9);
	assert_int_equal(e->etag, 79);
	assert_int_equal(info.present, 2);   /* 0 and 5 */
	assert_int_equal(info.uncertain, 2); /* 3 and 4 */
	assert_int_equal(info.deleted, 1);

	/* A read settles the uncertain ones. */
	obj_ledger_settle(l, 3, true, 13, 1, 300, 0);
	obj_ledger_settle(l, 4, false, 0, 0, 0, 0);
	obj_ledger_close(l);
	l = open_ok(8, TAG, &info);
	assert_int_equal(obj_ledger_get(l, 3)->state, OBJ_LEDGER_PRESENT);
	assert_false(obj_ledger_get(l, 3)->uncertain);
	assert_int_equal(obj_ledger_get(l, 4)->state, OBJ_LEDGER_DELETED);
	assert_int_equal(info.uncertain, 0);
	obj_ledger_close(l);
}

/*
 * A write sent while an earlier one's outcome is unknown (a doubtful slot
 * is rewritten, or cleaned up, under the same name): the server may hold
 * what either did, whatever the later one's answer but an acknowledgement.
 */
static void test_write_over_an_uncertain_one_keeps_the_doubt(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(8, TAG, &info);

	for (uint32_t s = 0; s < 6; s++) {
		obj_ledger_intend_put(l, s, 10 + s, 1, 100);
		obj_ledger_ack(l, s, 77, 0);
	}
	/* 0: a DELETE that timed out, then a PUT that timed out. */
	obj_ledger_intend_delete(l, 0);
	obj_ledger_uncertain(l, 0);
	obj_ledger_intend_put(l, 0, 10, 2, 100);
	obj_ledger_uncertain(l, 0);
	/* 1: a DELETE that timed out, then a PUT refused. */
	obj_ledger_intend_delete(l, 1);
	obj_ledger_uncertain(l, 1);
	obj_ledger_intend_put(l, 1, 11, 2, 100);
	obj_ledger_abort(l, 1);
	/* 2: an overwrite that timed out, then one refused. */
	obj_ledger_intend_put(l, 2, 12, 2, 100);
	obj_ledger_uncertain(l, 2);
	obj_ledger_intend_put(l, 2, 12, 3, 100);
	obj_ledger_abort(l, 2);
	/* 3: an overwrite that timed out, then a cleanup DELETE refused. */
	obj_ledger_intend_put(l, 3, 13, 2, 100);
	obj_ledger_uncertain(l, 3);
	obj_ledger_intend_delete(l, 3);
	obj_ledger_abort(l, 3);
	/* 4: a DELETE in flight when soakd died (below), then, after the
	 * restart, a PUT refused. */
	obj_ledger_intend_delete(l, 4);
	/* 5: a DELETE that timed out, then a PUT acknowledged: certain. */
	obj_ledger_intend_delete(l, 5);
	obj_ledger_uncertain(l, 5);
	obj_ledger_intend_put(l, 5, 15, 2, 200);
	obj_ledger_ack(l, 5, 78, 0);
	obj_ledger_close(l);

	l = open_ok(8, TAG, &info);
	obj_ledger_intend_put(l, 4, 14, 2, 100);
	obj_ledger_abort(l, 4);
	obj_ledger_close(l);

	l = open_ok(8, TAG, &info);
	/* After a DELETE that may have happened, nothing under the name is
	 * no loss: unknown, so the audit does not judge it lost. */
	for (uint32_t s = 0; s < 5; s += 1) {
		const struct obj_ledger_entry *e = obj_ledger_get(l, s);
		assert_true(e->uncertain);
		assert_int_not_equal(e->pending, OBJ_PENDING_NONE);
		assert_int_equal(e->state, OBJ_LEDGER_PRESENT);
		/* 2 and 3 never sent a DELETE that may have landed: a gone
		 * object there is still a loss. */
		assert_int_equal(e->unknown, s != 2 && s != 3);
	}
	/* The refused overwrite leaves the timed-out one's doubt: version 2
	 * may be what the server holds, so version 1 is not certain. */
	assert_int_equal(obj_ledger_get(l, 2)->pending, OBJ_PENDING_PUT);
	const struct obj_ledger_entry *e = obj_ledger_get(l, 5);
	assert_int_equal(e->pending, OBJ_PENDING_NONE);
	assert_false(e->uncertain);
	assert_false(e->unknown);
	assert_int_equal(e->version, 2);
	assert_int_equal(info.uncertain, 5);
	assert_int_equal(info.present, 1);
	obj_ledger_close(l);
}

/* Closed as soakd killed leaves it: without the clean close's last record. */
static void close_killed(struct obj_ledger *l)
{
	obj_ledger_close(l);
	off_t size = file_size("w.0.journal");
	int fd = openat(dir_fd, "w.0.journal", O_RDWR);
	unsigned char last[48];
	assert_true(fd >= 0);
	/* The clean close's R_CLOSED (type 10, the fifth byte), nothing else. */
	assert_int_equal(pread(fd, last, sizeof(last), size - 48), 48);
	assert_int_equal(last[4], 10);
	assert_int_equal(ftruncate(fd, size - 48), 0);
	close(fd);
}

static void test_torn_last_record_is_dropped(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_intend_put(l, 1, 2, 1, 20);
	obj_ledger_ack(l, 1, 6, 0);
	close_killed(l);
	/* A crash in the middle of the last record. */
	off_t size = file_size("w.0.journal");
	int fd = openat(dir_fd, "w.0.journal", O_WRONLY);
	assert_int_equal(ftruncate(fd, size - 20), 0);
	close(fd);

	l = open_ok(4, TAG, &info);
	assert_true(info.torn);
	/* Nothing after the cut record was written: the records before it
	 * are all there, so slot 0's state is known, not in doubt. */
	assert_int_equal(info.damaged, 0);
	assert_int_equal(obj_ledger_get(l, 0)->state, OBJ_LEDGER_PRESENT);
	assert_false(obj_ledger_get(l, 0)->unknown);
	assert_false(obj_ledger_get(l, 0)->uncertain);
	/* Slot 1's ack was lost: its PUT is uncertain, not forgotten. */
	assert_int_equal(obj_ledger_get(l, 1)->pending, OBJ_PENDING_PUT);
	assert_true(obj_ledger_get(l, 1)->uncertain);
	assert_int_equal(info.unknown, 0);
	obj_ledger_close(l);
	/* The fold at open left whole records only. */
	assert_int_equal(file_size("w.0.journal") % 48, 0);
	l = open_ok(4, TAG, &info);
	assert_false(info.torn);
	assert_true(obj_ledger_get(l, 1)->uncertain);
	obj_ledger_close(l);
}

/* Flips a byte of the journal's record n (the header is record 0). */
static void damage_record(const char *name, unsigned n)
{
	int fd = openat(dir_fd, name, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, 48 * n + 20), 1);
	close(fd);
}

static void test_damaged_first_put_is_not_known(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_close(l);
	damage_record("w.0.journal", 1);
	l = open_ok(4, TAG, &info);
	assert_int_equal(info.damaged, 1);
	/* The ack says a write was acknowledged, not which: the name is
	 * the final sweep's. */
	assert_int_equal(obj_ledger_get(l, 0)->state, OBJ_LEDGER_NONE);
	assert_false(obj_ledger_get(l, 0)->unknown);
	obj_ledger_close(l);
}

/*
 * A record damaged in the middle of the journal: the replay goes on after
 * it, and every slot whose last write the lost record may have been is
 * unknown, not certain in its older state (an audit would call the newer
 * version it finds stale, or a deleted object lost).
 */
static void test_damage_leaves_slots_unknown(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(8, TAG, &info);
	for (uint32_t s = 0; s < 4; s++) {         /* records 1-8 */
		obj_ledger_intend_put(l, s, 10 + s, 1, 100);
		obj_ledger_ack(l, s, 70 + s, 0);
	}
	obj_ledger_intend_delete(l, 3);            /* 9, 10 */
	obj_ledger_ack(l, 3, 0, 0);
	obj_ledger_intend_put(l, 0, 10, 2, 200);   /* 11: to be damaged */
	obj_ledger_ack(l, 0, 80, 0);               /* 12 */
	obj_ledger_intend_put(l, 1, 11, 2, 300);   /* 13, 14 */
	obj_ledger_ack(l, 1, 81, 0);
	obj_ledger_intend_put(l, 5, 15, 1, 500);   /* 15: in flight */
	obj_ledger_close(l);
	damage_record("w.0.journal", 11);

	l = open_ok(8, TAG, &info);
	assert_int_equal(info.damaged, 1);
	assert_false(info.torn);
	assert_false(info.damage_in_map);
	assert_int_equal(info.damage_offset, 11 * 48);
	/* Slot 0: acknowledged at version 1; the damage hid a newer write. */
	const struct obj_ledger_entry *e = obj_ledger_get(l, 0);
	assert_int_equal(e->state, OBJ_LEDGER_PRESENT);
	assert_int_equal(e->version, 1);
	assert_true(e->unknown);
	/* Slot 1: announced and acknowledged after the damage: known whole,
	 * the records after the damage are kept. */
	e = obj_ledger_get(l, 1);
	assert_int_equal(e->version, 2);
	assert_int_equal(e->size, 300);
	assert_int_equal(e->etag, 81);
	assert_false(e->unknown);
	/* Slot 2: nothing after the damage, which may have been about it. */
	assert_true(obj_ledger_get(l, 2)->unknown);
	/* Slot 3: deleted, and its name is never written again. */
	assert_int_equal(obj_ledger_get(l, 3)->state, OBJ_LEDGER_DELETED);
	assert_false(obj_ledger_get(l, 3)->unknown);
	/* Slot 4: never written. */
	assert_int_equal(obj_ledger_get(l, 4)->state, OBJ_LEDGER_NONE);
	assert_false(obj_ledger_get(l, 4)->unknown);
	/* Slot 5: in flight, after the damage. */
	e = obj_ledger_get(l, 5);
	assert_int_equal(e->pending, OBJ_PENDING_PUT);
	assert_int_equal(e->try_id, 15);
	assert_true(e->uncertain);
	assert_int_equal(info.unknown, 3);
	assert_int_equal(info.present, 1);
	assert_int_equal(info.uncertain, 3);
	assert_int_equal(info.deleted, 1);
	/* A read settles slot 0, a new acknowledged PUT slot 2. */
	obj_ledger_settle(l, 0, true, 10, 2, 200, 0);
	obj_ledger_intend_put(l, 2, 12, 2, 400);
	obj_ledger_ack(l, 2, 90, 0);
	obj_ledger_close(l);

	/* The open folded the damage away; the marks stayed. */
	l = open_ok(8, TAG, &info);
	assert_int_equal(info.damaged, 0);
	assert_false(obj_ledger_get(l, 0)->unknown);
	assert_int_equal(obj_ledger_get(l, 0)->version, 2);
	assert_false(obj_ledger_get(l, 2)->unknown);
	assert_int_equal(obj_ledger_get(l, 2)->version, 2);
	assert_true(obj_ledger_get(l, 5)->unknown);
	assert_int_equal(info.unknown, 1);
	obj_ledger_close(l);
}

/* A power cut after the file grew but before its blocks were written
 * leaves zeros at the end: damage, whole records of it. */
static void test_zeroed_tail_is_damage(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_intend_put(l, 1, 2, 1, 10);
	obj_ledger_ack(l, 1, 6, 0);
	obj_ledger_intend_delete(l, 1);
	obj_ledger_ack(l, 1, 0, 0);
	close_killed(l);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "truncate -s +96 '%s/w.0.journal'", dir);
	assert_int_equal(system(cmd), 0);
	l = open_ok(4, TAG, &info);
	assert_int_equal(info.damaged, 2);
	assert_int_equal(info.damage_offset, 7 * 48);
	assert_true(obj_ledger_get(l, 0)->unknown);
	assert_false(obj_ledger_get(l, 1)->unknown);
	assert_int_equal(info.unknown, 1);
	obj_ledger_close(l);
}

/* The map damaged: what its records after the damage say is whole; what
 * came before is as much in doubt as after damage in a journal. */
static void test_damaged_map(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	/* Enough records to fold: a map of slots 0, 1, 2. */
	for (uint32_t v = 1; v <= 700; v++)
		for (uint32_t s = 0; s < 3; s++) {
			obj_ledger_intend_put(l, s, 1 + s, v, 10);
			obj_ledger_ack(l, s, 5, 0);
		}
	assert_int_equal(obj_ledger_flush(l, 0, true), 0);
	obj_ledger_close(l);
	assert_int_equal(file_size("w.0.map"), 4 * 48);
	damage_record("w.0.map", 2);
	l = open_ok(4, TAG, &info);
	assert_int_equal(info.damaged, 1);
	assert_true(info.damage_in_map);
	assert_int_equal(info.damage_offset, 2 * 48);
	assert_true(obj_ledger_get(l, 0)->unknown);
	assert_int_equal(obj_ledger_get(l, 1)->state, OBJ_LEDGER_NONE);
	assert_false(obj_ledger_get(l, 2)->unknown);
	assert_int_equal(obj_ledger_get(l, 2)->state, OBJ_LEDGER_PRESENT);
	obj_ledger_close(l);
}

/* A disk full in the middle of a record: the journal is cut back to its
 * last whole record and the record is written with the next change, so a
 * reopen replays every record, none damaged (before, the partial bytes
 * stayed and every later record was out of step: replay stopped at the
 * first). */
static void test_short_write_keeps_later_records(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(8, TAG, &info);
	assert_int_equal(obj_ledger_intend_put(l, 0, 1, 1, 10), 0);
	assert_int_equal(obj_ledger_ack(l, 0, 5, 0), 0);
	off_t before = file_size("w.0.journal");

	write_budget = 20;
	assert_int_equal(obj_ledger_intend_put(l, 1, 2, 1, 20), -ENOSPC);
	assert_int_equal(file_size("w.0.journal"), before);
	assert_int_equal(obj_ledger_ack(l, 1, 6, 0), -ENOSPC);
	assert_int_equal(file_size("w.0.journal"), before);
	write_budget = -1;

	/* The disk has room again: the held records go first. */
	assert_int_equal(obj_ledger_intend_put(l, 2, 3, 1, 30), 0);
	assert_int_equal(obj_ledger_ack(l, 2, 7, 0), 0);
	assert_int_equal(obj_ledger_intend_delete(l, 0), 0);
	assert_int_equal(obj_ledger_ack(l, 0, 0, 0), 0);
	assert_int_equal(file_size("w.0.journal"), before + 6 * 48);
	obj_ledger_close(l);

	l = open_ok(8, TAG, &info);
	assert_int_equal(info.damaged, 0);
	assert_false(info.torn);
	/* No clean close after a failed write: 8, not 9. */
	assert_int_equal(info.records_replayed, 8);
	assert_int_equal(obj_ledger_get(l, 0)->state, OBJ_LEDGER_DELETED);
	for (uint32_t s = 1; s <= 2; s++) {
		const struct obj_ledger_entry *e = obj_ledger_get(l, s);
		assert_int_equal(e->state, OBJ_LEDGER_PRESENT);
		assert_int_equal(e->pending, OBJ_PENDING_NONE);
		assert_int_equal(e->id, s + 1);
		assert_int_equal(e->etag, s + 5);
	}
	obj_ledger_close(l);
}

/* A disk full for longer than the records held in memory: a fold writes
 * the whole state once it has room again; nothing is appended before. */
static void test_long_failure_folds_the_state(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(8, TAG, &info);
	assert_int_equal(obj_ledger_intend_put(l, 0, 1, 1, 10), 0);
	off_t before = file_size("w.0.journal");

	write_budget = 30;
	for (uint32_t k = 0; k < 3000; k++) {
		uint32_t s = k % 8;
		assert_true(obj_ledger_intend_put(l, s, 100 + k, 1, k) < 0);
		assert_true(obj_ledger_ack(l, s, k + 1, 0) < 0);
	}
	assert_true(obj_ledger_flush(l, 0, true) < 0);
	assert_int_equal(file_size("w.0.journal"), before);
	write_budget = -1;
	assert_int_equal(obj_ledger_flush(l, 0, true), 0);
	assert_int_equal(file_size("w.0.journal"), 48);
	assert_int_equal(obj_ledger_intend_delete(l, 7), 0);
	assert_int_equal(obj_ledger_ack(l, 7, 0, 0), 0);
	obj_ledger_close(l);

	l = open_ok(8, TAG, &info);
	assert_int_equal(info.damaged, 0);
	assert_false(info.torn);
	for (uint32_t s = 0; s < 7; s++) {
		const struct obj_ledger_entry *e = obj_ledger_get(l, s);
		uint32_t k = 3000 - 8 + s;
		assert_int_equal(e->state, OBJ_LEDGER_PRESENT);
		assert_int_equal(e->id, 100 + k);
		assert_int_equal(e->etag, k + 1);
	}
	assert_int_equal(obj_ledger_get(l, 7)->state, OBJ_LEDGER_DELETED);
	obj_ledger_close(l);
}

/*
 * A host that went down took the journal's unsynced records with its page
 * cache: the next open, under another boot, of a ledger not closed
 * cleanly doubts every slot that may hold an object and sets aside the
 * names the lost records may have begun.  soakd killed on the same boot
 * (the page cache kept everything), or a clean close before the host went
 * down, is no host restart.
 */
static void test_host_restart(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(5, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_intend_put(l, 1, 2, 1, 20);
	obj_ledger_ack(l, 1, 6, 0);
	obj_ledger_intend_delete(l, 1);
	obj_ledger_ack(l, 1, 0, 0);
	obj_ledger_intend_put(l, 2, 3, 1, 30);
	obj_ledger_intend_put(l, 4, 1000, 7, 40);   /* the highest name so far */
	obj_ledger_uncertain(l, 4);
	close_killed(l);

	/* Killed, then opened on the same boot: nothing lost. */
	l = open_ok(5, TAG, &info);
	assert_false(info.host_restarted);
	assert_false(obj_ledger_get(l, 0)->unknown);
	close_killed(l);

	test_boot = 0x2222;
	l = open_ok(5, TAG, &info);
	assert_true(info.host_restarted);
	assert_true(obj_ledger_get(l, 0)->unknown);
	assert_int_equal(obj_ledger_get(l, 0)->state, OBJ_LEDGER_PRESENT);
	assert_false(obj_ledger_get(l, 1)->unknown);     /* deleted: stays certain */
	assert_int_equal(obj_ledger_get(l, 1)->state, OBJ_LEDGER_DELETED);
	assert_true(obj_ledger_get(l, 2)->unknown);      /* a PUT in flight */
	assert_false(obj_ledger_get(l, 3)->unknown);     /* never written */
	assert_int_equal(info.unknown, 3);
	assert_int_equal(info.present, 0);
	assert_int_equal(info.lost_ids.from, 1001);
	assert_int_equal(info.lost_ids.to, 1001 + OBJ_LEDGER_LOST_IDS);
	assert_false(obj_ledger_id_lost(l, 1000));
	assert_true(obj_ledger_id_lost(l, 1001));
	assert_true(obj_ledger_id_lost(l, 1000 + OBJ_LEDGER_LOST_IDS));
	assert_false(obj_ledger_id_lost(l, 1001 + OBJ_LEDGER_LOST_IDS));
	/* A write acknowledged since makes its slot known again. */
	obj_ledger_intend_put(l, 0, 1, 2, 11);
	obj_ledger_ack(l, 0, 7, 0);
	obj_ledger_close(l);

	/* Closed cleanly before the host went down: nothing lost; what the
	 * restart left in doubt, and the names set aside, are kept. */
	test_boot = 0x3333;
	l = open_ok(5, TAG, &info);
	assert_false(info.host_restarted);
	assert_false(obj_ledger_get(l, 0)->unknown);
	assert_int_equal(obj_ledger_get(l, 0)->version, 2);
	assert_true(obj_ledger_get(l, 2)->unknown);
	assert_true(obj_ledger_id_lost(l, 1001));
	close_killed(l);

	/* A second host restart sets aside the names after the first's. */
	test_boot = 0x4444;
	l = open_ok(5, TAG, &info);
	assert_true(info.host_restarted);
	assert_int_equal(info.lost_ids.from, 1001 + OBJ_LEDGER_LOST_IDS);
	const struct obj_ledger_ids *lost;
	assert_int_equal(obj_ledger_lost_ids(l, &lost), 2);
	assert_int_equal(lost[0].from, 1001);
	close_killed(l);

	/* A boot nobody can read tells nothing, and keeps the one the
	 * files had for the next start. */
	test_boot = 0;
	l = open_ok(5, TAG, &info);
	assert_false(info.host_restarted);
	close_killed(l);
	test_boot = 0x5555;
	l = open_ok(5, TAG, &info);
	assert_true(info.host_restarted);
	obj_ledger_close(l);
}

/* Closed cleanly, then opened again on the same boot: the records of the
 * new start that a power cut takes must not leave the old clean close
 * last.  And a clean close with a record cut short after it is no clean
 * close. */
static void test_clean_close_reopened(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_close(l);
	off_t closed = file_size("w.0.journal");

	l = open_ok(4, TAG, &info);
	assert_false(info.host_restarted);
	off_t reopened = file_size("w.0.journal");
	assert_int_equal(reopened, closed - 48);
	obj_ledger_intend_put(l, 0, 1, 2, 11);
	obj_ledger_ack(l, 0, 6, 0);
	obj_ledger_intend_put(l, 1, 2, 1, 10);
	obj_ledger_close(l);
	/* The power cut: nothing written since the open reached the disk. */
	int fd = openat(dir_fd, "w.0.journal", O_WRONLY);
	assert_int_equal(ftruncate(fd, reopened), 0);
	close(fd);
	test_boot = 0x2222;
	l = open_ok(4, TAG, &info);
	assert_true(info.host_restarted);
	assert_true(obj_ledger_get(l, 0)->unknown);
	assert_int_equal(info.lost_ids.from, 2);
	obj_ledger_close(l);

	/* Closed cleanly, then a torn record after it. */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "truncate -s +20 '%s/w.0.journal'", dir);
	assert_int_equal(system(cmd), 0);
	test_boot = 0x3333;
	l = open_ok(4, TAG, &info);
	assert_true(info.torn);
	assert_true(info.host_restarted);
	obj_ledger_close(l);
}

/* Sets the format in the journal's header record, resealed. */
static void set_journal_format(uint32_t format)
{
	unsigned char rec[48];
	int fd = openat(dir_fd, "w.0.journal", O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, rec, sizeof(rec), 0), 48);
	memcpy(rec + 12, &format, 4);
	uint32_t crc = obj_crc32c_update(0, rec + 4, 44);
	memcpy(rec, &crc, 4);
	assert_int_equal(pwrite(fd, rec, sizeof(rec), 0), 48);
	close(fd);
}

static void test_version_ids_survive_reopen_and_fold(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	char vid[OBJ_LEDGER_VID_MAX], cmd[600];
	const char *uuid = "54fd8b94-d8b8-4800-8fe9-b50d4969e287";
	const char *aws = "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrH";
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	assert_int_equal(obj_ledger_set_version_id(l, 0, uuid), 0);
	obj_ledger_intend_put(l, 1, 2, 1, 10);
	obj_ledger_ack(l, 1, 5, 0);
	assert_int_equal(obj_ledger_set_version_id(l, 1, aws), 0);
	obj_ledger_intend_put(l, 2, 3, 1, 10);
	obj_ledger_ack(l, 2, 5, 0);
	assert_int_equal(obj_ledger_set_version_id(l, 2, "x23456789012345678901234567890123"),
			 -E2BIG);
	obj_ledger_close(l);
	l = open_ok(4, TAG, &info);
	obj_ledger_version_id(l, 0, vid, sizeof(vid));
	assert_string_equal(vid, uuid);
	obj_ledger_version_id(l, 1, vid, sizeof(vid));
	assert_string_equal(vid, aws);
	obj_ledger_version_id(l, 2, vid, sizeof(vid));
	assert_string_equal(vid, "");
	/* A new acknowledged PUT without one forgets the old version id. */
	obj_ledger_intend_put(l, 1, 2, 2, 10);
	obj_ledger_ack(l, 1, 6, 0);
	obj_ledger_close(l);
	/* A torn byte: the next open folds into a map, which keeps them. */
	snprintf(cmd, sizeof(cmd), "truncate -s +1 '%s/w.0.journal'", dir);
	assert_int_equal(system(cmd), 0);
	l = open_ok(4, TAG, &info);
	obj_ledger_close(l);
	assert_true(file_size("w.0.map") > 0);
	l = open_ok(4, TAG, &info);
	obj_ledger_version_id(l, 0, vid, sizeof(vid));
	assert_string_equal(vid, uuid);
	obj_ledger_version_id(l, 1, vid, sizeof(vid));
	assert_string_equal(vid, "");
	obj_ledger_close(l);
}

static void test_format_1_loads_and_newer_is_refused(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_close(l);
	set_journal_format(1);
	l = open_ok(4, TAG, &info);
	assert_int_equal(obj_ledger_get(l, 0)->state, OBJ_LEDGER_PRESENT);
	obj_ledger_close(l);
	set_journal_format(4);
	char err[256] = "";
	l = NULL;
	assert_int_equal(obj_ledger_open(dir_fd, "w.0", 4, TAG, test_boot, &l, &info, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "format 4"));
}

static void test_other_pool_size_is_refused(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l = open_ok(4, TAG, &info);
	obj_ledger_close(l);
	char err[256] = "";
	assert_int_equal(obj_ledger_open(dir_fd, "w.0", 5, TAG, test_boot, &l, &info, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "for 4 objects"));
}

static void test_symlink_is_refused(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	struct obj_ledger *l;
	char err[256] = "";
	assert_int_equal(symlinkat("/etc/passwd", dir_fd, "s.journal"), 0);
	assert_true(obj_ledger_open(dir_fd, "s", 4, TAG, test_boot, &l, &info, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "s.journal"));
	assert_int_equal(mkfifoat(dir_fd, "f.journal", 0600), 0);
	assert_int_equal(obj_ledger_open(dir_fd, "f", 4, TAG, test_boot, &l, &info, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "a FIFO"));
}

/* A crash between the new map's rename and the journal's reset: the
 * journal of the old generation is folded in already and must be ignored,
 * not replayed over the map. */
static void test_journal_older_than_map_is_ignored(void **state)
{
	(void)state;
	struct obj_ledger_info info;
	char cmd[600];
	struct obj_ledger *l = open_ok(2, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 1, 10);
	obj_ledger_ack(l, 0, 5, 0);
	obj_ledger_close(l);
	snprintf(cmd, sizeof(cmd), "cp '%s/w.0.journal' '%s/old'", dir, dir);
	assert_int_equal(system(cmd), 0);
	l = open_ok(2, TAG, &info);
	obj_ledger_intend_put(l, 0, 1, 2, 20);
	obj_ledger_ack(l, 0, 6, 0);
	obj_ledger_close(l);
	/* A torn byte makes the next open fold into map generation 1. */
	snprintf(cmd, sizeof(cmd), "truncate -s +1 '%s/w.0.journal'", dir);
	assert_int_equal(system(cmd), 0);
	l = open_ok(2, TAG, &info);
	assert_int_equal(obj_ledger_get(l, 0)->version, 2);
	obj_ledger_close(l);
	assert_true(file_size("w.0.map") > 0);
	snprintf(cmd, sizeof(cmd), "cp '%s/old' '%s/w.0.journal'", dir, dir);
	assert_int_equal(system(cmd), 0);
	l = open_ok(2, TAG, &info);
	assert_int_equal(obj_ledger_get(l, 0)->version, 2);
	assert_int_equal(obj_ledger_get(l, 0)->etag, 6);
	/* What is written from then on must not go into the old journal,
	 * which the next open would ignore again. */
	obj_ledger_intend_put(l, 1, 2, 1, 30);
	obj_ledger_ack(l, 1, 7, 0);
	obj_ledger_close(l);
	l = open_ok(2, TAG, &info);
	assert_int_equal(obj_ledger_get(l, 1)->state, OBJ_LEDGER_PRESENT);
	assert_int_equal(obj_ledger_get(l, 1)->etag, 7);
	obj_ledger_close(l);
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* A million objects, each written twice and a tenth deleted: memory is
 * one entry per slot, and the journal is folded so that disk stays within
 * about two records per slot. */
static void test_million_objects_stay_bounded(void **state)
{
	(void)state;
	const uint32_t slots = 1000000;
	struct obj_ledger_info info;
	long before = rss_kib();
	struct obj_ledger *l = open_ok(slots, TAG, &info);
	uint64_t max_disk = 0;
	for (int pass = 1; pass <= 2; pass++)
		for (uint32_t s = 0; s < slots; s++) {
			assert_int_equal(obj_ledger_intend_put(l, s, s + 1, (uint32_t)pass, 4096), 0);
			assert_int_equal(obj_ledger_ack(l, s, s, 0), 0);
			if (pass == 2 && s % 10 == 0) {
				obj_ledger_intend_delete(l, s);
				obj_ledger_ack(l, s, 0, 0);
			}
			if (s % 4096 == 0) {
				assert_int_equal(obj_ledger_flush(l, 0, false), 0);
				uint64_t disk = (uint64_t)file_size("w.0.map") +
						(uint64_t)file_size("w.0.journal");
				if (disk > max_disk)
					max_disk = disk;
			}
		}
	long grown = rss_kib() - before;
	obj_ledger_close(l);
	print_message("a million objects: %ld KiB of memory, at most %.1f MiB on disk\n", grown,
		      max_disk / 1048576.0);
	/* 56 bytes an entry, and the sanitizers' shadow. */
	assert_true(grown < 100 * 1024);
	assert_true(max_disk <= (uint64_t)slots * 48 * 2 + 8 * 4096 * 48);

	l = open_ok(slots, TAG, &info);
	assert_int_equal(info.present, slots - slots / 10);
	assert_int_equal(info.deleted, slots / 10);
	assert_int_equal(obj_ledger_get(l, 999999)->version, 2);
	obj_ledger_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_then_resumed_keeps_tag_and_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_over_an_uncertain_one_keeps_the_doubt,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_last_record_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_first_put_is_not_known, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damage_leaves_slots_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zeroed_tail_is_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_write_keeps_later_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_failure_folds_the_state, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_other_pool_size_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_version_ids_survive_reopen_and_fold, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_format_1_loads_and_newer_is_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_symlink_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clean_close_reopened, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_older_than_map_is_ignored, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_million_objects_stay_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
