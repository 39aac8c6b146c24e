// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drift alarms over a run (drift.h): a test per workload slot and op, fed
 * from the results' interval hook on the main thread, and what an alarm
 * does (journal, run log, status, gauge, stop).
 */
#include "drift.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/journal_ids.h"
#include "base/log.h"
#include "config/config_drift.h"
#include "results/rundir.h"
#include "results/stats_json.h"
#include "workload/workload.h"

#include "drift_detect.h"

struct drift_slot {
	const struct workload_config *cfg;  /* the definition the tests are for */
	struct drift_op *ops;               /* [n_ops] */
	size_t n_ops;
};

struct drift {
	struct drift_slot slots[CONFIG_MAX_WORKLOADS];
	json_t *state;
	json_t *events;                     /* the run's alarms, as logged */
	uint64_t alarms;
};

int drift_new(struct drift **ret)
{
	struct drift *d = calloc(1, sizeof(*d));

	if (!d || !(d->state = json_object()) || !(d->events = json_array())) {
		if (d)
			json_decref(d->state);
		free(d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

static void slot_clear(struct drift_slot *s)
{
	for (size_t i = 0; s->ops && i < s->n_ops; i++)
		drift_op_free(&s->ops[i]);
	free(s->ops);
	*s = (struct drift_slot){ 0 };
}

void drift_free(struct drift *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < CONFIG_MAX_WORKLOADS; i++)
		slot_clear(&d->slots[i]);
	json_decref(d->state);
	json_decref(d->events);
	free(d);
}

json_t *drift_state(const struct drift *d)
{
	return d ? d->state : NULL;
}

uint64_t drift_alarms(const struct drift *d)
{
	return d ? d->alarms : 0;
}

json_t *drift_events(const struct drift *d)
{
	return d ? d->events : NULL;
}

void drift_status(const struct drift *d, char *buf, size_t len)
{
	const char *wname, *oname, *mname;
	json_t *ops, *metrics, *v;
	size_t at = 0;

	if (len)
		buf[0] = '\0';
	if (!d)
		return;
	json_object_foreach(d->state, wname, ops)
		json_object_foreach(ops, oname, metrics)
			json_object_foreach(metrics, mname, v) {
				if (!json_integer_value(v) || at >= len)
					continue;
				int n = snprintf(buf + at, len - at, "%s%s/%s %s",
						 at ? ", " : "drift: ", wname, oname, mname);
				at = n < 0 ? len : at + (size_t)n;
			}
}

/* The slot's tests, for the workload it measures now (a reload that
 * replaced its definition starts them afresh). */
static struct drift_slot *slot_for(struct drift *d, size_t index, const struct workload *w)
{
	struct drift_slot *s = &d->slots[index];

	if (s->cfg == w->cfg && s->ops)
		return s;
	slot_clear(s);
	if (!w->cfg->drift.enabled) {
		/* Off now (a reload): no alarm of its old tests stays on. */
		json_object_del(d->state, w->cfg->name);
		return NULL;
	}
	struct drift_params p;
	drift_params_from_config(&w->cfg->drift, w->interval_ns, &p);
	s->ops = calloc(w->n_ops, sizeof(*s->ops));
	if (!s->ops)
		return NULL;
	for (; s->n_ops < w->n_ops; s->n_ops++)
		if (drift_op_init(&s->ops[s->n_ops], &p) < 0) {
			slot_clear(s);
			return NULL;
		}
	s->cfg = w->cfg;
	json_t *ops = json_object();
	for (size_t op = 0; ops && op < w->n_ops; op++) {
		json_t *metrics = json_object();
		for (int m = 0; metrics && m < DRIFT_METRICS; m++)
			if (p.metrics & (1u << m))
				json_object_set_new(metrics, drift_metric_name(m), json_integer(0));
		json_object_set_new(ops, w->op_names[op], metrics);
	}
	json_object_set_new(d->state, w->cfg->name, ops);
	return s;
}

static void describe(const struct drift_finding *f, const char *op, unsigned window_s,
		     char *buf, size_t len)
{
	switch (f->metric) {
	case DRIFT_P99:
	case DRIFT_P999:
		snprintf(buf, len, "%s %s drift: %.2f%% of the last %us's %" PRIu64 " ops were slower "
			 "than %gx the reference's %s of %.3f ms (%.1f%% were slower than it)", op,
			 drift_metric_name(f->metric), f->observed * 100, window_s, f->n, f->ratio,
			 f->metric == DRIFT_P99 ? "p99" : "p99.9", f->ref_ns / 1e6,
			 f->expected * 100);
		break;
	case DRIFT_THROUGHPUT:
		snprintf(buf, len, "%s throughput drift: %.1f ops/s over the last %us, the reference "
			 "did %.1f ops/s at the same schedule", op, f->observed, window_s,
			 f->expected);
		break;
	default:
		snprintf(buf, len, "%s errors drift: %.3f%% of ops failed over the last %us, the "
			 "reference's rate was %.3f%%", op, f->observed * 100, window_s,
			 f->expected * 100);
	}
}

static void raise_alarm(struct drift *d, struct results *r, struct workload *w, const char *op,
			const struct drift_finding *f, const struct interval_row *row)
{
	uint64_t window_ns = w->cfg->drift.window_ns;
	uint64_t start = row->end_ns > window_ns ? row->end_ns - window_ns : 0;
	const char *metric = drift_metric_name(f->metric);
	char message[512];

	describe(f, op, (unsigned)(window_ns / 1000000000), message, sizeof(message));
	d->alarms++;
	json_object_set_new(json_object_get(json_object_get(d->state, w->cfg->name), op), metric,
			    json_integer(1));
	/* Under journald the structured entry is the message; once. */
	if (!log_to_journal())
		log_warning("workload %s: %s", w->cfg->name, message);
	struct log_fields jf = { .n = 0 };

	log_fields_add(&jf, "MESSAGE=workload %s: %s", w->cfg->name, message);
	log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_DRIFT);
	log_fields_add(&jf, "PRIORITY=%d", LOG_WARNING);
	log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
	log_fields_add(&jf, "SOAK_EVENT=drift");
	log_fields_add(&jf, "SOAK_RUN=%s", r->cfg->name);
	log_fields_add(&jf, "SOAK_WORKLOAD=%s", w->cfg->name);
	log_fields_add(&jf, "SOAK_OP=%s", op);
	log_fields_add(&jf, "SOAK_METRIC=%s", metric);
	log_fields_add(&jf, "SOAK_DRIFT_START_S=%.3f", start / 1e9);
	log_fields_add(&jf, "SOAK_DRIFT_OBSERVED=%g", f->observed);
	log_fields_add(&jf, "SOAK_DRIFT_EXPECTED=%g", f->expected);
	log_fields_send(&jf, LOG_WARNING);
	if (r->rundir) {
		json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:s}", "type", "event",
					"event", "drift", "workload", w->cfg->name, "op", op,
					"metric", metric, "start_ns", (json_int_t)start,
					"end_ns", (json_int_t)row->end_ns, "message", message);
		if (rec)
			rundir_append(r->rundir, rec);
		json_decref(rec);
	}
	json_array_append_new(d->events, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:s}", "type",
		"event", "event", "drift", "workload", w->cfg->name, "op", op, "metric", metric,
		"start_ns", (json_int_t)start, "end_ns", (json_int_t)row->end_ns, "message", message));
	if (w->cfg->drift.stop) {
		char reason[WORKLOAD_REASON_MAX];
		snprintf(reason, sizeof(reason), "on_drift: %.240s", message);
		workload_request_stop(w, reason);
	}
}

