// SPDX-License-Identifier: GPL-2.0-only
/* The interval log's framing and reading, and results computed from it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "hist.h"
#include "rundump.h"
#include "runlog.h"

static char dir[] = "/tmp/test-runlog.XXXXXX";

static char *b64_of(uint64_t value_ns, uint64_t n)
{
	struct hist *h = hist_new();
	hist_record_n(h, value_ns, n);
	char *t = hist_to_base64(h);
	hist_delete(h);
	return t;
}

/* An interval record of workload w: `count` reads at 100 us. */
static json_t *interval(const char *w, uint64_t start_s, uint64_t count, uint64_t wall_base_s)
{
	char *lat = b64_of(100000, count);
	json_t *rec = json_pack(
		"{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:I,s:I,s:f,s:s,s:s}}}",
		"type", "interval", "workload", w,
		"start_ns", (json_int_t)(start_s * 1000000000), "end_ns",
		(json_int_t)((start_s + 1) * 1000000000),
		"wall_start_ns", (json_int_t)((wall_base_s + start_s) * 1000000000),
		"wall_end_ns", (json_int_t)((wall_base_s + start_s + 1) * 1000000000),
		"sched_ns", (json_int_t)((start_s + 1) * 1000000000), "lag_max_ns", (json_int_t)0,
		"target_ops", (double)count, "ops", "read", "count", (json_int_t)count,
		"errors", (json_int_t)0, "bytes", (json_int_t)(count * 4096), "share", 1.0,
		"latency", lat, "service", lat);
	free(lat);
	return rec;
}

/* Appends rec, framed, to f; takes rec. */
static void put_record(FILE *f, json_t *rec)
{
	char *line = runlog_frame(rec);

	assert_non_null(line);
	fputs(line, f);
	free(line);
	json_decref(rec);
}

/* Writes a log of n one-second intervals of `count` ops each. */
static char *write_log(const char *name, unsigned n, uint64_t count, uint64_t wall_base_s,
		       const char *tail)
{
	char *path;
	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(RUNLOG_HEADER, f);
	json_t *start = json_pack("{s:s,s:s}", "type", "start", "run", "r");
	char *line = runlog_frame(start);
	fputs(line, f);
	free(line);
	json_decref(start);
	for (unsigned i = 0; i < n; i++)
		put_record(f, interval("w", i, count, wall_base_s));
	if (tail)
		fputs(tail, f);
	fclose(f);
	return path;
}

static unsigned count_records(const char *path, struct runlog_reader **ret_reader)
{
	struct runlog_reader *r;
	json_t *rec;
	unsigned n = 0;
	assert_int_equal(runlog_open(path, &r), 0);
	while (runlog_next(r, &rec) > 0) {
		n++;
		json_decref(rec);
	}
	*ret_reader = r;
	return n;
}

/* A line longer than RUNLOG_MAX_LINE (a damaged or foreign log) is read
 * past, never held: getline held all of a 4 GiB one.  Lines with NUL bytes
 * (zeroes a filesystem shows after a crash) count their every byte: the
 * offsets after them, by which a resume cuts a torn tail, stay exact. */
static void test_long_and_nul_lines(void **state)
{
	(void)state;
	char *path;
	assert_true(asprintf(&path, "%s/long.log", dir) > 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(RUNLOG_HEADER, f);
	put_record(f, interval("w", 0, 10, 1000));
	/* A line of 1 GiB (sparse: zeroes, no disk). */
	assert_int_equal(fseeko(f, (off_t)1 << 30, SEEK_CUR), 0);
	fputc('\n', f);
	fwrite("ab\0\0\0cd\n", 1, 8, f);
	put_record(f, interval("w", 1, 10, 1000));
	fclose(f);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);

	struct runlog_reader *r;
	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	assert_int_equal(count_records(path, &r), 2);
	getrusage(RUSAGE_SELF, &after);
	assert_int_equal(runlog_corrupt(r), 2);
	assert_false(runlog_torn(r));
	assert_int_equal(runlog_good_offset(r), (uint64_t)st.st_size);
	/* Held: the 64 MiB limit at most (and what a sanitizer keeps of
	 * the buffers grown to it), not the line's 1 GiB. */
	assert_true(after.ru_maxrss - before.ru_maxrss < 512 * 1024);
	runlog_close(r);
	unlink(path);
	free(path);
}

static void test_round_trip(void **state)
{
	(void)state;
	char *path = write_log("a.log", 5, 100, 1000, NULL);
	struct runlog_reader *r;
	assert_int_equal(count_records(path, &r), 6);
	assert_false(runlog_torn(r));
	assert_int_equal(runlog_corrupt(r), 0);
	runlog_close(r);
	free(path);
}

