// SPDX-License-Identifier: GPL-2.0-only
/*
 * A resumed run's log replayed into the results: each interval record
 * folded in as if it had just closed, and the workloads' recorded states.
 */
#include "results.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <systemd/sd-journal.h>

#include "rundir.h"
#include "stats_json.h"

#include "results_int.h"

static struct workload_results *find(struct results *r, const char *name, size_t *ret_index)
{
	for (size_t i = 0; name && i < r->n; i++)
		if (strcmp(r->w[i].workload->cfg->name, name) == 0) {
			if (ret_index)
				*ret_index = i;
			return &r->w[i];
		}
	return NULL;
}

static uint64_t get_u64(json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* A recorded interval: into the totals, the targets and the slices, as it
 * went when it was live (journald and the table already had it). */
static int replay_interval(struct results *r, struct workload_results *wr, json_t *rec)
{
	const struct workload *w = wr->workload;
	json_t *ops = json_object_get(rec, "ops");
	struct interval_row row = {
		.start_ns = get_u64(rec, "start_ns"), .end_ns = get_u64(rec, "end_ns"),
		.lag_max_ns = get_u64(rec, "lag_max_ns"),
	};
	int err = 0;

	if (!json_is_object(ops) || row.end_ns < row.start_ns)
		return -EINVAL;
	for (size_t op = 0; op < wr->n_ops; op++) {
		op_stats_reset(&wr->interval[op]);
		json_t *j = json_object_get(ops, w->op_names[op]);
		if (j && op_stats_merge_json(&wr->interval[op], j) < 0)
			err = -EINVAL;
	}
	json_t *targets = wr->n_streams > 1 ? json_object_get(rec, "targets") : NULL;
	for (size_t s = 0; s < wr->n_streams && s < json_array_size(targets); s++) {
		json_t *tops = json_object_get(json_array_get(targets, s), "ops");
		for (size_t op = 0; op < wr->n_ops; op++) {
			json_t *j = json_object_get(tops, w->op_names[op]);
			struct op_stats *t = &wr->target_totals[s * wr->n_ops + op];
			if (j && op_stats_merge_json(t, j) < 0)
				err = -EINVAL;
			/* The process that had them pending is gone. */
			t->pending = 0;
		}
	}
	double target = json_number_value(json_object_get(rec, "target_ops"));
	uint64_t span = row.end_ns - row.start_ns;
	/* A record of an older soakd lacks it: then all of an interval with
	 * ops scheduled. */
	json_t *jsched = json_object_get(rec, "scheduled_ns");
	uint64_t scheduled = jsched ? (uint64_t)json_integer_value(jsched) : target > 0 ? span : 0;
	fold_into_slice(r, wr, &row);
	for (size_t op = 0; op < wr->n_ops; op++) {
		summarize(&wr->interval[op], target * w->op_share[op], span, scheduled,
			  &row.ops[op]);
		op_stats_merge(&wr->totals[op], &wr->interval[op]);
		op_stats_reset(&wr->interval[op]);
	}
	wr->active_ns += span;
	wr->sched_ns += scheduled;
	wr->target_ops_total += target;
	if (row.lag_max_ns > wr->lag_max_ns)
		wr->lag_max_ns = row.lag_max_ns;
	if (json_is_true(json_object_get(rec, "generator_late"))) {
		uint64_t late = (uint64_t)(json_number_value(json_object_get(
			rec, "generator_late_ms")) * 1e6);
		wr->late_intervals++;
		if (late > wr->late_max_ns)
			wr->late_max_ns = late;
	}
	json_t *eps = json_object_get(rec, "endpoints");
	if (json_is_object(eps) && results_resume_endpoints(r, w->cfg->name, eps) < 0)
		err = -ENOMEM;
	wr->last = row;
	wr->have_last = true;
	wr->intervals++;
	wr->recorded = true;
	wr->recorded_sched_ns = get_u64(rec, "sched_ns");
	if (row.end_ns > wr->merged_end_ns)
		wr->merged_end_ns = row.end_ns;
	if (row.end_ns > r->recorded_end_ns)
		r->recorded_end_ns = row.end_ns;
	if (get_u64(rec, "wall_end_ns") > r->recorded_wall_ns)
		r->recorded_wall_ns = get_u64(rec, "wall_end_ns");
	return err;
}

int results_resume_endpoints(struct results *r, const char *workload, json_t *eps)
{
	if (!r->endpoints_last)
		r->endpoints_last = json_object();
	if (!r->endpoints_base)
		r->endpoints_base = json_object();
	if (!r->endpoints_last || !r->endpoints_base ||
	    json_object_set(r->endpoints_last, workload, eps) < 0 ||
	    json_object_set(r->endpoints_base, workload, eps) < 0)
		return -ENOMEM;
	return 0;
}

int results_replay(struct results *r, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	const char *name = json_string_value(json_object_get(rec, "workload"));
	struct workload_results *wr = find(r, name, NULL);

	if (!type)
		return -EINVAL;
	if (strcmp(type, "interval") == 0)
		return wr ? replay_interval(r, wr, rec) : -ENOENT;
	if (strcmp(type, "reload") == 0) {
		/* A workload whose definition a reload changed (or that it
		 * added back after an earlier one removed it) started over
		 * there: what it measured before belongs to the old one. */
		size_t k, i;
		json_t *v;
		const char *lists[] = { "replaced", "added" };
		for (size_t l = 0; l < 2; l++)
			json_array_foreach(json_object_get(rec, lists[l]), k, v)
				if (find(r, json_string_value(v), &i)) {
					if (results_set_workload(r, i, r->w[i].workload) < 0)
						return -ENOMEM;
					r->w[i].merged_end_ns = get_u64(rec, "run_ns");
				}
	}
	if (strcmp(type, "state") == 0 && wr) {
		const char *state = json_string_value(json_object_get(rec, "state"));
		const char *reason = json_string_value(json_object_get(rec, "reason"));
		snprintf(wr->recorded_state, sizeof(wr->recorded_state), "%s", state ? state : "");
		snprintf(wr->recorded_reason, sizeof(wr->recorded_reason), "%s", reason ? reason : "");
		wr->recorded = true;
	}
	if ((strcmp(type, "start") == 0 || strcmp(type, "gap") == 0 || strcmp(type, "state") == 0 ||
	     strcmp(type, "reload") == 0) &&
	    get_u64(rec, "run_ns") > r->recorded_end_ns)
		r->recorded_end_ns = get_u64(rec, "run_ns");
	if (get_u64(rec, "wall_ns") > r->recorded_wall_ns)
		r->recorded_wall_ns = get_u64(rec, "wall_ns");
	return 0;
}

void results_record_state(struct results *r, size_t i)
{
	const struct workload *w = r->w[i].workload;
	/* Started, stopped or resumed: no hole spans a change of state. */
	r->w[i].iv_prev_end_ns = 0;
	if (!r->rundir)
		return;
	uint64_t now = mono_ns();
	json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "type", "state", "workload",
				w->cfg->name, "state", workload_state_name(w->state),
				"reason", w->reason, "run_ns", (json_int_t)mono_since(r->run_start_ns, now),
				"wall_ns", (json_int_t)((int64_t)now + r->wall_offset_ns),
				"sched_ns", (json_int_t)(w->started_ns ? mono_since(w->started_ns, now) : 0));
	if (rec)
		rundir_append(r->rundir, rec);
	json_decref(rec);
	struct workload_results *wr = &r->w[i];
	wr->recorded = true;
	snprintf(wr->recorded_state, sizeof(wr->recorded_state), "%s", workload_state_name(w->state));
	snprintf(wr->recorded_reason, sizeof(wr->recorded_reason), "%s", w->reason);
	if (mono_since(r->run_start_ns, now) > r->logged_end_ns)
		r->logged_end_ns = mono_since(r->run_start_ns, now);
	if ((int64_t)now + r->wall_offset_ns > (int64_t)r->logged_wall_ns)
		r->logged_wall_ns = (uint64_t)((int64_t)now + r->wall_offset_ns);
}

