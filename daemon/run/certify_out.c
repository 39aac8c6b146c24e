// SPDX-License-Identifier: GPL-2.0-only
/*
 * A certification's output: the answer, each verdict in the run's log,
 * the journal and soakd's log, the status and report replies; and its
 * state read back from the log when a run resumes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/journal_ids.h"
#include "base/log.h"
#include "config/config_certify.h"
#include "results/rundir.h"
#include "results/stats_json.h"
#include "runlog.h"

#include "certify_int.h"
#include "daemon_int.h"

static const char *str(json_t *rec, const char *key);

static json_t *limits_json(const struct certify_config *cc, bool thresholds)
{
	json_t *a = json_array();
	for (size_t t = 0; t < cc->n_thresholds; t++)
		json_array_append_new(a, thresholds ? json_real(cc->thresholds_ns[t] / 1e6)
					 : cc->limits_pct[t] >= 0 ? json_real(cc->limits_pct[t])
					 : json_null());
	return a;
}

json_t *certify_answer_record(const struct certify *c)
{
	json_t *best = NULL, *v;
	size_t i, passed = 0;

	json_t *confirm = NULL;
	json_array_foreach(c->verdicts, i, v) {
		if (json_is_true(json_object_get(v, "confirm")))
			confirm = v;
	}
	json_array_foreach(c->verdicts, i, v) {
		if (json_is_true(json_object_get(v, "confirm")) ||
		    strcmp(json_string_value(json_object_get(v, "verdict")), "pass") != 0)
			break;
		best = v;
		passed++;
	}
	json_t *rec = json_pack("{s:s,s:I,s:I,s:o,s:o}", "type", "certify",
				"steps_passed", (json_int_t)passed, "steps", (json_int_t)c->cfg->n_steps,
				"thresholds_ms", limits_json(c->cfg, true),
				"limits_pct", limits_json(c->cfg, false));
	if (!rec)
		return NULL;
	if (!best) {
		json_object_set_new(rec, "answer", json_null());
		json_object_set_new(rec, "why", json_string("no step passed: not even the first "
							     "load holds within the limits"));
		return rec;
	}
	if (confirm && strcmp(str(confirm, "verdict"), "pass") != 0) {
		char why[600];
		snprintf(why, sizeof(why), "step %s passed its hold but not its confirmation: %s",
			 str(best, "load"), str(confirm, "why"));
		json_object_set_new(rec, "answer", json_null());
		json_object_set_new(rec, "why", json_string(why));
		return rec;
	}
	json_object_set(rec, "answer", json_object_get(best, "load"));
	json_object_set(rec, "load_x", json_object_get(best, "load_x"));
	json_object_set(rec, "rate", json_object_get(best, "rate"));
	json_object_set(rec, "table", json_object_get(confirm ? confirm : best, "workloads"));
	json_object_set_new(rec, "why", json_string(confirm
		? "the highest load that passed, confirmed over the confirmation's hold"
		: passed == c->cfg->n_steps
		? "every step passed: the highest load asked for holds"
		: "the highest load that passed before the first that failed"));
	return rec;
}

static const char *str(json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));
	return s ? s : "";
}

void certify_publish(struct daemon *d, json_t *record)
{
	const char *run = d->cfg->name;

	if (d->rundir)
		rundir_append(d->rundir, record);
	if (json_object_get(record, "confirm_start")) {
		log_notice("certify: confirming step %lld (%s)",
			   (long long)json_integer_value(json_object_get(record, "confirm_start")),
			   str(record, "load"));
		return;
	}
	if (json_object_get(record, "step")) {
		int step = (int)json_integer_value(json_object_get(record, "step"));
		bool pass = strcmp(str(record, "verdict"), "pass") == 0;
		double rate = json_number_value(json_object_get(record, "rate"));
		bool confirm = json_is_true(json_object_get(record, "confirm"));
		struct log_fields jf = { .n = 0 };

		log_fields_add(&jf, "MESSAGE=certify %s: %sstep %d (%s, %.1f ops/s) %s: %s", run,
			       confirm ? "confirmation of " : "", step, str(record, "load"), rate,
			       pass ? "passed" : "FAILED", str(record, "why"));
		log_fields_add(&jf, "PRIORITY=%d", pass ? LOG_NOTICE : LOG_WARNING);
		log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
		log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_CERTIFY_STEP);
		log_fields_add(&jf, "SOAK_EVENT=certify_step");
		log_fields_add(&jf, "SOAK_RUN=%s", run);
		log_fields_add(&jf, "SOAK_CERTIFY_STEP=%d", step);
		log_fields_add(&jf, "SOAK_CERTIFY_CONFIRM=%d", confirm);
		log_fields_add(&jf, "SOAK_CERTIFY_LOAD=%s", str(record, "load"));
		log_fields_add(&jf, "SOAK_CERTIFY_RATE=%.3f", rate);
		log_fields_add(&jf, "SOAK_CERTIFY_VERDICT=%s", str(record, "verdict"));
		log_fields_add(&jf, "SOAK_CERTIFY_WHY=%s", str(record, "why"));
		log_fields_send(&jf, pass ? LOG_NOTICE : LOG_WARNING);
		if (!log_to_journal())
			log_notice("certify: %sstep %d (%s, %.1f ops/s) %s: %s",
				   confirm ? "confirmation of " : "", step,
				   str(record, "load"), rate, pass ? "passed" : "FAILED",
				   str(record, "why"));
		return;
	}
	const char *answer = json_is_string(json_object_get(record, "answer"))
				     ? str(record, "answer") : "none";
	struct log_fields jf = { .n = 0 };

	log_fields_add(&jf, "MESSAGE=certify %s: the answer is %s (%s)", run, answer, str(record, "why"));
	log_fields_add(&jf, "PRIORITY=%d", LOG_NOTICE);
	log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
	log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_CERTIFY_ANSWER);
	log_fields_add(&jf, "SOAK_EVENT=certify_answer");
	log_fields_add(&jf, "SOAK_RUN=%s", run);
	log_fields_add(&jf, "SOAK_CERTIFY_ANSWER=%s", answer);
	log_fields_add(&jf, "SOAK_CERTIFY_RATE=%.3f", json_number_value(json_object_get(record, "rate")));
	log_fields_add(&jf, "SOAK_CERTIFY_WHY=%s", str(record, "why"));
	log_fields_send(&jf, LOG_NOTICE);
	if (!log_to_journal())
		log_notice("certify: the answer is %s (%s)", answer, str(record, "why"));
}

/* A record of the log, if it is an interval of a certified workload:
 * into the step it belongs to. */
