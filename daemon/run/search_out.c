// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capacity search's output: its probes (the curve) and answer in the
 * run's log and soakd's log, the status and report replies; and its
 * state read back from the log when a run resumes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/journal_ids.h"
#include "base/log.h"
#include "results/rundir.h"
#include "results/stats_json.h"
#include "runlog.h"

#include "search_int.h"

static const char *str(json_t *rec, const char *key)
{
	const char *s = json_string_value(json_object_get(rec, key));
	return s ? s : "";
}

/* Each probe and the answer: the run's log, the journal (SOAK_EVENT=
 * search_probe, search_answer, with their MESSAGE_IDs) or soakd's log. */
void search_publish(struct daemon *d, json_t *record)
{
	const char *run = d->cfg->name;
	const char *workload = d->search ? d->search->orig->name : "";

	if (d->rundir)
		rundir_append(d->rundir, record);
	if (json_object_get(record, "probe")) {
		json_t *p = json_object_get(record, "percentile_us");
		char pct[64], pct_us[32];
		snprintf(pct_us, sizeof(pct_us), "%.1f", json_number_value(p));
		if (json_is_number(p))
			snprintf(pct, sizeof(pct), "%.1f us", json_number_value(p));
		else
			snprintf(pct, sizeof(pct), "among the missed ops");
		long long probe = (long long)json_integer_value(json_object_get(record, "probe"));
		double rate = json_number_value(json_object_get(record, "rate"));
		long long agreed = (long long)json_integer_value(json_object_get(record, "agreed"));
		long long windows = (long long)json_integer_value(json_object_get(record, "windows"));
		struct log_fields jf = { .n = 0 };

		log_fields_add(&jf, "MESSAGE=search %s: probe %lld at %.1f ops/s: p%g %s, %s the target "
			       "(%lld of %lld windows agree)", run, probe, rate,
			       d->cfg->search.percentile, pct, str(record, "verdict"), agreed, windows);
		log_fields_add(&jf, "PRIORITY=%d", LOG_NOTICE);
		log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
		log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_SEARCH_PROBE);
		log_fields_add(&jf, "SOAK_EVENT=search_probe");
		log_fields_add(&jf, "SOAK_RUN=%s", run);
		log_fields_add(&jf, "SOAK_WORKLOAD=%s", workload);
		log_fields_add(&jf, "SOAK_SEARCH_PROBE=%lld", probe);
		log_fields_add(&jf, "SOAK_SEARCH_RATE=%.3f", rate);
		log_fields_add(&jf, "SOAK_SEARCH_PERCENTILE=%g", d->cfg->search.percentile);
		log_fields_add(&jf, "SOAK_SEARCH_PERCENTILE_US=%s", json_is_number(p) ? pct_us : "");
		log_fields_add(&jf, "SOAK_SEARCH_BELOW_US=%.0f", d->cfg->search.below_ns / 1e3);
		log_fields_add(&jf, "SOAK_SEARCH_VERDICT=%s", str(record, "verdict"));
		log_fields_add(&jf, "SOAK_SEARCH_AGREED=%lld", agreed);
		log_fields_add(&jf, "SOAK_SEARCH_WINDOWS=%lld", windows);
		log_fields_send(&jf, LOG_NOTICE);
		if (log_to_journal())
			return;
		log_notice("search: probe %lld at %.1f ops/s: p%g %s, %s the target (%lld of "
			   "%lld windows agree)",
			   (long long)json_integer_value(json_object_get(record, "probe")),
			   json_number_value(json_object_get(record, "rate")),
			   d->cfg->search.percentile, pct,
			   str(record, "verdict"),
			   (long long)json_integer_value(json_object_get(record, "agreed")),
			   (long long)json_integer_value(json_object_get(record, "windows")));
		return;
	}
	json_t *a = json_object_get(record, "answer_rate");
	char answer[32] = "none";
	if (json_is_number(a))
		snprintf(answer, sizeof(answer), "%.1f", json_number_value(a));
	struct log_fields jf = { .n = 0 };

	bool gave_up = json_is_true(json_object_get(record, "gave_up"));
	/* Given up (stopped, a probe that could not start): the rate is the
	 * highest that passed so far, not the search's answer. */
	log_fields_add(&jf, "MESSAGE=search %s: %s%s ops/s (%s)%s%s", run,
		       !json_is_number(a) ? "no rate found: "
		       : gave_up ? "given up; the highest rate below the target so far is "
				 : "the highest rate below the target is ",
		       answer, json_is_number(a) ? str(record, "confidence") : str(record, "why"),
		       gave_up && json_is_number(a) ? ": " : "",
		       gave_up && json_is_number(a) ? str(record, "why") : "");
	log_fields_add(&jf, "PRIORITY=%d", LOG_NOTICE);
	log_fields_add(&jf, "SYSLOG_IDENTIFIER=soakd");
	log_fields_add(&jf, "MESSAGE_ID=" SOAK_MESSAGE_SEARCH_ANSWER);
	log_fields_add(&jf, "SOAK_EVENT=search_answer");
	log_fields_add(&jf, "SOAK_RUN=%s", run);
	log_fields_add(&jf, "SOAK_WORKLOAD=%s", workload);
	log_fields_add(&jf, "SOAK_SEARCH_ANSWER_RATE=%s", answer);
	log_fields_add(&jf, "SOAK_SEARCH_CONFIDENCE=%s", str(record, "confidence"));
	log_fields_add(&jf, "SOAK_SEARCH_WHY=%s", str(record, "why"));
	if (gave_up)
		log_fields_add(&jf, "SOAK_SEARCH_GAVE_UP=1");
	log_fields_send(&jf, LOG_NOTICE);
	if (log_to_journal())
		return;
	if (json_is_number(a))
		log_notice("search: %sthe highest rate with p%g below %.0f us is %.1f ops/s (%s)%s%s",
			   gave_up ? "given up; " : "", d->cfg->search.percentile,
			   d->cfg->search.below_ns / 1e3, json_number_value(a),
			   str(record, "confidence"), gave_up ? ": " : "",
			   gave_up ? str(record, "why") : "");
	else
		log_notice("search: no rate found: %s", str(record, "why"));
}

