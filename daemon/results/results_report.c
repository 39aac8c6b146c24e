// SPDX-License-Identifier: GPL-2.0-only
/*
 * The results reported: journald's records, the live table on stderr,
 * systemd's STATUS=, the status, dump and report replies, the summary.
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

#include "base/journal_ids.h"
#include "base/log.h"
#include "device/dev_facts.h"
#include "probes/probes.h"
#include "rundir.h"
#include "stats_json.h"

#include "results_int.h"

/* The schedule's ops over the time they were scheduled: never diluted by
 * a drain after the schedule's end.  A checkpoint of an older soakd has no
 * sched_ns: then the active time. */
static double rate_target(const struct workload_results *wr, double target_ops)
{
	uint64_t ns = wr->sched_ns ? wr->sched_ns : wr->active_ns;
	return ns ? target_ops / (ns / 1e9) : 0;
}

void summarize(const struct op_stats *o, double target_ops, uint64_t span_ns,
	       uint64_t sched_ns, struct op_summary *ret)
{
	double secs = span_ns / 1e9, sched_secs = sched_ns / 1e9;
	*ret = (struct op_summary){
		.count = o->count, .errors = o->errors, .bytes = o->bytes,
		.missed = o->missed, .pending = o->pending,
		.rate_target = sched_secs > 0 ? target_ops / sched_secs : 0,
		.rate_achieved = secs > 0 ? o->count / secs : 0,
		.p50 = hist_percentile(&o->latency, 50), .p90 = hist_percentile(&o->latency, 90),
		.p99 = hist_percentile(&o->latency, 99), .p999 = hist_percentile(&o->latency, 99.9),
		.min = hist_min(&o->latency), .max = hist_max(&o->latency),
		.svc_p50 = hist_percentile(&o->service, 50),
		.svc_p99 = hist_percentile(&o->service, 99),
		.corrupt = o->corrupt,
		.ttfb_p50 = hist_percentile(&o->ttfb, 50),
		.ttfb_p99 = hist_percentile(&o->ttfb, 99),
		.issue_count = o->issue_delay.count,
		.issue_p50 = hist_percentile(&o->issue_delay, 50),
		.issue_p99 = hist_percentile(&o->issue_delay, 99),
		.issue_max = hist_max(&o->issue_delay),
		.obj_verify = o->obj_verify,
	};
	memcpy(ret->verify, o->verify, sizeof(ret->verify));
}

/* The fields an op's interval and its run summary share; the object
 * workloads' own (corrupt reads, time to first byte) only on theirs. */
static void journal_add_op(struct log_fields *f, const struct workload *w,
			   const struct op_summary *s)
{
	log_fields_add(f, "SOAK_OPS=%" PRIu64, s->count);
	log_fields_add(f, "SOAK_ERRORS=%" PRIu64, s->errors);
	log_fields_add(f, "SOAK_MISSED=%" PRIu64, s->missed);
	log_fields_add(f, "SOAK_PENDING=%" PRIu64, s->pending);
	log_fields_add(f, "SOAK_BYTES=%" PRIu64, s->bytes);
	log_fields_add(f, "SOAK_RATE=%.3f", s->rate_achieved);
	log_fields_add(f, "SOAK_RATE_TARGET=%.3f", s->rate_target);
	log_fields_add(f, "SOAK_P50_US=%.3f", s->p50 / 1e3);
	log_fields_add(f, "SOAK_P90_US=%.3f", s->p90 / 1e3);
	log_fields_add(f, "SOAK_P99_US=%.3f", s->p99 / 1e3);
	log_fields_add(f, "SOAK_P999_US=%.3f", s->p999 / 1e3);
	log_fields_add(f, "SOAK_MAX_US=%.3f", s->max / 1e3);
	log_fields_add(f, "SOAK_SERVICE_P50_US=%.3f", s->svc_p50 / 1e3);
	log_fields_add(f, "SOAK_SERVICE_P99_US=%.3f", s->svc_p99 / 1e3);
	if (w->cfg->verify.on)
		log_fields_add(f, "SOAK_CORRUPT=%" PRIu64, s->corrupt);
	/* SOAK_VERIFY_CHECKED=, SOAK_VERIFY_STALE=, ... */
	for (size_t c = 0; w->cfg->verify.on && c < OP_VERIFY_CLASSES; c++) {
		char field[32];
		size_t k = 0;
		for (const char *p = op_verify_names[c]; *p && k + 1 < sizeof(field); p++)
			field[k++] = *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		field[k] = '\0';
		log_fields_add(f, "SOAK_VERIFY_%s=%" PRIu64, field, s->verify[c]);
	}
	if (w->cfg->type == WORKLOAD_OBJECT) {
		const struct obj_verify *v = &s->obj_verify;
		log_fields_add(f, "SOAK_CORRUPT=%" PRIu64, s->corrupt);
		log_fields_add(f, "SOAK_CHECKED=%" PRIu64, v->checked);
		log_fields_add(f, "SOAK_LOST=%" PRIu64, v->lost);
		log_fields_add(f, "SOAK_RESURRECTED=%" PRIu64, v->resurrected);
		log_fields_add(f, "SOAK_STALE=%" PRIu64, v->stale);
		log_fields_add(f, "SOAK_LIST_MISSING=%" PRIu64, v->list_missing);
		log_fields_add(f, "SOAK_LIST_EXTRA=%" PRIu64, v->list_extra);
		log_fields_add(f, "SOAK_UNCERTAIN=%" PRIu64, v->uncertain);
	}
}

