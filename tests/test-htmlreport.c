// SPDX-License-Identifier: GPL-2.0-only
/*
 * The HTML report's reader and writer without soakd: the run model from
 * hand-made records (absent fields tolerated, verify classes summed by
 * name, host records flattened, events, gaps and restarts), the charts'
 * min/max decimation, escaping, and secrets kept out of the page.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/hist.h"
#include "common/htmlchart.h"
#include "common/htmlreport.h"
#include "common/report.h"
#include "common/runmodel.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	assert_non_null(j);
	return j;
}

static void add(struct runmodel *m, const char *text)
{
	json_t *rec = parse(text);
	runmodel_add(m, rec);
	json_decref(rec);
}

/* An interval record of workload w, op read, with latencies of value_us. */
static void add_interval(struct runmodel *m, int second, uint64_t value_us, uint64_t n,
			 const char *extra)
{
	struct hist h;
	hist_init(&h);
	hist_record_n(&h, value_us * 1000, n);
	char *b64 = hist_to_base64(&h), buf[4096];
	hist_free(&h);
	snprintf(buf, sizeof(buf),
		 "{\"type\":\"interval\",\"workload\":\"w<1>\",\"start_ns\":%" PRIu64 ","
		 "\"end_ns\":%" PRIu64 ",\"target_ops\":%" PRIu64 ",\"ops\":{\"read\":{\"count\":%"
		 PRIu64 ",\"errors\":0,\"missed\":1,\"share\":1,\"latency\":\"%s\"%s}}}",
		 (uint64_t)second * 1000000000, (uint64_t)(second + 1) * 1000000000, n + 1, n, b64,
		 extra);
	free(b64);
	add(m, buf);
}

static char *render(struct runmodel *m, json_t *plan, int *ret)
{
	struct report_options o;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	report_default_options(&o);
	struct html_report_input in = { .m = m, .o = &o, .title = "t<&>", .source = "test",
					.plan = plan };
	*ret = html_report_write(f, &in);
	fclose(f);
	return text;
}

