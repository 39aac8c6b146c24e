// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run's exports: at each tick, a snapshot of the results for the
 * Prometheus textfile and the StatsD sender (see export.h).
 */
#include "export.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "config/config_export.h"
#include "results/results.h"
#include "workload/workload.h"

/* What StatsD has been sent of one op, so counters carry differences. */
struct sent_op {
	uint64_t ops, errors, bytes, latency_sum_ns, latency_count, missed;
	struct obj_verify verify;
	uint64_t dev_verify[OP_VERIFY_CLASSES];
};

struct sent_workload {
	bool any;
	bool zeroed;                  /* its gauges were set to 0 after it ended */
	size_t n_ops;
	uint64_t interval_end_ns;
	struct sent_op *ops;
};

/*
 * Room for one op's StatsD lines: at most 31 (export_statsd_format_op: its
 * counters, a verify class each, its gauges and timers), each the prefix,
 * two names escaped (export_statsd_name writes fewer than 2 *
 * CONFIG_MAX_NAME bytes of each), a metric name and a value with its type
 * and sample rate in under 128 bytes.  A fixed buffer smaller than that
 * dropped the lines of an op with long names, and with them its counts.
 */
#define STATSD_OP_LINES 40
#define STATSD_LINE_ROOM (4 * CONFIG_MAX_NAME + 128)

struct exports {
	char *prom_path;
	int prom_dir_fd;              /* its directory, once opened; -1 before */
	uint64_t prom_writes, prom_failures;
	bool prom_failing;
	char prom_error[512];

	struct statsd_sender *statsd;
	char *statsd_address;
	char *statsd_prefix;
	char *line;                   /* lines of one op or workload, line_cap bytes */
	size_t line_cap;
	struct sent_workload *sent;
	size_t n_sent;
};

int exports_new(const struct export_config *cfg, struct exports **ret)
{
	struct exports *e;
	char why[512];
	int r;

	*ret = NULL;
	if (!cfg->prom_textfile && !cfg->statsd_address)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return log_error_errno(-ENOMEM, "cannot set up exports");
	e->prom_dir_fd = -1;
	if (cfg->prom_textfile) {
		e->prom_path = strdup(cfg->prom_textfile);
		if (!e->prom_path) {
			exports_free(e);
			return log_error_errno(-ENOMEM, "cannot set up exports");
		}
		log_info("exporting metrics to %s for node_exporter's textfile collector",
			 e->prom_path);
	}
	if (cfg->statsd_address) {
		e->statsd_prefix = export_prefix_expand(cfg->statsd_prefix ? cfg->statsd_prefix : "soakd");
		e->statsd_address = strdup(cfg->statsd_address);
		if (!e->statsd_prefix || !e->statsd_address) {
			exports_free(e);
			return log_error_errno(-ENOMEM, "cannot set up exports");
		}
		e->line_cap = STATSD_OP_LINES * (strlen(e->statsd_prefix) + STATSD_LINE_ROOM);
		e->line = malloc(e->line_cap);
		if (!e->line) {
			exports_free(e);
			return log_error_errno(-ENOMEM, "cannot set up exports");
		}
		r = export_statsd_open(cfg->statsd_address, &e->statsd, why, sizeof(why));
		if (r < 0) {
			log_error("%s", why);
			exports_free(e);
			return r;
		}
		log_info("sending StatsD metrics to %s as %s.*", cfg->statsd_address,
			 e->statsd_prefix);
	}
	*ret = e;
	return 0;
}

void exports_free(struct exports *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->sent && i < CONFIG_MAX_WORKLOADS; i++)
		free(e->sent[i].ops);
	free(e->sent);
	export_statsd_close(e->statsd);
	free(e->statsd_prefix);
	free(e->statsd_address);
	free(e->line);
	free(e->prom_path);
	if (e->prom_dir_fd >= 0)
		close(e->prom_dir_fd);
	free(e);
}