void journal_row(const struct results *r, const struct workload_results *wr,
		 const struct interval_row *row)
{
	const struct workload *w = wr->workload;
	size_t index = (size_t)(wr - r->w);
	struct kstats_tcp_summary tcp;
	bool have_tcp = probes_workload_tcp(r->probes, index, &tcp);

	for (size_t op = 0; op < wr->n_ops; op++) {
		const struct op_summary *s = &row->ops[op];
		struct log_fields f = { .n = 0 };
		struct kstats_summary blk;

		log_fields_add(&f, "MESSAGE=%s %s: %" PRIu64 " ops, %.1f/s (target %.1f/s), p50 %.1f us, "
			       "p99 %.1f us, max %.1f us, %" PRIu64 " errors",
			       w->cfg->name, w->op_names[op], s->count, s->rate_achieved,
			       s->rate_target, s->p50 / 1e3, s->p99 / 1e3, s->max / 1e3, s->errors);
		log_fields_add(&f, "PRIORITY=%d", LOG_INFO);
		log_fields_add(&f, "SYSLOG_IDENTIFIER=soakd");
		log_fields_add(&f, "MESSAGE_ID=" SOAK_MESSAGE_INTERVAL);
		log_fields_add(&f, "SOAK_EVENT=interval");
		log_fields_add(&f, "SOAK_RUN=%s", r->cfg->name);
		log_fields_add(&f, "SOAK_WORKLOAD=%s", w->cfg->name);
		log_fields_add(&f, "SOAK_OP=%s", w->op_names[op]);
		log_fields_add(&f, "SOAK_INTERVAL_START_S=%.3f", row->start_ns / 1e9);
		log_fields_add(&f, "SOAK_INTERVAL_END_S=%.3f", row->end_ns / 1e9);
		journal_add_op(&f, w, s);
		if (w->cfg->type == WORKLOAD_OBJECT) {
			log_fields_add(&f, "SOAK_TTFB_P50_US=%.3f", s->ttfb_p50 / 1e3);
			log_fields_add(&f, "SOAK_TTFB_P99_US=%.3f", s->ttfb_p99 / 1e3);
		}
		log_fields_add(&f, "SOAK_LAG_MAX_MS=%.3f", row->lag_max_ns / 1e6);
		/* soakd's own lateness and CPU time (fidelity.h). */
		log_fields_add(&f, "SOAK_ISSUE_DELAY_P50_US=%.3f", s->issue_p50 / 1e3);
		log_fields_add(&f, "SOAK_ISSUE_DELAY_P99_US=%.3f", s->issue_p99 / 1e3);
		log_fields_add(&f, "SOAK_ISSUE_DELAY_MAX_US=%.3f", s->issue_max / 1e3);
		log_fields_add(&f, "SOAK_CPU_S=%.6f", row->cpu_ns / 1e9);
		if (row->generator_late) {
			log_fields_add(&f, "SOAK_GENERATOR_LATE=1");
			log_fields_add(&f, "SOAK_GENERATOR_LATE_MS=%.3f", row->late_ns / 1e6);
		}
		/* The kernel's view of the same interval: the block layer for
		 * this op on the workload's devices, TCP toward its endpoints. */
		if (probes_workload_blk(r->probes, index, w->op_names[op], &blk)) {
			log_fields_add(&f, "SOAK_BLK_OPS=%" PRIu64, blk.count);
			log_fields_add(&f, "SOAK_BLK_ERRORS=%" PRIu64, blk.errors);
			log_fields_add(&f, "SOAK_BLK_BYTES=%" PRIu64, blk.bytes);
			log_fields_add(&f, "SOAK_BLK_P50_US=%.3f", blk.p50 / 1e3);
			log_fields_add(&f, "SOAK_BLK_P90_US=%.3f", blk.p90 / 1e3);
			log_fields_add(&f, "SOAK_BLK_P99_US=%.3f", blk.p99 / 1e3);
			log_fields_add(&f, "SOAK_BLK_P999_US=%.3f", blk.p999 / 1e3);
			log_fields_add(&f, "SOAK_BLK_MAX_US=%.3f", blk.max / 1e3);
		}
		if (have_tcp) {
			log_fields_add(&f, "SOAK_TCP_SRTT_SAMPLES=%" PRIu64, tcp.srtt_samples);
			log_fields_add(&f, "SOAK_TCP_SRTT_P50_US=%.3f", tcp.srtt_p50 / 1e3);
			log_fields_add(&f, "SOAK_TCP_SRTT_P99_US=%.3f", tcp.srtt_p99 / 1e3);
			log_fields_add(&f, "SOAK_TCP_CONNECTS=%" PRIu64, tcp.connects);
			log_fields_add(&f, "SOAK_TCP_CONNECT_P50_US=%.3f", tcp.connect_p50 / 1e3);
			log_fields_add(&f, "SOAK_TCP_CONNECT_P99_US=%.3f", tcp.connect_p99 / 1e3);
			log_fields_add(&f, "SOAK_TCP_RETRANSMITS=%" PRIu64, tcp.retransmits);
			log_fields_add(&f, "SOAK_TCP_RESETS=%" PRIu64,
				       tcp.resets_sent + tcp.resets_received);
		}
		log_fields_send(&f, LOG_INFO);
	}
}

