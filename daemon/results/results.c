// SPDX-License-Identifier: GPL-2.0-only
/*
 * The live accounting: each workload's intervals merged at the tick, closed
 * (holes and stalls marked), folded into slices and written to the run's
 * log.  results_slices.c keeps the closed intervals as slices;
 * results_replay.c reads a resumed run's log back; results_report.c reports
 * what this counts.
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

#include "base/log.h"
#include "workload/fidelity.h"
#include "rundir.h"
#include "stats_json.h"

#include "results_int.h"

struct consume_arg {
	struct workload_results *wr;
	size_t stream;
};

/* Where the workload's schedule stands at end_ns, as a resume goes on
 * from it: at the stop when one was asked (soakd stopping, a reload
 * replacing it) before end_ns.  The last interval ends where its drain
 * did, seconds after the schedule was cut; resumed from there, the ops
 * due between would be in neither run's target. */
static uint64_t sched_position(const struct workload *w, uint64_t end_ns)
{
	return mono_since(w->started_ns, workload_cut_at(w, end_ns));
}

static void consume_slot(const struct interval_slot *slot, size_t n_ops, void *userdata)
{
	struct consume_arg *a = userdata;
	struct workload_results *wr = a->wr;

	for (size_t op = 0; op < n_ops; op++) {
		struct op_stats *target = &wr->target_totals[a->stream * wr->n_ops + op];
		op_stats_merge(&wr->interval[op], &slot->ops[op]);
		if (wr->n_streams == 1) {
			/* target_totals is the totals (init_slot), which the
			 * interval goes into when it closes. */
			wr->interval[op].pending = slot->ops[op].pending;
			continue;
		}
		/* pending is a gauge: a stream's latest slot replaces what an
		 * earlier one said, and the streams' add up (summed afresh: a
		 * running difference wrapped below zero when a target's
		 * gauge came from a log or checkpoint of an earlier process). */
		op_stats_merge(target, &slot->ops[op]);
		target->pending = slot->ops[op].pending;
		uint64_t pending = 0;
		for (size_t s = 0; s < wr->n_streams; s++)
			pending += wr->target_totals[s * wr->n_ops + op].pending;
		wr->interval[op].pending = pending;
		if (wr->target_interval) {
			struct op_stats *ti = &wr->target_interval[a->stream * wr->n_ops + op];
			op_stats_merge(ti, &slot->ops[op]);
			ti->pending = slot->ops[op].pending;
		}
	}
	/* A stream's part of an interval already recorded without it (it
	 * was later than the grace) goes with this record, which starts
	 * where the last one ended: its ops are counted, the interval's
	 * target not again. */
	uint64_t start = slot->start_ns, end = slot->end_ns;
	if (wr->iv_prev_end_ns && start < wr->iv_prev_end_ns)
		start = wr->iv_prev_end_ns;
	if (end < start)
		end = start;
	if (!wr->iv_has_data || start < wr->iv_start_ns)
		wr->iv_start_ns = start;
	if (!wr->iv_has_data || end > wr->iv_end_ns)
		wr->iv_end_ns = end;
	if (slot->lag_max_ns > wr->iv_lag_max_ns)
		wr->iv_lag_max_ns = slot->lag_max_ns;
	if (slot->frozen_ns > wr->iv_frozen_ns)
		wr->iv_frozen_ns = slot->frozen_ns;
	wr->iv_cpu_ns += slot->cpu_ns;
	wr->iv_has_data = true;
}

static void free_slot(struct workload_results *wr)
{
	for (size_t s = 0; wr->stream_userdata && s < wr->n_streams; s++)
		free(wr->stream_userdata[s]);
	free(wr->stream_userdata);
	for (size_t op = 0; wr->slices && op < wr->n_ops; op++) {
		struct op_slices *sl = &wr->slices[op];
		for (size_t k = 0; k < sl->n; k++) {
			slice_text_free(&sl->stored[k].latency);
			slice_text_free(&sl->stored[k].service);
		}
		free(sl->stored);
		hist_delete(sl->latency);
		hist_delete(sl->service);
	}
	free(wr->slices);
	if (wr->target_totals != wr->totals)
		op_stats_array_free(wr->target_totals, wr->n_ops * wr->n_streams);
	op_stats_array_free(wr->totals, wr->n_ops);
	op_stats_array_free(wr->interval, wr->n_ops);
	op_stats_array_free(wr->target_interval, wr->n_ops * wr->n_streams);
	memset(wr, 0, sizeof(*wr));
}

