// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search's judgement of a probe, from the intervals results
 * hands it: a stall that begins inside a window is that window's, though
 * the ops it holds complete only in the next.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/run/search_int.h"
#include "daemon/workload/workload.h"

#define MS UINT64_C(1000000)
#define S (1000 * MS)

static const struct search_config cfg = {
	.enabled = true, .percentile = 99, .below_ns = 20 * MS, .window_ns = S, .windows = 3,
	.min_rate = 100, .max_rate = 1600, .resolution = 0.1,
};

static struct search *new_search(void)
{
	struct search *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->cfg = &cfg;
	s->interval_ns = S;
	s->n_ops = 1;
	s->op_names[0] = "read";
	s->op_share[0] = 1;
	s->prefill_op = -1;
	s->rate = 1000;
	s->curve = json_array();
	search_reset_windows(s);
	return s;
}

/* One interval of n reads at latency_ns, pending still due at its end,
 * lag_ns behind its schedule at worst, ending at second `end_s`. */
static void interval(struct search *s, uint64_t end_s, uint64_t n, uint64_t latency_ns,
		     uint64_t pending, uint64_t lag_ns)
{
	struct op_stats o;
	op_stats_init(&o);
	for (uint64_t i = 0; i < n; i++)
		op_stats_record(&o, latency_ns, latency_ns, 4096, false);
	o.pending = pending;
	search_interval_seen(s, 0, false, &o, 1, end_s * S, lag_ns);
	op_stats_reset(&o);
}

static const char *verdict(json_t *rec)
{
	return json_string_value(json_object_get(rec, "verdict"));
}

/* The device stalls 200 ms into the second window and comes back within
 * the third: 800 reads due in the second window complete in the third,
 * a second late.  The second window is above (its ops did not make it),
 * and so is the third: 2 of 3, the probe is above.  Judged on its
 * completions alone the second window held 200 fast reads and passed,
 * and the probe with it. */
static void test_stall_begins_in_a_window(void **state)
{
	(void)state;
	struct search *s = new_search();
	struct workload w = { .state = WORKLOAD_FINISHED };

	interval(s, 1, 1000, 100000, 4, 0);
	interval(s, 2, 200, 100000, 800, 800 * MS);
	interval(s, 3, 1000, S, 4, 0);
	json_t *rec = search_judge_probe(s, &w);
	assert_non_null(rec);
	assert_string_equal(verdict(rec), "above");
	json_t *win = json_array_get(json_object_get(rec, "by_window"), 1);
	assert_false(json_is_true(json_object_get(win, "below")));
	assert_int_equal(json_integer_value(json_object_get(win, "overdue")), 800);
	json_decref(rec);
	search_free(s);
}

/* Ops in flight at a window's end, the schedule kept: no stall, nothing
 * overdue, every window below. */
static void test_in_flight_is_not_overdue(void **state)
{
	(void)state;
	struct search *s = new_search();
	struct workload w = { .state = WORKLOAD_FINISHED };

	for (uint64_t t = 1; t <= 3; t++)
		interval(s, t, 1000, 100000, 32, 2 * MS);
	json_t *rec = search_judge_probe(s, &w);
	assert_string_equal(verdict(rec), "below");
	assert_int_equal(json_integer_value(json_object_get(rec, "agreed")), 3);
	assert_null(json_object_get(json_array_get(json_object_get(rec, "by_window"), 1),
				    "overdue"));
	json_decref(rec);
	search_free(s);
}

/* A probe record read back without a verdict (a damaged line) is no
 * probe below the target, and no crash. */
static void test_probe_without_verdict(void **state)
{
	(void)state;
	struct search *s = new_search();
	json_t *probe = json_pack("{s:s,s:i,s:f}", "type", "search", "probe", 1, "rate", 400.0);

	search_apply_probe(s, probe);
	assert_true(s->lo == 0);
	assert_true(s->hi == 400);
	json_decref(probe);
	search_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stall_begins_in_a_window),
		cmocka_unit_test(test_in_flight_is_not_overdue),
		cmocka_unit_test(test_probe_without_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
