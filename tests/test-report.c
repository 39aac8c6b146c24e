// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

#define MS UINT64_C(1000000)

/* A slice with `total` ops: `over1` of them at 2 ms, `over8` at 10 ms
 * (counted in both), the rest at 100 us. */
static json_t *slice(uint64_t total, uint64_t over1, uint64_t over8)
{
	struct hist *h = hist_new();
	hist_record_n(h, 100000, total - over1);
	hist_record_n(h, 2 * MS, over1 - over8);
	hist_record_n(h, 10 * MS, over8);
	char *text = hist_to_base64(h);
	json_t *j = json_pack("{s:f,s:f,s:I,s:s,s:s}", "start_s", 0.0, "end_s", 1.0, "count",
			      (json_int_t)total, "latency", text, "service", text);
	free(text);
	hist_delete(h);
	return j;
}

/* Slice i of list starts at hour i, unless it says otherwise (start_s > 0). */
static json_t *hourly(json_t *list)
{
	size_t i;
	json_t *sl;
	json_array_foreach(list, i, sl) {
		if (json_real_value(json_object_get(sl, "start_s")) > 0)
			continue;
		json_object_set_new(sl, "start_s", json_real(3600.0 * (double)i));
		json_object_set_new(sl, "end_s", json_real(3600.0 * (double)(i + 1)));
	}
	return list;
}

static json_t *reply_with(json_t *read_slices, json_t *write_slices)
{
	json_t *ops = json_object();
	hourly(read_slices);
	if (write_slices)
		hourly(write_slices);
	json_object_set_new(ops, "read", json_pack("{s:o}", "slices", read_slices));
	if (write_slices)
		json_object_set_new(ops, "write", json_pack("{s:o}", "slices", write_slices));
	return json_pack("{s:b,s:s,s:f,s:[{s:s,s:o}]}", "ok", 1, "run", "r", "slice_s", 3600.0,
			 "workloads", "name", "w", "ops", ops);
}

static int run_report(json_t *reply, const struct report_options *o, char **ret_text)
{
	size_t len;
	FILE *f = open_memstream(ret_text, &len);
	int r = report_print(reply, o, f);
	fclose(f);
	return r;
}

static void test_pct_above(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_record_n(h, 500000, 900);
	hist_record_n(h, 3 * MS, 100);
	assert_true(report_pct_above(h, 1 * MS) == 10.0);
	assert_true(report_pct_above(h, 100) == 100.0);
	assert_true(report_pct_above(h, 10 * MS) == 0.0);
	/* A threshold inside the bucket holding 3 ms counts it pro rata:
	 * between 0 and 10%. */
	double mid = report_pct_above(h, 3 * MS - 1);
	assert_true(mid > 0 && mid <= 10.0);
	hist_delete(h);
}

static void test_pass_and_fail(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);

	/* 4% over 1 ms, 0.5% over 8 ms in both slices: passes ACT's limits. */
	json_t *pass = reply_with(json_pack("[o,o]", slice(10000, 400, 50), slice(10000, 400, 50)),
				  NULL);
	assert_int_equal(run_report(pass, &o, &text), 0);
	assert_non_null(strstr(text, "  avg     4.00   0.50   0.00"));
	assert_non_null(strstr(text, "  max     4.00   0.50   0.00"));
	assert_non_null(strstr(text, "verdict: PASS"));
	free(text);

	/* One hour with 6% over 1 ms fails, however good the average. */
	json_t *fail = reply_with(json_pack("[o,o,o]", slice(10000, 100, 0), slice(10000, 600, 0),
					    slice(10000, 100, 0)),
				  NULL);
	assert_int_equal(run_report(fail, &o, &text), 1);
	assert_non_null(strstr(text, "  max     6.00"));
	assert_non_null(strstr(text, "  avg     2.67"));
	assert_non_null(strstr(text, "w read: FAIL"));
	free(text);

	/* Merged into 3 h slices, the same run passes. */
	o.slice_ns = UINT64_C(3) * 3600 * 1000000000;
	assert_int_equal(run_report(fail, &o, &text), 0);
	free(text);
	/* 90 minutes does not divide into hours. */
	o.slice_ns = UINT64_C(5400) * 1000000000;
	assert_int_equal(run_report(fail, &o, &text), -EDOM);
	free(text);
	json_decref(pass);
	json_decref(fail);
}

/* A run that would pass but had intervals where soakd itself was late
 * (generator_late) is flagged and never PASSes. */
