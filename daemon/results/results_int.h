/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What results.c (the live accounting, slices, the log records),
 * results_replay.c (a resumed run's log read back) and results_report.c (the
 * journal, the status and dump replies, the summary) share.  Only the files
 * of daemon/results include this.
 */
#ifndef SOAK_RESULTS_INT_H
#define SOAK_RESULTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct interval_row;
struct op_stats;
struct op_summary;
struct results;
struct workload_results;

/* results.c */

/* Where closed slices go (slice_store.h), made at its first use. */
struct slice_store *results_slice_store(struct results *r);

/* Folds a closed interval into the slice that holds its start. */
void fold_into_slice(struct results *r, struct workload_results *wr,
		     const struct interval_row *row);

/* results_report.c */

/* rate_target is over sched_ns, the part of span_ns the schedule ran:
 * an interval cut short by a stop is not diluted by the drain after it. */
void summarize(const struct op_stats *o, double target_ops, uint64_t span_ns,
	       uint64_t sched_ns, struct op_summary *ret);

void journal_row(const struct results *r, const struct workload_results *wr,
		 const struct interval_row *row);

#endif
