// SPDX-License-Identifier: GPL-2.0-only
#include "rundump.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "hist.h"
#include "runlog.h"

#include "rundump_int.h"

static void op_free(struct rd_op *o)
{
	hist_delete(o->lat);
	hist_delete(o->svc);
	hist_delete(o->iss);
	o->lat = o->svc = o->iss = NULL;
}

static void ops_reset(struct rd_ops *ops)
{
	for (size_t i = 0; i < ops->n; i++) {
		struct rd_op *o = &ops->op[i];
		o->count = o->errors = o->bytes = o->corrupt = o->missed = o->pending = 0;
		memset(o->verify, 0, sizeof(o->verify));
		o->target_ops = 0;
		if (o->lat)
			hist_reset(o->lat);
		if (o->svc)
			hist_reset(o->svc);
		if (o->iss)
			hist_reset(o->iss);
	}
}

static struct rd_op *op_get(struct rd_ops *ops, const char *raw)
{
	char name[sizeof(ops->op[0].name)];

	if (strlen(raw) >= sizeof(name))
		return NULL;
	runlog_clean_name(name, sizeof(name), raw);
	for (size_t i = 0; i < ops->n; i++)
		if (strcmp(ops->op[i].name, name) == 0)
			return &ops->op[i];
	if (ops->n == RD_MAX_OPS || strlen(name) >= sizeof(ops->op[0].name))
		return NULL;
	struct rd_op *o = &ops->op[ops->n];
	memset(o, 0, sizeof(*o));
	o->lat = hist_new();
	o->svc = hist_new();
	o->iss = hist_new();
	if (!o->lat || !o->svc || !o->iss) {
		op_free(o);
		return NULL;
	}
	strcpy(o->name, name);
	ops->n++;
	return o;
}