void results_journal_summary(const struct results *r, const char *why)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		for (size_t op = 0; op < wr->n_ops; op++) {
			struct log_fields f = { .n = 0 };
			struct op_summary s;
			summarize(&wr->totals[op], wr->target_ops_total * w->op_share[op], wr->active_ns,
				  wr->sched_ns ? wr->sched_ns : wr->active_ns, &s);
			log_fields_add(&f, "MESSAGE=%s %s over the run: %" PRIu64 " ops, %.1f/s (target "
				       "%.1f/s), p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us, %"
				       PRIu64 " errors (%s)", w->cfg->name, w->op_names[op], s.count,
				       s.rate_achieved, s.rate_target, s.p50 / 1e3, s.p99 / 1e3,
				       s.p999 / 1e3, s.max / 1e3, s.errors, why);
			log_fields_add(&f, "PRIORITY=%d", LOG_NOTICE);
			log_fields_add(&f, "SYSLOG_IDENTIFIER=soakd");
			log_fields_add(&f, "MESSAGE_ID=" SOAK_MESSAGE_SUMMARY);
			log_fields_add(&f, "SOAK_EVENT=summary");
			log_fields_add(&f, "SOAK_RUN=%s", r->cfg->name);
			log_fields_add(&f, "SOAK_WORKLOAD=%s", w->cfg->name);
			log_fields_add(&f, "SOAK_OP=%s", w->op_names[op]);
			log_fields_add(&f, "SOAK_STATE=%s", workload_state_name(w->state));
			log_fields_add(&f, "SOAK_ACTIVE_S=%.3f", wr->active_ns / 1e9);
			log_fields_add(&f, "SOAK_INTERVALS=%" PRIu64, wr->intervals);
			journal_add_op(&f, w, &s);
			log_fields_add(&f, "SOAK_LAG_MAX_MS=%.3f", wr->lag_max_ns / 1e6);
			log_fields_send(&f, LOG_NOTICE);
		}
	}
}