/* A slot with nothing measured yet for workload w. */
static int init_slot(struct workload_results *wr, struct workload *w)
{
	memset(wr, 0, sizeof(*wr));
	wr->workload = w;
	wr->n_ops = w->n_ops;
	wr->n_streams = w->n_streams;
	wr->totals = op_stats_array(wr->n_ops);
	wr->interval = op_stats_array(wr->n_ops);
	/* One target: its totals are the workload's, not a copy of them. */
	wr->target_totals = wr->n_streams == 1 ? wr->totals : op_stats_array(wr->n_ops * wr->n_streams);
	if (wr->n_streams > 1) {
		wr->target_interval = op_stats_array(wr->n_ops * wr->n_streams);
		if (!wr->target_interval)
			goto fail;
	}
	wr->stream_userdata = calloc(wr->n_streams, sizeof(void *));
	wr->slices = calloc(wr->n_ops, sizeof(*wr->slices));
	if (!wr->totals || !wr->interval || !wr->target_totals || !wr->stream_userdata ||
	    !wr->slices)
		goto fail;
	for (size_t op = 0; op < wr->n_ops; op++) {
		wr->slices[op].latency = hist_new();
		wr->slices[op].service = hist_new();
		if (!wr->slices[op].latency || !wr->slices[op].service)
			goto fail;
	}
	for (size_t s = 0; s < wr->n_streams; s++) {
		struct consume_arg *a = malloc(sizeof(*a));
		if (!a)
			goto fail;
		*a = (struct consume_arg){ .wr = wr, .stream = s };
		wr->stream_userdata[s] = a;
	}
	return 0;
fail:
	free_slot(wr);
	return -ENOMEM;
}

struct results *results_new(const struct run_config *cfg, struct workload **workloads,
			    size_t n, int64_t run_start_ns, bool live_table)
{
	struct results *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cfg = cfg;
	r->run_start_ns = run_start_ns;
	r->live_table = live_table;
	/* Room for every workload a reload may add: the streams' consume
	 * arguments point into this array, so it never moves. */
	slice_store_init(&r->slices);
	r->w = calloc(CONFIG_MAX_WORKLOADS, sizeof(*r->w));
	if (!r->w)
		goto fail;
	for (; r->n < n; r->n++)
		if (init_slot(&r->w[r->n], workloads[r->n]) < 0)
			goto fail;
	return r;
fail:
	results_free(r);
	return NULL;
}

int results_set_workload(struct results *r, size_t i, struct workload *w)
{
	if (i > r->n || i >= CONFIG_MAX_WORKLOADS)
		return -ENOSPC;
	/* Set up aside first: out of memory, the slot keeps what it had
	 * (a reload leaves the old workload running in it). */
	struct workload_results fresh;
	int ret = init_slot(&fresh, w);
	if (ret < 0)
		return ret;
	if (i < r->n) {
		/* A workload started over: its pool's figures with it. */
		const char *name = r->w[i].workload ? r->w[i].workload->cfg->name : NULL;
		if (name && r->endpoints_last)
			json_object_del(r->endpoints_last, name);
		if (name && r->endpoints_base)
			json_object_del(r->endpoints_base, name);
		free_slot(&r->w[i]);
	}
	r->w[i] = fresh;
	/* Its streams' consumers point at the slot, not at fresh; one
	 * target's totals are the workload's (init_slot). */
	for (size_t s = 0; s < r->w[i].n_streams; s++)
		((struct consume_arg *)r->w[i].stream_userdata[s])->wr = &r->w[i];
	if (i == r->n)
		r->n++;
	/* What it measured before is dropped: a replay sets the reload
	 * record's time instead. */
	r->w[i].merged_end_ns = mono_since(r->run_start_ns, mono_ns());
	return 0;
}