uint64_t rd_u64(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* Counts from a log (perhaps another host's, perhaps damaged) add up to at
 * most what JSON prints as a count: a wrap would show a negative count,
 * or errors of exactly 0. */
uint64_t rd_sat_add(uint64_t a, uint64_t b)
{
	return b > (uint64_t)INT64_MAX - a ? (uint64_t)INT64_MAX : a + b;
}

/* A recorded number of ops or share: finite and not negative, or 0 (a
 * log's 1e308 made every rate infinite, and an op with an infinite rate
 * vanished from the JSON dump). */
static double ops_num(json_t *j, const char *key, double most)
{
	double v = json_number_value(json_object_get(j, key));
	return isfinite(v) && v > 0 ? (v < most ? v : most) : 0;
}

int rd_merge_b64(struct hist *dst, json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (!v)
		return 0;
	return json_is_string(v) ? hist_merge_base64(dst, json_string_value(v)) : -EINVAL;
}

const char *const rd_verify_names[RD_VERIFY_CLASSES] = {
	"checked", "lost", "resurrected", "stale", "list_missing", "list_extra", "uncertain",
	"misdirected", "torn", "foreign", "unchecked", "corrupt", "flush_failed",
};

/* An object op's or a device op's: each has only its own names. */
static void verify_add(struct rd_op *o, json_t *rec)
{
	json_t *v = json_object_get(rec, "verify");
	for (size_t i = 0; json_is_object(v) && i < RD_VERIFY_CLASSES; i++)
		o->verify[i] = rd_sat_add(o->verify[i], rd_u64(v, rd_verify_names[i]));
	if (json_object_get(v, "torn"))
		o->dev_verify = true;
}

/* Adds a recorded op (count, errors, ..., base64 histograms) to o. */
static int op_add(struct rd_op *o, json_t *rec, double target_ops)
{
	o->count = rd_sat_add(o->count, rd_u64(rec, "count"));
	o->errors = rd_sat_add(o->errors, rd_u64(rec, "errors"));
	o->bytes = rd_sat_add(o->bytes, rd_u64(rec, "bytes"));
	o->corrupt = rd_sat_add(o->corrupt, rd_u64(rec, "corrupt"));
	o->missed = rd_sat_add(o->missed, rd_u64(rec, "missed"));
	o->pending = rd_u64(rec, "pending");
	verify_add(o, rec);
	o->target_ops += target_ops;
	int r = rd_merge_b64(o->lat, rec, "latency");
	if (r == 0)
		r = rd_merge_b64(o->svc, rec, "service");
	return r < 0 ? r : rd_merge_b64(o->iss, rec, "issue_delay");
}

/* An interval's op as recorded, into the scratch op o (its histograms
 * decoded in place: no merge into an emptied one). */
static int op_load(struct rd_op *o, const char *name, json_t *rec, double target_ops)
{
	const char *keys[] = { "latency", "service", "issue_delay" };
	struct hist *hists[] = { o->lat, o->svc, o->iss };

	snprintf(o->name, sizeof(o->name), "%s", name);
	o->count = rd_u64(rec, "count");
	o->errors = rd_u64(rec, "errors");
	o->bytes = rd_u64(rec, "bytes");
	o->corrupt = rd_u64(rec, "corrupt");
	o->missed = rd_u64(rec, "missed");
	o->pending = rd_u64(rec, "pending");
	memset(o->verify, 0, sizeof(o->verify));
	o->dev_verify = false;
	verify_add(o, rec);
	o->target_ops = target_ops;
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(rec, keys[i]);
		if (!v) {
			hist_reset(hists[i]);
			continue;
		}
		if (!json_is_string(v))
			return -EINVAL;
		int r = hist_from_base64(hists[i], json_string_value(v));
		if (r < 0)
			return r;
	}
	return 0;
}

struct rundump *rundump_new(enum rundump_format format, const struct rundump_filter *filter)
{
	struct rundump *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->format = format;
	if (filter)
		d->f = *filter;
	if (format == RUNDUMP_CSV || format == RUNDUMP_HDR) {
		d->text = open_memstream(&d->text_buf, &d->text_len);
		if (!d->text) {
			free(d);
			return NULL;
		}
	}
	if (format == RUNDUMP_CSV)
		fprintf(d->text, "workload,op,start_s,end_s,count,errors,bytes,rate_target,"
				 "rate_achieved,latency_p50_us,latency_p90_us,latency_p99_us,"
				 "latency_p999_us,latency_max_us,service_p50_us,service_p99_us,"
				 "lag_max_ms,corrupt,missed,pending,issue_delay_p50_us,issue_delay_p99_us,"
				 "issue_delay_max_us,generator_late_ms," RD_VERIFY_CSV_COLUMNS
				 RD_HOST_CSV_COLUMNS "\n");
	if (format == RUNDUMP_REPORT && !d->f.slice_ns)
		d->f.slice_ns = UINT64_C(3600) * 1000000000;
	return d;
}

static struct rd_workload *workload_get(struct rundump *d, const char *raw)
{
	char name[sizeof(((struct rd_workload *)0)->name)];

	if (strlen(raw) >= sizeof(name))
		return NULL;
	runlog_clean_name(name, sizeof(name), raw);
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->w[i]->name, name) == 0)
			return d->w[i];
	if (d->n == RD_MAX_WORKLOADS || strlen(name) >= sizeof(d->w[0]->name))
		return NULL;
	struct rd_workload *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	strcpy(w->name, name);
	strcpy(w->state, "unknown");
	d->w[d->n++] = w;
	return w;
}

/* --- CSV ------------------------------------------------------------- */

static json_t *slice_report_json(const struct rd_workload *w, const struct rd_op *o)
{
	char *lat = hist_to_base64(o->lat), *svc = hist_to_base64(o->svc);
	json_t *j = json_pack("{s:f,s:f,s:I,s:s?,s:s?}", "start_s", w->slice_start_ns / 1e9,
			      "end_s", w->slice_end_ns / 1e9, "count", (json_int_t)o->count,
			      "latency", lat, "service", svc);
	free(lat);
	free(svc);
	return j;
}

/* Wrong data an op read back, as the daemon counts it for a report: its
 * corrupt reads (a device's wrong blocks are among them) and an object's
 * lost, resurrected, stale and wrongly listed ones. */
