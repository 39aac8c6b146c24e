// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search: a probe judged from the intervals results hands
 * it (the workload failed), and the bisection from the probes' records
 * (a damaged one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* One interval of n reads at latency_ns, ending at second end_s. */
static void interval(struct search *s, uint64_t end_s, uint64_t n, uint64_t latency_ns)
{
	struct op_stats o;
	op_stats_init(&o);
	for (uint64_t i = 0; i < n; i++)
		op_stats_record(&o, latency_ns, latency_ns, 4096, false);
	search_interval_seen(s, 0, false, &o, 1, end_s * S);
	op_stats_reset(&o);
}

/* "min" above because the workload failed: the answer says why, not
 * only that "min" was above. */
static void test_min_failed(void **state)
{
	(void)state;
	struct workload w = { .state = WORKLOAD_FAILED };
	snprintf(w.reason, sizeof(w.reason), "%s", "target deleted");
	struct search *s = new_search();
	for (uint64_t t = 1; t <= 3; t++)
		interval(s, t, 100, 100000);
	json_t *rec = search_judge_probe(s, &w);
	assert_non_null(rec);
	assert_string_equal(json_string_value(json_object_get(rec, "verdict")), "above");
	search_apply_probe(s, rec);
	json_t *answer = search_answer_record(s);
	assert_string_equal(json_string_value(json_object_get(answer, "why")),
			    "even \"min\" is above the target: target deleted");
	json_decref(answer);
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
		cmocka_unit_test(test_min_failed),
		cmocka_unit_test(test_probe_without_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
