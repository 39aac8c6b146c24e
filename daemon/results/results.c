// SPDX-License-Identifier: GPL-2.0-only
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

#include "device/dev_facts.h"
#include "base/journal_ids.h"
#include "base/log.h"
#include "probes/probes.h"
#include "rundir.h"
#include "stats_json.h"

struct consume_arg {
	struct workload_results *wr;
	size_t stream;
};

static void consume_slot(const struct interval_slot *slot, size_t n_ops, void *userdata)
{
	struct consume_arg *a = userdata;
	struct workload_results *wr = a->wr;

	for (size_t op = 0; op < n_ops; op++) {
		op_stats_merge(&wr->interval[op], &slot->ops[op]);
		op_stats_merge(&wr->target_totals[a->stream * wr->n_ops + op], &slot->ops[op]);
		if (wr->target_interval)
			op_stats_merge(&wr->target_interval[a->stream * wr->n_ops + op],
				       &slot->ops[op]);
	}
	if (!wr->iv_has_data || slot->start_ns < wr->iv_start_ns)
		wr->iv_start_ns = slot->start_ns;
	if (!wr->iv_has_data || slot->end_ns > wr->iv_end_ns)
		wr->iv_end_ns = slot->end_ns;
	if (slot->lag_max_ns > wr->iv_lag_max_ns)
		wr->iv_lag_max_ns = slot->lag_max_ns;
	wr->iv_has_data = true;
}

static struct op_stats *op_stats_array(size_t n)
{
	struct op_stats *a = malloc(n * sizeof(*a));
	if (a)
		for (size_t i = 0; i < n; i++)
			op_stats_init(&a[i]);
	return a;
}

static void free_slot(struct workload_results *wr)
{
	for (size_t s = 0; wr->stream_userdata && s < wr->n_streams; s++)
		free(wr->stream_userdata[s]);
	free(wr->stream_userdata);
	for (size_t op = 0; wr->slices && op < wr->n_ops; op++) {
		struct op_slices *sl = &wr->slices[op];
		for (size_t k = 0; k < sl->n; k++) {
			free(sl->stored[k].latency);
			free(sl->stored[k].service);
		}
		free(sl->stored);
		free(sl->latency);
		free(sl->service);
	}
	free(wr->slices);
	free(wr->totals);
	free(wr->interval);
	free(wr->target_totals);
	free(wr->target_interval);
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
	wr->target_totals = op_stats_array(wr->n_ops * wr->n_streams);
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
		wr->slices[op].latency = malloc(sizeof(struct hist));
		wr->slices[op].service = malloc(sizeof(struct hist));
		if (!wr->slices[op].latency || !wr->slices[op].service)
			goto fail;
		hist_init(wr->slices[op].latency);
		hist_init(wr->slices[op].service);
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
	if (i < r->n)
		free_slot(&r->w[i]);
	int ret = init_slot(&r->w[i], w);
	if (i == r->n && ret == 0)
		r->n++;
	return ret;
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
	free(r->w);
	free(r);
}

static void summarize(const struct op_stats *o, double target_ops, uint64_t span_ns,
		      struct op_summary *ret)
{
	double secs = span_ns / 1e9;
	*ret = (struct op_summary){
		.count = o->count, .errors = o->errors, .bytes = o->bytes,
		.rate_target = secs > 0 ? target_ops / secs : 0,
		.rate_achieved = secs > 0 ? o->count / secs : 0,
		.p50 = hist_percentile(&o->latency, 50), .p90 = hist_percentile(&o->latency, 90),
		.p99 = hist_percentile(&o->latency, 99), .p999 = hist_percentile(&o->latency, 99.9),
		.min = hist_min(&o->latency), .max = hist_max(&o->latency),
		.svc_p50 = hist_percentile(&o->service, 50),
		.svc_p99 = hist_percentile(&o->service, 99),
		.corrupt = o->corrupt,
		.ttfb_p50 = hist_percentile(&o->ttfb, 50),
		.ttfb_p99 = hist_percentile(&o->ttfb, 99),
	};
}

