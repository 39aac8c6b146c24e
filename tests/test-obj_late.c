// SPDX-License-Identifier: GPL-2.0-only
/* The table of writes that may still land (daemon/object/obj_late.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/object/obj_late.h"

#define WINDOW OBJ_LATE_WINDOW_NS

/* Per name the last OBJ_LATE_PUTS PUTs, a DELETE, found by version and size. */
static void test_entries(void **state)
{
	(void)state;
	struct obj_late t = { 0 };

	assert_null(obj_late_get(&t, 7, 1));
	for (uint32_t v = 1; v <= OBJ_LATE_PUTS + 2; v++)
		obj_late_put(&t, 7, v, 1000 + v, 1);
	obj_late_put(&t, 7, 5, 1, 1);          /* known already: unchanged */
	obj_late_delete(&t, 9, 1);
	const struct obj_late_entry *e = obj_late_get(&t, 7, 1);
	assert_non_null(e);
	assert_true(obj_late_has_put(e));
	assert_false(e->del);
	assert_int_equal(obj_late_find_version(e, OBJ_LATE_PUTS + 2), 0);
	assert_int_equal(obj_late_find_version(e, 3), OBJ_LATE_PUTS - 1);
	assert_int_equal(obj_late_find_version(e, 2), -1);     /* the oldest went */
	assert_int_equal(obj_late_find_version(e, 0), -1);
	assert_int_equal(obj_late_find_size(e, 1005), 1);
	assert_int_equal(obj_late_find_size(e, 1), -1);
	e = obj_late_get(&t, 9, 1);
	assert_true(e && e->del && !obj_late_has_put(e));
	obj_late_free(&t);
}

/* Thousands of names: the table grows and finds each; an entry holds for
 * the window after its last write or its name's retirement, and goes
 * when room is needed after that. */
static void test_growth_and_window(void **state)
{
	(void)state;
	struct obj_late t = { 0 };

	for (uint64_t id = 1; id <= 5000; id++)
		obj_late_put(&t, id, 1, id, 1);
	assert_int_equal(t.n, 5000);
	for (uint64_t id = 1; id <= 5000; id++)
		assert_int_equal(obj_late_get(&t, id, 1)->size[0], id);
	/* Half way through the window, 1..4000 are retired: they hold for a
	 * whole window from then, the others until theirs ends. */
	for (uint64_t id = 1; id <= 4000; id++)
		obj_late_retire(&t, id, WINDOW / 2);
	assert_non_null(obj_late_get(&t, 4001, WINDOW));
	assert_null(obj_late_get(&t, 4001, WINDOW + 2));
	assert_non_null(obj_late_get(&t, 1, WINDOW + 2));
	assert_null(obj_late_get(&t, 1, WINDOW / 2 + WINDOW + 1));
	/* A new write of an expired name starts its window again. */
	obj_late_delete(&t, 4001, WINDOW + 2);
	assert_true(obj_late_get(&t, 4001, WINDOW + 2)->del);
	/* Past them all: the next time room is needed they go (5000 in a
	 * table of 16384 slots: room is needed at the 8193rd). */
	uint64_t late = 3 * WINDOW;
	for (uint64_t id = 9001; id <= 13000; id++)
		obj_late_put(&t, id, 1, id, late);
	assert_int_equal(t.n, 4000);
	for (uint64_t id = 9001; id <= 13000; id++)
		assert_non_null(obj_late_get(&t, id, late));
	obj_late_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_growth_and_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