static void fill_op(struct export_op *op, const struct workload_results *wr, size_t k,
		    const struct op_stats *totals)
{
	const struct workload *w = wr->workload;

	*op = (struct export_op){
		.workload = w->cfg->name, .op = w->op_names[k],
		.ops_total = totals->count, .errors_total = totals->errors,
		.bytes_total = totals->bytes, .missed_total = totals->missed,
		.pending = totals->pending, .latency_sum_ns = totals->latency.sum,
		.latency_count = totals->latency.count,
		.issue_sum_ns = totals->issue_delay.sum,
		.issue_count_total = totals->issue_delay.count,
		.has_interval = wr->have_last,
		.corrupt_total = totals->corrupt,
		.has_dev_verify = w->cfg->verify.on,
	};
	if (w->cfg->type == WORKLOAD_OBJECT)
		op->verify_total = &totals->obj_verify;
	memcpy(op->dev_verify_total, totals->verify, sizeof(op->dev_verify_total));
	if (!wr->have_last)
		return;
	const struct op_summary *s = &wr->last.ops[k];
	op->interval_end_ns = wr->last.end_ns;
	op->interval_s = (wr->last.end_ns - wr->last.start_ns) / 1e9;
	op->count = s->count;
	op->errors = s->errors;
	op->bytes = s->bytes;
	op->rate = s->rate_achieved;
	op->rate_target = s->rate_target;
	op->p50_ns = s->p50;
	op->p90_ns = s->p90;
	op->p99_ns = s->p99;
	op->p999_ns = s->p999;
	op->min_ns = s->min;
	op->max_ns = s->max;
	op->issue_count = s->issue_count;
	op->issue_p50_ns = s->issue_p50;
	op->issue_p99_ns = s->issue_p99;
	op->issue_max_ns = s->issue_max;
}

/* Per-target series for device workloads: a stream is a target there. */
static bool has_targets(const struct workload_results *wr)
{
	return wr->workload->cfg->type == WORKLOAD_DEVICE && wr->target_totals;
}

static int snapshot(const struct results *r, uint64_t now_ns, struct export_snapshot *s,
		    struct export_workload **ret_workloads, struct export_op **ret_ops)
{
	struct export_workload *wl;
	struct export_op *ops;
	size_t n_ops = 0, k = 0;
	struct timespec wall;

	for (size_t i = 0; i < r->n; i++) {
		n_ops += r->w[i].n_ops;
		if (has_targets(&r->w[i]))
			n_ops += r->w[i].n_ops * r->w[i].n_streams;
	}
	wl = calloc(r->n ? r->n : 1, sizeof(*wl));
	ops = calloc(n_ops ? n_ops : 1, sizeof(*ops));
	if (!wl || !ops) {
		free(wl);
		free(ops);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		wl[i] = (struct export_workload){
			.name = wr->workload->cfg->name,
			.state = workload_state_name(wr->workload->state),
			.active = workload_is_active(wr->workload),
			.lag_s = wr->have_last ? wr->last.lag_max_ns / 1e9 : 0,
			.generator_late = wr->have_last && wr->last.generator_late,
			.has_interval = wr->have_last,
		};
		for (size_t op = 0; op < wr->n_ops; op++)
			fill_op(&ops[k++], wr, op, &wr->totals[op]);
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct workload_results *wr = &r->w[i];
		if (!has_targets(wr))
			continue;
		for (size_t t = 0; t < wr->n_streams; t++)
			for (size_t op = 0; op < wr->n_ops; op++) {
				fill_op(&ops[k], wr, op, &wr->target_totals[t * wr->n_ops + op]);
				ops[k].target = wr->workload->streams[t].label;
				ops[k].has_interval = false;  /* intervals are the workload's */
				k++;
			}
	}

	static const char *state_names[WORKLOAD_FAILED + 1];
	for (int st = 0; st <= WORKLOAD_FAILED; st++)
		state_names[st] = workload_state_name((enum workload_state)st);

	clock_gettime(CLOCK_REALTIME, &wall);
	uint64_t elapsed = mono_since(r->run_start_ns, now_ns);
	*s = (struct export_snapshot){
		.run = r->cfg->name,
		/* Run time stands still while soakd is down: a resumed
		 * run's start is its log's. */
		.start_time_s = r->began_wall_ns ? r->began_wall_ns / 1e9
						 : wall.tv_sec + wall.tv_nsec / 1e9 - elapsed / 1e9,
		.elapsed_s = elapsed / 1e9,
		.workloads = wl, .n_workloads = r->n,
		.ops = ops, .n_ops = k,
		.states = state_names, .n_states = WORKLOAD_FAILED + 1,
		.host = r->host_last,
		.drift = r->drift_state,
		.endpoints = r->endpoints_last,
	};
	*ret_workloads = wl;
	*ret_ops = ops;
	return 0;
}