/* The interval as a record of the run's log. */
static json_t *interval_record(const struct results *r, struct workload_results *wr,
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
				"sched_ns", (json_int_t)mono_since(w->started_ns, wr->iv_end_ns),
				"lag_max_ns", (json_int_t)row->lag_max_ns, "target_ops", target_ops,
				"ops", ops);
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
	if (rec && r->record_extra)
		r->record_extra(r->record_extra_userdata, w, wr->iv_start_ns, wr->iv_end_ns, rec);
	return rec;
}

/* A journal entry's fields, built one printf at a time so that some can
 * be left out (the kernel's, when tracing is off or unavailable). */
#define JOURNAL_MAX_FIELDS 64
struct journal_fields {
	struct iovec iov[JOURNAL_MAX_FIELDS];
	char *text[JOURNAL_MAX_FIELDS];
	size_t n;
};

static void journal_add(struct journal_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void journal_add(struct journal_fields *f, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	if (f->n == JOURNAL_MAX_FIELDS)
		return;
	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	f->text[f->n] = text;
	f->iov[f->n++] = (struct iovec){ .iov_base = text, .iov_len = (size_t)n };
}

static void journal_send(struct journal_fields *f)
{
	/* With no journald listening this returns 0 and the entry is lost;
	 * the live table and the dump still have it. */
	sd_journal_sendv(f->iov, (int)f->n);
	for (size_t i = 0; i < f->n; i++)
		free(f->text[i]);
	f->n = 0;
}

/* The fields an op's interval and its run summary share; the object
 * workloads' own (corrupt reads, time to first byte) only on theirs. */
static void journal_add_op(struct journal_fields *f, const struct workload *w,
			   const struct op_summary *s)
{
	journal_add(f, "SOAK_OPS=%" PRIu64, s->count);
	journal_add(f, "SOAK_ERRORS=%" PRIu64, s->errors);
	journal_add(f, "SOAK_BYTES=%" PRIu64, s->bytes);
	journal_add(f, "SOAK_RATE=%.3f", s->rate_achieved);
	journal_add(f, "SOAK_RATE_TARGET=%.3f", s->rate_target);
	journal_add(f, "SOAK_P50_US=%.3f", s->p50 / 1e3);
	journal_add(f, "SOAK_P90_US=%.3f", s->p90 / 1e3);
	journal_add(f, "SOAK_P99_US=%.3f", s->p99 / 1e3);
	journal_add(f, "SOAK_P999_US=%.3f", s->p999 / 1e3);
	journal_add(f, "SOAK_MAX_US=%.3f", s->max / 1e3);
	journal_add(f, "SOAK_SERVICE_P50_US=%.3f", s->svc_p50 / 1e3);
	journal_add(f, "SOAK_SERVICE_P99_US=%.3f", s->svc_p99 / 1e3);
	if (w->cfg->type == WORKLOAD_OBJECT)
		journal_add(f, "SOAK_CORRUPT=%" PRIu64, s->corrupt);
}

static void journal_row(const struct results *r, const struct workload_results *wr,
			const struct interval_row *row)
{
	const struct workload *w = wr->workload;
	size_t index = (size_t)(wr - r->w);
	struct kstats_tcp_summary tcp;
	bool have_tcp = probes_workload_tcp(r->probes, index, &tcp);

	for (size_t op = 0; op < wr->n_ops; op++) {
		const struct op_summary *s = &row->ops[op];
		struct journal_fields f = { .n = 0 };
		struct kstats_summary blk;

		journal_add(&f, "MESSAGE=%s %s: %" PRIu64 " ops, %.1f/s (target %.1f/s), p50 %.1f us, "
			    "p99 %.1f us, max %.1f us, %" PRIu64 " errors",
			    w->cfg->name, w->op_names[op], s->count, s->rate_achieved,
			    s->rate_target, s->p50 / 1e3, s->p99 / 1e3, s->max / 1e3, s->errors);
		journal_add(&f, "PRIORITY=%d", LOG_INFO);
		journal_add(&f, "SYSLOG_IDENTIFIER=soakd");
		journal_add(&f, "MESSAGE_ID=" SOAK_MESSAGE_INTERVAL);
		journal_add(&f, "SOAK_EVENT=interval");
		journal_add(&f, "SOAK_RUN=%s", r->cfg->name);
		journal_add(&f, "SOAK_WORKLOAD=%s", w->cfg->name);
		journal_add(&f, "SOAK_OP=%s", w->op_names[op]);
		journal_add(&f, "SOAK_INTERVAL_START_S=%.3f", row->start_ns / 1e9);
		journal_add(&f, "SOAK_INTERVAL_END_S=%.3f", row->end_ns / 1e9);
		journal_add_op(&f, w, s);
		if (w->cfg->type == WORKLOAD_OBJECT) {
			journal_add(&f, "SOAK_TTFB_P50_US=%.3f", s->ttfb_p50 / 1e3);
			journal_add(&f, "SOAK_TTFB_P99_US=%.3f", s->ttfb_p99 / 1e3);
		}
		journal_add(&f, "SOAK_LAG_MAX_MS=%.3f", row->lag_max_ns / 1e6);
		/* The kernel's view of the same interval: the block layer for
		 * this op on the workload's devices, TCP toward its endpoints. */
		if (probes_workload_blk(r->probes, index, w->op_names[op], &blk)) {
			journal_add(&f, "SOAK_BLK_OPS=%" PRIu64, blk.count);
			journal_add(&f, "SOAK_BLK_ERRORS=%" PRIu64, blk.errors);
			journal_add(&f, "SOAK_BLK_BYTES=%" PRIu64, blk.bytes);
			journal_add(&f, "SOAK_BLK_P50_US=%.3f", blk.p50 / 1e3);
			journal_add(&f, "SOAK_BLK_P90_US=%.3f", blk.p90 / 1e3);
			journal_add(&f, "SOAK_BLK_P99_US=%.3f", blk.p99 / 1e3);
			journal_add(&f, "SOAK_BLK_P999_US=%.3f", blk.p999 / 1e3);
			journal_add(&f, "SOAK_BLK_MAX_US=%.3f", blk.max / 1e3);
		}
		if (have_tcp) {
			journal_add(&f, "SOAK_TCP_SRTT_SAMPLES=%" PRIu64, tcp.srtt_samples);
			journal_add(&f, "SOAK_TCP_SRTT_P50_US=%.3f", tcp.srtt_p50 / 1e3);
			journal_add(&f, "SOAK_TCP_SRTT_P99_US=%.3f", tcp.srtt_p99 / 1e3);
			journal_add(&f, "SOAK_TCP_CONNECTS=%" PRIu64, tcp.connects);
			journal_add(&f, "SOAK_TCP_CONNECT_P50_US=%.3f", tcp.connect_p50 / 1e3);
			journal_add(&f, "SOAK_TCP_CONNECT_P99_US=%.3f", tcp.connect_p99 / 1e3);
			journal_add(&f, "SOAK_TCP_RETRANSMITS=%" PRIu64, tcp.retransmits);
			journal_add(&f, "SOAK_TCP_RESETS=%" PRIu64,
				    tcp.resets_sent + tcp.resets_received);
		}
		journal_send(&f);
	}
}

void results_journal_summary(const struct results *r, const char *why)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		const struct workload *w = wr->workload;
		for (size_t op = 0; op < wr->n_ops; op++) {
			struct journal_fields f = { .n = 0 };
			struct op_summary s;
			summarize(&wr->totals[op], wr->target_ops_total * w->op_share[op], wr->active_ns,
				  &s);
			journal_add(&f, "MESSAGE=%s %s over the run: %" PRIu64 " ops, %.1f/s (target "
				    "%.1f/s), p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us, %"
				    PRIu64 " errors (%s)", w->cfg->name, w->op_names[op], s.count,
				    s.rate_achieved, s.rate_target, s.p50 / 1e3, s.p99 / 1e3,
				    s.p999 / 1e3, s.max / 1e3, s.errors, why);
			journal_add(&f, "PRIORITY=%d", LOG_NOTICE);
			journal_add(&f, "SYSLOG_IDENTIFIER=soakd");
			journal_add(&f, "MESSAGE_ID=" SOAK_MESSAGE_SUMMARY);
			journal_add(&f, "SOAK_EVENT=summary");
			journal_add(&f, "SOAK_RUN=%s", r->cfg->name);
			journal_add(&f, "SOAK_WORKLOAD=%s", w->cfg->name);
			journal_add(&f, "SOAK_OP=%s", w->op_names[op]);
			journal_add(&f, "SOAK_STATE=%s", workload_state_name(w->state));
			journal_add(&f, "SOAK_ACTIVE_S=%.3f", wr->active_ns / 1e9);
			journal_add(&f, "SOAK_INTERVALS=%" PRIu64, wr->intervals);
			journal_add_op(&f, w, &s);
			journal_add(&f, "SOAK_LAG_MAX_MS=%.3f", wr->lag_max_ns / 1e6);
			journal_send(&f);
		}
	}
}