/* Report slices are merged by time: hours 0, 2 and 3 recorded (the
 * workload stopped in hour 1) make, in slices of 2 h, [0, 2 h) of hour 0
 * and [2 h, 4 h) of hours 2 and 3, not hours 0 and 2 together.  An empty
 * report slice is a blank row, left out of the average. */
static void test_slices_by_time(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);

	json_t *hour2 = slice(10000, 700, 0), *hour3 = slice(10000, 100, 0);
	json_object_set_new(hour2, "start_s", json_real(7200));
	json_object_set_new(hour3, "start_s", json_real(10800));
	json_t *r = reply_with(json_pack("[o,o,o]", slice(10000, 100, 0), hour2, hour3), NULL);
	/* Hourly: hour 2 (7% over 1 ms) fails; hour 1 is a blank row. */
	assert_int_equal(run_report(r, &o, &text), 1);
	assert_non_null(strstr(text, "\n     2" "                       \n"));
	assert_non_null(strstr(text, "     3     7.00"));
	assert_non_null(strstr(text, "  avg     3.00"));
	free(text);
	/* In 2 h slices: hour 0 alone (1%), hours 2 and 3 (4%): passes.  By
	 * position, hours 0 and 2 made 4% and hour 3 1%. */
	o.slice_ns = UINT64_C(7200) * 1000000000;
	assert_int_equal(run_report(r, &o, &text), 0);
	assert_non_null(strstr(text, "     1     1.00"));
	assert_non_null(strstr(text, "     2     4.00"));
	free(text);
	json_decref(r);
}

static void test_generator_late(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);

	json_t *reply = reply_with(json_pack("[o]", slice(10000, 400, 50)), NULL);
	json_object_set_new(json_array_get(json_object_get(reply, "workloads"), 0),
			    "generator_late", json_pack("{s:i,s:f}", "intervals", 3, "max_ms", 12000.0));
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w: generator_late in 3 intervals"));
	assert_non_null(strstr(text, "up to 12000.0 ms"));
	assert_null(strstr(text, "verdict: PASS"));
	assert_non_null(strstr(text, "verdict: INCONCLUSIVE"));
	free(text);
	json_decref(reply);
}

/* Sets a count of op in the reply's only workload. */
static void set_count(json_t *reply, const char *op, const char *key, json_int_t n)
{
	json_t *ops = json_object_get(json_array_get(json_object_get(reply, "workloads"), 0), "ops");
	json_object_set_new(json_object_get(ops, op), key, json_integer(n));
}

/* ACT stops at the first I/O error: failed ops of a judged op fail it
 * however fast the rest were, and wrong data read back fails any op,
 * judged or not. */
static void test_errors_and_wrong_data(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);
	json_t *reply = reply_with(json_pack("[o]", slice(10000, 400, 50)),
				   json_pack("[o]", slice(1000, 900, 500)));

	/* The write's errors are not judged: reads are. */
	set_count(reply, "write", "errors", 7);
	set_count(reply, "read", "errors", 0);
	assert_int_equal(run_report(reply, &o, &text), 0);
	assert_non_null(strstr(text, "w read: PASS"));
	assert_non_null(strstr(text, "verdict: PASS"));
	free(text);

	set_count(reply, "read", "errors", 3);
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w read: FAIL (3 failed ops)\n"));
	assert_non_null(strstr(text, "verdict: FAIL"));
	free(text);

	/* A missed op is judged by its wait, in the histograms: a count of
	 * them alone fails nothing. */
	set_count(reply, "read", "errors", 0);
	set_count(reply, "read", "missed", 1);
	assert_int_equal(run_report(reply, &o, &text), 0);
	assert_non_null(strstr(text, "w read: PASS"));
	free(text);
	/* Under --service they have no time to be judged by: no PASS over
	 * them (an object pool's prefill misses ops too: no FAIL). */
	o.service = true;
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "verdict: INCONCLUSIVE (1 missed op of the judged ops"));
	free(text);
	o.service = false;

	/* A workload that failed fails the verdict, whatever it measured. */
	set_count(reply, "read", "missed", 0);
	json_t *w0 = json_array_get(json_object_get(reply, "workloads"), 0);
	json_object_set_new(w0, "state", json_string("failed"));
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w: FAILED (the workload failed)"));
	assert_non_null(strstr(text, "verdict: FAIL"));
	free(text);
	/* Failed for soakd's own lateness (its reason says so): no verdict
	 * on the device; soakd late elsewhere in the run changes nothing. */
	json_object_set_new(w0, "generator_late", json_pack("{s:i,s:f}", "intervals", 2,
							    "max_ms", 900.0));
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "verdict: FAIL"));
	free(text);
	json_object_set_new(w0, "reason", json_string("max_lag 10s exceeded: soakd itself was "
						      "stopped or starved for 11 s"));
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w: failed for soakd, not the device (max_lag"));
	assert_non_null(strstr(text, "verdict: INCONCLUSIVE"));
	free(text);
	json_object_del(w0, "reason");
	json_object_del(w0, "generator_late");
	json_object_set_new(w0, "state", json_string("finished"));
	/* A failed cache flush, on an op not judged (or not asked for by
	 * --op): the workload fails. */
	set_count(reply, "write", "flush_failed", 3);
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w: FAIL (3 failed cache flushes: the writes may not be durable)"));
	free(text);
	o.op = "read";
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "3 failed cache flushes"));
	free(text);
	o.op = NULL;
	set_count(reply, "write", "flush_failed", 0);

	set_count(reply, "write", "wrong_data", 2);
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w read: PASS"));
	assert_non_null(strstr(text, "w write: FAIL (wrong data read back 2 times)\n"));
	assert_non_null(strstr(text, "verdict: FAIL"));
	free(text);

	/* Not a count (a hostile or older reply): read as none. */
	set_count(reply, "write", "wrong_data", -5);
	assert_int_equal(run_report(reply, &o, &text), 0);
	free(text);
	json_decref(reply);
}

