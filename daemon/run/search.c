// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search (search_int.h): each probe's windows judged against
 * the target, the bisection over the rate, and the probes started one
 * after the other.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "results/results.h"
#include "results/rundir.h"
#include "workload/workload.h"

#include "search_int.h"

void search_reset_windows(struct search *s)
{
	for (size_t i = 0; i < SEARCH_MAX_WINDOWS; i++) {
		hist_free(&s->win[i].latency);
		hist_free(&s->win[i].missed_wait);
		memset(&s->win[i], 0, sizeof(s->win[i]));
		hist_init(&s->win[i].latency);
		hist_init(&s->win[i].missed_wait);
	}
	hist_reset(&s->all);
	hist_reset(&s->all_missed);
}

/* Reads, as ACT judges; every op of the schedule of a workload without
 * reads (not the object engine's prefill, cleanup or audit). */
static bool judged(const struct search *s, size_t op)
{
	bool has_read = false;
	for (size_t i = 0; i < s->n_ops; i++)
		has_read = has_read || strcmp(s->op_names[i], "read") == 0;
	if (has_read)
		return strcmp(s->op_names[op], "read") == 0;
	return s->op_share[op] > 0;
}

void search_interval_seen(void *userdata, size_t slot, bool generator_late,
			  const struct op_stats *ops, size_t n_ops, uint64_t sched_ns)
{
	struct search *s = userdata;

	if (slot != s->slot || s->answer)
		return;
	/* Intervals to the nearest: the probe starts a little after a
	 * boundary (see certify.c); its drain belongs to its last window. */
	uint64_t k = (sched_ns + s->interval_ns / 2) / s->interval_ns;
	uint64_t per = s->cfg->window_ns / s->interval_ns;
	size_t w = k ? (size_t)((k - 1) / per) : 0;
	if (w >= s->cfg->windows)
		w = s->cfg->windows - 1;
	struct search_window *win = &s->win[w];
	/* An object workload's prefill (each probe starts it anew): the ops
	 * due meanwhile miss because of it, not the rate, and they cannot be
	 * told apart in the interval's histogram, so the interval is not
	 * judged (as a certification's step, certify.c); its errors count. */
	if (s->prefill_op >= 0 && (size_t)s->prefill_op < n_ops &&
	    ops[s->prefill_op].count + ops[s->prefill_op].errors + ops[s->prefill_op].pending > 0) {
		win->prefill_intervals++;
		for (size_t op = 0; op < n_ops && op < s->n_ops; op++) {
			if (!judged(s, op))
				continue;
			win->errors += ops[op].errors;
			win->prefill_count += ops[op].count;
			win->prefill_missed += ops[op].missed;
		}
		s->intervals_seen++;
		if (generator_late)
			win->late_intervals++;
		return;
	}
	for (size_t op = 0; op < n_ops && op < s->n_ops; op++) {
		if (!judged(s, op))
			continue;
		win->count += ops[op].count;
		win->errors += ops[op].errors;
		win->missed += ops[op].missed;
		hist_merge(&win->latency, &ops[op].latency);
		hist_merge(&s->all, &ops[op].latency);
		hist_merge(&win->missed_wait, &ops[op].missed_wait);
		hist_merge(&s->all_missed, &ops[op].missed_wait);
	}
	win->intervals++;
	s->intervals_seen++;
	if (generator_late)
		win->late_intervals++;
}

/* The percentile with every missed op counted as slower than anything
 * (UINT64_MAX when it falls among them, or nothing completed).  h holds
 * the missed ops' waits too (mw): they are taken out, so that each missed
 * op counts once.  A log written before missed_wait was kept lacks them:
 * those missed ops count twice, erring towards "above", as they did. */
static uint64_t percentile_with_missed(const struct hist *h, const struct hist *mw,
				       uint64_t missed, double p)
{
	uint64_t done = h->count > mw->count ? h->count - mw->count : 0;
	double n = (double)done + (double)missed;

	if (!done || (double)missed > n * (1 - p / 100))
		return UINT64_MAX;
	/* The rank among n is the rank p' among the completed. */
	double p_done = p * n / (double)done;
	return hist_percentile_without(h, mw, p_done < 100 ? p_done : 100);
}