static void publish_prom(struct exports *e, const struct export_snapshot *s)
{
	char why[512];
	int r = 0;

	/* Opened at the first write that finds it, then held: the textfile
	 * goes where the config said when the run began, not wherever a
	 * name swapped later (a symlink in its place) would send it. */
	if (e->prom_dir_fd < 0)
		r = e->prom_dir_fd = export_prom_dir_open(e->prom_path, why, sizeof(why));
	if (r >= 0)
		r = export_prom_write_at(e->prom_dir_fd, e->prom_path, s, why, sizeof(why));

	if (r == 0) {
		e->prom_writes++;
		if (e->prom_failing)
			log_notice("Prometheus textfile %s: writing again", e->prom_path);
		e->prom_failing = false;
		return;
	}
	e->prom_failures++;
	if (!e->prom_failing || strcmp(why, e->prom_error) != 0)
		log_warning("Prometheus textfile: %s; the run goes on, retrying every tick", why);
	snprintf(e->prom_error, sizeof(e->prom_error), "%s", why);
	e->prom_failing = true;
}

/* One entry per workload slot, with room for its ops; a reload adds
 * slots and may give one a workload with other ops. */
static int ensure_sent(struct exports *e, const struct results *r)
{
	if (!e->sent) {
		e->sent = calloc(CONFIG_MAX_WORKLOADS, sizeof(*e->sent));
		if (!e->sent)
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->n && i < CONFIG_MAX_WORKLOADS; i++) {
		struct sent_workload *sw = &e->sent[i];
		if (sw->ops && sw->n_ops == r->w[i].n_ops)
			continue;
		free(sw->ops);
		*sw = (struct sent_workload){ .n_ops = r->w[i].n_ops };
		sw->ops = calloc(sw->n_ops ? sw->n_ops : 1, sizeof(struct sent_op));
		if (!sw->ops)
			return -ENOMEM;
	}
	if (r->n > e->n_sent)
		e->n_sent = r->n;
	return 0;
}

void exports_forget(struct exports *e, size_t slot)
{
	if (!e || !e->sent || slot >= CONFIG_MAX_WORKLOADS)
		return;
	free(e->sent[slot].ops);
	e->sent[slot] = (struct sent_workload){ 0 };
}

/* StatsD has been sent op's totals as they are now. */
static void sent_set(struct sent_op *so, const struct export_op *o)
{
	*so = (struct sent_op){ .ops = o->ops_total, .errors = o->errors_total,
				.bytes = o->bytes_total, .latency_sum_ns = o->latency_sum_ns,
				.latency_count = o->latency_count, .missed = o->missed_total };
	if (o->verify_total)
		so->verify = *o->verify_total;
	memcpy(so->dev_verify, o->dev_verify_total, sizeof(so->dev_verify));
}

/* Totals only grow within a run: one below what StatsD was sent means
 * they are not the ones that were sent (another run's, another
 * workload's), and a difference would wrap to ~2^64. */
static bool went_back(const struct export_op *o, const struct sent_op *so)
{
	bool back = o->ops_total < so->ops || o->errors_total < so->errors ||
		    o->bytes_total < so->bytes || o->missed_total < so->missed ||
		    o->latency_sum_ns < so->latency_sum_ns || o->latency_count < so->latency_count;

	if (o->verify_total) {
		const struct obj_verify *t = o->verify_total, *was = &so->verify;
		back = back || t->checked < was->checked || t->lost < was->lost ||
		       t->resurrected < was->resurrected || t->stale < was->stale ||
		       t->list_missing < was->list_missing || t->list_extra < was->list_extra ||
		       t->uncertain < was->uncertain;
	}
	for (size_t c = 0; c < OP_VERIFY_CLASSES; c++)
		back = back || o->dev_verify_total[c] < so->dev_verify[c];
	return back;
}

void exports_begin_run(struct exports *e, const struct results *r, bool resumed)
{
	if (!e)
		return;
	for (size_t i = 0; e->sent && i < CONFIG_MAX_WORKLOADS; i++)
		exports_forget(e, i);
	e->n_sent = 0;
	if (!resumed || !e->statsd || !r)
		return;
	if (ensure_sent(e, r) < 0) {
		log_warning("out of memory resuming the StatsD export; its counters start again "
			    "from the run's start");
		return;
	}
	for (size_t i = 0; i < r->n && i < CONFIG_MAX_WORKLOADS; i++) {
		const struct workload_results *wr = &r->w[i];
		struct sent_workload *sw = &e->sent[i];
		for (size_t op = 0; op < wr->n_ops; op++) {
			struct export_op o;
			fill_op(&o, wr, op, &wr->totals[op]);
			sent_set(&sw->ops[op], &o);
		}
		/* Its last interval went out then too. */
		sw->any = wr->have_last;
		sw->interval_end_ns = wr->have_last ? wr->last.end_ns : 0;
	}
}