static void test_tolerant_reader(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(UINT64_C(2) * 1000000000);

	add(m, "{\"type\":\"start\",\"run\":\"r\",\"wall_ns\":1,\"run_ns\":0,\"version\":\"9.9\"}");
	/* Nothing but a workload and times; no ops, no kernel, no host. */
	add(m, "{\"type\":\"interval\",\"workload\":\"w<1>\",\"start_ns\":0,\"end_ns\":1000000000}");
	add_interval(m, 1, 100, 50, ",\"verify\":{\"checked\":50,\"corrupt\":1,\"novel_class\":2}");
	add_interval(m, 2, 200, 50, ",\"verify\":{\"checked\":50,\"corrupt\":2}");
	add(m, "{\"type\":\"gap\",\"run_ns\":3000000000,\"down_ns\":5000000000}");
	add(m, "{\"type\":\"host\",\"start_ns\":1000000000,\"end_ns\":2000000000,"
	       "\"cpu\":{\"iowait\":7.5},\"disks\":{\"sda\":{\"util_pct\":50}},\"odd\":\"text\"}");
	add(m, "{\"type\":\"event\",\"event\":\"drift\",\"workload\":\"w<1>\",\"op\":\"read\","
	       "\"metric\":\"p99\",\"start_ns\":2000000000,\"message\":\"<b>rose</b>\"}");
	/* The kernel's series: block per op, TCP as one (smoothed RTT). */
	add(m, "{\"type\":\"interval\",\"workload\":\"w<1>\",\"start_ns\":3000000000,"
	       "\"end_ns\":4000000000,\"kernel\":{\"blk\":{\"read\":{\"count\":3,"
	       "\"latency_us\":{\"p50\":10,\"p99\":20,\"p999\":30,\"max\":40}}},"
	       "\"tcp\":{\"srtt_samples\":5,\"latency_us\":{\"p50\":1,\"p99\":2,\"max\":3},"
	       "\"connects\":0,\"connect_us\":{}}}}");
	/* Certification and search records as daemon/run/certify.c and
	 * search.c write them (the real run is in report-html.sh). */
	add(m, "{\"type\":\"certify\",\"step\":1,\"of\":2,\"load\":\"1x\",\"load_x\":1,"
	       "\"rate\":100,\"start_ns\":0,\"end_ns\":5000000000,\"verdict\":\"pass\","
	       "\"why\":\"every judged op within its limits\",\"workloads\":[],"
	       "\"thresholds_ms\":[1,8],\"limits_pct\":[5,null]}");
	add(m, "{\"type\":\"certify\",\"step\":2,\"of\":2,\"load\":\"3x\",\"load_x\":3,"
	       "\"rate\":300,\"start_ns\":5000000000,\"end_ns\":10000000000,"
	       "\"verdict\":\"fail\",\"why\":\"read: 7.1% over 1 ms\",\"workloads\":[]}");
	add(m, "{\"type\":\"certify\",\"confirm_start\":1,\"load\":\"1x\",\"run_ns\":1}");
	add(m, "{\"type\":\"certify\",\"step\":1,\"of\":2,\"load\":\"1x\",\"rate\":100,"
	       "\"start_ns\":10000000000,\"end_ns\":13000000000,\"verdict\":\"pass\","
	       "\"confirm\":true,\"why\":\"held again\"}");
	add(m, "{\"type\":\"certify\",\"steps_passed\":1,\"steps\":2,\"answer\":\"1x\","
	       "\"rate\":100,\"why\":\"the highest load that passed\",\"thresholds_ms\":[1,8],"
	       "\"limits_pct\":[5,null]}");
	add(m, "{\"type\":\"search\",\"probe\":1,\"rate\":400,\"verdict\":\"above\","
	       "\"agreed\":3,\"windows\":3,\"p50_us\":900,\"p99_us\":5000,\"p999_us\":9000,"
	       "\"below_us\":2000,\"percentile\":99}");
	add(m, "{\"type\":\"search\",\"probe\":2,\"rate\":200,\"verdict\":\"below\","
	       "\"agreed\":2,\"windows\":3,\"p50_us\":100,\"p99_us\":1500,\"p999_us\":3000,"
	       "\"below_us\":2000,\"percentile\":99}");
	add(m, "{\"type\":\"search\",\"percentile\":99,\"below_us\":2000,\"probes\":2,"
	       "\"lo\":200,\"hi\":400,\"answer_rate\":200,\"why\":\"the highest rate below\"}");
	add(m, "{\"type\":\"mystery\"}");
	add(m, "{\"no_type\":1}");

	assert_string_equal(m->run, "r");
	assert_int_equal(m->n, 1);
	struct rm_op *o = runmodel_op(m->w[0], "read");
	assert_non_null(o);
	assert_int_equal(o->count, 100);
	assert_int_equal(o->missed, 2);
	assert_int_equal(o->n_verify, 3);
	uint64_t corrupt = 0, novel = 0;
	for (size_t i = 0; i < o->n_verify; i++) {
		if (strcmp(o->verify[i].name, "corrupt") == 0)
			corrupt = o->verify[i].value;
		if (strcmp(o->verify[i].name, "novel_class") == 0)
			novel = o->verify[i].value;
	}
	assert_int_equal(corrupt, 3);
	assert_int_equal(novel, 2);
	assert_non_null(runmodel_find(m->host, m->n_host, "cpu.iowait"));
	assert_non_null(runmodel_find(m->host, m->n_host, "disks.sda.util_pct"));
	assert_null(runmodel_find(m->host, m->n_host, "odd"));
	assert_non_null(runmodel_find(m->w[0]->kernel, m->w[0]->n_kernel, "blk.read.p99"));
	assert_non_null(runmodel_find(m->w[0]->kernel, m->w[0]->n_kernel, "tcp.srtt.p99"));
	assert_null(runmodel_find(m->w[0]->kernel, m->w[0]->n_kernel, "tcp.connect.p99"));
	assert_int_equal(m->n_gaps, 1);
	assert_int_equal(m->n_events, 1);
	assert_string_equal(m->restarts[0].version, "9.9");
	assert_int_equal(m->skipped, 1);   /* the record without a type */
	/* Slices of 2 s: [0,2) holds the 100 µs interval, [2,4) the 200 µs one. */
	assert_int_equal(runmodel_worst_slice(o), 1);

	int verdict;
	char *html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);    /* corrupt data fails it */
	assert_non_null(strstr(html, "data-verdict=\"FAIL\""));
	assert_non_null(strstr(html, "data-workload=\"w&lt;1&gt;\""));
	assert_non_null(strstr(html, "data-k=\"w&lt;1&gt;/read/verify.novel_class\">2<"));
	assert_non_null(strstr(html, "&lt;b&gt;rose&lt;/b&gt;"));
	assert_non_null(strstr(html, "data-event=\"drift\">at 2s: <b>drift of p99</b> w&lt;1&gt; read"));
	assert_null(strstr(html, "<b>rose"));
	assert_non_null(strstr(html, "id=\"host-cpu\""));
	assert_non_null(strstr(html, "data-k=\"certify/step/2/verdict\">fail</td>"));
	assert_non_null(strstr(html, "data-k=\"certify/step/1/verdict\">pass</td>"));
	assert_non_null(strstr(html, "data-k=\"certify/step/2/why\">read: 7.1% over 1 ms</td>"));
	assert_non_null(strstr(html, "id=\"certify-answer\" data-answer=\"1x\""));
	/* The confirmation is a row of its own; its start marker is none. */
	assert_non_null(strstr(html, "data-k=\"certify/confirm/1/step\">confirm 1</td>"));
	assert_non_null(strstr(html, "data-k=\"certify/confirm/1/hold\">3s</td>"));
	assert_null(strstr(html, "certify/step/0/"));
	assert_non_null(strstr(html, "≤ 5% over 1 ms, over 8 ms (no limit)"));
	/* The search: its answer, a chart of the curve and the table by rate. */
	assert_non_null(strstr(html, "data-answer-rate=\"200\""));
	assert_non_null(strstr(html, "id=\"search-curve\""));
	assert_non_null(strstr(html, "data-series=\"p99.9\""));
	const char *lo = strstr(html, "data-k=\"search/2/rate\">200.0<");
	const char *hi = strstr(html, "data-k=\"search/1/rate\">400.0<");
	assert_non_null(lo);
	assert_non_null(hi);
	assert_true(lo < hi);
	assert_non_null(strstr(html, "data-k=\"search/1/p999_us\">9000.0<"));
	assert_non_null(strstr(html, "data-series=\"w&lt;1&gt;/read/kernel.tcp.srtt.p99\""));
	assert_non_null(strstr(html, "data-series=\"w&lt;1&gt;/read/kernel.blk.read.p99\""));
	assert_non_null(strstr(html, "9.9"));
	/* No URL but the SVG namespace: nothing to fetch. */
	for (const char *p = strstr(html, "http://"); p; p = strstr(p + 1, "http://"))
		assert_true(strncmp(p, "http://www.w3.org/2000/svg", 26) == 0);
	assert_null(strstr(html, "https://"));
	free(html);
	runmodel_free(m);
}

