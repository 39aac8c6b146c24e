/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_EXPORT_H
#define SOAK_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "config/config.h"
#include "workload/stats.h"

/*
 * Exports of a run's results to monitoring, configured in "run": {"exports":
 * {"prometheus": {"textfile": PATH}, "statsd": {"address": "HOST:PORT",
 * "prefix": NAME}}}.  At every tick the main thread takes a snapshot of the
 * results (export.c) and hands it to each exporter:
 *
 *   export_prom.c    node_exporter's textfile collector: the whole metrics
 *                    file, written to a temporary file and renamed over PATH
 *   export_statsd.c  StatsD lines over UDP, named as aisloader names its own
 *
 * Formatting is pure (export_prom_format, export_statsd_format) so tests
 * check it without a daemon.  Exporting never stops a run: failures are
 * counted, logged once when they start and once when they end, and shown
 * in status.
 */

struct results;

/* One op of one workload (target NULL), or of one of its targets. */
struct export_op {
	const char *workload;
	const char *op;
	const char *target;           /* a target's path; NULL: the workload's total */
	/* Since the run started. */
	uint64_t ops_total, errors_total, bytes_total;
	uint64_t missed_total;        /* due, never completed */
	uint64_t pending;             /* due, not yet completed, at the last interval's end */
	uint64_t latency_sum_ns;      /* of the latencies of successful ops, for means */
	uint64_t latency_count;       /* successful ops and missed ones (failed ones have none) */
	/* soakd's own lateness at each issue (issue_delay_us), of every op
	 * issued since the run started. */
	uint64_t issue_sum_ns, issue_count_total;
	/* Object ops: checks against the write ledger since the run started
	 * (obj_verify), with corrupt; NULL for device ops. */
	const struct obj_verify *verify_total;
	uint64_t corrupt_total;
	/* Device workloads with "verify": blocks read back, by class. */
	bool has_dev_verify;
	uint64_t dev_verify_total[OP_VERIFY_CLASSES];
	/* The workload's last closed interval, if has_interval. */
	bool has_interval;
	uint64_t interval_end_ns;     /* since the run started: a new value is a new interval */
	double interval_s;
	uint64_t count, errors, bytes;
	double rate, rate_target;     /* ops/s */
	uint64_t min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
	uint64_t issue_count;         /* ops issued in the interval, and their lateness */
	uint64_t issue_p50_ns, issue_p99_ns, issue_max_ns;
};

struct export_workload {
	const char *name;
	const char *state;            /* workload_state_name() */
	bool active;                  /* running or stopping: its gauges are live */
	double lag_s;                 /* largest lag in the last interval */
	bool generator_late;          /* soakd itself was late in the last interval */
	bool has_interval;
};

struct export_snapshot {
	const char *run;
	double start_time_s;          /* the run's start, seconds since the Unix epoch */
	double elapsed_s;
	const struct export_workload *workloads;
	size_t n_workloads;
	const struct export_op *ops;  /* the workloads' ops, then per-target ops */
	size_t n_ops;
	const char *const *states;    /* every workload state name, for the state gauge */
	size_t n_states;
	json_t *host;                 /* the host's last record (daemon/host); NULL: none */
	json_t *drift;                /* {WORKLOAD: {OP: {METRIC: 0|1}}} (daemon/drift); NULL: none */
	json_t *endpoints;            /* {WORKLOAD: last record's "endpoints"}; NULL: none */
};

/* Prometheus text exposition format 0.0.4, as node_exporter reads it. */
int export_prom_format(const struct export_snapshot *s, FILE *out);
/* The host's gauges (export_prom_host.c), part of export_prom_format. */
int export_prom_host(FILE *out, const char *run, json_t *host);
/* soakd_drift{workload,op,metric}: 1 while a drift alarm is on. */
int export_prom_drift(FILE *out, const char *run, json_t *drift);
/* {WORKLOAD: {URL: {"total_ops", "total_errors", "total_latency_us",
 * "latency_us"}}}: the pools' endpoints, labelled endpoint
 * (obj_endpoints.c); their latency a summary, as soakd_latency_seconds. */