/* A crash mid-write leaves a cut-short last line: dropped, not an error. */
static void test_torn_last_record(void **state)
{
	(void)state;
	char *path = write_log("torn.log", 3, 100, 1000, "1234abcd {\"type\":\"inter");
	struct runlog_reader *r;
	assert_int_equal(count_records(path, &r), 4);
	assert_true(runlog_torn(r));
	assert_int_equal(runlog_corrupt(r), 0);
	runlog_close(r);
	free(path);
}

/* A damaged record in the middle is skipped and counted; the rest reads. */
static void test_corrupt_middle(void **state)
{
	(void)state;
	char *path = write_log("bad.log", 4, 100, 1000, NULL);
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	/* Flip a digit inside the third line's JSON. */
	char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf), f);
	char *third = buf;
	for (int i = 0; i < 3; i++)
		third = strchr(third, '\n') + 1;
	char *digit = strstr(third, "\"count\":100") + 9;
	*digit = '9';
	rewind(f);
	fwrite(buf, 1, n, f);
	fclose(f);
	struct runlog_reader *r;
	assert_int_equal(count_records(path, &r), 4);
	assert_int_equal(runlog_corrupt(r), 1);
	assert_false(runlog_torn(r));
	runlog_close(r);
	free(path);
}

static void test_wrong_header(void **state)
{
	(void)state;
	char *path;
	assert_true(asprintf(&path, "%s/nothdr.log", dir) > 0);
	FILE *f = fopen(path, "w");
	fputs("not a log\n", f);
	fclose(f);
	struct runlog_reader *r;
	assert_int_equal(runlog_open(path, &r), -EPROTO);
	free(path);
}

/* The same reader over a buffer (what the fuzz target uses). */
static void test_open_memory(void **state)
{
	(void)state;
	char *path = write_log("mem.log", 2, 100, 1000, "1234abcd {\"type\":\"inter");
	char text[65536];
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);

	struct runlog_reader *r;
	json_t *rec;
	unsigned records = 0;
	assert_int_equal(runlog_open_memory(text, n, &r), 0);
	while (runlog_next(r, &rec) > 0) {
		records++;
		json_decref(rec);
	}
	assert_int_equal(records, 3);
	assert_true(runlog_torn(r));
	assert_true(runlog_good_offset(r) < n);
	runlog_close(r);

	assert_int_equal(runlog_open_memory(text, 0, &r), -EPROTO);
	assert_int_equal(runlog_open_memory(text, sizeof(RUNLOG_HEADER) - 2, &r), -EPROTO);
	assert_int_equal(runlog_open_memory("not a log, but long enough\n", 27, &r), -EPROTO);
	free(path);
}

/* Bisection lands before the first interval ending at or after the time
 * asked for (skipping most of the log), also over a damaged line, and
 * never past a record the dump needs. */
static void test_seek_run_time(void **state)
{
	(void)state;
	const unsigned n = 20000;  /* ~4 MB: many bisection steps */
	char *path = write_log("seek.log", n, 50, 1000, NULL);
	/* Damage a line in the middle: the bisection steps over it. */
	FILE *f = fopen(path, "r+");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, size / 3, SEEK_SET);
	fputs("garbage", f);
	fclose(f);

	const uint64_t wants[] = { 0, 1, 7000, 14321, 19999, 25000 };
	for (size_t k = 0; k < sizeof(wants) / sizeof(wants[0]); k++) {
		uint64_t want = wants[k] * 1000000000;
		struct runlog_reader *r;
		json_t *rec;
		assert_int_equal(runlog_open(path, &r), 0);
		assert_int_equal(runlog_seek_run_time(r, want), 0);
		unsigned read = 0, wanted = 0;
		uint64_t first_end = UINT64_MAX;
		while (runlog_next(r, &rec) > 0) {
			json_t *end = json_object_get(rec, "end_ns");
			if (end) {
				uint64_t e = (uint64_t)json_integer_value(end);
				if (first_end == UINT64_MAX)
					first_end = e;
				wanted += e >= want;
			}
			read++;
			json_decref(rec);
		}
		/* Every interval ending at or after want that a whole read
		 * finds (the damaged one is lost either way) is still there... */
		struct runlog_reader *all;
		unsigned expect = 0;
		assert_int_equal(runlog_open(path, &all), 0);
		while (runlog_next(all, &rec) > 0) {
			json_t *end = json_object_get(rec, "end_ns");
			expect += end && (uint64_t)json_integer_value(end) >= want;
			json_decref(rec);
		}
		runlog_close(all);
		assert_int_equal(wanted, expect);
		/* ...and little before it was read (one linear stretch). */
		assert_true(read <= wanted + 1 + 2000);
		if (first_end != UINT64_MAX && wants[k] > 2000 && wants[k] <= n)
			assert_true(first_end + 2000 * UINT64_C(1000000000) >= want);
		runlog_close(r);
	}
	free(path);
}