static void table_row(struct results *r, const struct workload_results *wr,
		      const struct interval_row *row)
{
	if (r->table_lines++ % 20 == 0)
		fprintf(stderr, "%8s %-16s %-17s %10s %10s %9s %9s %9s %9s %7s %8s\n", "time",
			"workload", "op", "target/s", "ops/s", "p50(us)", "p99(us)", "p99.9(us)",
			"max(us)", "errors", "lag(ms)");
	for (size_t op = 0; op < wr->n_ops; op++) {
		const struct op_summary *s = &row->ops[op];
		fprintf(stderr, "%7.1fs %-16s %-17s %10.1f %10.1f %9.1f %9.1f %9.1f %9.1f %7" PRIu64
			" %8.1f\n", row->end_ns / 1e9, wr->workload->cfg->name,
			wr->workload->op_names[op], s->rate_target, s->rate_achieved, s->p50 / 1e3,
			s->p99 / 1e3, s->p999 / 1e3, s->max / 1e3, s->errors, row->lag_max_ns / 1e6);
	}
}

/* Moves the slice being filled to the compact list. */
static void store_slice(struct op_slices *sl)
{
	if (!sl->open)
		return;
	if (sl->n == sl->cap) {
		size_t cap = sl->cap ? sl->cap * 2 : 16;
		struct stored_slice *stored = realloc(sl->stored, cap * sizeof(*stored));
		if (!stored) {
			log_error("out of memory storing a slice; its intervals stay in the totals");
			return;
		}
		sl->stored = stored;
		sl->cap = cap;
	}
	struct stored_slice *st = &sl->stored[sl->n];
	*st = (struct stored_slice){ .start_ns = sl->start_ns, .end_ns = sl->end_ns,
				     .count = sl->latency->count + 0,
				     .latency = hist_to_base64(sl->latency),
				     .service = hist_to_base64(sl->service) };
	if (!st->latency || !st->service) {
		free(st->latency);
		free(st->service);
		log_error("out of memory storing a slice; its intervals stay in the totals");
		return;
	}
	sl->n++;
	hist_init(sl->latency);
	hist_init(sl->service);
	sl->open = false;
}

