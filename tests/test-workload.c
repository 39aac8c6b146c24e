// SPDX-License-Identifier: GPL-2.0-only
/* Run time across a reboot: origins on CLOCK_MONOTONIC that lie before
 * this boot's 0, and interval boundaries counted from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "daemon/workload.h"

#define S UINT64_C(1000000000)

static void test_mono_since(void **state)
{
	(void)state;
	/* A run begun before boot: 5 s of run time at 1 s of uptime. */
	assert_int_equal(mono_since(-4 * (int64_t)S, 1 * S), 5 * S);
	assert_int_equal(mono_since(-4 * (int64_t)S, 0), 4 * S);
	/* An origin ahead (start_at): no time has passed yet. */
	assert_int_equal(mono_since(10 * (int64_t)S, 3 * S), 0);
	assert_int_equal(mono_since(10 * (int64_t)S, 10 * S), 0);
	assert_int_equal(mono_since(10 * (int64_t)S, 12 * S), 2 * S);
	assert_int_equal(mono_since(0, 7), 7);
}

static void test_mono_at(void **state)
{
	(void)state;
	assert_int_equal(mono_at(-4 * (int64_t)S, 6 * S), 2 * S);
	/* Before this boot: no such instant, clamped to 0. */
	assert_int_equal(mono_at(-4 * (int64_t)S, 3 * S), 0);
	assert_int_equal(mono_at(-4 * (int64_t)S, 4 * S), 0);
	assert_int_equal(mono_at(2 * (int64_t)S, 3 * S), 5 * S);
	/* A schedule without end does not wrap. */
	assert_true(mono_at(2 * (int64_t)S, UINT64_MAX - 1) == UINT64_MAX);
	assert_true(mono_at(INT64_MAX, UINT64_MAX) == UINT64_MAX);
}

static void test_boundaries_before_boot(void **state)
{
	(void)state;
	/* Run time 0 was 4.5 s before boot; intervals of 1 s end at run
	 * times 1, 2, ...: at 1.2 s of uptime (5.7 s of run time) the next
	 * ends at 6 s of run time, 1.5 s of uptime. */
	struct workload w = { .run_start_ns = -4 * (int64_t)S - (int64_t)S / 2, .interval_ns = S };
	assert_int_equal(workload_next_boundary(&w, S + S / 5), S + S / 2);
	assert_int_equal(workload_next_boundary(&w, S + S / 2), 2 * S + S / 2);
	/* Waiting for start_at: the first boundary is one interval in. */
	w.run_start_ns = 10 * (int64_t)S;
	assert_int_equal(workload_next_boundary(&w, 3 * S), 11 * S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono_since),
		cmocka_unit_test(test_mono_at),
		cmocka_unit_test(test_boundaries_before_boot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
