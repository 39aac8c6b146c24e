// SPDX-License-Identifier: GPL-2.0-only
/* The bounded pool of object names: what each op may pick, and when. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/object/obj_pool.h"
#include "daemon/object/obj_rng.h"

#define CAP 64

static void fill(struct obj_pool *p)
{
	uint32_t cursor = 0, i;
	while ((i = obj_pool_next(p, &cursor, OBJ_MASK(OBJ_EMPTY))) != OBJ_POOL_NONE) {
		obj_pool_begin_put(p, i, 100 + i);
		obj_pool_end_write(p, i, false, true);
	}
}

static void test_prefill_gives_fresh_names(void **state)
{
	(void)state;
	struct obj_pool p;
	uint64_t rng = obj_rng_seed(1);
	assert_int_equal(obj_pool_init(&p, CAP, 1), 0);
	assert_int_equal(obj_pool_pick_read(&p, &rng), OBJ_POOL_NONE);
	fill(&p);
	assert_int_equal(p.n_present, CAP);
	assert_int_equal(obj_pool_vacant(&p), 0);
	for (uint32_t i = 0; i < CAP; i++) {
		assert_int_equal(p.entries[i].id, i + 1);
		assert_int_equal(p.entries[i].version, 1);
		assert_int_equal(p.entries[i].size, 100 + i);
	}
	obj_pool_free(&p);
}

static void test_reads_never_see_writes_or_deletes(void **state)
{
	(void)state;
	struct obj_pool p;
	uint64_t rng = obj_rng_seed(2);
	assert_int_equal(obj_pool_init(&p, CAP, 1), 0);
	fill(&p);
	/* Delete half, overwrite the rest but one: the one left is all a
	 * read may pick. */
	for (uint32_t i = 0; i < CAP / 2; i++) {
		obj_pool_begin_delete(&p, i);
		obj_pool_end_write(&p, i, true, true);
	}
	for (uint32_t i = CAP / 2; i < CAP - 1; i++)
		obj_pool_begin_put(&p, i, 5);
	for (int k = 0; k < 1000; k++)
		assert_int_equal(obj_pool_pick_read(&p, &rng), CAP - 1);
	/* Several reads of one object at once, but no write under them. */
	obj_pool_begin_read(&p, CAP - 1);
	obj_pool_begin_read(&p, CAP - 1);
	assert_int_equal(obj_pool_pick_read(&p, &rng), CAP - 1);
	assert_int_equal(obj_pool_pick_idle(&p, &rng), OBJ_POOL_NONE);
	obj_pool_end_read(&p, CAP - 1, false);
	obj_pool_end_read(&p, CAP - 1, false);
	assert_int_equal(obj_pool_pick_idle(&p, &rng), CAP - 1);
	obj_pool_free(&p);
}

static void test_delete_then_put_gets_a_new_name(void **state)
{
	(void)state;
	struct obj_pool p;
	uint64_t rng = obj_rng_seed(3);
	assert_int_equal(obj_pool_init(&p, 4, 1), 0);
	fill(&p);
	uint64_t old = p.entries[2].id;
	obj_pool_begin_delete(&p, 2);
	obj_pool_end_write(&p, 2, true, true);
	assert_int_equal(p.entries[2].state, OBJ_EMPTY);
	/* A PUT prefers the vacant slot, and it gets a name never used. */
	assert_int_equal(obj_pool_pick_vacant(&p, &rng), 2);
	obj_pool_begin_put(&p, 2, 10);
	obj_pool_end_write(&p, 2, false, true);
	assert_true(p.entries[2].id > old);
	assert_int_equal(p.entries[2].id, 5);
	assert_int_equal(p.entries[2].version, 1);
	/* An overwrite keeps the name and bumps the version. */
	obj_pool_begin_put(&p, 1, 20);
	obj_pool_end_write(&p, 1, false, true);
	assert_int_equal(p.entries[1].id, 2);
	assert_int_equal(p.entries[1].version, 2);
	assert_int_equal(p.entries[1].size, 20);
	obj_pool_free(&p);
}

static void test_failures_make_doubt(void **state)
{
	(void)state;
	struct obj_pool p;
	uint64_t rng = obj_rng_seed(4);
	assert_int_equal(obj_pool_init(&p, 2, 1), 0);
	fill(&p);
	/* A failed overwrite: nobody knows which version is there. */
	obj_pool_begin_put(&p, 0, 1);
	obj_pool_end_write(&p, 0, false, false);
	assert_int_equal(p.entries[0].state, OBJ_DOUBTFUL);
	assert_int_equal(p.n_doubtful, 1);
	for (int k = 0; k < 100; k++)
		assert_int_equal(obj_pool_pick_read(&p, &rng), 1);
	/* The next PUT rewrites it, under the same name. */
	assert_int_equal(obj_pool_pick_vacant(&p, &rng), 0);
	obj_pool_begin_put(&p, 0, 1);
	obj_pool_end_write(&p, 0, false, true);
	assert_int_equal(p.entries[0].state, OBJ_PRESENT);
	assert_int_equal(p.entries[0].id, 1);
	assert_int_equal(p.entries[0].version, 3);
	/* Reads answered "not found" (two at once): the name is gone, as
	 * after a DELETE, and never read again. */
	uint32_t seq = p.write_seq;
	obj_pool_begin_read(&p, 1);
	obj_pool_begin_read(&p, 1);
	obj_pool_end_read(&p, 1, true);
	obj_pool_end_read(&p, 1, true);
	assert_int_equal(p.entries[1].state, OBJ_EMPTY);
	assert_int_equal(p.entries[1].readers, 0);
	assert_int_equal(p.write_seq, seq + 1);
	assert_int_equal(p.n_present, 1);
	for (int k = 0; k < 100; k++)
		assert_int_equal(obj_pool_pick_read(&p, &rng), 0);
	/* Its slot's next object gets a new name. */
	uint64_t lost_id = p.entries[1].id;
	obj_pool_begin_put(&p, 1, 1);
	obj_pool_end_write(&p, 1, false, true);
	assert_int_not_equal(p.entries[1].id, lost_id);
	assert_int_equal(p.entries[1].version, 1);
	/* Cleanup sweeps present and doubtful objects alike. */
	obj_pool_begin_put(&p, 1, 1);
	obj_pool_end_write(&p, 1, false, false);
	uint32_t cursor = 0, n = 0;
	while (obj_pool_next(&p, &cursor, OBJ_MASK(OBJ_PRESENT) | OBJ_MASK(OBJ_DOUBTFUL)) !=
	       OBJ_POOL_NONE)
		n++;
	assert_int_equal(n, 2);
	obj_pool_free(&p);
}

static void test_picks_spread(void **state)
{
	(void)state;
	struct obj_pool p;
	uint64_t rng = obj_rng_seed(5);
	unsigned seen[CAP] = { 0 };
	assert_int_equal(obj_pool_init(&p, CAP, 1), 0);
	fill(&p);
	for (int k = 0; k < CAP * 200; k++)
		seen[obj_pool_pick_read(&p, &rng)]++;
	for (int i = 0; i < CAP; i++)
		assert_true(seen[i] > 100 && seen[i] < 300);
	obj_pool_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefill_gives_fresh_names),
		cmocka_unit_test(test_reads_never_see_writes_or_deletes),
		cmocka_unit_test(test_delete_then_put_gets_a_new_name),
		cmocka_unit_test(test_failures_make_doubt),
		cmocka_unit_test(test_picks_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