void results_status_line(const struct results *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n && off < len; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		int n = snprintf(buf + off, len - off, "%s%s %s", i ? "; " : "", w->cfg->name,
				 workload_state_name(w->state));
		off += n > 0 ? (size_t)n : 0;
		uint64_t done, total;
		if (off < len && workload_audit(w, &done, &total)) {
			n = snprintf(buf + off, len - off, " auditing %" PRIu64 "/%" PRIu64 " objects",
				     done, total);
			off += n > 0 ? (size_t)n : 0;
		}
		for (size_t op = 0; wr->have_last && op < wr->n_ops && off < len; op++) {
			n = snprintf(buf + off, len - off, " %s %.0f/s p99 %.0fus", w->op_names[op],
				     wr->last.ops[op].rate_achieved, wr->last.ops[op].p99 / 1e3);
			off += n > 0 ? (size_t)n : 0;
		}
	}
}

static json_t *latency_json(const struct hist *h)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}",
			 "p50", hist_percentile(h, 50) / 1e3, "p90", hist_percentile(h, 90) / 1e3,
			 "p99", hist_percentile(h, 99) / 1e3, "p999", hist_percentile(h, 99.9) / 1e3,
			 "max", hist_max(h) / 1e3, "min", hist_min(h) / 1e3, "mean", hist_mean(h) / 1e3);
}

static json_t *op_json(const struct op_stats *o, double target_ops, uint64_t active_ns,
		       uint64_t sched_ns, bool object)
{
	double secs = active_ns / 1e9, sched_secs = (sched_ns ? sched_ns : active_ns) / 1e9;
	char *hist_text = hist_to_base64(&o->latency);
	json_t *j = json_pack("{s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:s?}",
			      "count", (json_int_t)o->count, "errors", (json_int_t)o->errors,
			      "bytes", (json_int_t)o->bytes,
			      "rate_target", sched_secs > 0 ? target_ops / sched_secs : 0.0,
			      "rate_achieved", secs > 0 ? o->count / secs : 0.0,
			      "latency_us", latency_json(&o->latency),
			      "service_us", latency_json(&o->service),
			      "latency_hist", hist_text);
	free(hist_text);
	if (j) {
		json_object_set_new(j, "corrupt", json_integer((json_int_t)o->corrupt));
		json_object_set_new(j, "missed", json_integer((json_int_t)o->missed));
		json_object_set_new(j, "pending", json_integer((json_int_t)o->pending));
		/* As a dump of the run directory has it. */
		if (o->issue_delay.count)
			json_object_set_new(j, "issue_delay_us", latency_json(&o->issue_delay));
		json_t *verify = op_verify_to_json(o->verify, false);
		if (verify)
			json_object_set_new(j, "verify", verify);
	}
	if (j && object) {
		/* Errors by cause, time to first byte, and connection setup
		 * (its count is the number of connections opened). */
		json_object_set_new(j, "errors_by_class", json_pack("{s:I,s:I,s:I,s:I,s:I}",
			"connect", (json_int_t)o->error_class[OP_ERR_CONNECT],
			"timeout", (json_int_t)o->error_class[OP_ERR_TIMEOUT],
			"http_4xx", (json_int_t)o->error_class[OP_ERR_HTTP_4XX],
			"http_5xx", (json_int_t)o->error_class[OP_ERR_HTTP_5XX],
			"transfer", (json_int_t)o->error_class[OP_ERR_TRANSFER]));
		json_object_set_new(j, "ttfb_us", latency_json(&o->ttfb));
		json_object_set_new(j, "connect_us", latency_json(&o->connect));
		json_object_set_new(j, "connections", json_integer((json_int_t)o->connect.count));
		obj_verify_set_json(j, &o->obj_verify, o->corrupt);
	}
	return j;
}

