// SPDX-License-Identifier: GPL-2.0-only
#include "results.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-journal.h>

#include "log.h"

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

struct results *results_new(const struct run_config *cfg, struct workload **workloads,
			    size_t n, uint64_t run_start_ns, bool live_table)
{
	struct results *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->cfg = cfg;
	r->run_start_ns = run_start_ns;
	r->live_table = live_table;
	r->n = n;
	r->w = calloc(n, sizeof(*r->w));
	if (!r->w)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct workload_results *wr = &r->w[i];
		wr->workload = workloads[i];
		wr->n_ops = workloads[i]->n_ops;
		wr->n_streams = workloads[i]->n_streams;
		wr->totals = op_stats_array(wr->n_ops);
		wr->interval = op_stats_array(wr->n_ops);
		wr->target_totals = op_stats_array(wr->n_ops * wr->n_streams);
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
	}
	return r;
fail:
	results_free(r);
	return NULL;
}

void results_free(struct results *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->w && i < r->n; i++) {
		struct workload_results *wr = &r->w[i];
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
		free(wr->rows);
	}
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
		.max = hist_max(&o->latency),
		.svc_p50 = hist_percentile(&o->service, 50),
		.svc_p99 = hist_percentile(&o->service, 99),
	};
}

static void store_row(struct workload_results *wr, const struct interval_row *row)
{
	if (!wr->rows) {
		wr->rows = malloc(RESULTS_MAX_ROWS * sizeof(*wr->rows));
		if (!wr->rows)
			return;
	}
	if (wr->n_rows < RESULTS_MAX_ROWS) {
		wr->rows[wr->n_rows++] = *row;
	} else {
		/* Oldest rows go first; the totals keep every op. */
		wr->rows[wr->first_row] = *row;
		wr->first_row = (wr->first_row + 1) % RESULTS_MAX_ROWS;
		wr->rows_dropped++;
	}
}