static json_t *dump(const char *path, enum rundump_format format, struct rundump_filter *f)
{
	struct rundump *d = rundump_new(format, f);
	assert_int_equal(rundump_add_log(d, path, NULL), 0);
	json_t *out = rundump_finish(d);
	rundump_free(d);
	return out;
}

static void test_dump_filters(void **state)
{
	(void)state;
	char *path = write_log("d.log", 10, 1000, 1000, NULL);
	struct rundump_filter f = { 0 };
	json_t *j = dump(path, RUNDUMP_JSON, &f);
	json_t *read = json_object_get(json_object_get(json_array_get(json_object_get(j, "workloads"), 0),
						       "ops"), "read");
	assert_int_equal(json_integer_value(json_object_get(read, "count")), 10000);
	assert_true(json_real_value(json_object_get(read, "rate_achieved")) == 1000.0);
	json_decref(j);

	f.since_ns = UINT64_C(2) * 1000000000;
	f.until_ns = UINT64_C(5) * 1000000000;
	j = dump(path, RUNDUMP_JSON, &f);
	read = json_object_get(json_object_get(json_array_get(json_object_get(j, "workloads"), 0),
					       "ops"), "read");
	assert_int_equal(json_integer_value(json_object_get(read, "count")), 3000);
	json_decref(j);

	/* CSV per slice of 4 s: rows for [0,4), [4,8), [8,10). */
	struct rundump_filter s = { .slice_ns = UINT64_C(4) * 1000000000 };
	j = dump(path, RUNDUMP_CSV, &s);
	const char *csv = json_string_value(json_object_get(j, "csv"));
	assert_non_null(strstr(csv, "w,read,0.000,4.000,4000,"));
	assert_non_null(strstr(csv, "w,read,8.000,10.000,2000,"));
	json_decref(j);

	/* HDR: a line per interval, tagged workload.op. */
	struct rundump_filter none = { 0 };
	j = dump(path, RUNDUMP_HDR, &none);
	const char *hdr = json_string_value(json_object_get(j, "hdr"));
	assert_non_null(strstr(hdr, "#[StartTime: 1000.000"));
	assert_non_null(strstr(hdr, "Tag=w.read,9.000,1.000,"));
	json_decref(j);
	free(path);
}

/* HDR lines by slice are written as each workload leaves its slice, not in
 * time order: the base is the run's start, so that a workload whose slice
 * is written later but began earlier keeps its own start time. */
