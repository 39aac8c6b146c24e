// SPDX-License-Identifier: GPL-2.0-only
/* Object ops' verify counters: recorded in an interval record and read back
 * exactly; a device op's "verify" is not taken for an object op's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/results/stats_json.h"

static void test_round_trip(void **state)
{
	(void)state;
	struct op_stats o, back;
	op_stats_init(&o);
	op_stats_init(&back);
	o.count = 10;
	o.corrupt = 1;
	o.obj_verify = (struct obj_verify){ .checked = 9, .lost = 2, .resurrected = 3, .stale = 4,
					    .list_missing = 5, .list_extra = 6, .uncertain = 7 };
	json_t *j = op_stats_to_json(&o);
	json_t *v = json_object_get(j, "verify");
	assert_non_null(v);
	assert_int_equal(json_integer_value(json_object_get(v, "corrupt")), 1);
	assert_int_equal(json_integer_value(json_object_get(v, "list_extra")), 6);
	assert_int_equal(op_stats_merge_json(&back, j), 0);
	assert_int_equal(op_stats_merge_json(&back, j), 0);
	assert_int_equal(back.obj_verify.checked, 18);
	assert_int_equal(back.obj_verify.lost, 4);
	assert_int_equal(back.obj_verify.resurrected, 6);
	assert_int_equal(back.obj_verify.stale, 8);
	assert_int_equal(back.obj_verify.list_missing, 10);
	assert_int_equal(back.obj_verify.list_extra, 12);
	assert_int_equal(back.obj_verify.uncertain, 14);
	json_decref(j);
}

static void test_nothing_checked_nothing_written(void **state)
{
	(void)state;
	struct op_stats o;
	op_stats_init(&o);
	o.count = 3;
	json_t *j = op_stats_to_json(&o);
	assert_null(json_object_get(j, "verify"));
	json_decref(j);
}

static void test_device_verify_is_not_read(void **state)
{
	(void)state;
	struct op_stats back;
	op_stats_init(&back);
	json_t *j = json_pack("{s:I,s:{s:I,s:I,s:I}}", "count", (json_int_t)5, "verify", "checked",
			      (json_int_t)5, "stale", (json_int_t)1, "uncertain", (json_int_t)2);
	assert_int_equal(op_stats_merge_json(&back, j), 0);
	assert_int_equal(back.obj_verify.checked, 0);
	assert_int_equal(back.obj_verify.stale, 0);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_nothing_checked_nothing_written),
		cmocka_unit_test(test_device_verify_is_not_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
