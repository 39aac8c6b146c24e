/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_REPORT_H
#define SOAK_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "hist.h"

/*
 * ACT-style latency analysis: for each slice of the run (an hour, by
 * default) and each op, the percentage of ops slower than each threshold,
 * an avg and a max line as act_latency.py prints them, and a verdict
 * against limits (ACT's: under 5% over 1 ms, 1% over 8 ms, 0.1% over 64 ms
 * in every hour).  It works on the exact histograms, so any threshold can
 * be asked after the run; a threshold that falls inside a histogram bucket
 * (at most 1/128 of the value wide) counts that bucket's share above it
 * pro rata.
 */

#define REPORT_MAX_THRESHOLDS 16
#define REPORT_MAX_SLICES 100000
#define REPORT_MAX_OPS 64

struct report_options {
	uint64_t thresholds_ns[REPORT_MAX_THRESHOLDS];
	double limits_pct[REPORT_MAX_THRESHOLDS];   /* per threshold; < 0: no limit */
	size_t n_thresholds;
	uint64_t slice_ns;          /* 0: the slices as recorded */
	const char *workload;       /* NULL: all */
	const char *op;             /* NULL: the ops judged by default */
	bool service;               /* service_us instead of latency_us */
};

void report_default_options(struct report_options *o);
/* "1,8,64" (ms by default), "500us,2ms"; returns 0 or -EINVAL with *ret_why. */
int report_parse_thresholds(const char *text, struct report_options *o, const char **ret_why);
/* "5,1,0.1" percentages, one per threshold; "-" for none. */
int report_parse_limits(const char *text, struct report_options *o, const char **ret_why);

/* The verdict's rule, for every view of it (text, HTML): threshold j
 * fails when the worst slice's share over it reaches its limit; with no
 * --op, an op's reads are judged, or, when it has none, every op but an
 * object workload's prefill, audit and cleanup. */
bool report_over_limit(const struct report_options *o, size_t j, double max_pct);
/* The most slices an op of a report reply spans, by time (its last
 * slice's start over the reply's slice_s), as the report places them. */
size_t report_reply_slices(json_t *reply);
bool report_op_judged(const struct report_options *o, bool has_read, const char *op);

/* Share of recorded values above threshold_ns, in percent. */
double report_pct_above(const struct hist *h, uint64_t threshold_ns);

/*
 * Prints the report of a report response (see the daemon's "report"
 * command: workloads[].ops.OP.slices[] with start_s, end_s and the
 * base64 histograms; ops.OP.errors, missed and wrong_data, the counts over
 * the same span) and returns 0 when every judged op passed, 1 when one
 * failed (a slice over a limit, a failed or missed op; or wrong data read
 * back by any op), -EDOM when the slice length does not fit the recorded slices,
 * -ENOENT when nothing matches, or -EINVAL for a malformed reply (each with
 * a message on out).
 */
int report_print(json_t *reply, const struct report_options *o, FILE *out);

/*
 * The host beside a spike (report_host.c).  A slice is a spike when its
 * p99 is over REPORT_SPIKE_FACTOR times the median of the op's slices'
 * p99s (at least REPORT_SPIKE_MIN_SLICES slices with ops).  The host may
 * explain it, and a line says so, when in that slice steal reached
 * REPORT_STEAL_PCT of all CPUs, or iowait reached REPORT_IOWAIT_PCT while
 * no target device was REPORT_BUSY_PCT busy: the waiting was on other
 * devices.  host_slices is the reply's host.slices (rundump_host), per
 * recorded slice; per recorded slices make one report slice.  Returns the
 * number of slices flagged.  A flag does not change the verdict.
 */
#define REPORT_SPIKE_FACTOR 2.0
#define REPORT_SPIKE_MIN_SLICES 3
#define REPORT_STEAL_PCT 5.0
#define REPORT_IOWAIT_PCT 20.0
#define REPORT_BUSY_PCT 50.0
size_t report_host_flags(FILE *out, const char *workload, const char *op,
			 const struct hist *slices, size_t n_slices, size_t per, json_t *host_slices);

#endif