static void test_hdr_base_is_run_start(void **state)
{
	(void)state;
	char *path;
	assert_true(asprintf(&path, "%s/hdrbase.log", dir) > 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(RUNLOG_HEADER, f);
	put_record(f, json_pack("{s:s,s:s,s:I}", "type", "start", "run", "r", "wall_ns",
				(json_int_t)(UINT64_C(1000) * 1000000000)));
	put_record(f, interval("b", 0, 10, 1000));
	for (uint64_t t = 2; t < 6; t++)
		put_record(f, interval("a", t, 10, 1000));
	fclose(f);
	struct rundump_filter s = { .slice_ns = UINT64_C(4) * 1000000000 };
	json_t *j = dump(path, RUNDUMP_HDR, &s);
	const char *hdr = json_string_value(json_object_get(j, "hdr"));
	assert_non_null(hdr);
	assert_non_null(strstr(hdr, "#[BaseTime: 1000.000"));
	assert_non_null(strstr(hdr, "Tag=a.read,2.000,"));
	assert_non_null(strstr(hdr, "Tag=b.read,0.000,"));
	assert_non_null(strstr(hdr, "Tag=a.read,4.000,"));
	/* a's first slice is written first, b's at the end. */
	assert_true(strstr(hdr, "Tag=a.read,2.000,") < strstr(hdr, "Tag=b.read,"));
	json_decref(j);
	free(path);
}

/* A dump read from the log (--run-dir, merge, a filtered dump) has what
 * the intervals recorded of the kernel, per workload, and each target's
 * share of the rate target, as the live dump gives them: the kernel
 * section was always empty and every target's rate_target 0. */
static void test_dump_kernel_and_targets(void **state)
{
	(void)state;
	struct hist *lat = hist_new();
	assert_non_null(lat);
	for (uint64_t v = 1; v <= 100; v++)
		hist_record(lat, v * 1000);     /* 1..100 us */
	char *text = hist_to_base64(lat);
	assert_non_null(text);
	struct rundump_filter f = { 0 };
	struct rundump *d = rundump_new(RUNDUMP_JSON, &f);
	for (int k = 0; k < 2; k++) {
		uint64_t start = (uint64_t)k * 1000000000, end = start + 1000000000;
		json_t *rec = json_pack(
			"{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:f}},"
			"s:[{s:s,s:{s:{s:I}}},{s:s,s:{s:{s:I}}}],"
			"s:{s:{s:{s:I,s:I,s:I,s:s}},s:{s:I,s:I,s:I}}}",
			"type", "interval", "workload", "w", "start_ns", (json_int_t)start,
			"end_ns", (json_int_t)end, "wall_start_ns", (json_int_t)start,
			"wall_end_ns", (json_int_t)end, "target_ops", 1000.0,
			"ops", "read", "count", (json_int_t)700, "share", 0.7,
			"targets", "path", "a", "ops", "read", "count", (json_int_t)350,
			"path", "b", "ops", "read", "count", (json_int_t)350,
			"kernel", "blk", "read", "count", (json_int_t)100, "errors", (json_int_t)1,
			"bytes", (json_int_t)409600, "latency_hist", text,
			"tcp", "srtt_samples", (json_int_t)5, "connects", (json_int_t)2,
			"retransmits", (json_int_t)1);
		assert_non_null(rec);
		assert_int_equal(rundump_add(d, rec), 0);
		json_decref(rec);
	}
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *w = json_array_get(json_object_get(j, "workloads"), 0);
	json_t *read = json_object_get(json_object_get(w, "ops"), "read");
	assert_true(json_real_value(json_object_get(read, "rate_target")) == 700.0);
	for (size_t t = 0; t < 2; t++) {
		json_t *tread = json_object_get(
			json_object_get(json_array_get(json_object_get(w, "targets"), t), "ops"), "read");
		assert_true(json_real_value(json_object_get(tread, "rate_target")) == 350.0);
		assert_true(json_real_value(json_object_get(tread, "rate_achieved")) == 350.0);
	}
	json_t *kblk = json_object_get(json_object_get(json_object_get(w, "kernel"), "blk"), "read");
	assert_int_equal(json_integer_value(json_object_get(kblk, "count")), 200);
	assert_int_equal(json_integer_value(json_object_get(kblk, "errors")), 2);
	assert_int_equal(json_integer_value(json_object_get(kblk, "bytes")), 819200);
	double p99 = json_real_value(json_object_get(json_object_get(kblk, "latency_us"), "p99"));
	assert_true(p99 >= 98 && p99 <= 101);
	struct hist *got = hist_new();
	assert_non_null(got);
	assert_int_equal(hist_from_base64(got, json_string_value(json_object_get(kblk, "latency_hist"))),
			 0);
	assert_int_equal(got->count, 200);
	json_t *ktcp = json_object_get(json_object_get(w, "kernel"), "tcp");
	assert_int_equal(json_integer_value(json_object_get(ktcp, "connects")), 4);
	assert_int_equal(json_integer_value(json_object_get(ktcp, "retransmits")), 2);
	assert_int_equal(json_integer_value(json_object_get(ktcp, "srtt_samples")), 10);
	json_decref(j);
	hist_delete(got);
	hist_delete(lat);
	free(text);
}

/* Numbers of a log from elsewhere, or damaged: a target of 1e308 made
 * every rate infinite and the op vanished from the JSON; counts of 2^62
 * wrapped to negative, errors to exactly 0. */
static void test_dump_hostile_numbers(void **state)
{
	(void)state;
	struct rundump_filter f = { 0 };
	struct rundump *d = rundump_new(RUNDUMP_JSON, &f);
	for (int k = 0; k < 4; k++) {
		uint64_t start = (uint64_t)k * 1000000000, end = start + 1000000000;
		json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:I,s:f}}}", "type",
					"interval", "workload", "w", "start_ns", (json_int_t)start,
					"end_ns", (json_int_t)end, "wall_start_ns", (json_int_t)start,
					"wall_end_ns", (json_int_t)end, "target_ops", 1e308, "ops",
					"read", "count", (json_int_t)1 << 62, "errors",
					(json_int_t)1 << 62, "share", 10.0);
		assert_non_null(rec);
		assert_int_equal(rundump_add(d, rec), 0);
		json_decref(rec);
	}
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *read = json_object_get(
		json_object_get(json_array_get(json_object_get(j, "workloads"), 0), "ops"), "read");
	assert_non_null(read);
	assert_int_equal(json_integer_value(json_object_get(read, "count")), INT64_MAX);
	assert_int_equal(json_integer_value(json_object_get(read, "errors")), INT64_MAX);
	double rate = json_real_value(json_object_get(read, "rate_target"));
	assert_true(rate > 0 && rate < 1e16);
	json_decref(j);
}