void exports_carry_sent(struct exports *to, struct exports *from)
{
	if (!to || !from || !to->statsd || !from->statsd || to->sent ||
	    strcmp(to->statsd_address, from->statsd_address) != 0 ||
	    strcmp(to->statsd_prefix, from->statsd_prefix) != 0)
		return;
	to->sent = from->sent;
	to->n_sent = from->n_sent;
	from->sent = NULL;
	from->n_sent = 0;
}

static void publish_statsd(struct exports *e, const struct results *r,
			   const struct export_snapshot *s)
{
	char *buf = e->line;
	size_t k = 0, n;

	if (ensure_sent(e, r) < 0)
		return;
	for (size_t i = 0; i < s->n_workloads && i < e->n_sent; i++) {
		const struct export_workload *wl = &s->workloads[i];
		struct sent_workload *sw = &e->sent[i];
		size_t n_ops = r->w[i].n_ops;
		bool fresh = wl->has_interval && n_ops > 0 &&
			     (!sw->any || s->ops[k].interval_end_ns != sw->interval_end_ns);

		/* A workload that ended leaves no stale gauges behind: once its
		 * last interval is out, they go to 0, as aisloader's do. */
		if (!fresh && !wl->active && sw->any && !sw->zeroed) {
			for (size_t op = 0; op < n_ops; op++) {
				n = export_statsd_format_op_end(buf, e->line_cap, e->statsd_prefix,
								&s->ops[k + op]);
				if (n < e->line_cap)
					export_statsd_add(e->statsd, buf, n);
			}
			n = export_statsd_format_workload_end(buf, e->line_cap, e->statsd_prefix, wl);
			if (n < e->line_cap)
				export_statsd_add(e->statsd, buf, n);
			sw->zeroed = true;
		}
		if (!fresh) {
			k += n_ops;
			continue;
		}
		sw->zeroed = false;
		for (size_t op = 0; op < n_ops; op++, k++) {
			const struct export_op *o = &s->ops[k];
			struct sent_op *so = &sw->ops[op];
			if (went_back(o, so))
				*so = (struct sent_op){ 0 };
			struct export_delta d = {
				.ops = o->ops_total - so->ops, .errors = o->errors_total - so->errors,
				.bytes = o->bytes_total - so->bytes,
				.missed = o->missed_total - so->missed,
				.latency_sum_ns = o->latency_sum_ns - so->latency_sum_ns,
				.latency_count = o->latency_count - so->latency_count,
			};
			if (o->verify_total) {
				const struct obj_verify *t = o->verify_total, *was = &so->verify;
				d.verify = (struct obj_verify){
					t->checked - was->checked, t->lost - was->lost,
					t->resurrected - was->resurrected, t->stale - was->stale,
					t->list_missing - was->list_missing,
					t->list_extra - was->list_extra, t->uncertain - was->uncertain,
				};
			}
			for (size_t c = 0; c < OP_VERIFY_CLASSES; c++)
				d.dev_verify[c] = o->dev_verify_total[c] - so->dev_verify[c];
			n = export_statsd_format_op(buf, e->line_cap, e->statsd_prefix, o, &d);
			if (n < e->line_cap)
				export_statsd_add(e->statsd, buf, n);
			sent_set(so, o);
			sw->interval_end_ns = o->interval_end_ns;
		}
		n = export_statsd_format_workload(buf, e->line_cap, e->statsd_prefix, wl);
		if (n < e->line_cap)
			export_statsd_add(e->statsd, buf, n);
		sw->any = true;
	}
	export_statsd_flush(e->statsd);
}

void exports_publish(struct exports *e, const struct results *r, uint64_t now_ns)
{
	struct export_snapshot s;
	struct export_workload *wl;
	struct export_op *ops;

	if (!e || !r)
		return;
	if (snapshot(r, now_ns, &s, &wl, &ops) < 0) {
		log_warning("out of memory exporting metrics; trying again at the next tick");
		return;
	}
	if (e->prom_path)
		publish_prom(e, &s);
	if (e->statsd)
		publish_statsd(e, r, &s);
	free(wl);
	free(ops);
}

json_t *exports_status_json(const struct exports *e)
{
	json_t *j;

	if (!e)
		return NULL;
	j = json_object();
	if (e->prom_path) {
		json_t *p = json_pack("{s:s,s:I,s:I}", "textfile", e->prom_path,
				      "writes", (json_int_t)e->prom_writes,
				      "failures", (json_int_t)e->prom_failures);
		if (p && e->prom_failing)
			json_object_set_new(p, "error", json_string(e->prom_error));
		json_object_set_new(j, "prometheus", p);
	}
	if (e->statsd)
		json_object_set_new(j, "statsd", export_statsd_status_json(e->statsd));
	return j;
}