/* Reads are judged by default; other ops are shown, not judged, unless
 * asked for by name. */
static void test_judged_ops(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);
	json_t *reply = reply_with(json_pack("[o]", slice(1000, 10, 0)),
				   json_pack("[o]", slice(1000, 900, 500)));
	assert_int_equal(run_report(reply, &o, &text), 0);
	assert_null(strstr(text, "w write: "));
	free(text);
	o.op = "write";
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w write: FAIL"));
	free(text);
	o.op = "nope";
	assert_int_equal(run_report(reply, &o, &text), -ENOENT);
	free(text);
	json_decref(reply);
}

/* An object workload (no "read"): its schedule's ops are judged, not the
 * prefill, audit or cleanup around it, unless asked for by name. */
static void test_object_phases(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);
	json_t *ops = json_pack("{s:{s:[o]},s:{s:[o]},s:{s:[o]},s:{s:[o]}}",
				"get", "slices", slice(1000, 10, 0),
				"prefill", "slices", slice(1000, 900, 500),
				"audit", "slices", slice(1000, 900, 500),
				"cleanup", "slices", slice(1000, 900, 500));
	json_t *reply = json_pack("{s:b,s:s,s:f,s:[{s:s,s:o}]}", "ok", 1, "run", "r", "slice_s",
				  3600.0, "workloads", "name", "w", "ops", ops);
	assert_int_equal(run_report(reply, &o, &text), 0);
	assert_non_null(strstr(text, "w get: PASS"));
	assert_null(strstr(text, "w prefill: "));
	assert_null(strstr(text, "w cleanup: "));
	assert_null(strstr(text, "w audit: "));
	free(text);
	assert_true(report_op_judged(&o, false, "put"));
	assert_false(report_op_judged(&o, false, "prefill"));
	o.op = "prefill";
	assert_int_equal(run_report(reply, &o, &text), 1);
	assert_non_null(strstr(text, "w prefill: FAIL"));
	free(text);
	json_decref(reply);
}