int export_prom_endpoints(FILE *out, const char *run, json_t *eps);
/* The directory path's file goes in, opened once (O_PATH) so that every
 * later write lands there, whatever its name comes to point at.  The
 * descriptor, or a negative errno with why. */
int export_prom_dir_open(const char *path, char *why, size_t whylen);
/* Writes the snapshot atomically as path's file name in dir_fd: a
 * temporary file created beside it (exclusively, never through a link),
 * then renamed over it.  Returns 0 or a negative errno with why. */
int export_prom_write_at(int dir_fd, const char *path, const struct export_snapshot *s,
			 char *why, size_t whylen);
/* The same through a directory opened for this write only. */
int export_prom_write(const char *path, const struct export_snapshot *s, char *why,
		      size_t whylen);

/* A StatsD sender: a non-blocking UDP socket connected to the address. */
struct statsd_sender;
int export_statsd_open(const char *address, struct statsd_sender **ret, char *why,
		       size_t whylen);
void export_statsd_close(struct statsd_sender *s);
/*
 * The lines for one op's new interval (op->has_interval), with `delta` the
 * ops, errors and bytes counted since the previous send (counters add up to
 * the totals whatever was missed).  Returns the text's length, or the length
 * needed if it does not fit (nothing useful is written then).
 */
struct export_delta {
	uint64_t ops, errors, bytes, missed;
	struct obj_verify verify;     /* object ops */
	uint64_t latency_sum_ns, latency_count;
	uint64_t dev_verify[OP_VERIFY_CLASSES]; /* with op->has_dev_verify */
};
size_t export_statsd_format_op(char *buf, size_t len, const char *prefix,
			       const struct export_op *op, const struct export_delta *delta);
size_t export_statsd_format_workload(char *buf, size_t len, const char *prefix,
				     const struct export_workload *w);
/* The gauges of an op and of a workload that has ended, all 0. */
size_t export_statsd_format_op_end(char *buf, size_t len, const char *prefix,
				   const struct export_op *op);
size_t export_statsd_format_workload_end(char *buf, size_t len, const char *prefix,
					 const struct export_workload *w);
/* Queues lines, sending a datagram when the next would not fit. */
void export_statsd_add(struct statsd_sender *s, const char *lines, size_t len);
void export_statsd_flush(struct statsd_sender *s);
/* {"address", "datagrams", "send_errors", "error"?} */
json_t *export_statsd_status_json(const struct statsd_sender *s);

/* The exports of a run; NULL from exports_new when none is configured. */
struct exports;
int exports_new(const struct export_config *cfg, struct exports **ret);
void exports_publish(struct exports *e, const struct results *r, uint64_t now_ns);
/* {"prometheus": {...}, "statsd": {...}} for status; NULL without exports. */
json_t *exports_status_json(const struct exports *e);
/*
 * A run begins (exports outlive runs: soakctl start --new-run).  A new run:
 * StatsD counters start from 0.  A resumed one (soakd restarted, the
 * results rebuilt from the run's log): they start from the totals the log
 * holds, which the previous soakd sent as each interval closed, so StatsD's
 * sums stay equal to soakd's totals.  The edge: an interval logged but not
 * yet sent when the old process died (killed between results_tick and
 * exports_publish in the same tick, or its datagram lost with it) is never
 * sent; StatsD is short by that one interval, as by any datagram UDP drops.
 */
void exports_begin_run(struct exports *e, const struct results *r, bool resumed);
/* A reload replaced the exports (another textfile, StatsD address or
 * prefix): when StatsD goes to the same address under the same prefix,
 * the new exports take over what the old ones sent, so the run's counts
 * are not sent there twice.  Elsewhere, they are sent from the run's
 * start. */
void exports_carry_sent(struct exports *to, struct exports *from);
/* Slot's workload was replaced or added by a reload: StatsD counters
 * for it start from its new totals. */
void exports_forget(struct exports *e, size_t slot);
void exports_free(struct exports *e);

#endif