static void test_secrets_never_shown(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(0);
	add_interval(m, 0, 100, 10, "");
	json_t *plan = parse("{\"run\":{\"name\":\"r\"},\"workloads\":[{\"name\":\"o\","
			     "\"secret_key\":\"hunter2\",\"credentials\":{\"file\":\"c\","
			     "\"session_token\":\"tok123\"},\"password\":\"pw\",\"Auth_Header\":\"authval9\"}]}");
	int verdict;
	char *html = render(m, plan, &verdict);
	assert_null(strstr(html, "hunter2"));
	assert_null(strstr(html, "tok123"));
	assert_null(strstr(html, "\"pw\""));
	assert_null(strstr(html, "authval9"));
	assert_non_null(strstr(html, "(not shown)"));
	/* The plan keeps its lines, one key a line. */
	assert_non_null(strstr(html, "<pre id=\"config\">{\n  &quot;run&quot;: {\n"));
	assert_true(html_secret_key("aws_secret_access_key"));
	assert_false(html_secret_key("block_size"));
	free(html);
	json_decref(plan);
	runmodel_free(m);
}

/* Clean intervals pass; one where soakd was late makes it INCONCLUSIVE,
 * as soakctl report says. */
static void test_verdicts(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(0);
	struct hist h;
	hist_init(&h);
	hist_record_n(&h, 50000, 100);
	char *b64 = hist_to_base64(&h), buf[2048];
	hist_free(&h);
#define INTERVAL "{\"type\":\"interval\",\"workload\":\"w\",\"start_ns\":%d000000000," \
		 "\"end_ns\":%d000000000,\"target_ops\":100,%s\"ops\":{\"read\":{" \
		 "\"count\":100,\"share\":1,\"latency\":\"%s\"}}}"
	snprintf(buf, sizeof(buf), INTERVAL, 1, 2, "", b64);
	add(m, buf);
	int verdict;
	char *html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 0);
	assert_non_null(strstr(html, "data-verdict=\"PASS\""));
	free(html);
	snprintf(buf, sizeof(buf), INTERVAL, 2, 3, "\"generator_late\":true,\"generator_late_ms\":120.5,", b64);
	add(m, buf);
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);
	assert_non_null(strstr(html, "data-verdict=\"INCONCLUSIVE\""));
	assert_non_null(strstr(html, "(120.5 ms)"));
	free(html);

	/* A workload that failed for soakd's own lateness (its reason says
	 * so): no verdict on the device, INCONCLUSIVE; failed for anything
	 * else, the run fails, whatever it measured, and soakd late in an
	 * interval of it days before changes nothing. */
	add(m, "{\"type\":\"state\",\"workload\":\"w\",\"state\":\"failed\",\"reason\":"
	       "\"max_lag 10s exceeded: soakd itself was stopped or starved for 11 s\"}");
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);
	assert_non_null(strstr(html, "data-verdict=\"INCONCLUSIVE\""));
	assert_non_null(strstr(html, "1 workload failed because soakd itself was late"));
	free(html);
	const char *failed = "{\"type\":\"state\",\"workload\":\"w\",\"state\":\"failed\","
			     "\"reason\":\"target deleted\"}";
	add(m, failed);
	html = render(m, NULL, &verdict);
	assert_non_null(strstr(html, "data-verdict=\"FAIL\""));
	free(html);
	runmodel_free(m);
	m = runmodel_new(0);
	snprintf(buf, sizeof(buf), INTERVAL, 1, 2, "", b64);
	add(m, buf);
	add(m, failed);
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);
	assert_non_null(strstr(html, "data-verdict=\"FAIL\""));
	assert_non_null(strstr(html, "1 workload failed"));
	free(html);
	runmodel_free(m);

	/* Nothing recorded: NO DATA, which is no pass. */
	m = runmodel_new(0);
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);
	assert_non_null(strstr(html, "data-verdict=\"NO DATA\""));
	free(html);
	runmodel_free(m);

	/* A dump holds totals, no slices: 50 µs everywhere cannot show a
	 * limit per slice kept (INCONCLUSIVE); 50 ms for all of it shows
	 * one broken (the worst slice is at least the whole run). */
	for (int slow = 0; slow < 2; slow++) {
		hist_init(&h);
		hist_record_n(&h, slow ? 50000000 : 50000, 100);
		char *lat = hist_to_base64(&h);
		hist_free(&h);
		snprintf(buf, sizeof(buf), "{\"run\":\"d\",\"workloads\":[{\"name\":\"w\","
			 "\"state\":\"finished\",\"active_s\":10,\"ops\":{\"read\":{"
			 "\"count\":100,\"latency_hist\":\"%s\"}}}]}", lat);
		free(lat);
		json_t *dump = parse(buf);
		m = runmodel_new(0);
		assert_int_equal(runmodel_add_dump(m, dump), 0);
		json_decref(dump);
		html = render(m, NULL, &verdict);
		assert_int_equal(verdict, 1);
		assert_non_null(strstr(html, slow ? "data-verdict=\"FAIL\""
					       : "data-verdict=\"INCONCLUSIVE\""));
		assert_non_null(strstr(html, "came with totals only"));
		free(html);
		runmodel_free(m);
	}
	free(b64);
}

