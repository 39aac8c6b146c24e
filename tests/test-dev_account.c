// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device engine's accounting of ops that have not completed
 * (dev_account.c), alone: how many wait for a slot at a boundary, how they
 * split over a generator's ops, and which are missed when a stream ends.
 * With pending taken from here, count + errors + missed + the change in
 * pending is the schedule's count in every interval.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/device/dev_account.h"

#define MS UINT64_C(1000000)

/* 1000 ops/s for 1 s, 70% reads (op 0) and writes (op 1) of 4 KiB; the
 * schedule's origin is 0, so op n is due at (n - 1) ms. */
static struct dev_gen *new_gen(bool mixed)
{
	static const struct sched_step one_second = { .scale = 1, .duration_ns = 1000 * MS };
	struct dev_gen *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->op_read = 0;
	g->op_write = mixed ? 1 : -1;
	g->read_pct = 70;
	g->access = ACCESS_RANDOM;
	g->size_kind = SIZE_FIXED;
	g->size_min = g->size_max = 4096;
	g->rate = 1000;
	g->max_inflight = 1;
	assert_int_equal(sched_init(&g->sched, g->rate, &one_second, 1, false, 1), 0);
	return g;
}

static void issue(struct dev_gen *g, unsigned n)
{
	uint64_t due;

	for (unsigned i = 0; i < n; i++)
		assert_true(sched_next(&g->sched, &due));
}

static void test_waiting(void **state)
{
	struct dev_gen *g = new_gen(true);
	struct dev_backlog *b = malloc(sizeof(*b));

	(void)state;
	dev_backlog_init(b, &g->sched);
	issue(g, 100);
	/* Due before 500 ms: ops 1..500; 100 issued. */
	assert_int_equal(dev_backlog_waiting(b, g, 0, 500 * MS), 400);
	/* The engine peeks at the next op while every slot is busy: still
	 * waiting, not issued. */
	uint64_t rel;
	assert_true(sched_next(&g->sched, &rel));
	g->due_ns = rel;
	g->have_due = true;
	assert_int_equal(dev_backlog_waiting(b, g, 0, 500 * MS), 400);
	assert_int_equal(dev_backlog_waiting(b, g, 0, 500 * MS + 1), 401);
	/* Past the end: the whole schedule is due. */
	assert_int_equal(dev_backlog_waiting(b, g, 0, 2000 * MS), 900);
	/* A finished generator has nothing waiting. */
	g->finished = true;
	assert_int_equal(dev_backlog_waiting(b, g, 0, 2000 * MS), 0);
	free(b);
	free(g);
}

static void test_split(void **state)
{
	struct dev_gen *mixed = new_gen(true), *reads = new_gen(false);
	uint64_t per_op[3] = { 0 };

	(void)state;
	dev_gen_split(mixed, 400, per_op, 3);
	assert_int_equal(per_op[0], 280);
	assert_int_equal(per_op[1], 120);
	dev_gen_split(reads, 33, per_op, 3);
	assert_int_equal(per_op[0], 313);
	assert_int_equal(per_op[1], 120);
	assert_int_equal(per_op[2], 0);
	free(mixed);
	free(reads);
}

/* A generator that issued its first 100 ops (due at 0..99 ms), and the
 * stats of its two ops for what it misses. */
static struct dev_gen *issued_100(struct op_stats **ret_ops)
{
	struct dev_gen *g = new_gen(true);
	struct op_stats *ops = calloc(2, sizeof(*ops));

	op_stats_init(&ops[0]);
	op_stats_init(&ops[1]);
	issue(g, 100);
	*ret_ops = ops;
	return g;
}

static uint64_t longest_wait(const struct op_stats *ops)
{
	uint64_t a = hist_max(&ops[0].latency), b = hist_max(&ops[1].latency);

	return a > b ? a : b;
}

/* Every op due by the end and never issued is missed, in its op, with its
 * wait as latency; none due later is. */
static void test_miss_rest(void **state)
{
	struct op_stats *ops;
	struct dev_gen *g = issued_100(&ops);
	uint64_t rng = 42;

	(void)state;
	/* Ops 101..300 are due at 100..299 ms; op 301, due at the end,
	 * is not before it. */
	uint64_t missed = dev_gen_miss_rest(g, 0, 300 * MS, 300 * MS, &rng, 4096, 1 << 20, ops);
	assert_int_equal(missed, 200);
	assert_int_equal(ops[0].missed + ops[1].missed, 200);
	/* Two whole blocks of 100 hold exactly 70 reads each. */
	assert_int_equal(ops[0].missed, 140);
	assert_int_equal(ops[0].count + ops[1].count, 0);
	assert_int_equal(ops[0].latency.count + ops[1].latency.count, 200);
	assert_in_range(longest_wait(ops), 199 * MS, 201 * MS);
	assert_true(g->finished);
	assert_false(g->have_due);
	/* Nothing more: a second call misses none. */
	assert_int_equal(dev_gen_miss_rest(g, 0, 2000 * MS, 2000 * MS, &rng, 4096, 1 << 20, ops), 0);
	op_stats_array_free(ops, 2);
	free(g);
}

/* A stop requested at 200 ms and seen at 300 ms: the ops due after the
 * request were nobody's, only those due by it are missed, and their wait
 * runs to when the thread saw the stop. */
static void test_miss_rest_cut(void **state)
{
	struct op_stats *ops;
	struct dev_gen *g = issued_100(&ops);
	uint64_t rng = 42;

	(void)state;
	/* Ops 101..200 are due at 100..199 ms. */
	assert_int_equal(dev_gen_miss_rest(g, 0, 200 * MS, 300 * MS, &rng, 4096, 1 << 20, ops),
			 100);
	assert_int_equal(ops[0].missed + ops[1].missed, 100);
	assert_in_range(longest_wait(ops), 199 * MS, 201 * MS);
	assert_true(g->finished);
	op_stats_array_free(ops, 2);
	free(g);
}

/* A schedule cut at 200 ms and put back there (a reload that restores the
 * old definition, a resume): the op due at the cut is counted once, by the
 * schedule put back, and the two parts hold the whole schedule's 1000. */
static void test_miss_rest_then_seek(void **state)
{
	struct op_stats *ops;
	struct dev_gen *g = issued_100(&ops), *again = new_gen(true);
	uint64_t rng = 42, due, first = 0, rest = 0;

	(void)state;
	uint64_t missed = dev_gen_miss_rest(g, 0, 200 * MS, 250 * MS, &rng, 4096, 1 << 20, ops);
	sched_seek(&again->sched, 200 * MS);
	while (sched_next(&again->sched, &due)) {
		if (!rest++)
			first = due;
	}
	assert_int_equal(first, 200 * MS);
	assert_int_equal(100 + missed + rest, 1000);
	assert_int_equal(sched_ops_between(&g->sched, 0, 200 * MS), 100 + missed);
	op_stats_array_free(ops, 2);
	free(g);
	free(again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiting),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_miss_rest),
		cmocka_unit_test(test_miss_rest_cut),
		cmocka_unit_test(test_miss_rest_then_seek),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