void results_rebind_workload(struct results *r, size_t i, struct workload *w)
{
	r->w[i].workload = w;
}

void results_free(struct results *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->w && i < r->n; i++)
		free_slot(&r->w[i]);
	json_decref(r->host_last);
	json_decref(r->endpoints_last);
	json_decref(r->endpoints_base);
	slice_store_close(&r->slices);
	free(r->w);
	free(r);
}

/* The totals of a resumed run's pool go on from where its log left them:
 * each endpoint's recorded totals added to this start's. */
static void endpoints_add_base(json_t *base, json_t *eps)
{
	const char *url;
	json_t *e;

	if (!base)
		return;
	json_object_foreach(eps, url, e) {
		json_t *b = json_object_get(base, url);
		const char *keys[] = { "total_ops", "total_errors", "total_latency_us" };
		for (size_t k = 0; b && k < sizeof(keys) / sizeof(keys[0]); k++) {
			json_t *now = json_object_get(e, keys[k]), *then = json_object_get(b, keys[k]);
			if (json_is_integer(now) && json_is_integer(then))
				json_integer_set(now, json_integer_value(now) + json_integer_value(then));
		}
	}
}

/* The interval as a record of the run's log. */
static json_t *interval_record(struct results *r, struct workload_results *wr,
			       const struct interval_row *row, double target_ops)
{
	const struct workload *w = wr->workload;
	json_t *ops = json_object();

	for (size_t op = 0; op < wr->n_ops; op++) {
		json_t *j = op_stats_to_json(&wr->interval[op]);
		json_object_set_new(j, "share", json_real(w->op_share[op]));
		json_object_set_new(ops, w->op_names[op], j);
	}
	/* Signed: the run may have begun before this boot's monotonic 0. */
	int64_t wall_start = r->run_start_ns + (int64_t)row->start_ns + r->wall_offset_ns;
	int64_t wall_end = r->run_start_ns + (int64_t)row->end_ns + r->wall_offset_ns;
	json_t *rec = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o}", "type", "interval",
				"workload", w->cfg->name,
				"start_ns", (json_int_t)row->start_ns, "end_ns", (json_int_t)row->end_ns,
				"wall_start_ns", (json_int_t)wall_start, "wall_end_ns", (json_int_t)wall_end,
				"sched_ns", (json_int_t)sched_position(w, wr->iv_end_ns),
				"lag_max_ns", (json_int_t)row->lag_max_ns, "target_ops", target_ops,
				"ops", ops);
	if (rec) {
		json_object_set_new(rec, "cpu_s", json_real(row->cpu_ns / 1e9));
		json_object_set_new(rec, "main_cpu_s", json_real(row->main_cpu_ns / 1e9));
		json_object_set_new(rec, "frozen_ms", json_real(row->frozen_ns / 1e6));
	}
	if (rec && row->generator_late) {
		json_object_set_new(rec, "generator_late", json_true());
		json_object_set_new(rec, "generator_late_ms", json_real(row->late_ns / 1e6));
	}
	if (rec && wr->target_interval) {
		json_t *targets = json_array();
		for (size_t s = 0; s < wr->n_streams; s++) {
			json_t *tops = json_object();
			for (size_t op = 0; op < wr->n_ops; op++) {
				struct op_stats *o = &wr->target_interval[s * wr->n_ops + op];
				json_object_set_new(tops, w->op_names[op], op_stats_to_json(o));
			}
			json_array_append_new(targets, json_pack("{s:s,s:o}", "path",
								 w->streams[s].label, "ops", tops));
		}
		json_object_set_new(rec, "targets", targets);
	}
	if (rec && w->engine && w->engine->record_extra) {
		w->engine->record_extra(wr->workload, rec);
		json_t *eps = json_object_get(rec, "endpoints");
		if (eps)
			endpoints_add_base(json_object_get(r->endpoints_base, w->cfg->name), eps);
		if (eps && !r->endpoints_last)
			r->endpoints_last = json_object();
		if (eps && r->endpoints_last)
			json_object_set(r->endpoints_last, w->cfg->name, eps);
	}
	if (rec && r->record_extra)
		r->record_extra(r->record_extra_userdata, w, wr->iv_start_ns, wr->iv_end_ns, rec);
	return rec;
}

