// SPDX-License-Identifier: GPL-2.0-only
/*
 * "certify" and "search" (config_certify.c, config_search.c): the steps
 * and probes they make of the workloads' schedules, and their errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config/config.h"
#include "daemon/run/certify_int.h"

#define NS UINT64_C(1000000000)

static int load(const char *run, const char *workload, struct run_config **ret, char **ret_errors)
{
	char text[4096];
	size_t len = 0;
	char *errors = NULL;
	FILE *f = open_memstream(&errors, &len);

	snprintf(text, sizeof(text),
		 "{\"run\": {\"name\": \"c\", \"interval\": \"1s\", %s},\n"
		 " \"workloads\": [{\"name\": \"w\", \"type\": \"device\", %s}]}", run, workload);
	assert_non_null(f);
	int r = config_load_string(text, "t.json", f, ret);
	fclose(f);
	*ret_errors = errors;
	return r;
}

static const char *const PATTERN = "\"model\": \"pattern\", \"targets\": [\"/tmp/c.dat\"], "
				   "\"file_size\": \"16MiB\", \"rate\": 100";

static void expect_error(const char *run, const char *workload, const char *needle)
{
	struct run_config *c = NULL;
	char *errors;
	int r = load(run, workload, &c, &errors);
	if (r == 0 || !strstr(errors, "t.json:1:") || !strstr(errors, needle))
		fail_msg("expected 't.json:1:...%s', got r=%d: %s", needle, r, errors);
	free(errors);
}

static void test_steps_become_the_schedule(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	assert_int_equal(load("\"certify\": {\"steps\": [\"1x\", 3, \"6x\"], \"hold\": \"1h\"}",
			      PATTERN, &c, &errors), 0);
	const struct workload_config *w = &c->workloads[0];
	assert_true(c->certify.enabled && w->certified);
	assert_int_equal(w->n_steps, 3);
	assert_true(w->steps[0].scale == 1 && w->steps[1].scale == 3 && w->steps[2].scale == 6);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(w->steps[i].duration_ns, 3600 * NS);
	/* ACT's limits unless given. */
	assert_int_equal(c->certify.n_thresholds, 3);
	assert_int_equal(c->certify.thresholds_ns[1], 8000000);
	assert_true(c->certify.limits_pct[2] == 0.1);
	free(errors);
	config_free(c);
}

static void test_ladder_and_act_load(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	/* 1x, 2x, 4x, 8x of ACT's 1x load, for a workload defined at "2x". */
	assert_int_equal(load("\"certify\": {\"start\": \"1x\", \"factor\": 2, \"max\": \"8x\", "
			      "\"hold\": \"10s\", \"confirm\": \"1m\", \"thresholds\": [\"2ms\", 16], "
			      "\"limits\": \"5,-\"}",
			      "\"model\": \"act-storage\", \"devices\": [\"/tmp/c.dat\"], "
			      "\"load\": \"2x\"", &c, &errors), 0);
	const struct workload_config *w = &c->workloads[0];
	assert_int_equal(c->certify.n_steps, 4);
	assert_int_equal(w->n_steps, 4);
	assert_true(w->steps[0].scale == 0.5 && w->steps[3].scale == 4);
	assert_int_equal(c->certify.confirm_ns, 60 * NS);
	assert_int_equal(c->certify.thresholds_ns[0], 2000000);
	assert_int_equal(c->certify.thresholds_ns[1], 16000000);
	assert_true(c->certify.limits_pct[0] == 5 && c->certify.limits_pct[1] < 0);
	free(errors);
	config_free(c);
}

static void test_certify_errors(void **state)
{
	(void)state;
	expect_error("\"certify\": {\"steps\": [\"2x\", \"1x\"], \"hold\": \"1s\"}", PATTERN,
		     "must increase");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1500ms\"}", PATTERN,
		     "whole number of the run's intervals");
	expect_error("\"certify\": {\"steps\": [\"1x\"]}", PATTERN, "needs \"hold\"");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1s\", \"limits\": \"-,-,-\"}",
		     PATTERN, "needs a limit");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1s\", \"workload\": \"x\"}",
		     PATTERN, "no workload is named \"x\"");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1s\"}",
		     "\"model\": \"pattern\", \"targets\": [\"/tmp/c.dat\"], \"file_size\": \"16MiB\"",
		     "runs closed-loop");
	expect_error("\"duration\": \"2s\", \"certify\": {\"steps\": [\"1x\", \"2x\", \"3x\"], "
		     "\"hold\": \"1s\"}", PATTERN, "ends before the last of the 3 steps");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1s\"}",
		     "\"model\": \"pattern\", \"targets\": [\"/tmp/c.dat\"], \"file_size\": \"16MiB\", "
		     "\"rate\": 100, \"autostart\": false", "must start with the run");
}