static void journal_row(const struct results *r, const struct workload_results *wr,
			const struct interval_row *row)
{
	const struct workload *w = wr->workload;

	for (size_t op = 0; op < wr->n_ops; op++) {
		const struct op_summary *s = &row->ops[op];
		/* With no journald listening this returns 0 and the entry is
		 * lost; the live table and the dump still have it. */
		sd_journal_send("MESSAGE=%s %s: %" PRIu64 " ops, %.1f/s (target %.1f/s), p50 %.1f us, "
				"p99 %.1f us, max %.1f us, %" PRIu64 " errors",
				w->cfg->name, w->op_names[op], s->count, s->rate_achieved,
				s->rate_target, s->p50 / 1e3, s->p99 / 1e3, s->max / 1e3, s->errors,
				"PRIORITY=%d", LOG_INFO, "SYSLOG_IDENTIFIER=soakd",
				"SOAK_RUN=%s", r->cfg->name, "SOAK_WORKLOAD=%s", w->cfg->name,
				"SOAK_OP=%s", w->op_names[op],
				"SOAK_INTERVAL_START_S=%.3f", row->start_ns / 1e9,
				"SOAK_INTERVAL_END_S=%.3f", row->end_ns / 1e9,
				"SOAK_OPS=%" PRIu64, s->count, "SOAK_ERRORS=%" PRIu64, s->errors,
				"SOAK_BYTES=%" PRIu64, s->bytes,
				"SOAK_RATE=%.3f", s->rate_achieved, "SOAK_RATE_TARGET=%.3f", s->rate_target,
				"SOAK_P50_US=%.3f", s->p50 / 1e3, "SOAK_P90_US=%.3f", s->p90 / 1e3,
				"SOAK_P99_US=%.3f", s->p99 / 1e3, "SOAK_P999_US=%.3f", s->p999 / 1e3,
				"SOAK_MAX_US=%.3f", s->max / 1e3,
				"SOAK_SERVICE_P50_US=%.3f", s->svc_p50 / 1e3,
				"SOAK_SERVICE_P99_US=%.3f", s->svc_p99 / 1e3,
				"SOAK_LAG_MAX_MS=%.3f", row->lag_max_ns / 1e6, NULL);
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

static void close_interval(struct results *r, struct workload_results *wr)
{
	const struct workload *w = wr->workload;
	struct interval_row row = { 0 };
	uint64_t span;
	double target;

	if (!wr->iv_has_data)
		return;
	span = wr->iv_end_ns > wr->iv_start_ns ? wr->iv_end_ns - wr->iv_start_ns : 0;
	target = workload_target_ops(w, wr->iv_start_ns, wr->iv_end_ns);
	row.start_ns = wr->iv_start_ns - r->run_start_ns;
	row.end_ns = wr->iv_end_ns - r->run_start_ns;
	row.lag_max_ns = wr->iv_lag_max_ns;
	fold_into_slice(r, wr, &row);
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
	store_row(wr, &row);
	journal_row(r, wr, &row);
	if (r->live_table)
		table_row(r, wr, &row);
}

void results_tick(struct results *r, uint64_t now_ns)
{
	(void)now_ns;
	for (size_t i = 0; i < r->n; i++) {
		struct workload_results *wr = &r->w[i];
		for (size_t s = 0; s < wr->n_streams; s++)
			stream_consume(&wr->workload->streams[s].stats, consume_slot,
				       wr->stream_userdata[s]);
		close_interval(r, wr);
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

static json_t *op_json(const struct op_stats *o, double target_ops, uint64_t active_ns)
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
		}
		json_t *jw = json_pack("{s:s,s:s,s:s,s:f,s:o}", "name", w->cfg->name,
				       "type", workload_type_name(w->cfg->type),
				       "state", workload_state_name(w->state),
				       "lag_ms", workload_lag_ns(w) / 1e6, "ops", ops);
		if (w->reason[0])
			json_object_set_new(jw, "reason", json_string(w->reason));
		json_array_append_new(arr, jw);
	}
	return json_pack("{s:b,s:s,s:s,s:f,s:f,s:o}", "ok", 1, "run", r->cfg->name,
			 "state", run_state, "elapsed_s", (now_ns - r->run_start_ns) / 1e9,
			 "interval_s", r->cfg->interval_ns / 1e9, "workloads", arr);
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
						    wr->active_ns));
		for (size_t s = 0; s < wr->n_streams; s++) {
			json_t *tops = json_object();
			for (size_t op = 0; op < wr->n_ops; op++)
				json_object_set_new(tops, w->op_names[op],
					op_json(&wr->target_totals[s * wr->n_ops + op],
						wr->target_ops_total * w->op_share[op] / wr->n_streams,
						wr->active_ns));
			json_array_append_new(targets, json_pack("{s:s,s:o}", "path",
						w->streams[s].label, "ops", tops));
		}
		json_t *jw = json_pack("{s:s,s:s,s:s,s:f,s:f,s:I,s:o,s:o}", "name", w->cfg->name,
				       "type", workload_type_name(w->cfg->type),
				       "state", workload_state_name(w->state),
				       "active_s", wr->active_ns / 1e9, "lag_max_ms", wr->lag_max_ns / 1e6,
				       "intervals", (json_int_t)(wr->n_rows + wr->rows_dropped),
				       "ops", ops, "targets", targets);
		if (w->reason[0])
			json_object_set_new(jw, "reason", json_string(w->reason));
		json_array_append_new(arr, jw);
	}
	return json_pack("{s:b,s:s,s:f,s:o,s:{s:{},s:{}}}", "ok", 1, "run", r->cfg->name,
			 "interval_s", r->cfg->interval_ns / 1e9, "workloads", arr,
			 "kernel", "blk", "tcp");
}

char *results_dump_csv(const struct results *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "workload,op,start_s,end_s,count,errors,bytes,rate_target,rate_achieved,"
		   "latency_p50_us,latency_p90_us,latency_p99_us,latency_p999_us,latency_max_us,"
		   "service_p50_us,service_p99_us,lag_max_ms\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		for (size_t k = 0; k < wr->n_rows; k++) {
			const struct interval_row *row = &wr->rows[(wr->first_row + k) % RESULTS_MAX_ROWS];
			for (size_t op = 0; op < wr->n_ops; op++) {
				const struct op_summary *s = &row->ops[op];
				fprintf(f, "%s,%s,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
					",%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
					wr->workload->cfg->name, wr->workload->op_names[op],
					row->start_ns / 1e9, row->end_ns / 1e9, s->count, s->errors,
					s->bytes, s->rate_target, s->rate_achieved, s->p50 / 1e3,
					s->p90 / 1e3, s->p99 / 1e3, s->p999 / 1e3, s->max / 1e3,
					s->svc_p50 / 1e3, s->svc_p99 / 1e3, row->lag_max_ns / 1e6);
			}
		}
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
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