static void table_row(struct results *r, const struct workload_results *wr,
		      const struct interval_row *row)
{
	if (r->table_lines++ % 20 == 0)
		log_raw("%8s %-16s %-17s %10s %10s %9s %9s %9s %9s %7s %8s\n", "time",
			"workload", "op", "target/s", "ops/s", "p50(us)", "p99(us)", "p99.9(us)",
			"max(us)", "errors", "lag(ms)");
	for (size_t op = 0; op < wr->n_ops; op++) {
		const struct op_summary *s = &row->ops[op];
		log_raw("%7.1fs %-16s %-17s %10.1f %10.1f %9.1f %9.1f %9.1f %9.1f %7" PRIu64
			" %8.1f\n", row->end_ns / 1e9, wr->workload->cfg->name,
			wr->workload->op_names[op], s->rate_target, s->rate_achieved, s->p50 / 1e3,
			s->p99 / 1e3, s->p999 / 1e3, s->max / 1e3, s->errors, row->lag_max_ns / 1e6);
	}
}

/* Whether soakd itself was late in the interval (fidelity.h): its threads
 * woke late, or ops with a free slot were submitted late. */
static void mark_generator_late(const struct results *r, struct workload_results *wr,
				struct interval_row *row)
{
	struct hist issue;

	hist_init(&issue);
	for (size_t op = 0; op < wr->n_ops; op++)
		hist_merge(&issue, &wr->interval[op].issue_delay);
	row->generator_late = fidelity_interval_late(row->frozen_ns, &issue, r->cfg->interval_ns,
						     &row->late_ns);
	hist_free(&issue);
	if (row->generator_late) {
		wr->late_intervals++;
		if (row->late_ns > wr->late_max_ns)
			wr->late_max_ns = row->late_ns;
	}
}

/*
 * Writes the interval gathered in wr->interval.  stalled: soakd was frozen
 * or its loop blocked through it; an empty one is a hole that a plot
 * shows, a full one spans several intervals and says how many.
 */
