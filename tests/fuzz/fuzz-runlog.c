// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interval-log reader and everything computed from its records: the
 * JSON, CSV, HdrHistogram and report dumps, and the report printed from
 * the last.  This is what `soakctl dump --run-dir`, `report --run-dir` and
 * `merge` do to a log copied from another host, damaged or not.
 *
 * Most mutations break a record's CRC, and the reader then drops the
 * record before any JSON is looked at; so each input is read twice: as it
 * is (the framing) and with every line's CRC rewritten to match (the
 * records, down to the dumps).
 */
#include "fuzz.h"

#include <jansson.h>
#include <zlib.h>

#include "common/htmlreport.h"
#include "common/report.h"
#include "common/rundump.h"
#include "common/runlog.h"
#include "common/runmodel.h"

/* Enough to fill slices and several workloads, few enough to stay fast. */
#define MAX_RECORDS 256

/* A copy of the log with the CRC of every "XXXXXXXX JSON" line fixed. */
static uint8_t *fix_crcs(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	size_t start = 0;

	FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	while (start < size) {
		uint8_t *nl = memchr(copy + start, '\n', size - start);
		size_t end = nl ? (size_t)(nl - copy) : size;

		if (end - start >= 10 && copy[start + 8] == ' ') {
			char hex[9];
			uLong crc = crc32(0L, copy + start + 9, (uInt)(end - start - 9));

			snprintf(hex, sizeof(hex), "%08lx", crc);
			memcpy(copy + start, hex, 8);
		}
		start = end + 1;
	}
	return copy;
}

static size_t read_log(const uint8_t *log, size_t size, json_t **records)
{
	struct runlog_reader *reader;
	size_t n = 0;
	json_t *record;
	int r;

	if (runlog_open_memory(log, size, &reader) < 0)
		return 0;
	while ((r = runlog_next(reader, &record)) > 0) {
		FUZZ_CHECK(json_is_object(record));
		if (n < MAX_RECORDS)
			records[n++] = record;
		else
			json_decref(record);
		FUZZ_CHECK(runlog_good_offset(reader) <= size);
	}
	FUZZ_CHECK(r == 0);
	/* At the end it stays at the end. */
	FUZZ_CHECK(runlog_next(reader, &record) == 0);
	FUZZ_CHECK(runlog_good_offset(reader) >= sizeof(RUNLOG_HEADER) - 1);
	FUZZ_CHECK(runlog_good_offset(reader) <= size);
	FUZZ_CHECK(runlog_corrupt(reader) <= size);
	runlog_close(reader);
	return n;
}

static void dump(enum rundump_format format, const struct rundump_filter *filter,
		 json_t **records, size_t n)
{
	struct rundump *d = rundump_new(format, filter);
	json_t *result;
	char *text;

	FUZZ_CHECK(d);
	for (size_t i = 0; i < n; i++)
		rundump_add(d, records[i]);
	result = rundump_finish(d);
	FUZZ_CHECK(result);
	FUZZ_CHECK(json_is_true(json_object_get(result, "ok")));
	FUZZ_CHECK(json_is_array(json_object_get(result, "workloads")));
	text = json_dumps(result, JSON_COMPACT);
	FUZZ_CHECK(text);
	free(text);
	if (format == RUNDUMP_REPORT) {
		struct report_options o;

		report_default_options(&o);
		(void)report_print(result, &o, fuzz_devnull());
		o.service = true;
		o.slice_ns = filter->slice_ns * 2;
		(void)report_print(result, &o, fuzz_devnull());
	}
	json_decref(result);
	rundump_free(d);
}

/* What soakctl report --html and cmp read from the same records. */
static void html(json_t **records, size_t n)
{
	struct runmodel *m = runmodel_new(UINT64_C(2000000000));
	struct report_options o;

	FUZZ_CHECK(m);
	report_default_options(&o);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(runmodel_add(m, records[i]) != -ENOMEM);
	for (size_t i = 0; i < m->n; i++)
		for (size_t k = 0; k < m->w[i]->n_ops; k++) {
			double values[64];
			FUZZ_CHECK(runmodel_slice_values(&m->w[i]->ops[k], "p99", m->slice_ns, values, 64) <= 64);
			FUZZ_CHECK(m->w[i]->ops[k].s_p99->n <= RM_SERIES_POINTS);
		}
	struct html_report_input in = { .m = m, .o = &o, .title = "fuzz", .source = "fuzz" };
	FUZZ_CHECK(html_report_write(fuzz_devnull(), &in) >= 0);
	runmodel_free(m);
}

/*
 * One of the eight dumps, or the HTML report, per input, chosen by its length: all eight cost
 * too much for every input, and a mutation that inserts or erases a byte
 * moves the same records to another dump.
 */
static void dump_one(json_t **records, size_t n, size_t choice)
{
	static const enum rundump_format formats[] = {
		RUNDUMP_JSON, RUNDUMP_CSV, RUNDUMP_HDR, RUNDUMP_REPORT,
	};
	/* As recorded; and folded into 10 s slices, filtered, as asked for by
	 * `dump --since 5s --until 1h --slice 10s --op read`. */
	const struct rundump_filter plain = { 0 };
	const struct rundump_filter folded = {
		.since_ns = UINT64_C(5000000000), .until_ns = UINT64_C(3600000000000),
		.slice_ns = UINT64_C(10000000000), .op = "read", .service = true,
	};

	choice %= 2 * sizeof(formats) / sizeof(formats[0]) + 1;
	if (choice == 2 * sizeof(formats) / sizeof(formats[0]))
		html(records, n);
	else
		dump(formats[choice / 2], choice % 2 ? &folded : &plain, records, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *records[MAX_RECORDS];
	uint8_t *fixed;
	size_t n;

	n = read_log(data, size, records);
	for (size_t i = 0; i < n; i++)
		json_decref(records[i]);

	fixed = fix_crcs(data, size);
	n = read_log(fixed, size, records);
	dump_one(records, n, size);
	for (size_t i = 0; i < n; i++)
		json_decref(records[i]);
	free(fixed);
	return 0;
}
