// SPDX-License-Identifier: GPL-2.0-only
/*
 * Judging a certification's steps (certify.h): the intervals of each
 * certified workload are added up per step as the results record them;
 * when every certified workload's schedule has passed the end of the
 * step held, the step is judged, and the first that fails ends the
 * certification and stops the certified workloads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config/config_certify.h"
#include "report.h"
#include "results/results.h"
#include "results/rundir.h"
#include "workload/workload.h"

#include "certify_int.h"
#include "daemon_int.h"

#define WHY_MAX 480

/*
 * An object workload prefills its pool before its mix runs; the ops that
 * come due meanwhile are missed (obj_stream.c), with their wait so far in
 * the latency histogram, in the intervals they were due in.  Such an
 * interval measures the prefill, not the step's load, and its ops cannot
 * be told apart in the histogram: the step's clock starts after it.  Its
 * ops are counted aside (the verdict says how many), not judged on
 * latency or missed; its errors and corrupt reads still fail the step.
 */
void certify_add_interval(struct certify_part *p, bool generator_late,
			  const struct op_stats *ops, size_t n_ops, int prefill_op)
{
	/* A prefill op ended in it, or one was still in flight at its end
	 * (a PUT slower than an interval). */
	bool prefilling = prefill_op >= 0 && (size_t)prefill_op < n_ops &&
			  ops[prefill_op].count + ops[prefill_op].errors + ops[prefill_op].pending > 0;

	if (prefilling) {
		p->prefill_intervals++;
		for (size_t op = 0; op < n_ops && op < STATS_MAX_OPS; op++) {
			p->ops[op].errors += ops[op].errors;
			p->ops[op].corrupt += op_stats_wrong_data(&ops[op]);
			if ((int)op != prefill_op)
				p->prefill_count += ops[op].count;
			p->prefill_missed += ops[op].missed;
		}
		if (generator_late)
			p->late_intervals++;
		return;
	}
	for (size_t op = 0; op < n_ops && op < STATS_MAX_OPS; op++) {
		struct certify_op *o = &p->ops[op];
		o->count += ops[op].count;
		o->errors += ops[op].errors;
		o->missed += ops[op].missed;
		/* An object's stale, lost or resurrected reads, not only
		 * corrupt ones: the same wrong data the reports fail on. */
		o->corrupt += op_stats_wrong_data(&ops[op]);
		hist_merge(&o->latency, &ops[op].latency);
		hist_merge(&o->missed_wait, &ops[op].missed_wait);
	}
	p->intervals++;
	if (generator_late)
		p->late_intervals++;
}

/*
 * A workload's schedule starts a little after the run's time 0 (its
 * threads start), so its position at an interval's end is a hair short of
 * the boundary: intervals are counted to the nearest, and a step of hold
 * h is the h / interval intervals that end nearest its end and before.
 */
static uint64_t intervals_at(const struct certify *c, uint64_t sched_ns)
{
	return (sched_ns + c->interval_ns / 2) / c->interval_ns;
}

/* The intervals from the load's start to the current step's end. */
static uint64_t step_end(const struct certify *c)
{
	if (c->confirming)
		return c->cfg->confirm_ns / c->interval_ns;
	return (c->step + 1) * (c->cfg->hold_ns / c->interval_ns);
}

bool certify_step_reached(const struct certify *c, uint64_t sched_ns)
{
	return intervals_at(c, sched_ns) >= step_end(c);
}

/* The last step (or the confirmation) ends its load's schedule: the ops
 * in flight then complete in the drain, which is its own.  Judged when
 * the workload is over, or an interval after the step's end: an object
 * workload goes on with its cleanup, which is not the step's. */
static bool last_step(const struct certify *c)
{
	return c->confirming || c->step + 1 == c->cfg->n_steps;
}

size_t certify_step_of(const struct certify *c, uint64_t sched_ns)
{
	uint64_t k = intervals_at(c, sched_ns);
	size_t step = k ? (size_t)((k - 1) / (c->cfg->hold_ns / c->interval_ns)) : 0;
	/* The drain after the last step's end belongs to it. */
	return step < c->cfg->n_steps ? step : c->cfg->n_steps - 1;
}