/* The record of the probe just held: its windows, its verdict. */
json_t *search_judge_probe(struct search *s, const struct workload *w)
{
	const struct search_config *sc = s->cfg;
	json_t *windows = json_array();
	unsigned below = 0, judged_windows = 0;
	uint64_t missed = 0, count = 0, errors = 0, late = 0;
	uint64_t pre_intervals = 0, pre_count = 0, pre_missed = 0;

	for (unsigned i = 0; i < sc->windows; i++) {
		const struct search_window *win = &s->win[i];
		pre_intervals += win->prefill_intervals;
		pre_count += win->prefill_count;
		pre_missed += win->prefill_missed;
		/* A window that held only the prefill is no window of the rate. */
		bool prefill_only = !win->intervals && win->prefill_intervals && !win->errors &&
				    !win->late_intervals;
		judged_windows += !prefill_only;
		uint64_t p = percentile_with_missed(&win->latency, &win->missed_wait, win->missed,
						    sc->percentile);
		/* A window soakd was late in says nothing of the target, and
		 * one with failed ops is no capacity: both count as above. */
		bool ok = win->intervals && p < sc->below_ns && !win->late_intervals && !win->errors;
		below += ok;
		missed += win->missed;
		count += win->count;
		errors += win->errors;
		late += win->late_intervals;
		json_t *jw = json_pack("{s:o,s:b,s:I,s:I}", "percentile_us",
			p == UINT64_MAX ? json_null() : json_real(p / 1e3), "below", ok, "count", (json_int_t)win->count,
			"generator_late", (json_int_t)win->late_intervals);
		if (jw && prefill_only)
			json_object_set_new(jw, "prefill", json_true());  /* not judged */

		json_array_append_new(windows, jw);
	}
	/* A workload that failed (max_lag: far behind) is above, whatever
	 * its windows before the failure said. */
	bool pass = below * 2 > judged_windows && w->state != WORKLOAD_FAILED;
	uint64_t pall = percentile_with_missed(&s->all, &s->all_missed, missed, sc->percentile);
	json_t *rec = json_pack("{s:s,s:I,s:f,s:s,s:I,s:I,s:f,s:f,s:f,s:o,s:I,s:I,s:I,s:I,s:o}",
		"type", "search", "probe", (json_int_t)(s->probes + 1), "rate", s->rate,
		"verdict", pass ? "below" : "above",
		"agreed", (json_int_t)(pass ? below : judged_windows - below),
		"windows", (json_int_t)judged_windows,
		"p50_us", hist_percentile(&s->all, 50) / 1e3,
		"p99_us", hist_percentile(&s->all, 99) / 1e3,
		"p999_us", hist_percentile(&s->all, 99.9) / 1e3,
		"percentile_us", pall == UINT64_MAX ? json_null() : json_real(pall / 1e3),
		"count", (json_int_t)count, "errors", (json_int_t)errors, "missed", (json_int_t)missed,
		"generator_late", (json_int_t)late, "by_window", windows);
	if (rec) {
		/* The target it was judged by, so the log alone says it. */
		json_object_set_new(rec, "percentile", json_real(sc->percentile));
		json_object_set_new(rec, "below_us", json_real(sc->below_ns / 1e3));
		json_object_set_new(rec, "window_s", json_real(sc->window_ns / 1e9));
	}
	if (rec && pre_intervals)
		json_object_set_new(rec, "prefill", json_pack("{s:I,s:I,s:I,s:s}", "intervals",
			(json_int_t)pre_intervals, "done_not_judged", (json_int_t)pre_count,
			"missed_not_judged", (json_int_t)pre_missed, "why", "the object pool was "
			"prefilled in them: the ops due meanwhile miss because of it, not the rate"));
	if (rec && w->state == WORKLOAD_FAILED)
		json_object_set_new(rec, "why", json_string(w->reason));
	return rec;
}

void search_apply_probe(struct search *s, json_t *probe)
{
	double rate = json_number_value(json_object_get(probe, "rate"));
	/* A damaged record (a log line cut and mended) without a verdict
	 * is no probe below the target. */
	const char *verdict = json_string_value(json_object_get(probe, "verdict"));
	bool below = verdict && strcmp(verdict, "below") == 0;

	if (below && rate > s->lo) {
		s->lo = rate;
		json_decref(s->lo_probe);
		s->lo_probe = json_incref(probe);
	} else if (!below && (s->hi == 0 || rate < s->hi)) {
		s->hi = rate;
		json_decref(s->hi_probe);
		s->hi_probe = json_incref(probe);
	}
	s->probes++;
	json_array_append(s->curve, probe);
}

bool search_done(const struct search *s)
{
	const struct search_config *sc = s->cfg;

	if (s->probes >= 1 && s->lo == 0)
		return true;   /* even "min" is above the target */
	if (s->lo >= sc->max_rate)
		return true;   /* "max" is below it */
	return s->lo > 0 && s->hi > 0 && s->hi - s->lo <= sc->resolution * s->hi;
}

double search_next_rate(const struct search *s)
{
	if (s->probes == 0)
		return s->cfg->min_rate;
	if (s->hi == 0)
		return s->cfg->max_rate;
	return (s->lo + s->hi) / 2;
}