static int read_interval(struct certify *c, json_t *rec, struct op_stats *ops)
{
	const char *name = str(rec, "workload");
	json_t *recorded = json_object_get(rec, "ops");

	for (size_t i = 0; i < c->n_loads; i++) {
		struct certify_load *l = &c->loads[i];
		if (strcmp(l->cfg->name, name) != 0)
			continue;
		for (size_t op = 0; op < l->n_ops; op++) {
			op_stats_reset(&ops[op]);
			json_t *o = json_object_get(recorded, l->op_names[op]);
			if (o && op_stats_merge_json(&ops[op], o) < 0)
				return -EINVAL;
		}
		json_t *sched = json_object_get(rec, "sched_ns");
		certify_interval_seen(c, l->slot, json_is_true(json_object_get(rec, "generator_late")),
				      ops, l->n_ops, (uint64_t)json_integer_value(sched));
		return 0;
	}
	return 0;
}

/* Pass 1: the verdicts; pass 2: the intervals of the step they leave. */
/* Pass 1 notes where the confirmation began (its record's index); pass 2
 * reads the confirmation's intervals from there, or the step's. */
static int read_pass(struct certify *c, const char *log_path, int pass, struct op_stats *ops,
		     uint64_t *confirm_at)
{
	struct runlog_reader *rd;
	json_t *rec;
	uint64_t index = 0;
	int r = runlog_open(log_path, &rd);

	if (r < 0)
		return r == -ENOENT ? 0 : r;
	while ((r = runlog_next(rd, &rec)) > 0) {
		const char *type = str(rec, "type");
		index++;
		if (pass == 1 && strcmp(type, "certify") == 0) {
			json_t *step = json_object_get(rec, "step");
			if (json_object_get(rec, "confirm_start")) {
				c->confirm_started = true;
				c->confirm_run_ns = (uint64_t)json_integer_value(json_object_get(rec, "run_ns"));
				*confirm_at = index;
			} else if (!step) {
				json_decref(c->answer), c->answer = json_incref(rec);
			} else if (json_is_true(json_object_get(rec, "confirm")) ||
				   (size_t)json_integer_value(step) == json_array_size(c->verdicts) + 1) {
				json_array_append(c->verdicts, rec);
			}
		} else if (pass == 2 && strcmp(type, "interval") == 0 &&
			   (!c->confirming || index > *confirm_at)) {
			r = read_interval(c, rec, ops);
		}
		json_decref(rec);
		if (r < 0)
			break;
	}
	runlog_close(rd);
	return r;
}

int certify_read_back(struct certify *c, const char *log_path)
{
	uint64_t confirm_at = 0;
	int r = read_pass(c, log_path, 1, NULL, &confirm_at);
	if (r < 0)
		return r;
	size_t n = json_array_size(c->verdicts);
	json_t *last = json_array_get(c->verdicts, n ? n - 1 : 0);
	bool confirmed = n && json_is_true(json_object_get(last, "confirm"));
	bool steps_over = n && (confirmed || n == c->cfg->n_steps ||
				strcmp(str(last, "verdict"), "pass"));
	if (confirmed)
		n--;   /* c->step counts the steps */
	if (!c->answer && steps_over && !confirmed && c->cfg->confirm_ns &&
	    certify_best(c, &c->best)) {
		c->confirming = true;   /* the confirmation goes on, or starts */
	} else if (!c->answer && steps_over) {
		c->answer = certify_answer_record(c);  /* cut off between the two records */
		c->answer_unlogged = c->answer != NULL;
	}
	if (c->answer || (c->confirming && !c->confirm_started)) {
		c->step = n ? n - 1 : 0;
		return 0;
	}
	c->step = c->confirming ? n - 1 : n;
	struct op_stats *ops = calloc(STATS_MAX_OPS, sizeof(*ops));
	if (!ops)
		return -ENOMEM;
	r = read_pass(c, log_path, 2, ops, &confirm_at);
	op_stats_array_free(ops, STATS_MAX_OPS);
	if (r == 0 && c->confirming)
		log_notice("certify: resuming the confirmation of step %zu", c->best + 1);
	else if (r == 0 && n)
		log_notice("certify: resuming at step %zu of %zu after %zu verdict(s)", c->step + 1,
			   c->cfg->n_steps, n);
	return r;
}