static void test_search(void **state)
{
	(void)state;
	struct run_config *c;
	char *errors;
	assert_int_equal(load("\"search\": {\"below\": \"2ms\", \"window\": \"30s\", \"min\": 50, "
			      "\"max\": 5000, \"then\": \"80%\"}", PATTERN, &c, &errors), 0);
	const struct search_config *s = &c->search;
	const struct workload_config *w = &c->workloads[0];
	assert_true(s->enabled && w->searched);
	assert_true(s->percentile == 99 && s->windows == 3 && s->resolution == 0.05);
	assert_int_equal(s->below_ns, 2000000);
	assert_true(s->then_fraction == 0.8);
	assert_int_equal(s->then_ns, CONFIG_FOREVER_NS);
	/* The first probe: "min" for three windows, as a scale of "rate". */
	assert_int_equal(w->n_steps, 1);
	assert_true(w->steps[0].scale == 0.5);
	assert_int_equal(w->steps[0].duration_ns, 90 * NS);
	free(errors);
	config_free(c);

	expect_error("\"search\": {\"window\": \"2s\", \"max\": 100}", PATTERN, "needs \"below\"");
	expect_error("\"search\": {\"below\": \"2ms\", \"window\": \"2s\", \"min\": 200, \"max\": 100}",
		     PATTERN, "\"min\" must be above 0 and below \"max\"");
	expect_error("\"search\": {\"below\": \"2ms\", \"window\": \"2s\", \"max\": 100, "
		     "\"then\": \"150%\"}", PATTERN, "\"then\" must be a share");
	expect_error("\"certify\": {\"steps\": [\"1x\"], \"hold\": \"1s\"}, \"search\": "
		     "{\"below\": \"2ms\", \"window\": \"2s\", \"max\": 100}", PATTERN,
		     "either certifies or searches");
	expect_error("\"duration\": \"1h\", \"search\": {\"below\": \"2ms\", \"window\": \"2s\", "
		     "\"max\": 100}", PATTERN, "leave the run's \"duration\" out");
}

/* An object workload's interval in which a prefill PUT was still in flight
 * at its end, and none ended: the prefill's, not judged on the ops that
 * came due meanwhile and missed (it failed the step on them). */
static void test_prefill_in_flight(void **state)
{
	struct certify_part part;
	struct op_stats ops[2];

	(void)state;
	memset(&part, 0, sizeof(part));
	for (size_t i = 0; i < STATS_MAX_OPS; i++)
		hist_init(&part.ops[i].latency);
	op_stats_init(&ops[0]);
	op_stats_init(&ops[1]);
	ops[0].missed = 20;        /* get: due while the pool filled */
	ops[1].pending = 1;        /* prefill: one PUT in flight */
	certify_add_interval(&part, false, ops, 2, 1);
	assert_int_equal(part.prefill_intervals, 1);
	assert_int_equal(part.prefill_missed, 20);
	assert_int_equal(part.intervals, 0);
	assert_int_equal(part.ops[0].missed, 0);
	for (size_t i = 0; i < STATS_MAX_OPS; i++)
		hist_reset(&part.ops[i].latency);
	op_stats_reset(&ops[0]);
	op_stats_reset(&ops[1]);
}

/* An object's stale, lost or resurrected reads fail a step as a corrupt
 * read does (and as the reports fail them), in the prefill's intervals
 * too. */
static void test_object_wrong_data(void **state)
{
	struct certify_part part;
	struct op_stats ops[2];

	(void)state;
	memset(&part, 0, sizeof(part));
	for (size_t i = 0; i < STATS_MAX_OPS; i++)
		hist_init(&part.ops[i].latency);
	op_stats_init(&ops[0]);
	op_stats_init(&ops[1]);
	ops[0].count = 100;
	ops[0].obj_verify.stale = 2;
	ops[0].obj_verify.lost = 1;
	ops[0].corrupt = 1;
	certify_add_interval(&part, false, ops, 2, 1);
	assert_int_equal(part.intervals, 1);
	assert_int_equal(part.ops[0].corrupt, 4);
	ops[1].pending = 1;        /* a prefill interval */
	ops[0].obj_verify.resurrected = 1;
	certify_add_interval(&part, false, ops, 2, 1);
	assert_int_equal(part.prefill_intervals, 1);
	assert_int_equal(part.ops[0].corrupt, 9);
	for (size_t i = 0; i < STATS_MAX_OPS; i++)
		hist_reset(&part.ops[i].latency);
	op_stats_reset(&ops[0]);
	op_stats_reset(&ops[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_steps_become_the_schedule),
		cmocka_unit_test(test_ladder_and_act_load),
		cmocka_unit_test(test_certify_errors),
		cmocka_unit_test(test_search),
		cmocka_unit_test(test_prefill_in_flight),
		cmocka_unit_test(test_object_wrong_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