json_t *search_answer_record(const struct search *s)
{
	const struct search_config *sc = s->cfg;
	char conf[256] = "";
	json_t *rec = json_pack("{s:s,s:f,s:f,s:I,s:f,s:f}", "type", "search", "percentile",
				sc->percentile, "below_us", sc->below_ns / 1e3, "probes",
				(json_int_t)s->probes, "lo", s->lo, "hi", s->hi);

	if (!rec)
		return NULL;
	if (s->lo_probe)
		snprintf(conf, sizeof(conf), "%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
			 " windows below at %.1f ops/s",
			 json_integer_value(json_object_get(s->lo_probe, "agreed")),
			 json_integer_value(json_object_get(s->lo_probe, "windows")), s->lo);
	if (s->hi_probe) {
		size_t n = strlen(conf);
		snprintf(conf + n, sizeof(conf) - n, "%s%" JSON_INTEGER_FORMAT " of %"
			 JSON_INTEGER_FORMAT " above at %.1f ops/s", n ? ", " : "",
			 json_integer_value(json_object_get(s->hi_probe, "agreed")),
			 json_integer_value(json_object_get(s->hi_probe, "windows")), s->hi);
	}
	json_object_set_new(rec, "answer_rate", s->lo > 0 ? json_real(s->lo) : json_null());
	if (s->gave_up)
		json_object_set_new(rec, "gave_up", json_true());   /* no soak follows */
	json_object_set_new(rec, "confidence", json_string(conf));
	/* "min" above: its probe's own why (the workload failed: its
	 * reason) says more than the latency. */
	const char *min_why = s->lo == 0 ? json_string_value(json_object_get(s->hi_probe, "why"))
					 : NULL;
	char why[400];
	snprintf(why, sizeof(why), "%s%s%s",
		 s->gave_up ? s->gave_up :
		 s->lo == 0 ? "even \"min\" is above the target" :
		 s->lo >= sc->max_rate ? "\"max\" is below the target: the capacity may be higher" :
		 "the highest rate below the target, within \"resolution\" of the lowest above",
		 min_why && !s->gave_up ? ": " : "", min_why && !s->gave_up ? min_why : "");
	json_object_set_new(rec, "why", json_string(why));
	return rec;
}

static void start_probe(struct daemon *d, struct search *s, double rate, uint64_t length_ns)
{
	char err[256];

	s->rate = rate;
	s->restart_pending = false;
	s->intervals_seen = 0;
	s->wcfg.steps[0] = (struct sched_step){ .scale = rate / s->orig->rate,
						.duration_ns = length_ns };
	s->wcfg.n_steps = 1;
	search_reset_windows(s);
	if (start_workload(d, s->slot, err, sizeof(err)) < 0) {
		/* Not run, so not judged: tried again at the next tick (the
		 * last probe's ops a stalled device still holds, say). */
		if (s->start_failures++ == 0)
			log_error("search: cannot start workload %s at %.1f ops/s: %s; trying again "
				  "each interval", s->wcfg.name, rate, err);
		s->restart_pending = true;
		return;
	}
	s->start_failures = 0;
}

/* The search has its answer: the soak after it, if asked for. */
static void finish(struct daemon *d, struct search *s)
{
	s->answer = search_answer_record(s);
	if (s->answer)
		search_publish(d, s->answer);
	if (s->cfg->then_fraction > 0 && s->lo > 0 && !s->gave_up) {
		s->soaking = true;
		log_notice("search: soaking at %g%% of %.1f ops/s", s->cfg->then_fraction * 100, s->lo);
		start_probe(d, s, s->lo * s->cfg->then_fraction, s->cfg->then_ns);
	}
}

