// SPDX-License-Identifier: GPL-2.0-only
#include "offline.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runlog.h"

static int add_source(struct rundump *rd, const char *source, json_t *notes, char *err,
		      size_t errlen)
{
	char *path = runlog_path_of(source), *note = NULL;
	int r;

	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = rundump_add_log(rd, path, &note);
	if (r == -EPROTO)
		snprintf(err, errlen, "%s is not a soakd interval log (no version header)", path);
	else if (r < 0)
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
	if (note)
		json_array_append_new(notes, json_string(note));
	free(note);
	free(path);
	return r < 0 ? r : 0;
}

static void attach_notes(json_t *reply, json_t *notes)
{
	if (json_array_size(notes)) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		size_t i;
		json_t *n;
		json_array_foreach(notes, i, n)
			fprintf(f, "%s%s", i ? "; " : "", json_string_value(n));
		fclose(f);
		json_object_set_new(reply, "notes", json_string(text));
		free(text);
	}
}

int offline_dump(const char *run_dir, enum rundump_format format,
		 const struct rundump_filter *filter, json_t **ret, char *err, size_t errlen)
{
	struct rundump *rd = rundump_new(format, filter);
	json_t *notes = json_array();
	int r;

	if (!rd) {
		json_decref(notes);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = add_source(rd, run_dir, notes, err, errlen);
	if (r == 0) {
		*ret = rundump_finish(rd);
		attach_notes(*ret, notes);
	}
	rundump_free(rd);
	json_decref(notes);
	return r;
}

/* Who recorded the log: its first start record's run, wall time and pid
 * ("" when it has none).  A copy of a run directory says the same. */
static void log_identity(const char *path, char *buf, size_t len)
{
	struct runlog_reader *rd;
	json_t *rec;

	buf[0] = '\0';
	if (runlog_open(path, &rd) < 0)
		return;
	for (int i = 0; i < 64 && !buf[0] && runlog_next(rd, &rec) > 0; i++) {
		const char *type = json_string_value(json_object_get(rec, "type"));
		if (type && strcmp(type, "start") == 0)
			snprintf(buf, len, "%s/%" JSON_INTEGER_FORMAT "/%" JSON_INTEGER_FORMAT,
				 json_string_value(json_object_get(rec, "run")) ?: "",
				 json_integer_value(json_object_get(rec, "wall_ns")),
				 json_integer_value(json_object_get(rec, "pid")));
		json_decref(rec);
	}
	runlog_close(rd);
}

/* The same run given twice (or as a copy) would count twice. */
static int check_distinct(char **paths, const char *const *sources, size_t n, char *err,
			  size_t errlen)
{
	char (*id)[300] = calloc(n ? n : 1, sizeof(*id));

	if (!id) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		log_identity(paths[i], id[i], sizeof(id[i]));
		for (size_t k = 0; id[i][0] && k < i; k++)
			if (strcmp(id[i], id[k]) == 0) {
				snprintf(err, errlen, "%s and %s are the same run (the same first start): "
					 "merged twice, it would count twice", sources[k], sources[i]);
				free(id);
				return -EINVAL;
			}
	}
	free(id);
	return 0;
}

int offline_merge(const char *const *sources, size_t n, enum rundump_format format,
		  const struct rundump_filter *filter, json_t **ret, char *err, size_t errlen)
{
	struct rundump_filter f = *filter;
	uint64_t from = 0, to = UINT64_MAX, interval = 0;
	json_t *spans = json_array(), *notes = json_array();
	/* Rows (CSV, HDR) are the fleet's, a slice of the overlap each: the
	 * logs are read side by side.  Totals (JSON) add up in any order. */
	bool rows = format == RUNDUMP_CSV || format == RUNDUMP_HDR;
	char **paths = calloc(n ? n : 1, sizeof(*paths));
	int r = paths ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && r == 0; i++) {
		char *path = paths[i] = runlog_path_of(sources[i]);
		uint64_t a, b, iv;
		r = path ? rundump_log_span(path, &a, &b, &iv) : -ENOMEM;
		if (r == -ENODATA)
			snprintf(err, errlen, "%s holds no intervals", path);
		else if (r == -EPROTO)
			snprintf(err, errlen, "%s is not a soakd interval log", path);
		else if (r < 0)
			snprintf(err, errlen, "cannot read %s: %s", path ? path : sources[i],
				 strerror(-r));
		else if (rows && !filter->slice_ns && interval && iv != interval) {
			snprintf(err, errlen, "%s has intervals of %.3f s, %s of %.3f s: give --slice, "
				 "a multiple of both, for rows of the fleet", sources[i], iv / 1e9,
				 sources[0], interval / 1e9);
			r = -EINVAL;
		} else {
			interval = interval ? interval : iv;
			from = a > from ? a : from;
			to = b < to ? b : to;
			json_array_append_new(spans, json_pack("{s:s,s:I,s:I}", "source", sources[i],
							       "wall_start_ns", (json_int_t)a,
							       "wall_end_ns", (json_int_t)b));
		}
	}
	if (r == 0)
		r = check_distinct(paths, sources, n, err, errlen);
	if (r == 0 && from >= to) {
		snprintf(err, errlen, "the runs do not overlap in time: nothing ran on all of them "
				      "at once");
		r = -ERANGE;
	}
	f.wall_from_ns = from;
	f.wall_to_ns = to;
	if (rows) {
		f.merge_wall = true;
		f.slice_ns = f.slice_ns ? f.slice_ns : interval;
	}
	struct rundump *rd = r == 0 ? rundump_new(format, &f) : NULL;
	if (r == 0 && !rd) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
	}
	if (r == 0 && rows) {
		char *note = NULL;
		r = rundump_merge_logs(rd, (const char *const *)paths, n, &note);
		if (r < 0)
			snprintf(err, errlen, "cannot read the logs: %s", strerror(-r));
		if (note)
			json_array_append_new(notes, json_string(note));
		free(note);
	}
	for (size_t i = 0; i < n && r == 0 && !rows; i++)
		r = add_source(rd, sources[i], notes, err, errlen);
	if (r == 0) {
		*ret = rundump_finish(rd);
		json_object_set_new(*ret, "merged", json_pack("{s:o,s:I,s:I,s:f}", "sources", spans,
			"wall_start_ns", (json_int_t)from, "wall_end_ns", (json_int_t)to,
			"overlap_s", (to - from) / 1e9));
		spans = NULL;
		attach_notes(*ret, notes);
	}
	rundump_free(rd);
	json_decref(spans);
	json_decref(notes);
	for (size_t i = 0; paths && i < n; i++)
		free(paths[i]);
	free(paths);
	return r;
}
