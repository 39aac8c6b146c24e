// SPDX-License-Identifier: GPL-2.0-only
/*
 * The host records of a log (runlog.h, "host") in a dump: for JSON, the
 * mean and maximum of every number over the intervals dumped, shaped as
 * the records are ({"cpu": {"steal": {"mean", "max"}}, "disks": {NAME:
 * {"util_pct": {...}}}, ...}); for a report, per slice, the most steal and
 * iowait and the busiest target device, what report_print() needs to say
 * whether the host may explain a spike.  Other formats ignore them.
 * Drift alarms ("event" records) become the CSV's "drift" column.
 */
#include "rundump.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "rundump_int.h"

/* Bounds: a record has a handful of sections of a few dozen names. */
#define RD_HOST_MAX_KEYS 64

static uint64_t u64(json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* acc[key] = {"sum", "max", "n"} for a number v. */
static void fold(json_t *acc, const char *key, double v)
{
	json_t *a = json_object_get(acc, key);

	if (!a) {
		if (json_object_size(acc) >= RD_HOST_MAX_KEYS)
			return;
		a = json_pack("{s:f,s:f,s:I}", "sum", 0.0, "max", v, "n", (json_int_t)0);
		if (!a || json_object_set_new(acc, key, a) < 0)
			return;
	}
	json_object_set_new(a, "sum", json_real(json_number_value(json_object_get(a, "sum")) + v));
	if (v > json_number_value(json_object_get(a, "max")))
		json_object_set_new(a, "max", json_real(v));
	json_object_set_new(a, "n", json_integer(json_integer_value(json_object_get(a, "n")) + 1));
}

/* Folds a section (an object of numbers, or of objects of numbers) into
 * the accumulator of the same shape. */
static void fold_section(json_t *acc, json_t *section, int depth)
{
	const char *key;
	json_t *v;

	json_object_foreach(section, key, v) {
		if (json_is_number(v))
			fold(acc, key, json_number_value(v));
		else if (json_is_object(v) && depth == 0) {
			json_t *sub = json_object_get(acc, key);
			if (!sub && json_object_size(acc) < RD_HOST_MAX_KEYS) {
				sub = json_object();
				json_object_set_new(acc, key, sub);
			}
			if (sub)
				fold_section(sub, v, 1);
		}
	}
}

static double max_of(json_t *section, const char *key)
{
	double m = 0;
	const char *name;
	json_t *v;

	json_object_foreach(section, name, v) {
		double x = json_number_value(json_object_get(v, key));
		m = x > m ? x : m;
	}
	return m;
}

/* A report's slice of host: {"index", "steal_max", "iowait_max", "util_max"}. */
static void add_report(struct rundump *d, json_t *rec, uint64_t start_ns)
{
	json_t *slices = json_object_get(d->host, "slices");
	json_int_t index = d->f.slice_ns ? (json_int_t)(start_ns / d->f.slice_ns) : 0;
	json_t *cpu = json_object_get(rec, "cpu");
	size_t n = json_array_size(slices);
	json_t *s = n ? json_array_get(slices, n - 1) : NULL;

	if (!s || json_integer_value(json_object_get(s, "index")) != index) {
		if (n >= 100000)
			return;
		s = json_pack("{s:I,s:f,s:f,s:f}", "index", index, "steal_max", 0.0, "iowait_max", 0.0,
			      "util_max", 0.0);
		if (!s || json_array_append_new(slices, s) < 0)
			return;
	}
	const struct { const char *out; double v; } m[] = {
		{ "steal_max", json_number_value(json_object_get(cpu, "steal")) },
		{ "iowait_max", json_number_value(json_object_get(cpu, "iowait")) },
		{ "util_max", max_of(json_object_get(rec, "disks"), "util_pct") },
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].v > json_number_value(json_object_get(s, m[i].out)))
			json_object_set_new(s, m[i].out, json_real(m[i].v));
}

/* The columns of RD_HOST_CSV_COLUMNS from a record: the busiest target
 * device stands for the devices. */
static void csv_keep(struct rundump *d, json_t *rec)
{
	json_t *cpu = json_object_get(rec, "cpu"), *disks = json_object_get(rec, "disks");
	const double v[RD_HOST_CSV_N] = {
		json_number_value(json_object_get(cpu, "user")),
		json_number_value(json_object_get(cpu, "system")),
		json_number_value(json_object_get(cpu, "iowait")),
		json_number_value(json_object_get(cpu, "steal")),
		json_number_value(json_object_get(cpu, "soakd")),
		json_number_value(json_object_get(json_object_get(rec, "psi"), "io_some")),
		max_of(disks, "util_pct"),
		max_of(disks, "queue_depth"),
	};

	memcpy(d->host_csv, v, sizeof(v));
	d->have_host_csv = true;
}

void rd_host_csv(struct rundump *d, const char *workload, const char *op)
{
	/* A fleet's row has no one host's counters. */
	for (size_t i = 0; i < RD_HOST_CSV_N; i++)
		if (d->have_host_csv && !d->f.merge_wall)
			fprintf(d->text, ",%.2f", d->host_csv[i]);
		else
			fputc(',', d->text);
	fputc(',', d->text);
	for (size_t i = 0; i < d->n_drift_marks; i++) {
		struct rd_drift_mark *m = &d->drift_marks[i];
		if (strcmp(m->workload, workload) != 0 || strcmp(m->op, op) != 0)
			continue;
		fputs(m->metrics, d->text);
		d->drift_marks[i] = d->drift_marks[--d->n_drift_marks];
		break;
	}
}