static uint64_t wrong_data(const struct rd_op *o)
{
	static const char *const object_wrong[] = { "lost", "resurrected", "stale",
						    "list_missing", "list_extra" };
	uint64_t n = o->corrupt;

	for (size_t k = 0; !o->dev_verify && k < RD_VERIFY_CLASSES; k++)
		for (size_t i = 0; i < sizeof(object_wrong) / sizeof(object_wrong[0]); i++)
			if (strcmp(rd_verify_names[k], object_wrong[i]) == 0)
				n = rd_sat_add(n, o->verify[k]);
	return n;
}

/* Adds n to op's count key, held at INT64_MAX. */
static void add_count(json_t *op, const char *key, uint64_t n)
{
	json_int_t had = json_integer_value(json_object_get(op, key));
	uint64_t sum = rd_sat_add(had > 0 ? (uint64_t)had : 0, n);
	json_object_set_new(op, key, json_integer(sum > INT64_MAX ? INT64_MAX : (json_int_t)sum));
}

void rd_flush_slice(struct rundump *d, struct rd_workload *w)
{
	if (!w->slice_open)
		return;
	for (size_t i = 0; i < w->slice.n; i++) {
		struct rd_op *o = &w->slice.op[i];
		if (d->format == RUNDUMP_CSV)
			rd_csv_row(d, w->name, o, w->slice_start_ns, w->slice_end_ns, w->slice_lag_ns,
				   w->slice_late_ns);
		else if (d->format == RUNDUMP_HDR)
			rd_hdr_line(d, w->name, o, w->slice_wall_start_ns, w->slice_start_ns,
				 w->slice_end_ns);
		else if (d->format == RUNDUMP_REPORT) {
			if (!w->report_ops)
				w->report_ops = json_object();
			json_t *op = json_object_get(w->report_ops, o->name);
			if (!op) {
				op = json_pack("{s:[]}", "slices");
				json_object_set_new(w->report_ops, o->name, op);
			}
			json_array_append_new(json_object_get(op, "slices"), slice_report_json(w, o));
			add_count(op, "errors", o->errors);
			add_count(op, "missed", o->missed);
			add_count(op, "wrong_data", wrong_data(o));
			add_count(op, "flush_failed", o->verify[RD_VERIFY_FLUSH_FAILED]);
		}
	}
	ops_reset(&w->slice);
	w->slice_open = false;
	w->slice_lag_ns = 0;
	w->slice_late_ns = 0;
}

/* --- records ---------------------------------------------------------- */

static bool wanted_op(const struct rundump *d, const char *op)
{
	return !d->f.op || strcmp(d->f.op, op) == 0;
}

uint64_t rd_wall_slice(const struct rundump *d, uint64_t wall_start, uint64_t wall_end)
{
	uint64_t mid = wall_start + (wall_end > wall_start ? (wall_end - wall_start) / 2 : 0);

	return mid > d->f.wall_from_ns && d->f.slice_ns ? (mid - d->f.wall_from_ns) / d->f.slice_ns
							 : 0;
}

/* Counts the log being read among the workload's, once. */
static int note_source(struct rundump *d, struct rd_workload *w)
{
	size_t byte = d->source / 8;

	if (byte >= w->seen_len) {
		uint8_t *seen = realloc(w->seen, byte + 1);
		if (!seen)
			return -ENOMEM;
		memset(seen + w->seen_len, 0, byte + 1 - w->seen_len);
		w->seen = seen;
		w->seen_len = byte + 1;
	}
	uint8_t bit = (uint8_t)(1u << (d->source % 8));
	if (!(w->seen[byte] & bit)) {
		w->seen[byte] |= bit;
		w->sources++;
	}
	return 0;
}

