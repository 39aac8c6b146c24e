/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RESULTS_H
#define SOAK_RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "config.h"
#include "stats.h"
#include "workload.h"

/*
 * Results of a run: every interval each workload's streams publish is
 * merged here at the tick, reported (journald, the live table on stderr,
 * systemd's STATUS=) and folded into the run's totals.
 */

/* In-memory interval rows kept per workload for the CSV dump. */
#define RESULTS_MAX_ROWS 86400

struct op_summary {
	uint64_t count, errors, bytes;
	double rate_target, rate_achieved;
	uint64_t p50, p90, p99, p999, max;  /* latency_us, in ns */
	uint64_t svc_p50, svc_p99;          /* service_us, in ns */
};

struct interval_row {
	uint64_t start_ns, end_ns;          /* since the run started */
	uint64_t lag_max_ns;
	struct op_summary ops[STATS_MAX_OPS];
};

/* A slice of the run folded from its intervals, kept compact. */
struct stored_slice {
	uint64_t start_ns, end_ns;          /* since the run started */
	uint64_t count;
	char *latency, *service;            /* base64 histograms */
};

struct op_slices {
	struct stored_slice *stored;
	size_t n, cap;
	struct hist *latency, *service;     /* the slice being filled */
	uint64_t start_ns, end_ns;
	bool open;
};

struct workload_results {
	struct workload *workload;
	size_t n_ops, n_streams;
	struct op_stats *totals;            /* [n_ops] */
	struct op_stats *target_totals;     /* [n_streams * n_ops] */
	double target_ops_total;
	uint64_t active_ns;
	uint64_t lag_max_ns;

	/* The interval being merged at this tick. */
	struct op_stats *interval;          /* [n_ops] */
	uint64_t iv_start_ns, iv_end_ns, iv_lag_max_ns;
	bool iv_has_data;

	struct op_slices *slices;           /* [n_ops] */
	uint64_t slice_index;

	struct interval_row last;
	bool have_last;
	struct interval_row *rows;
	size_t n_rows, first_row, rows_dropped; /* ring once full */
	void **stream_userdata;             /* consume callback arguments */
};

struct results {
	const struct run_config *cfg;
	uint64_t run_start_ns;
	bool live_table;
	unsigned table_lines;
	struct workload_results *w;
	size_t n;
};

struct results *results_new(const struct run_config *cfg, struct workload **workloads,
			    size_t n, uint64_t run_start_ns, bool live_table);
void results_free(struct results *r);

/* Collects what the streams have published; with final, also what the
 * joined threads left.  Reports each closed interval. */
void results_tick(struct results *r, uint64_t now_ns);
/* Joins ended threads of workload i, folding in their last slots. */
bool results_reap(struct results *r, size_t i);
void results_wait(struct results *r, size_t i, uint64_t timeout_ns);

/* systemd STATUS= text: one line of rates and p99s. */
void results_status_line(const struct results *r, char *buf, size_t len);
/* The summary printed at the end of a foreground run. */
void results_print_summary(const struct results *r, FILE *out);

json_t *results_status_json(const struct results *r, uint64_t now_ns, const char *run_state);
json_t *results_dump_json(const struct results *r);
char *results_dump_csv(const struct results *r);
/* Every op's slices (the one being filled included) with their
 * histograms, for soakctl report. */
json_t *results_report_json(const struct results *r);

#endif
