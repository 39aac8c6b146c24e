// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checkpoints: the results of a run as replaying its log up to some run
 * time would build them, so that resuming a month-long run reads the
 * checkpoint and the log after it, not the whole log.
 */
#include "results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "results_int.h"
#include "stats_json.h"

/* 2: a slice's count is its completed ops (1 also counted missed ones, as
 * the latency histogram holds them); a checkpoint of 1 is read as a
 * stranger, and the whole log replayed. */
#define CHECKPOINT_VERSION 2

static json_t *ops_array(const struct op_stats *ops, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, op_stats_to_json(&ops[i]));
	return arr;
}

static json_t *hist_json(const struct hist *h)
{
	char *text = hist_to_base64(h);
	json_t *j = text ? json_string(text) : NULL;
	free(text);
	return j;
}

/* NULL if a closed slice could not be read back: no checkpoint then,
 * rather than one that has lost it. */
static json_t *slices_json(const struct slice_store *store, const struct op_slices *sl)
{
	json_t *stored = json_array();
	for (size_t k = 0; stored && k < sl->n; k++) {
		const struct stored_slice *st = &sl->stored[k];
		char *lat = slice_text_get(store, &st->latency);
		char *svc = slice_text_get(store, &st->service);
		json_t *one = lat && svc ? json_pack("[I,I,I,s,s]", (json_int_t)st->start_ns,
						     (json_int_t)st->end_ns, (json_int_t)st->count,
						     lat, svc) : NULL;
		free(lat);
		free(svc);
		if (json_array_append_new(stored, one) < 0) {
			json_decref(stored);
			return NULL;
		}
	}
	if (!stored)
		return NULL;
	return json_pack("{s:o,s:b,s:I,s:I,s:I,s:o,s:o}", "stored", stored, "open", sl->open,
			 "start_ns", (json_int_t)sl->start_ns, "end_ns", (json_int_t)sl->end_ns,
			 "count", (json_int_t)sl->count, "latency", hist_json(sl->latency),
			 "service", hist_json(sl->service));
}

json_t *results_checkpoint(const struct results *r, uint64_t run_ns)
{
	json_t *workloads = json_array();

	for (size_t i = 0; workloads && i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		json_t *slices = json_array();
		for (size_t op = 0; slices && op < wr->n_ops; op++) {
			if (json_array_append_new(slices, slices_json(&r->slices,
								      &wr->slices[op])) < 0) {
				json_decref(slices);
				json_decref(workloads);
				return NULL;
			}
		}
		json_t *wj = json_pack(
			"{s:s,s:I,s:I,s:o,s:o,s:f,s:I,s:I,s:I,s:I,s:I,s:o,s:b,s:I,s:s,s:s}",
			"name", wr->workload->cfg->name, "n_ops", (json_int_t)wr->n_ops,
			"n_streams", (json_int_t)wr->n_streams,
			"totals", ops_array(wr->totals, wr->n_ops),
			"target_totals", ops_array(wr->target_totals, wr->n_ops * wr->n_streams),
			"target_ops_total", wr->target_ops_total,
			"active_ns", (json_int_t)wr->active_ns, "sched_ns", (json_int_t)wr->sched_ns,
			"lag_max_ns", (json_int_t)wr->lag_max_ns,
			"intervals", (json_int_t)wr->intervals, "slice_index", (json_int_t)wr->slice_index,
			"slices", slices, "recorded", wr->recorded,
			"recorded_sched_ns", (json_int_t)wr->recorded_sched_ns,
			"recorded_state", wr->recorded_state, "recorded_reason", wr->recorded_reason);
		/*
		 * Which of its interval records it holds (results_in_checkpoint):
		 * a workload still running may publish an interval that ended
		 * before run_ns after it (a thread late at the tick), so up to
		 * the last merged; one not running starts again after run_ns,
		 * so all it recorded by then.
		 */
		uint64_t covered = workload_is_active(wr->workload) ? wr->merged_end_ns : run_ns;
		if (wj && (json_object_set_new(wj, "merged_end_ns",
					       json_integer((json_int_t)wr->merged_end_ns)) < 0 ||
			   json_object_set_new(wj, "covered_ns",
					       json_integer((json_int_t)covered)) < 0)) {
			json_decref(wj);
			wj = NULL;
		}
		/* An object pool's endpoints as its last record left them: the
		 * base a resume's totals go on from (the records the checkpoint
		 * holds are not read again). */
		json_t *eps = r->endpoints_last ? json_object_get(r->endpoints_last,
								  wr->workload->cfg->name) : NULL;
		if (wj && json_is_object(eps))
			json_object_set(wj, "endpoints", eps);
		/* Optional (an older checkpoint has none): intervals soakd was late. */
		if (wj && wr->late_intervals) {
			json_object_set_new(wj, "late_intervals", json_integer((json_int_t)wr->late_intervals));
			json_object_set_new(wj, "late_max_ns", json_integer((json_int_t)wr->late_max_ns));
		}
		json_array_append_new(workloads, wj);
	}
	uint64_t end = r->recorded_end_ns > r->logged_end_ns ? r->recorded_end_ns : r->logged_end_ns;
	uint64_t wall = r->recorded_wall_ns > r->logged_wall_ns ? r->recorded_wall_ns
								 : r->logged_wall_ns;
	return json_pack("{s:s,s:i,s:I,s:I,s:I,s:o}", "type", "checkpoint",
			 "version", CHECKPOINT_VERSION, "run_ns", (json_int_t)run_ns,
			 "recorded_end_ns", (json_int_t)end, "recorded_wall_ns", (json_int_t)wall,
			 "workloads", workloads);
}