/* Names from a log of elsewhere: a CSV cell a spreadsheet runs as a
 * formula, a newline that forges a row, a comma that ends a Tag=. */
static void test_dump_hostile_names(void **state)
{
	(void)state;
	const enum rundump_format formats[] = { RUNDUMP_CSV, RUNDUMP_HDR };
	for (size_t k = 0; k < 2; k++) {
		struct rundump_filter f = { 0 };
		struct rundump *d = rundump_new(formats[k], &f);
		json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:f,s:s}}}", "type",
					"interval", "workload", "=HYPERLINK(\"http://x/\",\"y\")",
					"start_ns", (json_int_t)0, "end_ns", (json_int_t)1000000000,
					"wall_start_ns", (json_int_t)1000000000000, "wall_end_ns",
					(json_int_t)1001000000000, "target_ops", 10.0, "ops",
					"read\nevil,1,2", "count", (json_int_t)10, "share", 1.0,
					"latency", "");
		assert_non_null(rec);
		json_object_del(json_object_get(json_object_get(rec, "ops"), "read\nevil,1,2"), "latency");
		assert_int_equal(rundump_add(d, rec), 0);
		json_decref(rec);
		json_t *j = rundump_finish(d);
		rundump_free(d);
		const char *text = json_string_value(json_object_get(j, k == 0 ? "csv" : "hdr"));
		assert_non_null(text);
		assert_null(strstr(text, "\nevil"));
		if (k == 0)
			assert_non_null(strstr(text, "\"'=HYPERLINK(\"\"http://x/\"\",\"\"y\"\")\",\"read_evil,1,2\","));
		else
			assert_non_null(strstr(text, "Tag=_HYPERLINK__http___x____y__.read_evil_1_2,"));
		json_decref(j);
	}
	/* The text report prints the names it is given: no escape sequence
	 * reaches the terminal. */
	struct rundump_filter f = { 0 };
	struct rundump *d = rundump_new(RUNDUMP_REPORT, &f);
	json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:f}}}", "type", "interval",
				"workload", "w\x1b]52;c;eA==\x07\x1b[2J\xc2\x9b" "1;1H", "start_ns",
				(json_int_t)0, "end_ns", (json_int_t)1000000000, "wall_start_ns",
				(json_int_t)0, "wall_end_ns", (json_int_t)1000000000, "target_ops", 10.0,
				"ops", "read", "count", (json_int_t)10, "share", 1.0);
	assert_non_null(rec);
	assert_int_equal(rundump_add(d, rec), 0);
	json_decref(rec);
	json_t *j = rundump_finish(d);
	rundump_free(d);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "workloads"), 0), "name")),
			    "w?]52;c;eA==??[2J?1;1H");
	json_decref(j);
}

/* A report read from a log carries each op's failed, missed and wrong
 * reads over the report's span, as the daemon's does: a device's wrong
 * blocks are in its corrupt count (not counted twice), an object's lost
 * and stale reads are their own. */