static int add_interval(struct rundump *d, json_t *rec)
{
	const char *name = json_string_value(json_object_get(rec, "workload"));
	json_t *ops = json_object_get(rec, "ops");
	uint64_t start = rd_u64(rec, "start_ns"), end = rd_u64(rec, "end_ns");
	uint64_t wall_start = rd_u64(rec, "wall_start_ns"), wall_end = rd_u64(rec, "wall_end_ns");
	uint64_t lag = rd_u64(rec, "lag_max_ns");
	/* generator_late: by how much, at least 1 ns so a flag stays a flag. */
	uint64_t late = 0;
	if (json_is_true(json_object_get(rec, "generator_late"))) {
		double ms = json_number_value(json_object_get(rec, "generator_late_ms"));
		/* A hostile log's 1e300 is held, not converted out of range. */
		late = !(ms > 0) ? 1 : ms * 1e6 >= 1.8e19 ? UINT64_MAX : (uint64_t)(ms * 1e6);
	}
	double target = ops_num(rec, "target_ops", 1e15);
	const char *op_name;
	json_t *op;
	int r = 0;

	if (!name || !json_is_object(ops) || end < start)
		return -EINVAL;
	if (d->f.workload && strcmp(d->f.workload, name) != 0)
		return 0;
	if (start < d->f.since_ns || (d->f.until_ns && start >= d->f.until_ns))
		return 0;
	/* Hosts started together by start_at tick a few ms apart: an interval
	 * counts when it is inside the overlap but for a quarter of its length,
	 * so their edge intervals line up rather than drop out one side. */
	uint64_t slack = wall_end > wall_start ? (wall_end - wall_start) / 4 : 0;
	if (d->f.wall_to_ns && (wall_start + slack < d->f.wall_from_ns ||
				wall_end - slack > d->f.wall_to_ns))
		return 0;
	struct rd_workload *w = workload_get(d, name);
	if (!w)
		return -ENOMEM;
	w->active_ns = rd_sat_add(w->active_ns, end - start);
	if (note_source(d, w) < 0)
		return -ENOMEM;
	/* The part of the interval inside the schedule; a record of an older
	 * soakd lacks it: then all of an interval with ops scheduled. */
	json_t *scheduled = json_object_get(rec, "scheduled_ns");
	w->sched_ns += scheduled ? rd_u64(rec, "scheduled_ns") : target > 0 ? end - start : 0;
	w->intervals++;
	if (!w->wall_first_ns || wall_start < w->wall_first_ns)
		w->wall_first_ns = wall_start;
	if (wall_end > w->wall_last_ns)
		w->wall_last_ns = wall_end;
	if (lag > w->lag_max_ns)
		w->lag_max_ns = lag;
	if (late) {
		w->late_intervals++;
		if (late > w->late_max_ns)
			w->late_max_ns = late;
	}

	bool sliced = d->f.slice_ns && d->format != RUNDUMP_JSON;
	if (sliced) {
		uint64_t index = start / d->f.slice_ns;
		uint64_t s_start = start, s_end = end, s_wall = wall_start;
		if (d->f.merge_wall) {
			/* Hosts side by side: the slice of the overlap the
			 * interval's middle falls in, whichever host ran it;
			 * its times are the slice's, from the overlap's start. */
			index = rd_wall_slice(d, wall_start, wall_end);
			s_start = index * d->f.slice_ns;
			s_end = s_start + d->f.slice_ns;
			s_wall = d->f.wall_from_ns + s_start;
		}
		if (w->slice_open && index != w->slice_index)
			rd_flush_slice(d, w);
		if (!w->slice_open) {
			w->slice_open = true;
			w->slice_index = index;
			w->slice_start_ns = s_start;
			w->slice_wall_start_ns = s_wall;
		}
		w->slice_end_ns = s_end;
		if (lag > w->slice_lag_ns)
			w->slice_lag_ns = lag;
		if (late > w->slice_late_ns)
			w->slice_late_ns = late;
	}
	json_object_foreach(ops, op_name, op) {
		if (!wanted_op(d, op_name))
			continue;
		double share = ops_num(op, "share", 1);
		double op_target = target * share;
		struct rd_op *t = op_get(&w->totals, op_name);
		if (!t)
			return -ENOMEM;
		if (d->format == RUNDUMP_JSON) {
			r = op_add(t, op, op_target);
		} else if (sliced) {
			struct rd_op *s = op_get(&w->slice, op_name);
			r = s ? op_add(s, op, op_target) : -ENOMEM;
		} else {
			/* One row per interval: the scratch op, emitted now. */
			struct rd_op *s = &d->scratch;
			if (!s->lat && !(s->lat = hist_new()))
				return -ENOMEM;
			if (!s->svc && !(s->svc = hist_new()))
				return -ENOMEM;
			if (!s->iss && !(s->iss = hist_new()))
				return -ENOMEM;
			r = op_load(s, op_name, op, op_target);
			if (r == 0 && d->format == RUNDUMP_CSV)
				rd_csv_row(d, name, s, start, end, lag, late);
			else if (r == 0 && d->format == RUNDUMP_HDR)
				rd_hdr_line(d, name, s, wall_start, start, end);
		}
		if (r < 0)
			return r;
	}
	if (d->format == RUNDUMP_JSON) {
		r = rd_kernel_add(&w->kernel, json_object_get(rec, "kernel"));
		if (r < 0)
			return r;
	}
	json_t *targets = json_object_get(rec, "targets");
	if (d->format == RUNDUMP_JSON && json_is_array(targets)) {
		size_t ti;
		json_t *target_rec;
		if (!w->targets && !(w->targets = calloc(RD_MAX_TARGETS, sizeof(*w->targets))))
			return -ENOMEM;
		json_array_foreach(targets, ti, target_rec) {
			if (ti >= RD_MAX_TARGETS)
				break;
			const char *path = json_string_value(json_object_get(target_rec, "path"));
			if (ti >= w->n_targets) {
				w->target_path[ti] = strdup(path ? path : "?");
				w->n_targets = ti + 1;
			}
			json_object_foreach(json_object_get(target_rec, "ops"), op_name, op) {
				if (!wanted_op(d, op_name))
					continue;
				/* Its share of the op's target, as the live dump
				 * gives it: the streams split the rate evenly. */
				double share = ops_num(json_object_get(ops, op_name), "share", 1);
				double op_target = target * share / (double)json_array_size(targets);
				struct rd_op *t = op_get(&w->targets[ti], op_name);
				if (!t || (r = op_add(t, op, op_target)) < 0)
					return t ? r : -ENOMEM;
			}
		}
	}
	return 0;
}