/* A metric name as it may go into a CSV field: no comma, quote or line. */
static bool csv_safe(const char *s)
{
	return s && *s && strlen(s) < 20 && !s[strcspn(s, ",\"\r\n ")];
}

int rd_event_add(struct rundump *d, json_t *rec)
{
	const char *event = json_string_value(json_object_get(rec, "event"));
	const char *workload = json_string_value(json_object_get(rec, "workload"));
	const char *op = json_string_value(json_object_get(rec, "op"));
	const char *metric = json_string_value(json_object_get(rec, "metric"));
	uint64_t at = u64(rec, "end_ns");

	/* Only what a CSV shows; other events are for other readers. */
	if (d->format != RUNDUMP_CSV || !event || strcmp(event, "drift") != 0)
		return 0;
	if (!workload || !op || !csv_safe(metric))
		return -EINVAL;
	if (at <= d->f.since_ns || (d->f.until_ns && at > d->f.until_ns))
		return 0;
	for (size_t i = 0; i < d->n_drift_marks; i++) {
		struct rd_drift_mark *m = &d->drift_marks[i];
		if (strcmp(m->workload, workload) == 0 && strcmp(m->op, op) == 0) {
			size_t len = strlen(m->metrics);
			snprintf(m->metrics + len, sizeof(m->metrics) - len, "+%s", metric);
			return 0;
		}
	}
	if (d->n_drift_marks == RD_MAX_DRIFT_MARKS)
		return 0;
	struct rd_drift_mark *m = &d->drift_marks[d->n_drift_marks++];
	snprintf(m->workload, sizeof(m->workload), "%s", workload);
	snprintf(m->op, sizeof(m->op), "%s", op);
	snprintf(m->metrics, sizeof(m->metrics), "%s", metric);
	return 0;
}

int rd_host_add(struct rundump *d, json_t *rec)
{
	uint64_t start = u64(rec, "start_ns"), end = u64(rec, "end_ns");

	if (end <= start)
		return -EINVAL;
	/* A CSV's last row is written at the end of the log: a host record
	 * read past --until (a reader goes on a while past it) is not its. */
	if (end <= d->f.since_ns || (d->f.until_ns && start >= d->f.until_ns))
		return 0;
	if (d->f.wall_to_ns && (u64(rec, "wall_end_ns") < d->f.wall_from_ns ||
				u64(rec, "wall_start_ns") > d->f.wall_to_ns))
		return 0;
	if (d->format == RUNDUMP_CSV) {
		csv_keep(d, rec);
		return 0;
	}
	if (d->format != RUNDUMP_JSON && d->format != RUNDUMP_REPORT)
		return 0;
	if (!d->host) {
		d->host = d->format == RUNDUMP_REPORT ? json_pack("{s:[]}", "slices")
						      : json_pack("{s:I}", "intervals", (json_int_t)0);
		if (!d->host)
			return -ENOMEM;
	}
	if (d->format == RUNDUMP_REPORT) {
		add_report(d, rec, start);
		return 0;
	}
	json_object_set_new(d->host, "intervals",
			    json_integer(json_integer_value(json_object_get(d->host, "intervals")) + 1));
	static const char *const sections[] = { "cpu", "psi", "mem", "disks", "net", "tcp", "nvme" };
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		json_t *section = json_object_get(rec, sections[i]);
		if (!json_is_object(section) || json_object_size(section) == 0)
			continue;
		json_t *acc = json_object_get(d->host, sections[i]);
		if (!acc) {
			acc = json_object();
			json_object_set_new(d->host, sections[i], acc);
		}
		fold_section(acc, section, 0);
	}
	return 0;
}

/* {"sum","max","n"} -> {"mean","max"}, all the way down. */
static void finish(json_t *acc)
{
	const char *key;
	json_t *v;

	json_object_foreach(acc, key, v) {
		if (!json_is_object(v))
			continue;
		json_t *n = json_object_get(v, "n");
		if (json_is_integer(n) && json_object_get(v, "sum")) {
			double mean = json_number_value(json_object_get(v, "sum")) /
				      (double)(json_integer_value(n) ? json_integer_value(n) : 1);
			json_object_set_new(v, "mean", json_real(round(mean * 100) / 100));
			json_object_del(v, "sum");
			json_object_del(v, "n");
		} else
			finish(v);
	}
}

json_t *rundump_host(const struct rundump *d)
{
	json_t *host = d->host ? json_deep_copy(d->host) : NULL;

	if (host && d->format == RUNDUMP_JSON)
		finish(host);
	return host;
}

json_t *rundump_host_state(const struct rundump *d)
{
	return d->host ? json_deep_copy(d->host) : NULL;
}

int rundump_host_restore(struct rundump *d, json_t *state)
{
	/* Of this rundump's shape: a report's slices, or a dump's sums. */
	bool report = d->format == RUNDUMP_REPORT;
	if (!json_is_object(state) ||
	    (report ? !json_is_array(json_object_get(state, "slices"))
		    : !json_is_integer(json_object_get(state, "intervals"))))
		return -EINVAL;
	json_t *copy = json_deep_copy(state);
	if (!copy)
		return -ENOMEM;
	json_decref(d->host);
	d->host = copy;
	return 0;
}