/* An object pool's endpoints as its last interval record has them: that
 * interval's figures and the run's totals (total_ops, total_errors). */
static void set_endpoints(json_t *jw, const struct results *r, const struct workload *w)
{
	json_t *eps = json_object_get(r->endpoints_last, w->cfg->name);

	if (jw && eps)
		json_object_set(jw, "endpoints", eps);
}

json_t *results_status_json(const struct results *r, uint64_t now_ns, const char *run_state)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		json_t *ops = json_object();
		for (size_t op = 0; op < wr->n_ops; op++) {
			const struct op_summary *s = &wr->last.ops[op];
			json_object_set_new(ops, w->op_names[op], json_pack(
				"{s:f,s:f,s:I,s:f,s:f,s:f,s:I,s:I}",
				"rate_target", s->rate_target, "rate_achieved", s->rate_achieved,
				"count", (json_int_t)s->count,
				"p50_us", s->p50 / 1e3, "p99_us", s->p99 / 1e3, "max_us", s->max / 1e3,
				"errors", (json_int_t)s->errors,
				"count_total", (json_int_t)wr->totals[op].count));
			json_t *jop = json_object_get(ops, w->op_names[op]);
			json_object_set_new(jop, "corrupt", json_integer((json_int_t)s->corrupt));
			json_object_set_new(jop, "missed", json_integer((json_int_t)s->missed));
			json_object_set_new(jop, "pending", json_integer((json_int_t)s->pending));
			json_object_set_new(jop, "missed_total",
					    json_integer((json_int_t)wr->totals[op].missed));
			json_object_set_new(jop, "corrupt_total",
					    json_integer((json_int_t)wr->totals[op].corrupt));
			if (w->cfg->verify.on) {
				json_object_set_new(jop, "verify", op_verify_to_json(s->verify, true));
				json_object_set_new(jop, "verify_total",
						    op_verify_to_json(wr->totals[op].verify, true));
			}
			if (w->cfg->type == WORKLOAD_OBJECT) {
				obj_verify_set_json(jop, &s->obj_verify, s->corrupt);
				json_t *total = json_object();
				obj_verify_set_json(total, &wr->totals[op].obj_verify,
						    wr->totals[op].corrupt);
				json_object_set(jop, "verify_total", json_object_get(total, "verify"));
				json_decref(total);
			}
			/* The kernel's view of the same op on the same devices, last interval. */
			struct kstats_summary blk;
			if (probes_workload_blk(r->probes, i, w->op_names[op], &blk))
				json_object_set_new(jop, "blk", json_pack(
					"{s:I,s:f,s:f,s:f}", "count", (json_int_t)blk.count,
					"p50_us", blk.p50 / 1e3, "p99_us", blk.p99 / 1e3,
					"max_us", blk.max / 1e3));
		}
		json_t *jw = json_pack("{s:s,s:s,s:s,s:f,s:o}", "name", w->cfg->name,
				       "type", workload_type_name(w->cfg->type),
				       "state", workload_state_name(w->state),
				       "lag_ms", workload_lag_ns(w) / 1e6, "ops", ops);
		if (w->reason[0])
			json_object_set_new(jw, "reason", json_string(w->reason));
		uint64_t audit_done, audit_total;
		if (workload_audit(w, &audit_done, &audit_total))
			json_object_set_new(jw, "audit", json_pack("{s:I,s:I}", "done",
				(json_int_t)audit_done, "total", (json_int_t)audit_total));
		struct kstats_tcp_summary tcp;
		if (probes_workload_tcp(r->probes, i, &tcp))
			json_object_set_new(jw, "tcp", json_pack(
				"{s:I,s:f,s:f,s:I,s:f,s:I}", "srtt_samples", (json_int_t)tcp.srtt_samples,
				"srtt_p50_us", tcp.srtt_p50 / 1e3, "srtt_p99_us", tcp.srtt_p99 / 1e3,
				"connects", (json_int_t)tcp.connects, "connect_p99_us", tcp.connect_p99 / 1e3,
				"retransmits", (json_int_t)tcp.retransmits));
		set_endpoints(jw, r, w);
		json_array_append_new(arr, jw);
	}
	json_t *status = json_pack("{s:b,s:s,s:s,s:f,s:f,s:o}", "ok", 1, "run", r->cfg->name,
				   "state", run_state, "elapsed_s", mono_since(r->run_start_ns, now_ns) / 1e9,
				   "interval_s", r->cfg->interval_ns / 1e9, "workloads", arr);
	if (status && r->rundir)
		json_object_set_new(status, "results", rundir_status_json(r->rundir));
	if (status) {
		json_t *trace = json_object();
		for (int f = 0; f < PROBE_FAMILIES; f++) {
			enum probe_state ps = probes_state(r->probes, (enum probe_family)f);
			json_t *jf = json_pack("{s:s}", "state", probe_state_name(ps));
			if (ps == PROBE_UNAVAILABLE) {
				json_object_set_new(jf, "reason", json_string(
					probes_reason(r->probes, (enum probe_family)f)));
				json_object_set_new(jf, "cause", json_string(probe_cause_name(
					probes_cause(r->probes, (enum probe_family)f))));
			}
			json_object_set_new(trace, probe_family_name((enum probe_family)f), jf);
		}
		json_object_set_new(status, "trace", trace);
		json_object_set_new(status, "kernel", probes_status_json(r->probes));
	}
	return status;
}