/* One closed interval of workload slot index through its tests; a
 * replayed one (a resumed run's log) raises no alarm again. */
static void feed(struct drift *d, struct results *r, size_t index, const struct op_stats *ops,
		 size_t n_ops, const struct interval_row *row, double target_ops, bool replayed)
{
	struct workload_results *wr = &r->w[index];
	struct workload *w = wr->workload;
	struct drift_slot *s = index < CONFIG_MAX_WORKLOADS ? slot_for(d, index, w) : NULL;
	double secs = (row->end_ns - row->start_ns) / 1e9;
	/* The rate over the time ops were scheduled: an interval a stop cut
	 * (its record runs on through the drain) is at the same rate, not a
	 * new load that would start the reference again. */
	double sched_secs = row->scheduled_ns / 1e9;

	if (!s || secs <= 0)
		return;
	for (size_t op = 0; op < s->n_ops && op < n_ops; op++) {
		const struct op_stats *o = &ops[op];
		struct drift_finding found[DRIFT_METRICS];
		double rate = sched_secs > 0 ? target_ops * w->op_share[op] / sched_secs : 0;
		/* Ops that ended, served or failed: the error share is of them. */
		size_t n = drift_op_feed(&s->ops[op], &o->latency, o->count + o->errors, o->errors,
					 secs, rate, found);
		/* What is no longer failing reads 0 again. */
		json_t *metrics = json_object_get(json_object_get(d->state, w->cfg->name),
						  w->op_names[op]);
		for (int m = 0; m < DRIFT_METRICS; m++)
			if (json_object_get(metrics, drift_metric_name(m)))
				json_object_set_new(metrics, drift_metric_name(m),
						    json_integer(s->ops[op].active[m]));
		for (size_t k = 0; k < n && !replayed; k++)
			raise_alarm(d, r, w, w->op_names[op], &found[k], row);
	}
}