void search_tick(struct daemon *d, uint64_t now_ns)
{
	struct search *s = d->search;

	(void)now_ns;
	if (!s || d->state == RUN_STOPPING)
		return;
	/* Over, but for a soak that could not start yet. */
	if (s->answer && !(s->soaking && s->restart_pending))
		return;
	const struct workload *w = d->workloads[s->slot];
	if (workload_is_active(w) || d->pending_start_ns[s->slot] || w->state == WORKLOAD_IDLE)
		return;
	if (w->state == WORKLOAD_STOPPED && s->answer) {
		/* Stopped while its soak waited to start: the answer stands. */
		log_notice("search: workload %s was stopped: no soak", w->cfg->name);
		s->soaking = s->restart_pending = false;
		return;
	}
	if (w->state == WORKLOAD_STOPPED) {
		log_notice("search: workload %s was stopped: the search ends", w->cfg->name);
		/* Its answer says so, not that the bracket closed. */
		if (!search_done(s))
			s->gave_up = "the workload was stopped before the search was done";
		finish(d, s);
		return;
	}
	if (s->restart_pending) {
		if (s->start_failures >= SEARCH_START_TRIES && s->answer) {
			log_error("search: workload %s could not start its soak in %u tries",
				  w->cfg->name, s->start_failures);
			s->soaking = s->restart_pending = false;
			return;
		}
		if (s->start_failures >= SEARCH_START_TRIES) {
			log_error("search: workload %s could not start at %.1f ops/s in %u tries: "
				  "the search ends", w->cfg->name, s->rate, s->start_failures);
			s->gave_up = "a probe could not start";
			s->restart_pending = false;
			finish(d, s);
			return;
		}
		start_probe(d, s, s->rate, s->soaking ? s->cfg->then_ns
						       : s->cfg->window_ns * s->cfg->windows);
		return;
	}
	/* Finished its probe, or failed (max_lag: far above the target). */
	json_t *rec = search_judge_probe(s, w);
	if (!rec)
		return;
	search_apply_probe(s, rec);
	search_publish(d, rec);
	json_decref(rec);
	if (search_done(s))
		finish(d, s);
	else
		start_probe(d, s, search_next_rate(s), s->cfg->window_ns * s->cfg->windows);
}

bool search_holds_run(const struct search *s)
{
	return s && s->restart_pending && (!s->answer || s->soaking);
}

void search_free(struct search *s)
{
	if (!s)
		return;
	json_decref(s->lo_probe);
	json_decref(s->hi_probe);
	json_decref(s->curve);
	json_decref(s->answer);
	for (size_t i = 0; i < SEARCH_MAX_WINDOWS; i++) {
		hist_free(&s->win[i].latency);
		hist_free(&s->win[i].missed_wait);
	}
	hist_free(&s->all);
	hist_free(&s->all_missed);
	free(s);
}

int search_begin(struct daemon *d, bool resume)
{
	const struct search_config *sc = &d->cfg->search;
	const struct workload_config *orig = NULL;
	struct search *s;
	size_t slot = 0;

	/* A new run after an old one: the workload's own definition back. */
	if (d->search) {
		d->workloads[d->search->slot]->cfg = d->search->orig;
		search_free(d->retired_search);
		d->retired_search = d->search;  /* its copy stays until the workloads go */
		d->search = NULL;
	}
	if (!sc->enabled)
		return 0;
	for (slot = 0; slot < d->n_workloads; slot++)
		if (d->workloads[slot]->cfg->searched && !d->removed[slot]) {
			orig = d->workloads[slot]->cfg;
			break;
		}
	if (!orig)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->curve = json_array())) {
		free(s);
		return log_error_errno(-ENOMEM, "cannot set up the search");
	}
	s->cfg = sc;
	s->run_name = d->cfg->name;
	s->interval_ns = d->cfg->interval_ns;
	s->slot = slot;
	s->orig = orig;
	s->wcfg = *orig;
	s->n_ops = d->workloads[slot]->n_ops < STATS_MAX_OPS ? d->workloads[slot]->n_ops
							      : STATS_MAX_OPS;
	memcpy(s->op_names, d->workloads[slot]->op_names, sizeof(s->op_names));
	memcpy(s->op_share, d->workloads[slot]->op_share, sizeof(s->op_share));
	s->prefill_op = -1;
	for (size_t op = 0; op < s->n_ops && op < STATS_MAX_OPS; op++)
		if (s->op_share[op] == 0 && strcmp(s->op_names[op], "prefill") == 0)
			s->prefill_op = (int)op;
	search_reset_windows(s);
	s->rate = sc->min_rate;
	if (resume && d->rundir) {
		int r = search_read_back(s, rundir_log_path(d->rundir));
		if (r < 0) {
			search_free(s);
			return log_error_errno(r, "cannot read the search back from the run's log");
		}
	}
	/* The probe (or soak) to run, or to resume where it was. */
	if (!s->answer)
		s->rate = search_next_rate(s);
	else if (s->cfg->then_fraction > 0 && s->lo > 0 &&
		 !json_is_true(json_object_get(s->answer, "gave_up")))
		s->rate = s->lo * s->cfg->then_fraction, s->soaking = true;
	s->wcfg.steps[0].scale = s->rate / orig->rate;
	if (s->soaking)
		s->wcfg.steps[0].duration_ns = sc->then_ns;
	/* Killed after a probe's verdict, before the next one ran. */
	s->restart_pending = resume && !s->answer && s->probes && !s->intervals_seen;
	d->workloads[slot]->cfg = &s->wcfg;
	d->search = s;
	d->results->interval_seen = search_interval_seen;
	d->results->interval_seen_userdata = s;
	return 0;
}