/* The intervals where soakd itself was late, if any (soakctl report flags them). */
static void set_generator_late(json_t *jw, const struct workload_results *wr)
{
	if (jw && wr->late_intervals)
		json_object_set_new(jw, "generator_late",
				    json_pack("{s:I,s:f}", "intervals", (json_int_t)wr->late_intervals,
					      "max_ms", wr->late_max_ns / 1e6));
}

json_t *results_dump_json(const struct results *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		json_t *ops = json_object(), *targets = json_array();

		for (size_t op = 0; op < wr->n_ops; op++)
			json_object_set_new(ops, w->op_names[op],
					    op_json(&wr->totals[op],
						    wr->target_ops_total * w->op_share[op],
						    wr->active_ns, wr->sched_ns,
						    w->cfg->type == WORKLOAD_OBJECT));
		for (size_t s = 0; s < wr->n_streams; s++) {
			json_t *tops = json_object();
			for (size_t op = 0; op < wr->n_ops; op++)
				json_object_set_new(tops, w->op_names[op],
					op_json(&wr->target_totals[s * wr->n_ops + op],
						wr->target_ops_total * w->op_share[op] / wr->n_streams,
						wr->active_ns, wr->sched_ns,
						w->cfg->type == WORKLOAD_OBJECT));
			json_t *target = json_pack("{s:s,s:o}", "path", w->streams[s].label, "ops",
						   tops);
			if (target && w->streams[s].facts)
				json_object_set_new(target, "device",
						    dev_facts_json(w->streams[s].facts));
			json_array_append_new(targets, target);
		}
		json_t *jw = json_pack("{s:s,s:s,s:s,s:f,s:f,s:I,s:o,s:o}", "name", w->cfg->name,
				       "type", workload_type_name(w->cfg->type),
				       "state", workload_state_name(w->state),
				       "active_s", wr->active_ns / 1e9, "lag_max_ms", wr->lag_max_ns / 1e6,
				       "intervals", (json_int_t)wr->intervals,
				       "ops", ops, "targets", targets);
		if (w->reason[0])
			json_object_set_new(jw, "reason", json_string(w->reason));
		set_generator_late(jw, wr);
		set_endpoints(jw, r, w);
		json_array_append_new(arr, jw);
	}
	return json_pack("{s:b,s:s,s:f,s:o,s:o}", "ok", 1, "run", r->cfg->name,
			 "interval_s", r->cfg->interval_ns / 1e9, "workloads", arr,
			 "kernel", probes_dump_json(r->probes));
}

/* A count as JSON holds it: one past INT64_MAX stays a large count. */
static json_int_t json_count(uint64_t n)
{
	return n > INT64_MAX ? INT64_MAX : (json_int_t)n;
}