static void test_parse_lists(void **state)
{
	(void)state;
	struct report_options o;
	const char *why;
	report_default_options(&o);
	assert_int_equal(report_parse_thresholds("1,8,64", &o, &why), 0);
	assert_true(o.limits_pct[2] == 0.1);
	assert_int_equal(report_parse_thresholds("500us,2,16ms", &o, &why), 0);
	assert_int_equal(o.n_thresholds, 3);
	assert_int_equal(o.thresholds_ns[0], 500000);
	assert_int_equal(o.thresholds_ns[1], 2 * MS);
	assert_true(o.limits_pct[0] < 0); /* no limits for thresholds of one's own */
	assert_int_equal(report_parse_limits("50,5%,-", &o, &why), 0);
	assert_true(o.limits_pct[1] == 5 && o.limits_pct[2] < 0);
	assert_int_equal(report_parse_limits("1,2", &o, &why), -EINVAL);
	assert_int_equal(report_parse_limits("1,2,x", &o, &why), -EINVAL);
	assert_int_equal(report_parse_limits("1,2,101", &o, &why), -EINVAL);
	assert_int_equal(report_parse_thresholds("8,1", &o, &why), -EINVAL);
	assert_int_equal(report_parse_thresholds("", &o, &why), -EINVAL);
	assert_int_equal(report_parse_thresholds("1,,2", &o, &why), -EINVAL);
	assert_int_equal(report_parse_thresholds("0", &o, &why), -EINVAL);
	assert_int_equal(report_parse_thresholds("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", &o,
						 &why), -EINVAL);
}

static void test_malformed(void **state)
{
	(void)state;
	struct report_options o;
	char *text;
	report_default_options(&o);
	json_t *bad = json_pack("{s:[{s:s,s:{s:{s:[{s:s}]}}}],s:f}", "workloads", "name", "w",
				"ops", "read", "slices", "latency", "!!notbase64", "slice_s", 1.0);
	assert_int_equal(run_report(bad, &o, &text), -EINVAL);
	free(text);
	json_decref(bad);
	json_t *empty = json_object();
	assert_int_equal(run_report(empty, &o, &text), -EINVAL);
	free(text);
	json_decref(empty);
}

/* The host beside a spike: slice 3 of 4 is a spike (p99 10x the median);
 * with steal there, or iowait while the targets were idle, it is flagged;
 * with iowait while a target was busy (the device itself), or in a slice
 * without a spike, it is not. */
static void test_host_flags(void **state)
{
	struct hist *slices = calloc(4, sizeof(*slices));
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(slices);
	for (size_t i = 0; i < 4; i++) {
		hist_init(&slices[i]);
		hist_record_n(&slices[i], (i == 2 ? 10 : 1) * UINT64_C(1000000), 100);
	}
	json_t *host = json_pack("[{s:i,s:f,s:f,s:f},{s:i,s:f,s:f,s:f},{s:i,s:f,s:f,s:f}]",
				 "index", 0, "steal_max", 50.0, "iowait_max", 0.0, "util_max", 0.0,
				 "index", 2, "steal_max", 6.0, "iowait_max", 0.0, "util_max", 90.0,
				 "index", 3, "steal_max", 0.0, "iowait_max", 0.0, "util_max", 0.0);
	FILE *out = open_memstream(&text, &len);
	assert_int_equal(report_host_flags(out, "w", "read", slices, 4, 1, host), 1);
	fclose(out);
	assert_non_null(strstr(text, "w read: slice 3's p99 of 10."));
	assert_non_null(strstr(text, "steal up to 6.0%"));
	free(text);

	/* iowait with the target busy: the device, not the host. */
	json_object_set_new(json_array_get(host, 1), "steal_max", json_real(0));
	json_object_set_new(json_array_get(host, 1), "iowait_max", json_real(40));
	out = open_memstream(&text, &len);
	assert_int_equal(report_host_flags(out, "w", "read", slices, 4, 1, host), 0);
	fclose(out);
	free(text);
	/* ... and with the targets idle: other devices. */
	json_object_set_new(json_array_get(host, 1), "util_max", json_real(10));
	out = open_memstream(&text, &len);
	assert_int_equal(report_host_flags(out, "w", "read", slices, 4, 1, host), 1);
	fclose(out);
	assert_non_null(strstr(text, "iowait up to 40.0%"));
	free(text);
	/* Two recorded slices to a report slice: slices 2 and 3 fold into
	 * report slice 2 (index 1); two report slices are too few. */
	out = open_memstream(&text, &len);
	assert_int_equal(report_host_flags(out, "w", "read", slices, 2, 2, host), 0);
	fclose(out);
	free(text);
	json_decref(host);
	for (size_t i = 0; i < 4; i++)
		hist_free(&slices[i]);
	free(slices);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pct_above),
		cmocka_unit_test(test_pass_and_fail),
		cmocka_unit_test(test_slices_by_time),
		cmocka_unit_test(test_generator_late),
		cmocka_unit_test(test_errors_and_wrong_data),
		cmocka_unit_test(test_judged_ops),
		cmocka_unit_test(test_object_phases),
		cmocka_unit_test(test_parse_lists),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_host_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