/* Forgets what the named workloads measured: ops, targets and all. */
static void reset_listed(struct rundump *d, json_t *names)
{
	size_t k;
	json_t *v;

	json_array_foreach(names, k, v)
		for (size_t i = 0; json_is_string(v) && i < d->n; i++) {
			struct rd_workload *w = d->w[i];
			if (strcmp(w->name, json_string_value(v)) != 0)
				continue;
			for (size_t o = 0; o < w->totals.n; o++)
				op_free(&w->totals.op[o]);
			w->totals.n = 0;
			for (size_t t = 0; t < w->n_targets; t++) {
				for (size_t o = 0; w->targets && o < w->targets[t].n; o++)
					op_free(&w->targets[t].op[o]);
				if (w->targets)
					w->targets[t].n = 0;
				free(w->target_path[t]);
				w->target_path[t] = NULL;
			}
			w->n_targets = 0;
			rd_kernel_free(&w->kernel);
			w->active_ns = w->lag_max_ns = w->intervals = w->sched_ns = 0;
			w->late_intervals = w->late_max_ns = 0;
			w->wall_first_ns = w->wall_last_ns = 0;
			/* A report's slices are the new definition's too. */
			ops_reset(&w->slice);
			w->slice_open = false;
			json_decref(w->report_ops);
			w->report_ops = NULL;
		}
}