static json_t *slice_json(uint64_t start_ns, uint64_t end_ns, uint64_t count, char *latency,
			  char *service, bool partial)
{
	json_t *j = json_pack("{s:f,s:f,s:I,s:s?,s:s?}", "start_s", start_ns / 1e9,
			      "end_s", end_ns / 1e9, "count", (json_int_t)count,
			      "latency", latency, "service", service);
	if (partial)
		json_object_set_new(j, "partial", json_true());
	return j;
}

json_t *results_report_json(const struct results *r)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		json_t *ops = json_object();
		for (size_t op = 0; op < wr->n_ops; op++) {
			const struct op_slices *sl = &wr->slices[op];
			json_t *slices = json_array();
			for (size_t k = 0; k < sl->n; k++) {
				/* One that cannot be read back (logged) shows
				 * without its histograms. */
				const struct stored_slice *st = &sl->stored[k];
				char *lat = slice_text_get(&r->slices, &st->latency);
				char *svc = slice_text_get(&r->slices, &st->service);
				json_array_append_new(slices, slice_json(st->start_ns, st->end_ns,
									 st->count, lat, svc,
									 false));
				free(lat);
				free(svc);
			}
			if (sl->open) {
				char *lat = hist_to_base64(sl->latency), *svc = hist_to_base64(sl->service);
				json_array_append_new(slices, slice_json(sl->start_ns, sl->end_ns,
						      sl->count, lat, svc, true));
				free(lat);
				free(svc);
			}
			const struct op_stats *t = &wr->totals[op];
			json_object_set_new(ops, wr->workload->op_names[op],
					    json_pack("{s:o,s:I,s:I,s:I,s:I}", "slices", slices,
						      "errors", json_count(t->errors),
						      "missed", json_count(t->missed),
						      "wrong_data", json_count(op_stats_wrong_data(t)),
						      "flush_failed",
						      json_count(t->verify[OP_VERIFY_FLUSH_FAILED])));
		}
		json_t *wj = json_pack("{s:s,s:s,s:o}", "name", wr->workload->cfg->name,
				       "state", workload_state_name(wr->workload->state), "ops", ops);
		if (wj && wr->workload->reason[0])
			json_object_set_new(wj, "reason", json_string(wr->workload->reason));
		set_generator_late(wj, wr);
		json_array_append_new(arr, wj);
	}
	return json_pack("{s:b,s:s,s:f,s:o}", "ok", 1, "run", r->cfg->name,
			 "slice_s", r->cfg->slice_ns / 1e9, "workloads", arr);
}

void results_print_summary(const struct results *r, FILE *out)
{
	fprintf(out, "\nsummary of run \"%s\"\n", r->cfg->name);
	fprintf(out, "%-16s %-17s %10s %7s %10s %10s %9s %9s %9s %9s %9s\n", "workload", "op", "ops",
		"errors", "target/s", "ops/s", "p50(us)", "p90(us)", "p99(us)", "p99.9(us)",
		"max(us)");
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		double secs = wr->active_ns / 1e9;
		for (size_t op = 0; op < wr->n_ops; op++) {
			const struct op_stats *o = &wr->totals[op];
			fprintf(out, "%-16s %-17s %10" PRIu64 " %7" PRIu64 " %10.1f %10.1f %9.1f %9.1f %9.1f"
				" %9.1f %9.1f\n", w->cfg->name, w->op_names[op], o->count, o->errors,
				rate_target(wr, wr->target_ops_total * w->op_share[op]),
				secs > 0 ? o->count / secs : 0,
				hist_percentile(&o->latency, 50) / 1e3,
				hist_percentile(&o->latency, 90) / 1e3,
				hist_percentile(&o->latency, 99) / 1e3,
				hist_percentile(&o->latency, 99.9) / 1e3, hist_max(&o->latency) / 1e3);
		}
		fprintf(out, "%-16s %s%s%s, %.1f s active, max lag %.1f ms\n", w->cfg->name,
			workload_state_name(w->state), w->reason[0] ? ": " : "", w->reason, secs,
			wr->lag_max_ns / 1e6);
	}
}
