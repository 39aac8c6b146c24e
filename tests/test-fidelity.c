// SPDX-License-Identifier: GPL-2.0-only
/* Generator fidelity (fidelity.c): soakd's own freezes, the lag they
 * explain, and when an interval is generator_late. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/workload/fidelity.h"

#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)

static struct fidelity *new_fidelity(void)
{
	struct fidelity *f = malloc(sizeof(*f));

	assert_non_null(f);
	fidelity_init(f);
	return f;
}

static struct interval_slot *new_slot(uint64_t start_ns)
{
	struct interval_slot *slot = calloc(1, sizeof(*slot) + sizeof(struct op_stats));

	assert_non_null(slot);
	slot->start_ns = start_ns;
	op_stats_init(&slot->ops[0]);
	return slot;
}

/* A wake-up on time or within timer slack is no freeze; a late one is,
 * and the slot keeps the longest. */
static void test_woke(void **state)
{
	struct fidelity *f = new_fidelity();
	struct interval_slot *slot = new_slot(0);

	(void)state;
	assert_int_equal(fidelity_woke(f, slot, 100 * MS, 90 * MS), 0);
	assert_int_equal(fidelity_woke(f, slot, 100 * MS, 100 * MS + MS / 2), 0);
	assert_int_equal(f->n_events, 0);
	assert_int_equal(fidelity_woke(f, slot, 200 * MS, 230 * MS), 30 * MS);
	assert_int_equal(fidelity_woke(f, slot, 300 * MS, 310 * MS), 10 * MS);
	assert_int_equal(slot->frozen_ns, 30 * MS);
	assert_int_equal(f->n_events, 2);
	assert_int_equal(fidelity_frozen_since(f, 0), 40 * MS);
	assert_int_equal(fidelity_frozen_since(f, 220 * MS), 20 * MS);
	assert_int_equal(fidelity_frozen_between(f, 0, 210 * MS), 10 * MS);
	free(slot);
	free(f);
}

/* A slot the thread slept through, frozen, is charged the freeze's overlap
 * with it on close, and the thread's CPU time. */
static void test_close(void **state)
{
	struct fidelity *f = new_fidelity();
	struct interval_slot *a = new_slot(1 * S), *b = new_slot(2 * S);

	(void)state;
	fidelity_woke(f, a, 1 * S + 500 * MS, 4 * S);
	fidelity_close(f, a, 2 * S);
	assert_int_equal(a->frozen_ns, 2500 * MS);
	fidelity_close(f, b, 3 * S);
	assert_int_equal(b->frozen_ns, 1 * S);
	free(a);
	free(b);
	free(f);
}

/* max_lag: the device's share fails at once; soakd's own lets the run go
 * on for another max_lag, then fails as soakd's. */
static void test_judge_lag(void **state)
{
	struct fidelity *f = new_fidelity();
	struct interval_slot *slot = new_slot(0);
	uint64_t own;

	(void)state;
	assert_int_equal(fidelity_judge_lag(f, 5 * S, 10 * S, 15 * S, 10 * S, &own),
			 FIDELITY_LAG_OK);
	assert_int_equal(own, 0);
	assert_int_equal(fidelity_judge_lag(f, 12 * S, 10 * S, 22 * S, 10 * S, &own),
			 FIDELITY_LAG_DEVICE);
	/* Frozen 12 s (SIGSTOP): 12 s of lag, all soakd's. */
	fidelity_woke(f, slot, 30 * S, 42 * S);
	assert_int_equal(fidelity_judge_lag(f, 12 * S, 30 * S, 42 * S, 10 * S, &own),
			 FIDELITY_LAG_OK);
	assert_int_equal(own, 12 * S);
	assert_int_not_equal(f->over_since_ns, 0);
	/* Catching up: still over, not yet max_lag long. */
	assert_int_equal(fidelity_judge_lag(f, 11 * S, 32 * S, 43 * S, 10 * S, &own),
			 FIDELITY_LAG_OK);
	/* Back under: the clock restarts. */
	assert_int_equal(fidelity_judge_lag(f, 1 * S, 43 * S, 44 * S, 10 * S, &own),
			 FIDELITY_LAG_OK);
	assert_int_equal(f->over_since_ns, 0);
	/* Over by soakd's own lag for longer than max_lag: soakd is starved. */
	fidelity_woke(f, slot, 50 * S, 62 * S);
	assert_int_equal(fidelity_judge_lag(f, 12 * S, 50 * S, 62 * S, 10 * S, &own),
			 FIDELITY_LAG_OK);
	fidelity_woke(f, slot, 62 * S + 10 * MS, 73 * S);
	assert_int_equal(fidelity_judge_lag(f, 23 * S, 50 * S, 73 * S, 10 * S, &own),
			 FIDELITY_LAG_SOAKD);
	/* No max_lag: never fails. */
	assert_int_equal(fidelity_judge_lag(f, 100 * S, 0, 100 * S, 0, &own), FIDELITY_LAG_OK);
	free(slot);
	free(f);
}

/* generator_late: a freeze over a tenth of the interval, or an issue delay
 * p99 over FIDELITY_LATE_P99_NS. */
static void test_interval_late(void **state)
{
	struct hist *h = hist_new();
	uint64_t late;

	(void)state;
	assert_non_null(h);
	assert_false(fidelity_interval_late(0, h, 1 * S, &late));
	assert_int_equal(late, 0);
	assert_false(fidelity_interval_late(100 * MS, h, 1 * S, &late));
	assert_true(fidelity_interval_late(101 * MS, h, 1 * S, &late));
	assert_int_equal(late, 101 * MS);
	for (int i = 0; i < 98; i++)
		hist_record(h, 50000);
	hist_record(h, 50 * MS);
	hist_record(h, 50 * MS);
	assert_true(fidelity_interval_late(0, h, 1 * S, &late));
	assert_true(late >= 50 * MS && late < 51 * MS);
	hist_reset(h);
	for (int i = 0; i < 999; i++)
		hist_record(h, 50000);
	hist_record(h, 50 * MS); /* one slow op in 1000: p99 stays small */
	assert_false(fidelity_interval_late(0, h, 1 * S, &late));
	hist_delete(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_woke),
		cmocka_unit_test(test_close),
		cmocka_unit_test(test_judge_lag),
		cmocka_unit_test(test_interval_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