static void close_interval_marked(struct results *r, struct workload_results *wr, bool stalled)
{
	const struct workload *w = wr->workload;
	struct interval_row row = { 0 };
	uint64_t span;
	double target;

	if (!wr->iv_has_data)
		return;
	span = wr->iv_end_ns > wr->iv_start_ns ? wr->iv_end_ns - wr->iv_start_ns : 0;
	target = workload_target_ops(w, wr->iv_start_ns, wr->iv_end_ns);
	uint64_t scheduled = workload_scheduled_ns(w, wr->iv_start_ns, wr->iv_end_ns);
	row.start_ns = mono_since(r->run_start_ns, wr->iv_start_ns);
	row.end_ns = mono_since(r->run_start_ns, wr->iv_end_ns);
	row.scheduled_ns = scheduled;
	row.lag_max_ns = wr->iv_lag_max_ns;
	row.cpu_ns = wr->iv_cpu_ns;
	uint64_t main_cpu = fidelity_thread_cpu_ns(); /* on the main thread */
	if (wr->main_cpu_mark_ns && main_cpu > wr->main_cpu_mark_ns)
		row.main_cpu_ns = main_cpu - wr->main_cpu_mark_ns;
	wr->main_cpu_mark_ns = main_cpu;
	row.frozen_ns = wr->iv_frozen_ns;
	mark_generator_late(r, wr, &row);
	fold_into_slice(r, wr, &row);
	if (r->on_interval && !stalled)
		r->on_interval(r->on_interval_userdata, r, (size_t)(wr - r->w), &row, target);
	uint64_t n_intervals = r->cfg->interval_ns ? (span + r->cfg->interval_ns / 2) / r->cfg->interval_ns
						   : 1;
	if (r->rundir) {
		json_t *rec = interval_record(r, wr, &row, target);
		if (rec)
			json_object_set_new(rec, "scheduled_ns", json_integer((json_int_t)scheduled));
		if (rec && (stalled || n_intervals > 1)) {
			json_object_set_new(rec, "stalled", json_true());
			json_object_set_new(rec, "intervals", json_integer((json_int_t)n_intervals));
		}
		if (rec)
			rundir_append(r->rundir, rec);
		json_decref(rec);
	}
	if (r->interval_seen)
		r->interval_seen(r->interval_seen_userdata, (size_t)(wr - r->w), row.generator_late,
				 wr->interval, wr->n_ops, mono_since(w->started_ns, wr->iv_end_ns));
	wr->iv_prev_end_ns = wr->iv_end_ns;
	wr->intervals++;
	/* What a replay of this record would know (checkpoints). */
	wr->recorded = true;
	wr->recorded_sched_ns = sched_position(w, wr->iv_end_ns);
	if (row.end_ns > r->logged_end_ns)
		r->logged_end_ns = row.end_ns;
	if (row.end_ns > wr->merged_end_ns)
		wr->merged_end_ns = row.end_ns;
	int64_t wall_end = r->run_start_ns + (int64_t)row.end_ns + r->wall_offset_ns;
	if (wall_end > (int64_t)r->logged_wall_ns)
		r->logged_wall_ns = (uint64_t)wall_end;
	for (size_t i = 0; wr->target_interval && i < wr->n_streams * wr->n_ops; i++)
		op_stats_reset(&wr->target_interval[i]);
	for (size_t op = 0; op < wr->n_ops; op++) {
		summarize(&wr->interval[op], target * w->op_share[op], span, scheduled,
			  &row.ops[op]);
		op_stats_merge(&wr->totals[op], &wr->interval[op]);
		wr->totals[op].pending = wr->interval[op].pending;
		/* The next interval starts from the pending ops this one left. */
		uint64_t pending = wr->interval[op].pending;
		op_stats_reset(&wr->interval[op]);
		wr->interval[op].pending = pending;
	}
	wr->active_ns += span;
	wr->sched_ns += scheduled;
	wr->target_ops_total += target;
	if (wr->iv_lag_max_ns > wr->lag_max_ns)
		wr->lag_max_ns = wr->iv_lag_max_ns;
	wr->iv_has_data = false;
	wr->iv_lag_max_ns = 0;
	wr->iv_cpu_ns = wr->iv_frozen_ns = 0;

	wr->last = row;
	wr->have_last = true;
	journal_row(r, wr, &row);
	if (r->live_table)
		table_row(r, wr, &row);
}

static void close_interval(struct results *r, struct workload_results *wr)
{
	close_interval_marked(r, wr, false);
}

/* The intervals between the last one recorded and start (CLOCK_MONOTONIC)
 * that no thread measured, soakd being frozen: one empty record each. */
static void record_hole(struct results *r, struct workload_results *wr, uint64_t start)
{
	uint64_t interval = r->cfg->interval_ns;

	if (!wr->iv_prev_end_ns || !interval || start < wr->iv_prev_end_ns + interval / 2)
		return;
	for (uint64_t at = wr->iv_prev_end_ns; at + interval / 2 < start;) {
		/* Up to the next boundary of the run, or to start. */
		uint64_t k = mono_since(r->run_start_ns, at) / interval + 1;
		uint64_t end = mono_at(r->run_start_ns, k * interval);
		if (end > start || start - end < interval / 2)
			end = start;
		wr->iv_start_ns = at;
		wr->iv_end_ns = end;
		wr->iv_lag_max_ns = 0;
		/* No thread ran through it: soakd was frozen all along. */
		wr->iv_frozen_ns = end - at;
		wr->iv_has_data = true;
		close_interval_marked(r, wr, true);
		at = end;
	}
}

/* How long an interval's record waits for a stream still running that
 * has not published its part yet (its thread held up: a sync, a probe,
 * starved of CPU).  Closed without it, the interval would become two
 * records, each with the whole interval's target.  Never more than two
 * intervals: the other streams publish meanwhile, and a ring of
 * STATS_SLOTS slots must not fill (its slots would merge intervals). */