double certify_step_rate(const struct certify *c, size_t step)
{
	double rate = 0;
	for (size_t i = 0; i < c->n_loads; i++)
		rate += c->loads[i].cfg->rate * c->cfg->loads[step] * c->loads[i].cfg->certify_unit;
	return rate;
}

/* An empty part over one that holds no buckets (the calloc'd loads, or a
 * part whose histograms were moved away). */
static void certify_part_init(struct certify_part *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t op = 0; op < STATS_MAX_OPS; op++) {
		hist_init(&p->ops[op].latency);
		hist_init(&p->ops[op].missed_wait);
	}
}

static void certify_part_free(struct certify_part *p)
{
	for (size_t op = 0; op < STATS_MAX_OPS; op++) {
		hist_free(&p->ops[op].latency);
		hist_free(&p->ops[op].missed_wait);
	}
}

void certify_part_reset(struct certify_part *p)
{
	certify_part_free(p);
	certify_part_init(p);
}

/* results' interval_seen: an interval of workload slot was recorded. */
void certify_interval_seen(void *userdata, size_t slot, bool generator_late,
			  const struct op_stats *ops, size_t n_ops, uint64_t sched_ns)
{
	struct certify *c = userdata;

	if (c->answer || (c->confirming && !c->confirm_started))
		return;   /* over, or the steps' last intervals before the confirmation */
	for (size_t i = 0; i < c->n_loads; i++) {
		struct certify_load *l = &c->loads[i];
		if (l->slot != slot)
			continue;
		/* Past the drain's interval: the cleanup's, no step's. */
		bool past = last_step(c) && intervals_at(c, sched_ns) > step_end(c) + 1;
		if (c->confirming) {
			if (!past)
				certify_add_interval(&l->part[0], generator_late, ops, n_ops,
						     l->prefill_op);
			l->sched_ns = sched_ns > l->sched_ns ? sched_ns : l->sched_ns;
			return;
		}
		size_t step = certify_step_of(c, sched_ns);
		if (step < c->step || (past && step == c->step))
			return;       /* a step judged already, or the cleanup after the last */
		certify_add_interval(&l->part[step == c->step ? 0 : 1], generator_late, ops, n_ops,
				     l->prefill_op);
		if (sched_ns > l->sched_ns)
			l->sched_ns = sched_ns;
		return;
	}
}

struct why {
	char text[WHY_MAX];
	size_t len;
	bool failed;
};

