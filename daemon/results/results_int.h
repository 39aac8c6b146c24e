/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What results.c (the live accounting, the log records), results_slices.c
 * (the slices), results_replay.c and results_checkpoint.c (a resumed run's
 * log and checkpoint read back) and results_report.c (the journal, the
 * status and dump replies, the summary) share.  Only the files of
 * daemon/results include this.
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

/* results_slices.c */

/* Where closed slices go (slice_store.h), made at its first use. */
struct slice_store *results_slice_store(struct results *r);

/* Folds a closed interval into the slice that holds its start. */
void fold_into_slice(struct results *r, struct workload_results *wr,
		     const struct interval_row *row);

/* results_replay.c */

/* An object pool's endpoints as a record of the log (or a checkpoint)
 * left them: shown until the first new record, and the base the pool's
 * totals go on from.  0 or -ENOMEM. */
int results_resume_endpoints(struct results *r, const char *workload, json_t *eps);

/* results_report.c */

/* rate_target is over sched_ns, the part of span_ns the schedule ran:
 * an interval cut short by a stop is not diluted by the drain after it. */
void summarize(const struct op_stats *o, double target_ops, uint64_t span_ns,
	       uint64_t sched_ns, struct op_summary *ret);

void journal_row(const struct results *r, const struct workload_results *wr,
		 const struct interval_row *row);

#endif