/* A reload that replaced a workload: what its old definition measured
 * (failed reads, wrong data, 50 ms latencies) is not the new one's
 * verdict, as the text reports say; the series keep the whole run. */
static void test_reload_starts_over(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(UINT64_C(1000000000));
	struct hist slow, fast;
	hist_init(&slow);
	hist_init(&fast);
	hist_record_n(&slow, 50000000, 100);
	hist_record_n(&fast, 50000, 100);
	char *b_slow = hist_to_base64(&slow), *b_fast = hist_to_base64(&fast), buf[2048];
	hist_free(&slow);
	hist_free(&fast);
#define RELOAD_IV "{\"type\":\"interval\",\"workload\":\"w\",\"start_ns\":%d000000000," \
		  "\"end_ns\":%d000000000,\"target_ops\":100,\"ops\":{\"read\":{" \
		  "\"count\":100,\"errors\":%d,\"share\":1,\"latency\":\"%s\"%s}}}"
	for (int t = 1; t < 4; t++) {
		snprintf(buf, sizeof(buf), RELOAD_IV, t, t + 1, 5, b_slow,
			 ",\"verify\":{\"corrupt\":1}");
		add(m, buf);
	}
	int verdict;
	char *html = render(m, NULL, &verdict);
	assert_non_null(strstr(html, "data-verdict=\"FAIL\""));
	free(html);
	add(m, "{\"type\":\"reload\",\"run_ns\":4000000000,\"replaced\":[\"w\"]}");
	for (int t = 4; t < 6; t++) {
		snprintf(buf, sizeof(buf), RELOAD_IV, t, t + 1, 0, b_fast,
			 ",\"verify\":{\"corrupt\":0,\"checked\":100}");
		add(m, buf);
	}
	/* The old definition's slices no longer count against the budget. */
	assert_int_equal(m->slice_entries,
			 runmodel_op(runmodel_workload(m, "w"), "read")->n_slices);
	const struct rm_op *o = runmodel_op(runmodel_workload(m, "w"), "read");
	assert_int_equal(o->count, 200);
	assert_int_equal(o->errors, 0);
	assert_int_equal(o->n_verify, 2);
	for (size_t k = 0; k < o->n_verify; k++)
		assert_int_equal(o->verify[k].value, strcmp(o->verify[k].name, "checked") ? 0 : 200);
	assert_true(hist_percentile(o->lat, 100) < 100000);
	assert_int_equal(o->s_p99->n, 5);
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 0);
	assert_non_null(strstr(html, "data-verdict=\"PASS\""));
	free(html);
	/* Replaced again, by a write-only definition, at 50 ms: the read op
	 * its old definition left empty does not leave the writes unjudged. */
	add(m, "{\"type\":\"reload\",\"run_ns\":6000000000,\"replaced\":[\"w\"]}");
	snprintf(buf, sizeof(buf), "{\"type\":\"interval\",\"workload\":\"w\",\"start_ns\":"
		 "6000000000,\"end_ns\":7000000000,\"target_ops\":100,\"ops\":{\"write\":{"
		 "\"count\":100,\"share\":1,\"latency\":\"%s\"}}}", b_slow);
	add(m, buf);
	html = render(m, NULL, &verdict);
	assert_int_equal(verdict, 1);
	assert_non_null(strstr(html, "data-verdict=\"FAIL\""));
	free(html);