static void __attribute__((format(printf, 2, 3))) why_add(struct why *w, const char *fmt, ...)
{
	va_list ap;

	if (w->len + 8 >= sizeof(w->text))
		return;
	if (w->len) {
		memcpy(w->text + w->len, "; ", 3);
		w->len += 2;
	}
	va_start(ap, fmt);
	int n = vsnprintf(w->text + w->len, sizeof(w->text) - w->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->len = w->len + (size_t)n < sizeof(w->text) ? w->len + (size_t)n : sizeof(w->text) - 1;
	w->failed = true;
}

/* Reads are what ACT judges; a workload without reads is judged on
 * every op of its schedule (soakctl report's rule), not on the object
 * engine's prefill, cleanup or audit, which come before or after it. */
static bool judged(const struct certify_load *l, size_t op)
{
	bool has_read = false;
	for (size_t i = 0; i < l->n_ops; i++)
		has_read = has_read || strcmp(l->op_names[i], "read") == 0;
	if (has_read)
		return strcmp(l->op_names[op], "read") == 0;
	return l->op_share[op] > 0;
}

double certify_pct_over(const struct hist *latency, const struct hist *missed_wait,
			uint64_t missed, uint64_t threshold_ns)
{
	/* A missed op's wait is a lower bound: it counts as over every
	 * threshold, whatever its recorded wait was.  The latencies hold
	 * the waits too: those over it are taken out (a log written before
	 * missed_wait was kept lacks them, and its missed ops over the
	 * threshold count twice, as they did then). */
	double n = (double)latency->count, m = (double)missed_wait->count;
	double above = report_pct_above(latency, threshold_ns) * n / 100 -
		       report_pct_above(missed_wait, threshold_ns) * m / 100 + (double)missed;

	if (n <= 0)
		return 0;
	above = above < 0 ? 0 : above < n ? above : n;
	return 100 * above / n;
}

static json_t *op_table(const struct certify *c, const struct certify_load *l, size_t op,
			struct why *why)
{
	const struct certify_op *o = &l->part[0].ops[op];
	const struct certify_config *cc = c->cfg;
	bool is_judged = judged(l, op);
	json_t *over = json_array();
	const char *name = l->op_names[op];

	for (size_t t = 0; t < cc->n_thresholds; t++) {
		double pct = certify_pct_over(&o->latency, &o->missed_wait, o->missed,
					      cc->thresholds_ns[t]);
		json_array_append_new(over, json_real(pct));
		if (is_judged && cc->limits_pct[t] >= 0 && pct >= cc->limits_pct[t])
			why_add(why, "%s %s: %.3g%% of ops over %g ms, the limit is %g%%",
				l->cfg->name, name, pct, cc->thresholds_ns[t] / 1e6, cc->limits_pct[t]);
	}
	if (o->errors)
		why_add(why, "%s %s: %" PRIu64 " ops failed", l->cfg->name, name, o->errors);
	if (o->corrupt)
		why_add(why, "%s %s: %" PRIu64 " ops read back data other than was written "
			"(corrupt, stale, lost, resurrected or wrongly listed)", l->cfg->name, name,
			o->corrupt);
	return json_pack("{s:b,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:o}", "judged", is_judged,
			 "count", (json_int_t)o->count, "errors", (json_int_t)o->errors,
			 "missed", (json_int_t)o->missed, "corrupt", (json_int_t)o->corrupt,
			 "p50_us", hist_percentile(&o->latency, 50) / 1e3,
			 "p99_us", hist_percentile(&o->latency, 99) / 1e3,
			 "p999_us", hist_percentile(&o->latency, 99.9) / 1e3,
			 "max_us", hist_max(&o->latency) / 1e3, "over_pct", over);
}

json_t *certify_judge(struct daemon *d, struct certify *c)
{
	const struct certify_config *cc = c->cfg;
	struct why why = { .len = 0 };
	json_t *workloads = json_array();
	char load[32], note[WHY_MAX] = "";
	size_t note_len = 0;

	for (size_t i = 0; i < c->n_loads; i++) {
		struct certify_load *l = &c->loads[i];
		const struct certify_part *p = &l->part[0];
		const struct workload *w = d->workloads[l->slot];
		json_t *ops = json_object();
		uint64_t judged_ops = 0;

		for (size_t op = 0; op < l->n_ops; op++) {
			json_object_set_new(ops, l->op_names[op], op_table(c, l, op, &why));
			if (judged(l, op))
				judged_ops += p->ops[op].count;
		}
		if (p->late_intervals)
			why_add(&why, "%s: soakd itself was late (generator_late) in %" PRIu64 " of %"
				PRIu64 " intervals, so the step measured soakd, not the target",
				l->cfg->name, p->late_intervals, p->intervals);
		if (!certify_step_reached(c, l->sched_ns))
			why_add(&why, "%s %s before the step's hold ended%s%s", l->cfg->name,
				workload_state_name(w->state), w->reason[0] ? ": " : "", w->reason);
		else if (!judged_ops)
			why_add(&why, "%s: no judged op completed in the step", l->cfg->name);
		json_t *jl = json_pack("{s:s,s:I,s:I,s:o}", "workload",
			l->cfg->name, "intervals", (json_int_t)p->intervals, "generator_late",
			(json_int_t)p->late_intervals, "ops", ops);
		if (jl && p->prefill_intervals) {
			json_object_set_new(jl, "prefill", json_pack("{s:I,s:I,s:I}", "intervals",
				(json_int_t)p->prefill_intervals, "done_not_judged",
				(json_int_t)p->prefill_count, "missed_not_judged",
				(json_int_t)p->prefill_missed));
			int n = snprintf(note + note_len, sizeof(note) - note_len,
				"; not judged: %s's first %" PRIu64 " interval(s), in which its object "
				"pool was prefilled (%" PRIu64 " ops done, %" PRIu64 " that came due "
				"meanwhile missed)", l->cfg->name, p->prefill_intervals,
				p->prefill_count, p->prefill_missed);
			if (n > 0 && note_len + (size_t)n < sizeof(note))
				note_len += (size_t)n;
		}
		json_array_append_new(workloads, jl);
	}
	size_t step = c->confirming ? c->best : c->step;
	uint64_t start = c->confirming ? c->confirm_run_ns
				       : c->loads[0].cfg->start_offset_ns + c->step * cc->hold_ns;
	uint64_t hold = c->confirming ? cc->confirm_ns : cc->hold_ns;
	certify_load_name(cc->loads[step], load, sizeof(load));
	char why_text[2 * WHY_MAX];
	snprintf(why_text, sizeof(why_text), "%s%s", why.failed ? why.text
		 : "every judged op within its limits, no errors, no corrupt data, soakd on time",
		 note);
	json_t *rec = json_pack("{s:s,s:I,s:I,s:s,s:f,s:f,s:I,s:I,s:s,s:s,s:o}", "type", "certify",
			 "step", (json_int_t)(step + 1), "of", (json_int_t)cc->n_steps,
			 "load", load, "load_x", cc->loads[step], "rate",
			 certify_step_rate(c, step), "start_ns", (json_int_t)start, "end_ns",
			 (json_int_t)(start + hold), "verdict", why.failed ? "fail" : "pass",
			 "why", why_text, "workloads", workloads);
	if (rec && c->confirming)
		json_object_set_new(rec, "confirm", json_true());
	/* What it was judged by, so a reader of the log alone can say. */
	if (rec) {
		json_t *t = json_array(), *l = json_array();
		for (size_t i = 0; i < cc->n_thresholds; i++) {
			json_array_append_new(t, json_real(cc->thresholds_ns[i] / 1e6));
			json_array_append_new(l, cc->limits_pct[i] >= 0 ? json_real(cc->limits_pct[i])
									: json_null());
		}
		json_object_set_new(rec, "thresholds_ms", t);
		json_object_set_new(rec, "limits_pct", l);
	}
	return rec;
}

bool certify_step_over(const struct daemon *d, const struct certify *c)
{
	/* A middle step's ops in flight at its end go into the next step. */
	bool last = last_step(c);

	for (size_t i = 0; i < c->n_loads; i++) {
		const struct certify_load *l = &c->loads[i];
		const struct workload *w = d->workloads[l->slot];
		bool drained = !workload_is_active(w) ||
			       intervals_at(c, l->sched_ns) >= step_end(c) + 1;
		if (certify_step_reached(c, l->sched_ns) && (!last || drained))
			continue;
		if (workload_is_active(w) || d->pending_start_ns[l->slot] ||
		    w->state == WORKLOAD_IDLE)
			return false;
	}
	return true;
}

void certify_end(struct daemon *d, struct certify *c, bool stop)
{
	char reason[128], load[32];

	if (certify_confirm_begin(d, c, stop))
		return;
	c->answer = certify_answer_record(c);
	if (c->answer)
		certify_publish(d, c->answer);
	if (!stop)
		return;
	certify_load_name(c->cfg->loads[c->step], load, sizeof(load));
	snprintf(reason, sizeof(reason), "the certification ended: step %zu (%s) failed",
		 c->step + 1, load);
	for (size_t i = 0; i < c->n_loads; i++)
		if (workload_is_active(d->workloads[c->loads[i].slot]))
			workload_request_stop(d->workloads[c->loads[i].slot], reason);
}

bool certify_holds_stopped(const struct certify *c, size_t slot)
{
	if (!c || !(c->answer || (c->confirming && !c->confirm_started)))
		return false;
	for (size_t i = 0; i < c->n_loads; i++)
		if (c->loads[i].slot == slot)
			return true;
	return false;
}

bool certify_holds_run(const struct certify *c)
{
	return c && !c->answer && c->confirming && !c->confirm_started;
}

void certify_tick(struct daemon *d, uint64_t now_ns)
{
	struct certify *c = d->certify;

	(void)now_ns;
	if (!c || c->answer || d->state == RUN_STOPPING)
		return;
	if (c->confirming) {
		certify_confirm_tick(d, c);
		return;
	}
	while (!c->answer && certify_step_over(d, c)) {
		json_t *rec = certify_judge(d, c);
		if (!rec)
			return;  /* out of memory: judged at the next tick */
		bool pass = strcmp(json_string_value(json_object_get(rec, "verdict")), "pass") == 0;
		json_array_append_new(c->verdicts, rec);
		certify_publish(d, rec);
		if (!pass || c->step + 1 == c->cfg->n_steps) {
			certify_end(d, c, !pass);
			return;
		}
		c->step++;
		for (size_t i = 0; i < c->n_loads; i++) {
			/* part[1]'s buckets move to part[0]. */
			certify_part_free(&c->loads[i].part[0]);
			c->loads[i].part[0] = c->loads[i].part[1];
			certify_part_init(&c->loads[i].part[1]);
		}
	}
}

void certify_free(struct certify *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->loads && i < c->n_loads; i++) {
		certify_part_free(&c->loads[i].part[0]);
		certify_part_free(&c->loads[i].part[1]);
	}
	free(c->loads);
	free(c->confirm_cfg);
	json_decref(c->verdicts);
	json_decref(c->answer);
	free(c);
}

