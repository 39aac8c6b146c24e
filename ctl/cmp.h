/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_CTL_CMP_H
#define SOAK_CTL_CMP_H

#include <stdint.h>

/*
 * soakctl cmp RUN_A RUN_B: two recorded runs compared per workload and op
 * (those both have): throughput, p50, p99 and p99.9 of the whole run, with
 * the change from A to B; errors, missed ops and every verification class.
 *
 * The noise test: each run's slices are its own repetitions, so the
 * spread of a statistic over a run's slices (the highest slice's value
 * minus the lowest's) is how much it moves with nothing changed.  A change
 * is marked significant when it exceeds the larger of the two runs'
 * spreads and 1% of A's value (rounding and a constant rate's jitter),
 * and only when both runs have at least 2 slices with ops (otherwise
 * "noise unknown").  Counters (errors, missed, verification failures) are
 * exact: any change from zero is marked.
 *
 * format: "text" (NULL) or "json"; html: also a page with the table.
 * Returns 0 when nothing significant changed, 3 when something did, or
 * another exit status after printing why.
 */
int cmp_runs(const char *run_a, const char *run_b, const char *format, const char *html,
	     uint64_t slice_ns);

#endif