int rundump_add(struct rundump *d, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	int r = 0;

	if (!type)
		r = -EINVAL;
	else if (strcmp(type, "interval") == 0)
		r = add_interval(d, rec);
	else if (strcmp(type, "host") == 0)
		r = rd_host_add(d, rec);
	else if (strcmp(type, "event") == 0)
		r = rd_event_add(d, rec);
	else if (strcmp(type, "start") == 0) {
		const char *run = json_string_value(json_object_get(rec, "run"));
		if (run && !d->run[0])
			snprintf(d->run, sizeof(d->run), "%s", run);
		/* The HDR log's base: the earliest start, or a merge's first
		 * instant, before any line is written (rd_hdr_line). */
		uint64_t wall = d->f.wall_from_ns ? d->f.wall_from_ns : rd_u64(rec, "wall_ns");
		if (!d->hdr_header_done && wall && (!d->hdr_base_wall_ns || wall < d->hdr_base_wall_ns))
			d->hdr_base_wall_ns = wall;
	} else if (strcmp(type, "reload") == 0 &&
		   (d->format == RUNDUMP_JSON || d->format == RUNDUMP_REPORT) && !d->f.wall_to_ns) {
		/* A workload a reload replaced (or added back after removing
		 * it) started over: its totals and report slices are the new
		 * definition's, as soakd's own are.  (Not when merging hosts:
		 * one host's reload is not all's.) */
		uint64_t at = rd_u64(rec, "run_ns");
		if (at >= d->f.since_ns && (!d->f.until_ns || at < d->f.until_ns)) {
			reset_listed(d, json_object_get(rec, "replaced"));
			reset_listed(d, json_object_get(rec, "added"));
		}
	} else if (strcmp(type, "state") == 0) {
		const char *name = json_string_value(json_object_get(rec, "workload"));
		const char *state = json_string_value(json_object_get(rec, "state"));
		const char *reason = json_string_value(json_object_get(rec, "reason"));
		struct rd_workload *w = name && (!d->f.workload || strcmp(d->f.workload, name) == 0)
						? workload_get(d, name) : NULL;
		/* Merged hosts: one that failed is not hidden by another's
		 * later state; the first failure and its reason stay. */
		bool keep = w && d->f.wall_to_ns && strcmp(w->state, "failed") == 0;
		if (w && state && !keep) {
			snprintf(w->state, sizeof(w->state), "%s", state);
			snprintf(w->reason, sizeof(w->reason), "%s", reason ? reason : "");
		}
	}
	if (r < 0)
		d->skipped++;
	return r;
}

size_t rundump_text_pending(struct rundump *d)
{
	if (!d->text)
		return 0;
	fflush(d->text);
	return d->text_len;
}

int rundump_drain_text(struct rundump *d, int (*sink)(void *userdata, const char *text, size_t len),
		       void *userdata)
{
	if (!d->text || fflush(d->text) != 0)
		return d->text ? -ENOMEM : 0;
	if (d->text_len == 0)
		return 0;
	int r = sink(userdata, d->text_buf, d->text_len);
	/* A fresh stream: a memstream cannot be emptied in place. */
	fclose(d->text);
	free(d->text_buf);
	d->text_buf = NULL;
	d->text_len = 0;
	d->text = open_memstream(&d->text_buf, &d->text_len);
	if (!d->text)
		return -ENOMEM;
	return r;
}

void rundump_set_state(struct rundump *d, const char *workload, const char *state,
		       const char *reason)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->w[i]->name, workload) == 0) {
			snprintf(d->w[i]->state, sizeof(d->w[i]->state), "%s", state);
			snprintf(d->w[i]->reason, sizeof(d->w[i]->reason), "%s", reason ? reason : "");
		}
}

/* --- results ---------------------------------------------------------- */

void rundump_free(struct rundump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		struct rd_workload *w = d->w[i];
		for (size_t k = 0; k < w->totals.n; k++)
			op_free(&w->totals.op[k]);
		for (size_t k = 0; k < w->slice.n; k++)
			op_free(&w->slice.op[k]);
		for (size_t t = 0; t < w->n_targets; t++) {
			for (size_t k = 0; k < w->targets[t].n; k++)
				op_free(&w->targets[t].op[k]);
			free(w->target_path[t]);
		}
		free(w->targets);
		free(w->seen);
		rd_kernel_free(&w->kernel);
		json_decref(w->report_ops);
		free(w);
	}
	op_free(&d->scratch);
	json_decref(d->host);
	if (d->text)
		fclose(d->text);
	free(d->text_buf);
	free(d);
}