#undef RELOAD_IV
	free(b_slow);
	free(b_fast);
	runmodel_free(m);
}

/* A week of 1 s intervals at 100 µs with one interval at 1 s: the chart's
 * one column that holds it still reaches the top. */
static void test_decimation_keeps_maxima(void **state)
{
	(void)state;
	struct rm_series s = { .name = "p99" };
	size_t n = 7 * 86400;
	s.pts = calloc(n, sizeof(*s.pts));
	assert_non_null(s.pts);
	for (size_t i = 0; i < n; i++)
		s.pts[i] = (struct rm_point){ (double)i, i + 1.0, i == 123457 ? 1e6f : 100.0f,
					      i == 123457 ? 1e6f : 100.0f };
	s.n = s.cap = n;
	struct chart_line line = { &s, "p99", "w/read/p99", "#000", false };
	struct chart c = { .id = "x", .title = "t", .desc = "d", .unit = "µs", .log_y = true,
			   .t_end = (double)n };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	chart_time(f, &c, &line, 1);
	fclose(f);
	const char *d = strstr(text, "data-series=\"w/read/p99\"");
	assert_non_null(d);
	d = strstr(d, " d=\"");
	assert_non_null(d);
	/* Log axis 100 µs .. 10 s over y 220 .. 12: 1 s is at y 53.6, where
	 * the spike's column reaches. */
	assert_non_null(strstr(d, " 53.6"));
	/* One point per pixel column at most: a bounded path. */
	assert_true(strlen(d) < 60000);
	free(text);
	free(s.pts);
}