static void on_interval(void *userdata, struct results *r, size_t index,
			const struct interval_row *row, double target_ops)
{
	struct workload_results *wr = &r->w[index];

	feed(userdata, r, index, wr->interval, wr->n_ops, row, target_ops, false);
}

static bool find_slot(const struct results *r, const char *name, size_t *ret)
{
	for (size_t i = 0; name && i < r->n; i++)
		if (strcmp(r->w[i].workload->cfg->name, name) == 0) {
			*ret = i;
			return true;
		}
	return false;
}

static uint64_t u64_of(json_t *rec, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(rec, key));
	return v > 0 ? (uint64_t)v : 0;
}

static void replay_interval(struct drift *d, struct results *r, size_t index, json_t *rec)
{
	const struct workload *w = r->w[index].workload;
	json_t *recorded = json_object_get(rec, "ops");
	size_t n_ops = r->w[index].n_ops < STATS_MAX_OPS ? r->w[index].n_ops : STATS_MAX_OPS;
	struct interval_row row = { .start_ns = u64_of(rec, "start_ns"),
				    .end_ns = u64_of(rec, "end_ns") };
	double target = json_number_value(json_object_get(rec, "target_ops"));
	struct op_stats *ops;

	/* A record of an older soakd lacks it: then all of an interval with
	 * ops scheduled (as results_replay takes it). */
	row.scheduled_ns = json_object_get(rec, "scheduled_ns") ? u64_of(rec, "scheduled_ns")
			   : target > 0 && row.end_ns > row.start_ns ? row.end_ns - row.start_ns : 0;

	/* Not measured live, not fed live. */
	if (json_is_true(json_object_get(rec, "stalled")) || row.end_ns <= row.start_ns ||
	    !json_is_object(recorded) || !(ops = calloc(n_ops ? n_ops : 1, sizeof(*ops))))
		return;
	for (size_t op = 0; op < n_ops; op++) {
		op_stats_init_zeroed(&ops[op]);
		json_t *o = json_object_get(recorded, w->op_names[op]);
		if (o && op_stats_merge_json(&ops[op], o) < 0)
			goto out;  /* a damaged record: as if it were not there */
	}
	feed(d, r, index, ops, n_ops, &row, target, true);
out:
	op_stats_array_free(ops, n_ops);
}

static bool is_drift_event(json_t *rec)
{
	const char *event = json_string_value(json_object_get(rec, "event"));
	return event && strcmp(event, "drift") == 0;
}

void drift_replay(struct drift *d, struct results *r, json_t *rec)
{
	const char *type = json_string_value(json_object_get(rec, "type"));
	size_t index, k;
	json_t *v;

	if (!d || !r || !type)
		return;
	if (strcmp(type, "interval") == 0 &&
	    find_slot(r, json_string_value(json_object_get(rec, "workload")), &index) &&
	    index < CONFIG_MAX_WORKLOADS) {
		replay_interval(d, r, index, rec);
	} else if (strcmp(type, "event") == 0 && is_drift_event(rec)) {
		json_array_append(d->events, rec);
		d->alarms++;
	} else if (strcmp(type, "reload") == 0) {
		/* A definition a reload replaced (or added back) started
		 * its tests afresh there. */
		const char *lists[] = { "replaced", "added" };
		for (size_t l = 0; l < 2; l++)
			json_array_foreach(json_object_get(rec, lists[l]), k, v)
				if (find_slot(r, json_string_value(v), &index) &&
				    index < CONFIG_MAX_WORKLOADS)
					slot_clear(&d->slots[index]);
	}
}

void drift_attach(struct drift *d, struct results *r)
{
	if (!d || !r)
		return;
	for (size_t i = 0; i < CONFIG_MAX_WORKLOADS; i++)
		slot_clear(&d->slots[i]);
	json_object_clear(d->state);
	json_array_clear(d->events);
	d->alarms = 0;
	r->on_interval = on_interval;
	r->on_interval_userdata = d;
	r->drift_state = d->state;
}