static void test_report_counts(void **state)
{
	(void)state;
	/* Two slices: the counts add up over them. */
	struct rundump_filter f = { .slice_ns = 1000000000 };
	struct rundump *d = rundump_new(RUNDUMP_REPORT, &f);
	for (int i = 0; i < 2; i++) {
		json_t *rec = json_pack(
			"{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:I,s:I,s:I,s:f,s:{s:I,s:I,s:I}},"
			"s:{s:I,s:I,s:f,s:{s:I,s:I,s:I}}}}",
			"type", "interval", "workload", "w", "start_ns", (json_int_t)i * 1000000000,
			"end_ns", (json_int_t)(i + 1) * 1000000000, "wall_start_ns", (json_int_t)0,
			"wall_end_ns", (json_int_t)1000000000, "target_ops", 10.0,
			"ops", "read", "count", (json_int_t)10, "errors", (json_int_t)2, "missed",
			(json_int_t)1, "corrupt", (json_int_t)3, "share", 0.5, "verify", "checked",
			(json_int_t)10, "torn", (json_int_t)1, "stale", (json_int_t)2,
			"get", "count", (json_int_t)10, "errors", (json_int_t)0, "share", 0.5,
			"verify", "checked", (json_int_t)10, "lost", (json_int_t)1, "stale",
			(json_int_t)4);
		assert_non_null(rec);
		assert_int_equal(rundump_add(d, rec), 0);
		json_decref(rec);
	}
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *ops = json_object_get(json_array_get(json_object_get(j, "workloads"), 0), "ops");
	json_t *read = json_object_get(ops, "read"), *get = json_object_get(ops, "get");
	assert_int_equal(json_integer_value(json_object_get(read, "errors")), 4);
	assert_int_equal(json_integer_value(json_object_get(read, "missed")), 2);
	assert_int_equal(json_integer_value(json_object_get(read, "wrong_data")), 6);
	assert_int_equal(json_integer_value(json_object_get(get, "errors")), 0);
	assert_int_equal(json_integer_value(json_object_get(get, "wrong_data")), 10);
	assert_int_equal(json_array_size(json_object_get(read, "slices")), 2);
	json_decref(j);
}

/* A reload that replaced a workload starts its report over, as soakd's
 * own report does: the old definition's slices and failures are not the
 * new one's. */
static void test_report_after_reload(void **state)
{
	(void)state;
	struct rundump_filter f = { .slice_ns = 1000000000 };
	struct rundump *d = rundump_new(RUNDUMP_REPORT, &f);
	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			json_t *rl = json_pack("{s:s,s:I,s:[s]}", "type", "reload", "run_ns",
					       (json_int_t)1000000000, "replaced", "w");
			assert_int_equal(rundump_add(d, rl), 0);
			json_decref(rl);
		}
		json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:{s:{s:I,s:I,s:f}}}",
					"type", "interval", "workload", "w", "start_ns",
					(json_int_t)i * 1000000000, "end_ns",
					(json_int_t)(i + 1) * 1000000000, "wall_start_ns", (json_int_t)0,
					"wall_end_ns", (json_int_t)1000000000, "target_ops", 10.0,
					"ops", "read", "count", (json_int_t)10, "errors",
					(json_int_t)(i == 0 ? 3 : 0), "share", 1.0);
		assert_int_equal(rundump_add(d, rec), 0);
		json_decref(rec);
	}
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *read = json_object_get(json_object_get(json_array_get(json_object_get(j, "workloads"),
								      0), "ops"), "read");
	assert_int_equal(json_integer_value(json_object_get(read, "errors")), 0);
	assert_int_equal(json_array_size(json_object_get(read, "slices")), 1);
	json_decref(j);
}

/* A CSV row's host columns are the host's within the dump's window: the
 * records a reader goes on to read past --until are not the last row's. */
static void test_csv_host_window(void **state)
{
	(void)state;
	char *tail = NULL;
	size_t len = 0;
	FILE *t = open_memstream(&tail, &len);
	for (unsigned i = 0; i < 10; i++) {
		json_t *rec = json_pack("{s:s,s:I,s:I,s:{s:f}}", "type", "host",
					"start_ns", (json_int_t)i * 1000000000,
					"end_ns", (json_int_t)(i + 1) * 1000000000,
					"cpu", "user", (double)i);
		put_record(t, rec);
	}
	fclose(t);
	char *path = write_log("h.log", 10, 1000, 1000, tail);
	struct rundump_filter f = { .until_ns = UINT64_C(5) * 1000000000,
				    .slice_ns = UINT64_C(5) * 1000000000 };
	json_t *j = dump(path, RUNDUMP_CSV, &f);
	const char *csv = json_string_value(json_object_get(j, "csv"));
	const char *row = strstr(csv, "w,read,0.000,5.000,5000,");
	assert_non_null(row);
	/* host_cpu_user_pct is the row's 38th column: the 4 s record's. */
	for (int col = 1; col < 38 && row; col++)
		row = strchr(row, ',') + 1;
	assert_non_null(row);
	assert_int_equal(strncmp(row, "4.00,", 5), 0);
	json_decref(j);
	free(path);
	free(tail);
}

/* Two hosts, the second started 3 s later: only the 7 s both ran count,
 * and their rates add. */