/* A long run's series stays bounded; the one slow interval stays in it. */
static void test_series_bounded(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(0);
	/* 100,000 one-second intervals, read only by their numbers here. */
	json_t *rec = parse("{\"type\":\"host\",\"start_ns\":0,\"end_ns\":1,\"cpu\":{\"iowait\":1}}");
	for (int i = 0; i < 100000; i++) {
		json_object_set_new(rec, "start_ns", json_integer((json_int_t)i * 1000000000));
		json_object_set_new(rec, "end_ns", json_integer((json_int_t)(i + 1) * 1000000000));
		json_object_set_new(json_object_get(rec, "cpu"), "iowait",
				    json_real(i == 77777 ? 99.0 : 1.0 + (i % 7)));
		assert_int_equal(runmodel_add(m, rec), 0);
	}
	json_decref(rec);
	const struct rm_series *s = runmodel_find(m->host, m->n_host, "cpu.iowait");
	assert_non_null(s);
	assert_true(s->n <= RM_SERIES_POINTS && s->n > RM_SERIES_POINTS / 4);
	float top = 0, bottom = 1000;
	double covered = 0;
	for (size_t i = 0; i < s->n; i++) {
		top = s->pts[i].vmax > top ? s->pts[i].vmax : top;
		bottom = s->pts[i].v < bottom ? s->pts[i].v : bottom;
		covered += s->pts[i].t1 - s->pts[i].t0;
		if (i)   /* no hole, no overlap */
			assert_true(fabs(s->pts[i].t0 - s->pts[i - 1].t1) < 1e-6);
	}
	assert_true(fabs(top - 99.0f) < 1e-3);
	assert_true(fabs(bottom - 1.0f) < 1e-3);
	assert_true(fabs(covered - 100000) < 1e-3);
	runmodel_free(m);
}

/* Records that jump far ahead in a log (copied from elsewhere, damaged)
 * cost slices of 32 bytes each up to their index, per op: 63 workloads of
 * 16 ops at slice 99999 took 3 GB.  The model keeps a bounded number; the
 * intervals past it stay in their ops' totals. */
static void test_slices_bounded(void **state)
{
	(void)state;
	struct runmodel *m = runmodel_new(0);
	char text[512];
	for (int w = 0; w < 63; w++)
		for (int o = 0; o < 16; o++) {
			snprintf(text, sizeof(text),
				 "{\"type\":\"interval\",\"workload\":\"w%d\",\"start_ns\":%llu,"
				 "\"end_ns\":%llu,\"target_ops\":1,\"ops\":{\"op%d\":{\"count\":1,"
				 "\"share\":1}}}", w, 99999ULL * 3600000000000ULL,
				 99999ULL * 3600000000000ULL + 1000000000ULL, o);
			json_t *rec = parse(text);
			assert_int_equal(runmodel_add(m, rec), 0);
			json_decref(rec);
		}
	assert_true(m->slice_entries <= RM_MAX_SLICE_ENTRIES);
	/* Past RM_MAX_WORKLOADS (a long run through reloads can name more)
	 * a record is left out, not taken for a lack of memory. */
	json_t *more = parse("{\"type\":\"interval\",\"workload\":\"w99\",\"start_ns\":0,"
			     "\"end_ns\":1000000000,\"ops\":{\"read\":{\"count\":1}}}");
	assert_int_equal(runmodel_add(m, more), 0);     /* the 64th */
	json_object_set_new(more, "workload", json_string("w100"));
	assert_int_equal(runmodel_add(m, more), -EINVAL);
	json_decref(more);
	assert_int_equal(m->n, RM_MAX_WORKLOADS);
	const struct rm_op *last = runmodel_op(runmodel_workload(m, "w62"), "op15");
	assert_non_null(last);
	assert_int_equal(last->count, 1);
	runmodel_free(m);
}

static void test_escaping(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	html_text(f, "a<b>&\"c'\x01\x7f");
	fclose(f);
	assert_string_equal(text, "a&lt;b&gt;&amp;&quot;c&#39;");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tolerant_reader),
		cmocka_unit_test(test_secrets_never_shown),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_reload_starts_over),
		cmocka_unit_test(test_decimation_keeps_maxima),
		cmocka_unit_test(test_series_bounded),
		cmocka_unit_test(test_slices_bounded),
		cmocka_unit_test(test_escaping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
