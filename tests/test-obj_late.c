// SPDX-License-Identifier: GPL-2.0-only
/* The table of writes that may still land (daemon/object/obj_late.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/object/obj_late.h"

#define HOUR (UINT64_C(3600) * 1000000000)

/* Per name the last OBJ_LATE_PUTS PUTs, a DELETE, found by version and size. */
static void test_entries(void **state)
{
	(void)state;
	struct obj_late t = { 0 };

	assert_null(obj_late_get(&t, 7));
	for (uint32_t v = 1; v <= OBJ_LATE_PUTS + 2; v++)
		obj_late_put(&t, 7, v, 1000 + v, 1);
	obj_late_put(&t, 7, 5, 1, 1);          /* known already: unchanged */
	obj_late_delete(&t, 9, 1);
	const struct obj_late_entry *e = obj_late_get(&t, 7);
	assert_non_null(e);
	assert_true(obj_late_has_put(e));
	assert_false(e->del);
	assert_int_equal(obj_late_find_version(e, OBJ_LATE_PUTS + 2), 0);
	assert_int_equal(obj_late_find_version(e, 3), OBJ_LATE_PUTS - 1);
	assert_int_equal(obj_late_find_version(e, 2), -1);     /* the oldest went */
	assert_int_equal(obj_late_find_version(e, 0), -1);
	assert_int_equal(obj_late_find_size(e, 1005), 1);
	assert_int_equal(obj_late_find_size(e, 1), -1);
	e = obj_late_get(&t, 9);
	assert_true(e && e->del && !obj_late_has_put(e));
	obj_late_free(&t);
}

/* Thousands of names: the table grows and finds each; retired names go an
 * hour after they were retired, and only when room is needed. */
static void test_growth_and_retirement(void **state)
{
	(void)state;
	struct obj_late t = { 0 };

	for (uint64_t id = 1; id <= 5000; id++)
		obj_late_put(&t, id, 1, id, 1);
	assert_int_equal(t.n, 5000);
	for (uint64_t id = 1; id <= 5000; id++)
		assert_int_equal(obj_late_get(&t, id)->size[0], id);
	for (uint64_t id = 1; id <= 4000; id++)
		obj_late_retire(&t, id, 10);
	/* Within the hour: kept through growth. */
	for (uint64_t id = 5001; id <= 9000; id++)
		obj_late_put(&t, id, 1, id, 10 + HOUR / 2);
	assert_non_null(obj_late_get(&t, 1));
	assert_int_equal(t.n, 9000);
	/* Past it: the next time room is needed they go, the rest stay. */
	size_t cap = t.cap;
	for (uint64_t id = 9001; t.cap == cap && id < 20000; id++)
		obj_late_put(&t, id, 1, id, 20 + HOUR);
	assert_null(obj_late_get(&t, 1));
	assert_null(obj_late_get(&t, 4000));
	assert_non_null(obj_late_get(&t, 4001));
	assert_non_null(obj_late_get(&t, 9000));
	for (uint64_t id = 4001; id <= 9000; id++)
		assert_non_null(obj_late_get(&t, id));
	obj_late_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_growth_and_retirement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