static json_t *brief(json_t *verdict)
{
	return json_pack("{s:b,s:O,s:O,s:O,s:O,s:O}", "confirm",
			 json_is_true(json_object_get(verdict, "confirm")),
			 "step", json_object_get(verdict, "step"),
			 "load", json_object_get(verdict, "load"), "rate",
			 json_object_get(verdict, "rate"), "verdict",
			 json_object_get(verdict, "verdict"), "why", json_object_get(verdict, "why"));
}

json_t *certify_status_json(const struct certify *c)
{
	char load[32];
	json_t *verdicts = json_array(), *v;
	size_t i;

	if (!c)
		return NULL;
	json_array_foreach(c->verdicts, i, v)
		json_array_append_new(verdicts, brief(v));
	size_t step = c->confirming ? c->best : c->step;
	uint64_t hold = c->confirming ? c->cfg->confirm_ns : c->cfg->hold_ns;
	certify_load_name(c->cfg->loads[step], load, sizeof(load));
	/* The confirmation's schedule starts at 0; the steps' at step * hold. */
	uint64_t sched = c->loads[0].sched_ns, start = c->confirming ? 0 : c->step * hold;
	uint64_t held = sched > start ? sched - start : 0;
	if (c->confirming && !c->confirm_started)
		held = 0;
	if (held > hold)
		held = hold;
	json_t *s = json_pack("{s:s,s:I,s:I,s:s,s:f,s:f,s:f,s:o}", "state",
			      c->answer ? "over" : c->confirming ? "confirming" : "running",
			      "step", (json_int_t)(step + 1),
			      "of", (json_int_t)c->cfg->n_steps, "load", load, "rate",
			      certify_step_rate(c, step), "held_s", held / 1e9, "hold_s",
			      hold / 1e9, "verdicts", verdicts);
	if (s && c->answer) {
		json_object_set(s, "answer", json_object_get(c->answer, "answer"));
		json_object_set(s, "answer_why", json_object_get(c->answer, "why"));
	}
	return s;
}

json_t *certify_report_json(const struct certify *c)
{
	if (!c)
		return NULL;
	json_t *s = json_pack("{s:o,s:o,s:O}", "thresholds_ms", limits_json(c->cfg, true),
			      "limits_pct", limits_json(c->cfg, false), "steps", c->verdicts);
	if (s && c->answer)
		json_object_set(s, "answer", c->answer);
	return s;
}

/* The step held and how long, from the schedule's position (as
 * certify_status_json says it), without building its JSON each tick. */
void certify_status_line(const struct certify *c, char *buf, size_t len)
{
	char load[32];
	size_t at, i;
	json_t *v;
	int n;

	if (len)
		buf[0] = '\0';
	if (!c || !len)
		return;
	if (c->answer) {
		json_t *answer = json_object_get(c->answer, "answer");
		n = snprintf(buf, len, "certify: answer %s",
			     json_is_string(answer) ? json_string_value(answer) : "none");
	} else {
		size_t step = c->confirming ? c->best : c->step;
		uint64_t hold = c->confirming ? c->cfg->confirm_ns : c->cfg->hold_ns;
		uint64_t sched = c->loads[0].sched_ns, start = c->confirming ? 0 : c->step * hold;
		uint64_t held = sched > start ? sched - start : 0;
		if ((c->confirming && !c->confirm_started) || held > hold)
			held = c->confirming && !c->confirm_started ? 0 : hold;
		certify_load_name(c->cfg->loads[step], load, sizeof(load));
		n = snprintf(buf, len, "certify: %s %zu/%zu (%s, %.1f ops/s) %.0f/%.0fs",
			     c->confirming ? "confirming step" : "step", step + 1, c->cfg->n_steps,
			     load, certify_step_rate(c, step), held / 1e9, hold / 1e9);
	}
	at = n < 0 ? len : (size_t)n;
	json_array_foreach(c->verdicts, i, v) {
		if (at >= len)
			break;
		n = snprintf(buf + at, len - at, "%s%s%s %s", i ? ", " : " [",
			     json_is_true(json_object_get(v, "confirm")) ? "confirm " : "",
			     str(v, "load"), str(v, "verdict"));
		at = n < 0 ? len : at + (size_t)n;
	}
	if (json_array_size(c->verdicts) && at < len)
		snprintf(buf + at, len - at, "]");
}