static uint64_t u64_of(json_t *j, const char *key, int *err)
{
	json_t *v = json_object_get(j, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		*err = -EINVAL;
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

static int restore_ops(struct op_stats *ops, size_t n, json_t *arr)
{
	if (!json_is_array(arr) || json_array_size(arr) != n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		op_stats_reset(&ops[i]);
		int r = op_stats_merge_json(&ops[i], json_array_get(arr, i));
		if (r < 0)
			return r;
		/* A gauge of the process that wrote it, which is gone. */
		ops[i].pending = 0;
	}
	return 0;
}

static int restore_slices(struct slice_store *store, struct op_slices *sl, json_t *j)
{
	json_t *stored = json_object_get(j, "stored"), *st;
	int err = 0;
	size_t k;

	if (!json_is_array(stored))
		return -EINVAL;
	json_array_foreach(stored, k, st) {
		json_t *lat = json_array_get(st, 3), *svc = json_array_get(st, 4);
		if (!json_is_string(lat) || !json_is_string(svc) || json_array_size(st) != 5)
			return -EINVAL;
		if (sl->n == sl->cap) {
			size_t cap = sl->cap ? sl->cap * 2 : 16;
			struct stored_slice *grown = realloc(sl->stored, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			sl->stored = grown;
			sl->cap = cap;
		}
		struct stored_slice *s = &sl->stored[sl->n];
		*s = (struct stored_slice){
			.start_ns = (uint64_t)json_integer_value(json_array_get(st, 0)),
			.end_ns = (uint64_t)json_integer_value(json_array_get(st, 1)),
			.count = (uint64_t)json_integer_value(json_array_get(st, 2)),
		};
		if (slice_text_put(store, &s->latency, json_string_value(lat)) < 0 ||
		    slice_text_put(store, &s->service, json_string_value(svc)) < 0) {
			slice_text_free(&s->latency);
			return -ENOMEM;
		}
		sl->n++;
	}
	sl->open = json_is_true(json_object_get(j, "open"));
	sl->start_ns = u64_of(j, "start_ns", &err);
	sl->end_ns = u64_of(j, "end_ns", &err);
	sl->count = u64_of(j, "count", &err);
	json_t *lat = json_object_get(j, "latency"), *svc = json_object_get(j, "service");
	if (err || !json_is_string(lat) || !json_is_string(svc) ||
	    hist_from_base64(sl->latency, json_string_value(lat)) < 0 ||
	    hist_from_base64(sl->service, json_string_value(svc)) < 0)
		return -EINVAL;
	return 0;
}

static int restore_workload(struct results *res, struct workload_results *wr, json_t *j,
			    uint64_t run_ns)
{
	json_t *slices = json_object_get(j, "slices");
	int err = 0, r;

	if (u64_of(j, "n_ops", &err) != wr->n_ops || u64_of(j, "n_streams", &err) != wr->n_streams ||
	    err || !json_is_array(slices) || json_array_size(slices) != wr->n_ops)
		return -EINVAL;
	r = restore_ops(wr->totals, wr->n_ops, json_object_get(j, "totals"));
	/* With one target they are the totals (the checkpoint holds them twice). */
	if (r == 0 && wr->target_totals != wr->totals)
		r = restore_ops(wr->target_totals, wr->n_ops * wr->n_streams,
				json_object_get(j, "target_totals"));
	for (size_t op = 0; r == 0 && op < wr->n_ops; op++)
		r = restore_slices(results_slice_store(res), &wr->slices[op],
				   json_array_get(slices, op));
	if (r < 0)
		return r;
	wr->target_ops_total = json_number_value(json_object_get(j, "target_ops_total"));
	wr->active_ns = u64_of(j, "active_ns", &err);
	/* Absent from an older soakd's checkpoint: 0, rate_target then uses active_ns. */
	wr->sched_ns = (uint64_t)json_integer_value(json_object_get(j, "sched_ns"));
	wr->lag_max_ns = u64_of(j, "lag_max_ns", &err);
	wr->intervals = u64_of(j, "intervals", &err);
	json_t *late = json_object_get(j, "late_intervals");
	if (json_is_integer(late) && json_integer_value(late) > 0) {
		wr->late_intervals = (uint64_t)json_integer_value(late);
		wr->late_max_ns = u64_of(j, "late_max_ns", &err);
	}
	wr->slice_index = u64_of(j, "slice_index", &err);
	/* The pool's endpoints as the last record it holds left them. */
	json_t *eps = json_object_get(j, "endpoints");
	if (json_is_object(eps) && results_resume_endpoints(res, wr->workload->cfg->name, eps) < 0)
		return -ENOMEM;
	/* An older soakd's checkpoint has neither: it held what ended by
	 * its run time, as it was then replayed. */
	json_t *covered = json_object_get(j, "covered_ns");
	wr->covered_ns = covered ? u64_of(j, "covered_ns", &err) : run_ns;
	wr->merged_end_ns = json_object_get(j, "merged_end_ns") ? u64_of(j, "merged_end_ns", &err)
							       : wr->covered_ns;
	if (wr->covered_ns > run_ns)
		err = -EINVAL;
	wr->recorded = json_is_true(json_object_get(j, "recorded"));
	wr->recorded_sched_ns = u64_of(j, "recorded_sched_ns", &err);
	const char *state = json_string_value(json_object_get(j, "recorded_state"));
	const char *reason = json_string_value(json_object_get(j, "recorded_reason"));
	if (!state || !reason)
		return -EINVAL;
	snprintf(wr->recorded_state, sizeof(wr->recorded_state), "%s", state);
	snprintf(wr->recorded_reason, sizeof(wr->recorded_reason), "%s", reason);
	return err;
}

int results_restore(struct results *r, json_t *ck, uint64_t *ret_run_ns)
{
	json_t *workloads = json_object_get(ck, "workloads"), *j;
	int err = 0;
	size_t k;

	if (json_integer_value(json_object_get(ck, "version")) != CHECKPOINT_VERSION ||
	    !json_is_array(workloads))
		return -EINVAL;
	uint64_t run_ns = u64_of(ck, "run_ns", &err);
	uint64_t end = u64_of(ck, "recorded_end_ns", &err);
	uint64_t wall = u64_of(ck, "recorded_wall_ns", &err);
	if (err)
		return err;
	/* Every workload of the run, and no other (a run whose workloads
	 * changed is replayed whole). */
	if (json_array_size(workloads) != r->n)
		return -EINVAL;
	json_array_foreach(workloads, k, j) {
		const char *name = json_string_value(json_object_get(j, "name"));
		size_t i;
		for (i = 0; name && i < r->n; i++)
			if (strcmp(r->w[i].workload->cfg->name, name) == 0)
				break;
		if (!name || i == r->n)
			return -EINVAL;
		int ret = restore_workload(r, &r->w[i], j, run_ns);
		if (ret < 0)
			return ret;
	}
	r->recorded_end_ns = end;
	r->recorded_wall_ns = wall;
	r->checkpoint_ns = run_ns;
	*ret_run_ns = run_ns;
	return 0;
}

bool results_in_checkpoint(const struct results *r, json_t *rec)
{
	json_t *v = json_object_get(rec, "end_ns");
	if (!json_is_integer(v))
		v = json_object_get(rec, "run_ns");
	uint64_t at = json_is_integer(v) && json_integer_value(v) > 0
			      ? (uint64_t)json_integer_value(v) : 0;
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *name = json_string_value(json_object_get(rec, "workload"));

	if (type && name && strcmp(type, "interval") == 0)
		for (size_t i = 0; i < r->n; i++)
			if (strcmp(r->w[i].workload->cfg->name, name) == 0)
				return at <= r->w[i].covered_ns;
	return at <= r->checkpoint_ns;
}

uint64_t results_checkpoint_seek_ns(const struct results *r)
{
	uint64_t at = r->checkpoint_ns;
	for (size_t i = 0; i < r->n; i++)
		if (r->w[i].covered_ns < at)
			at = r->w[i].covered_ns;
	return at;
}
