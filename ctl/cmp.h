/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_CMP_H
#define SOAK_CTL_CMP_H

#include <stdint.h>

/*
 * soakctl cmp RUN_A RUN_B: two recorded runs (run directories, interval
 * logs, or dumps of soakctl dump/merge --format json) compared per
 * workload and op (those both have): throughput, p50, p99 and p99.9 of the whole run, with
 * the change from A to B; errors, missed ops and every verification class.
 *
 * The noise test: each run's slices are its own repetitions, so the
 * spread of a statistic over a run's slices (the highest slice's value
 * minus the lowest's) is how much it moves with nothing changed.  A change
 * is marked significant when it exceeds the larger of the two runs'
 * spreads and min_change_pct of A's value (default 10%).  The floor is
 * there because slices see only the noise within a run: two alike runs
 * on a busy machine differ by more (p50 by up to ~30% measured on a
 * loaded 2-core test machine), which no slice shows.
 * A run with fewer than 2 whole slices (a dump has none) shows no noise of
 * its own: the other's stands, and with neither the noise is unknown and
 * nothing is marked.  Counters (errors, missed, verification failures) are
 * exact: any change from zero is marked.
 *
 * format: "text" (NULL) or "json"; html: also a page with the table.
 * Returns 0 when nothing significant changed, 3 when something did, or
 * another exit status after printing why.
 */
#define CMP_DEFAULT_MIN_CHANGE_PCT 10.0

int cmp_runs(const char *run_a, const char *run_b, const char *format, const char *html,
	     uint64_t slice_ns, double min_change_pct);

#endif