/* Folds a closed interval into the slice that holds its start. */
static void fold_into_slice(struct results *r, struct workload_results *wr,
			    const struct interval_row *row)
{
	uint64_t index = row->start_ns / r->cfg->slice_ns;

	for (size_t op = 0; op < wr->n_ops; op++) {
		struct op_slices *sl = &wr->slices[op];
		if (sl->open && index != wr->slice_index)
			store_slice(sl);
		if (!sl->open) {
			sl->open = true;
			sl->start_ns = row->start_ns;
		}
		sl->end_ns = row->end_ns;
		hist_merge(sl->latency, &wr->interval[op].latency);
		hist_merge(sl->service, &wr->interval[op].service);
	}
	wr->slice_index = index;
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
	row.start_ns = mono_since(r->run_start_ns, wr->iv_start_ns);
	row.end_ns = mono_since(r->run_start_ns, wr->iv_end_ns);
	row.lag_max_ns = wr->iv_lag_max_ns;
	fold_into_slice(r, wr, &row);
	uint64_t n_intervals = r->cfg->interval_ns ? (span + r->cfg->interval_ns / 2) / r->cfg->interval_ns
						   : 1;
	if (r->rundir) {
		json_t *rec = interval_record(r, wr, &row, target);
		if (rec && (stalled || n_intervals > 1)) {
			json_object_set_new(rec, "stalled", json_true());
			json_object_set_new(rec, "intervals", json_integer((json_int_t)n_intervals));
		}
		if (rec)
			rundir_append(r->rundir, rec);
		json_decref(rec);
	}
	wr->iv_prev_end_ns = wr->iv_end_ns;
	wr->intervals++;
	/* What a replay of this record would know (checkpoints). */
	wr->recorded = true;
	wr->recorded_sched_ns = mono_since(w->started_ns, wr->iv_end_ns);
	if (row.end_ns > r->logged_end_ns)
		r->logged_end_ns = row.end_ns;
	int64_t wall_end = r->run_start_ns + (int64_t)row.end_ns + r->wall_offset_ns;
	if (wall_end > (int64_t)r->logged_wall_ns)
		r->logged_wall_ns = (uint64_t)wall_end;
	for (size_t i = 0; wr->target_interval && i < wr->n_streams * wr->n_ops; i++)
		op_stats_init(&wr->target_interval[i]);
	for (size_t op = 0; op < wr->n_ops; op++) {
		summarize(&wr->interval[op], target * w->op_share[op], span, &row.ops[op]);
		op_stats_merge(&wr->totals[op], &wr->interval[op]);
		op_stats_init(&wr->interval[op]);
	}
	wr->active_ns += span;
	wr->target_ops_total += target;
	if (wr->iv_lag_max_ns > wr->lag_max_ns)
		wr->lag_max_ns = wr->iv_lag_max_ns;
	wr->iv_has_data = false;
	wr->iv_lag_max_ns = 0;

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
		wr->iv_has_data = true;
		close_interval_marked(r, wr, true);
		at = end;
	}
}