static int read_interval(struct search *s, json_t *rec, struct op_stats *ops)
{
	json_t *recorded = json_object_get(rec, "ops");

	if (strcmp(str(rec, "workload"), s->orig->name) != 0)
		return 0;
	for (size_t op = 0; op < s->n_ops; op++) {
		op_stats_reset(&ops[op]);
		json_t *o = json_object_get(recorded, s->op_names[op]);
		if (o && op_stats_merge_json(&ops[op], o) < 0)
			return -EINVAL;
	}
	search_interval_seen(s, s->slot, json_is_true(json_object_get(rec, "generator_late")), ops,
			     s->n_ops, (uint64_t)json_integer_value(json_object_get(rec, "sched_ns")));
	return 0;
}

int search_read_back(struct search *s, const char *log_path)
{
	struct runlog_reader *rd;
	json_t *rec;
	struct op_stats *ops = calloc(STATS_MAX_OPS, sizeof(*ops));
	int r = ops ? runlog_open(log_path, &rd) : -ENOMEM;

	if (r < 0) {
		free(ops);
		return r == -ENOENT ? 0 : r;
	}
	while ((r = runlog_next(rd, &rec)) > 0) {
		const char *type = str(rec, "type");
		if (strcmp(type, "search") == 0 && json_object_get(rec, "probe")) {
			search_apply_probe(s, rec);
			search_reset_windows(s);  /* the next probe's intervals follow */
			s->intervals_seen = 0;
		} else if (strcmp(type, "search") == 0) {
			json_decref(s->answer);
			s->answer = json_incref(rec);
		} else if (strcmp(type, "interval") == 0 && !s->answer) {
			r = read_interval(s, rec, ops);
		}
		json_decref(rec);
		if (r < 0)
			break;
	}
	runlog_close(rd);
	op_stats_array_free(ops, STATS_MAX_OPS);
	if (r == 0 && !s->answer && search_done(s))
		s->answer = search_answer_record(s);  /* cut off between the two records */
	if (r == 0 && s->probes)
		log_notice("search: resuming after %zu probe(s)%s", s->probes,
			   s->answer ? ", with its answer" : "");
	return r;
}

static json_t *point(json_t *probe)
{
	return json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "probe",
			 json_object_get(probe, "probe"), "rate", json_object_get(probe, "rate"),
			 "p50_us", json_object_get(probe, "p50_us"), "p99_us",
			 json_object_get(probe, "p99_us"), "p999_us", json_object_get(probe, "p999_us"),
			 "percentile_us", json_object_get(probe, "percentile_us"), "verdict",
			 json_object_get(probe, "verdict"), "agreed", json_object_get(probe, "agreed"),
			 "windows", json_object_get(probe, "windows"));
}

json_t *search_report_json(const struct search *s)
{
	json_t *curve = json_array(), *v;
	size_t i;

	if (!s)
		return NULL;
	json_array_foreach(s->curve, i, v)
		json_array_append_new(curve, point(v));
	json_t *j = json_pack("{s:f,s:f,s:f,s:o}", "percentile", s->cfg->percentile, "below_us",
			      s->cfg->below_ns / 1e3, "window_s", s->cfg->window_ns / 1e9, "curve",
			      curve);
	if (j && s->answer)
		json_object_set(j, "answer", s->answer);
	return j;
}

json_t *search_status_json(const struct search *s)
{
	json_t *j = search_report_json(s);

	if (!j)
		return NULL;
	json_object_set_new(j, "state", json_string(s->soaking ? "soaking" : s->answer ? "over"
									    : "probing"));
	json_object_set_new(j, "rate", json_real(s->rate));
	json_object_set_new(j, "lo", json_real(s->lo));
	json_object_set_new(j, "hi", json_real(s->hi));
	return j;
}

void search_status_line(const struct search *s, char *buf, size_t len)
{
	if (len)
		buf[0] = '\0';
	if (!s || !len)
		return;
	double answer = json_number_value(json_object_get(s->answer, "answer_rate"));
	if (s->soaking)
		snprintf(buf, len, "search: answer %.1f ops/s, soaking at %.1f ops/s", answer,
			 s->rate);
	else if (s->answer && json_is_number(json_object_get(s->answer, "answer_rate")))
		snprintf(buf, len, "search: answer %.1f ops/s after %zu probes", answer, s->probes);
	else if (s->answer)
		snprintf(buf, len, "search: no rate found after %zu probes", s->probes);
	else
		snprintf(buf, len, "search: probe %zu at %.1f ops/s; below the target up to %.1f, "
			 "above from %.1f ops/s", s->probes + 1, s->rate, s->lo, s->hi);
}