#define LATE_STREAM_GRACE_NS (UINT64_C(1000) * 1000000)

static uint64_t late_stream_grace(const struct results *r)
{
	uint64_t most = (STATS_SLOTS - 2) * r->cfg->interval_ns;

	return most < LATE_STREAM_GRACE_NS ? most : LATE_STREAM_GRACE_NS;
}

/* A stream of wr's still running has published nothing yet: all of them
 * have published up to the end of the first slot, when none is late. */
static bool stream_late(const struct workload_results *wr)
{
	for (size_t s = 0; s < wr->n_streams; s++) {
		struct workload_stream *st = &wr->workload->streams[s];
		/* Read first: a thread that ended published its last slot
		 * before it said so. */
		if (!st->thread_started ||
		    atomic_load_explicit(&st->outcome, memory_order_acquire) != STREAM_RUNNING)
			continue;
		if (!stream_peek(&st->stats))
			return true;
	}
	return false;
}

/*
 * One record per interval the threads published, never several merged:
 * after soakd was frozen (SIGSTOP, a long stall) the slots published
 * meanwhile each become their own record, and the intervals no slot
 * covers become empty records marked "stalled".  The streams of a
 * workload publish the same boundaries; their slots for one interval
 * make one record.
 */
bool results_tick(struct results *r, uint64_t now_ns)
{
	bool waiting = false;

	for (size_t i = 0; i < r->n; i++) {
		struct workload_results *wr = &r->w[i];
		for (;;) {
			uint64_t first_end = UINT64_MAX, first_start = UINT64_MAX;
			for (size_t s = 0; s < wr->n_streams; s++) {
				const struct interval_slot *sl =
					stream_peek(&wr->workload->streams[s].stats);
				if (sl && sl->end_ns < first_end)
					first_end = sl->end_ns;
				if (sl && sl->start_ns < first_start)
					first_start = sl->start_ns;
			}
			if (first_end == UINT64_MAX)
				break;
			if (wr->iv_prev_end_ns && first_end <= wr->iv_prev_end_ns) {
				/* Parts of intervals already recorded, late:
				 * they join the next record (consume_slot). */
				for (size_t s = 0; s < wr->n_streams; s++) {
					struct stream_stats *st = &wr->workload->streams[s].stats;
					const struct interval_slot *sl = stream_peek(st);
					if (sl && sl->end_ns <= wr->iv_prev_end_ns)
						stream_consume_one(st, consume_slot,
								   wr->stream_userdata[s]);
				}
				continue;
			}
			if (wr->n_streams > 1 && now_ns < first_end + late_stream_grace(r) &&
			    stream_late(wr)) {
				waiting = true;
				break;
			}
			record_hole(r, wr, first_start);
			for (size_t s = 0; s < wr->n_streams; s++) {
				struct stream_stats *st = &wr->workload->streams[s].stats;
				const struct interval_slot *sl = stream_peek(st);
				/* The slot that ends first always goes: each
				 * pass takes at least one. */
				if (sl && (sl->start_ns < first_end || sl->end_ns == first_end))
					stream_consume_one(st, consume_slot, wr->stream_userdata[s]);
			}
			close_interval(r, wr);
		}
	}
	return waiting;
}

bool results_reap(struct results *r, size_t i)
{
	struct workload_results *wr = &r->w[i];
	bool changed = workload_reap(wr->workload, consume_slot, wr->stream_userdata);
	if (changed && !workload_is_active(wr->workload))
		close_interval(r, wr);
	return changed;
}

void results_wait(struct results *r, size_t i, uint64_t until_ns)
{
	struct workload_results *wr = &r->w[i];
	workload_wait(wr->workload, until_ns, consume_slot, wr->stream_userdata);
	close_interval(r, wr);
}

void results_release(struct results *r, size_t i)
{
	struct workload_results *wr = &r->w[i];
	workload_join(wr->workload, consume_slot, wr->stream_userdata);
	close_interval(r, wr);
	workload_release(wr->workload);
}