static void test_merge_overlap(void **state)
{
	(void)state;
	char *a = write_log("a.log", 10, 1000, 1000, NULL);
	char *b = write_log("b.log", 10, 500, 1003, NULL);
	uint64_t from_a, to_a, from_b, to_b;
	assert_int_equal(rundump_log_span(a, &from_a, &to_a, NULL), 0);
	assert_int_equal(rundump_log_span(b, &from_b, &to_b, NULL), 0);
	struct rundump_filter f = { .wall_from_ns = from_b, .wall_to_ns = to_a };
	struct rundump *d = rundump_new(RUNDUMP_JSON, &f);
	assert_int_equal(rundump_add_log(d, a, NULL), 0);
	assert_int_equal(rundump_add_log(d, b, NULL), 0);
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *read = json_object_get(json_object_get(json_array_get(json_object_get(j, "workloads"), 0),
						       "ops"), "read");
	assert_int_equal(json_integer_value(json_object_get(read, "count")), 7 * 1000 + 7 * 500);
	assert_true(json_real_value(json_object_get(read, "rate_achieved")) == 1500.0);
	json_decref(j);
	free(a);
	free(b);
}

/* The same two hosts as CSV rows: one row a second of the overlap for
 * the fleet, the hosts' intervals merged (1500 ops, at 1500/s), not each
 * host's rows one after the other. */
static void test_merge_csv_rows(void **state)
{
	(void)state;
	char *a = write_log("a3.log", 10, 1000, 1000, NULL);
	char *b = write_log("b3.log", 10, 500, 1003, NULL);
	uint64_t from_a, to_a, from_b, to_b, iv = 0;
	assert_int_equal(rundump_log_span(a, &from_a, &to_a, &iv), 0);
	assert_int_equal(iv, 1000000000);
	assert_int_equal(rundump_log_span(b, &from_b, &to_b, NULL), 0);
	struct rundump_filter f = { .wall_from_ns = from_b, .wall_to_ns = to_a,
				    .slice_ns = iv, .merge_wall = true };
	struct rundump *d = rundump_new(RUNDUMP_CSV, &f);
	const char *paths[] = { a, b };
	assert_int_equal(rundump_merge_logs(d, paths, 2, NULL), 0);
	json_t *j = rundump_finish(d);
	rundump_free(d);
	const char *csv = json_string_value(json_object_get(j, "csv"));
	assert_non_null(csv);
	unsigned rows = 0;
	for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		char want[64];
		snprintf(want, sizeof(want), "w,read,%u.000,%u.000,1500,0,6144000,1500.000,1500.000,",
			 rows, rows + 1);
		if (strncmp(line + 1, want, strlen(want)) != 0)
			fail_msg("row %u is not the fleet's: %.80s", rows, line + 1);
		rows++;
	}
	assert_int_equal(rows, 7);
	json_decref(j);
	free(a);
	free(b);
}

/* A hostile log's generator_late_ms of 1e300 is held at the largest
 * lateness, not converted out of range (undefined behaviour). */
static void test_late_out_of_range(void **state)
{
	(void)state;
	char *tail = NULL;
	size_t tail_len = 0;
	FILE *t = open_memstream(&tail, &tail_len);
	assert_non_null(t);
	json_t *rec = interval("w", 10, 100, 1000);
	json_object_set_new(rec, "generator_late", json_true());
	json_object_set_new(rec, "generator_late_ms", json_real(1e300));
	put_record(t, rec);
	fclose(t);
	char *path = write_log("late.log", 10, 100, 1000, tail);
	json_t *j = dump(path, RUNDUMP_CSV, &(struct rundump_filter){ 0 });
	const char *row = strstr(json_string_value(json_object_get(j, "csv")), "w,read,10.000,");
	assert_non_null(row);
	/* generator_late_ms is the row's 24th column. */
	for (int col = 1; col < 24 && row; col++)
		row = strchr(row, ',') + 1;
	assert_non_null(row);
	assert_true(strtod(row, NULL) > 1.8e13);
	json_decref(j);
	free(path);
	free(tail);
}

/* A workload that failed on one host and finished on another: the merge
 * says failed, with the failure's reason, whichever log is read last. */
