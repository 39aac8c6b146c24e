/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A certification (the run's "certify" block, config_certify.h): the
 * certified workloads' schedules are its steps; this judges each step
 * when its hold ends, from the intervals the results record, and stops
 * the run at the first step that fails.
 *
 * A step fails when, over its intervals, a judged op (reads, or every op
 * of a workload without reads, as soakctl report judges) has a share of
 * ops over a threshold at or above its limit (missed ops count as over
 * every threshold), or when an op failed, read back corrupt data, an
 * interval was generator_late (soakd itself was late: the step measured
 * soakd, not the device), or the workload ended before the hold did.
 *
 * Each verdict is a record of the run's log, {"type": "certify", "step",
 * "load", "rate", "start_ns", "end_ns", "verdict", "why", "workloads"},
 * and a journal entry; the last record says the answer, {"type":
 * "certify", "answer": the highest load that passed or null, "table"}.
 * A resumed run reads them back and goes on with the step its schedule
 * is in, with the intervals of it already recorded.
 */
#ifndef SOAK_CERTIFY_H
#define SOAK_CERTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct daemon;
struct certify;

/* Starts judging the run's certification, if it has one (d->certify
 * stays NULL otherwise): at a new run, or resuming one (the log's
 * verdicts and the current step's intervals read back).  After the
 * results are set up, before the workloads start.  0 or -errno. */
int certify_begin(struct daemon *d, bool resume);
void certify_free(struct certify *c);

/* After each tick's results: judges the steps whose hold has ended. */
void certify_tick(struct daemon *d, uint64_t now_ns);

/* status: the current step and the verdicts so far; report and dump:
 * every verdict with its table, and the answer.  NULL without one. */
json_t *certify_status_json(const struct certify *c);
json_t *certify_report_json(const struct certify *c);

#endif