int certify_begin(struct daemon *d, bool resume)
{
	const struct certify_config *cc = &d->cfg->certify;
	struct certify *c;

	/* A new run after an old one: its workloads on their own definitions. */
	if (d->certify)
		certify_confirm_release(d, d->certify);
	certify_free(d->certify);
	d->certify = NULL;
	if (!cc->enabled)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < d->n_workloads; i++)
		n += d->workloads[i]->cfg->certified && !d->removed[i];
	if (!n)
		return 0;
	/* Each holds two steps' histograms per op: only the certified. */
	c = calloc(1, sizeof(*c));
	if (!c || !(c->loads = calloc(n, sizeof(*c->loads))) ||
	    !(c->confirm_cfg = calloc(n, sizeof(*c->confirm_cfg))) ||
	    !(c->verdicts = json_array())) {
		certify_free(c);
		return log_error_errno(-ENOMEM, "cannot set up the certification");
	}
	c->cfg = cc;
	c->run_name = d->cfg->name;
	c->interval_ns = d->cfg->interval_ns;
	for (size_t i = 0; i < d->n_workloads; i++) {
		const struct workload *w = d->workloads[i];
		if (!w->cfg->certified || d->removed[i])
			continue;
		struct certify_load *l = &c->loads[c->n_loads++];
		l->slot = i;
		l->cfg = w->cfg;
		l->n_ops = w->n_ops < STATS_MAX_OPS ? w->n_ops : STATS_MAX_OPS;
		memcpy(l->op_names, w->op_names, sizeof(l->op_names));
		memcpy(l->op_share, w->op_share, l->n_ops * sizeof(l->op_share[0]));
		l->prefill_op = -1;
		for (size_t op = 0; op < l->n_ops; op++)
			if (l->op_share[op] == 0 && strcmp(l->op_names[op], "prefill") == 0)
				l->prefill_op = (int)op;
		certify_part_reset(&l->part[0]);
		certify_part_reset(&l->part[1]);
	}
	if (resume && d->rundir) {
		int r = certify_read_back(c, rundir_log_path(d->rundir));
		if (r < 0) {
			certify_free(c);
			return log_error_errno(r, "cannot read the certification back from the run's log");
		}
		certify_confirm_resume(d, c);
		/* soakd stopped between the last verdict and the answer. */
		if (c->answer_unlogged)
			certify_publish(d, c->answer);
		c->answer_unlogged = false;
	}
	d->certify = c;
	d->results->interval_seen = certify_interval_seen;
	d->results->interval_seen_userdata = c;
	return 0;
}