static void test_merge_failed_host(void **state)
{
	(void)state;
	const char *how[2][2] = { { "failed", "device error: EIO" }, { "finished", "" } };
	char *path[2];
	for (int k = 0; k < 2; k++) {
		char *tail = NULL;
		size_t tail_len = 0;
		FILE *t = open_memstream(&tail, &tail_len);
		assert_non_null(t);
		put_record(t, json_pack("{s:s,s:s,s:s,s:s}", "type", "state", "workload", "w",
					"state", how[k][0], "reason", how[k][1]));
		fclose(t);
		path[k] = write_log(k ? "fb.log" : "fa.log", 10, 100, 1000, tail);
		free(tail);
	}
	for (int order = 0; order < 2; order++) {
		uint64_t from, to;
		assert_int_equal(rundump_log_span(path[0], &from, &to, NULL), 0);
		struct rundump_filter f = { .wall_from_ns = from, .wall_to_ns = to };
		struct rundump *d = rundump_new(RUNDUMP_JSON, &f);
		assert_int_equal(rundump_add_log(d, path[order], NULL), 0);
		assert_int_equal(rundump_add_log(d, path[1 - order], NULL), 0);
		json_t *j = rundump_finish(d);
		rundump_free(d);
		json_t *w = json_array_get(json_object_get(j, "workloads"), 0);
		assert_string_equal(json_string_value(json_object_get(w, "state")), "failed");
		assert_string_equal(json_string_value(json_object_get(w, "reason")),
				    "device error: EIO");
		json_decref(j);
	}
	free(path[0]);
	free(path[1]);
}

/* A workload that only one of the merged hosts ran: its time is that
 * host's, so its rate is not divided among hosts that did not run it. */
static void test_merge_one_host_workload(void **state)
{
	(void)state;
	char *tail = NULL;
	size_t tail_len = 0;
	FILE *t = open_memstream(&tail, &tail_len);
	assert_non_null(t);
	for (unsigned i = 0; i < 10; i++) {
		json_t *rec = interval("x", i, 200, 1000);
		put_record(t, rec);
	}
	fclose(t);
	char *a = write_log("a1.log", 10, 1000, 1000, NULL);
	char *b = write_log("b1.log", 10, 500, 1000, tail);
	uint64_t from_a, to_a, from_b, to_b;
	assert_int_equal(rundump_log_span(a, &from_a, &to_a, NULL), 0);
	assert_int_equal(rundump_log_span(b, &from_b, &to_b, NULL), 0);
	struct rundump_filter f = { .wall_from_ns = from_a > from_b ? from_a : from_b,
				    .wall_to_ns = to_a < to_b ? to_a : to_b };
	struct rundump *d = rundump_new(RUNDUMP_JSON, &f);
	assert_int_equal(rundump_add_log(d, a, NULL), 0);
	assert_int_equal(rundump_add_log(d, b, NULL), 0);
	json_t *j = rundump_finish(d);
	rundump_free(d);
	json_t *ws = json_object_get(j, "workloads");
	assert_int_equal(json_array_size(ws), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *w = json_array_get(ws, i);
		const char *name = json_string_value(json_object_get(w, "name"));
		json_t *read = json_object_get(json_object_get(w, "ops"), "read");
		double rate = json_real_value(json_object_get(read, "rate_achieved"));
		if (strcmp(name, "w") == 0)
			assert_true(rate == 1500.0);
		else
			assert_true(rate == 200.0);
	}
	json_decref(j);
	free(tail);
	free(a);
	free(b);
}

/* The HDR encoding starts with HdrHistogram's compressed V2 cookie. */
static void test_hdr_cookie(void **state)
{
	(void)state;
	struct hist *h = hist_new();
	hist_record_n(h, 123456, 7);
	char *enc = rundump_hdr_encode(h);
	assert_non_null(enc);
	/* 0x1c849314 base64-encodes to "HISTF". */
	assert_memory_equal(enc, "HISTF", 5);
	free(enc);
	hist_delete(h);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_and_nul_lines),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_torn_last_record),
		cmocka_unit_test(test_corrupt_middle),
		cmocka_unit_test(test_wrong_header),
		cmocka_unit_test(test_open_memory),
		cmocka_unit_test(test_seek_run_time),
		cmocka_unit_test(test_dump_filters),
		cmocka_unit_test(test_dump_kernel_and_targets),
		cmocka_unit_test(test_dump_hostile_numbers),
		cmocka_unit_test(test_dump_hostile_names),
		cmocka_unit_test(test_report_counts),
		cmocka_unit_test(test_report_after_reload),
		cmocka_unit_test(test_csv_host_window),
		cmocka_unit_test(test_merge_overlap),
		cmocka_unit_test(test_merge_csv_rows),
		cmocka_unit_test(test_merge_failed_host),
		cmocka_unit_test(test_late_out_of_range),
		cmocka_unit_test(test_merge_one_host_workload),
		cmocka_unit_test(test_hdr_cookie),
		cmocka_unit_test(test_hdr_base_is_run_start),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