/*
 * One record per interval the threads published, never several merged:
 * after soakd was frozen (SIGSTOP, a long stall) the slots published
 * meanwhile each become their own record, and the intervals no slot
 * covers become empty records marked "stalled".  The streams of a
 * workload publish the same boundaries; their slots for one interval
 * make one record.
 */
void results_tick(struct results *r, uint64_t now_ns)
{
	(void)now_ns;
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
}

bool results_reap(struct results *r, size_t i)
{
	struct workload_results *wr = &r->w[i];
	bool changed = workload_reap(wr->workload, consume_slot, wr->stream_userdata);
	if (changed && !workload_is_active(wr->workload))
		close_interval(r, wr);
	return changed;
}

void results_wait(struct results *r, size_t i, uint64_t timeout_ns)
{
	struct workload_results *wr = &r->w[i];
	workload_wait(wr->workload, timeout_ns, consume_slot, wr->stream_userdata);
	close_interval(r, wr);
}

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
		op_stats_init(&wr->interval[op]);
		json_t *j = json_object_get(ops, w->op_names[op]);
		if (j && op_stats_merge_json(&wr->interval[op], j) < 0)
			err = -EINVAL;
	}
	json_t *targets = json_object_get(rec, "targets");
	for (size_t s = 0; s < wr->n_streams && s < json_array_size(targets); s++) {
		json_t *tops = json_object_get(json_array_get(targets, s), "ops");
		for (size_t op = 0; op < wr->n_ops; op++) {
			json_t *j = json_object_get(tops, w->op_names[op]);
			if (j && op_stats_merge_json(&wr->target_totals[s * wr->n_ops + op], j) < 0)
				err = -EINVAL;
		}
	}
	if (wr->n_streams == 1)
		for (size_t op = 0; op < wr->n_ops; op++)
			op_stats_merge(&wr->target_totals[op], &wr->interval[op]);
	double target = json_number_value(json_object_get(rec, "target_ops"));
	uint64_t span = row.end_ns - row.start_ns;
	fold_into_slice(r, wr, &row);
	for (size_t op = 0; op < wr->n_ops; op++) {
		summarize(&wr->interval[op], target * w->op_share[op], span, &row.ops[op]);
		op_stats_merge(&wr->totals[op], &wr->interval[op]);
		op_stats_init(&wr->interval[op]);
	}
	wr->active_ns += span;
	wr->target_ops_total += target;
	if (row.lag_max_ns > wr->lag_max_ns)
		wr->lag_max_ns = row.lag_max_ns;
	wr->last = row;
	wr->have_last = true;
	wr->intervals++;
	wr->recorded = true;
	wr->recorded_sched_ns = get_u64(rec, "sched_ns");
	if (row.end_ns > r->recorded_end_ns)
		r->recorded_end_ns = row.end_ns;
	if (get_u64(rec, "wall_end_ns") > r->recorded_wall_ns)
		r->recorded_wall_ns = get_u64(rec, "wall_end_ns");
	return err;
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
				if (find(r, json_string_value(v), &i) &&
				    results_set_workload(r, i, r->w[i].workload) < 0)
					return -ENOMEM;
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
		       bool object)
{
	double secs = active_ns / 1e9;
	char *hist_text = hist_to_base64(&o->latency);
	json_t *j = json_pack("{s:I,s:I,s:I,s:f,s:f,s:o,s:o,s:s?}",
			      "count", (json_int_t)o->count, "errors", (json_int_t)o->errors,
			      "bytes", (json_int_t)o->bytes,
			      "rate_target", secs > 0 ? target_ops / secs : 0.0,
			      "rate_achieved", secs > 0 ? o->count / secs : 0.0,
			      "latency_us", latency_json(&o->latency),
			      "service_us", latency_json(&o->service),
			      "latency_hist", hist_text);
	free(hist_text);
	if (j)
		json_object_set_new(j, "corrupt", json_integer((json_int_t)o->corrupt));
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
	}
	return j;
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
			json_object_set_new(jop, "corrupt_total",
					    json_integer((json_int_t)wr->totals[op].corrupt));
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
		struct kstats_tcp_summary tcp;
		if (probes_workload_tcp(r->probes, i, &tcp))
			json_object_set_new(jw, "tcp", json_pack(
				"{s:I,s:f,s:f,s:I,s:f,s:I}", "srtt_samples", (json_int_t)tcp.srtt_samples,
				"srtt_p50_us", tcp.srtt_p50 / 1e3, "srtt_p99_us", tcp.srtt_p99 / 1e3,
				"connects", (json_int_t)tcp.connects, "connect_p99_us", tcp.connect_p99 / 1e3,
				"retransmits", (json_int_t)tcp.retransmits));
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
						    wr->active_ns, w->cfg->type == WORKLOAD_OBJECT));
		for (size_t s = 0; s < wr->n_streams; s++) {
			json_t *tops = json_object();
			for (size_t op = 0; op < wr->n_ops; op++)
				json_object_set_new(tops, w->op_names[op],
					op_json(&wr->target_totals[s * wr->n_ops + op],
						wr->target_ops_total * w->op_share[op] / wr->n_streams,
						wr->active_ns, w->cfg->type == WORKLOAD_OBJECT));
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
		json_array_append_new(arr, jw);
	}
	return json_pack("{s:b,s:s,s:f,s:o,s:o}", "ok", 1, "run", r->cfg->name,
			 "interval_s", r->cfg->interval_ns / 1e9, "workloads", arr,
			 "kernel", probes_dump_json(r->probes));
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
			for (size_t k = 0; k < sl->n; k++)
				json_array_append_new(slices, slice_json(
					sl->stored[k].start_ns, sl->stored[k].end_ns,
					sl->stored[k].count, sl->stored[k].latency,
					sl->stored[k].service, false));
			if (sl->open) {
				char *lat = hist_to_base64(sl->latency), *svc = hist_to_base64(sl->service);
				json_array_append_new(slices, slice_json(sl->start_ns, sl->end_ns,
						      sl->latency->count, lat, svc, true));
				free(lat);
				free(svc);
			}
			json_object_set_new(ops, wr->workload->op_names[op],
					    json_pack("{s:o}", "slices", slices));
		}
		json_array_append_new(arr, json_pack("{s:s,s:s,s:o}", "name", wr->workload->cfg->name,
						     "state", workload_state_name(wr->workload->state),
						     "ops", ops));
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
				secs > 0 ? wr->target_ops_total * w->op_share[op] / secs : 0,
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
