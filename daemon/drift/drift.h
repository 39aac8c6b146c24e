/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DRIFT_H
#define SOAK_DRIFT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "results/results.h"

/*
 * Drift and change alarms (issue 18, section 3): each closed interval of a
 * workload with "drift" configured (config_drift.h) goes through the
 * change-point test of each of its ops (drift_detect.h).  When a metric
 * starts failing, the alarm is
 *
 *   - a journal entry, SOAK_EVENT=drift with MESSAGE_ID
 *     SOAK_MESSAGE_DRIFT (SOAK_WORKLOAD, SOAK_OP, SOAK_METRIC);
 *   - a record of the run's log, written before the interval's own:
 *     {"type": "event", "event": "drift", "workload", "op", "metric",
 *      "start_ns" (the test window's start, run time), "end_ns",
 *      "message"};
 *   - a line in systemd's STATUS= and in soakctl status (drift_status);
 *   - the gauge soakd_drift{workload,op,metric} (drift_state: 1 while the
 *     metric fails);
 *   - with "on_drift": "stop", the workload's stop, with the alarm as the
 *     reason.
 *
 * Intervals soakd did not measure (frozen: "stalled" in the log) are not
 * fed.  Those where it was late (generator_late) are: on a loaded host
 * most intervals can be, and a reference made of the rest would be no
 * window at all; a short lateness fails too few of a window's intervals to
 * alarm, and a long one shows in the report beside the alarm.
 */

struct drift;

int drift_new(struct drift **ret);
void drift_free(struct drift *d);
/* Hooks d into r (results' on_interval): every closed interval is fed from
 * now on, and what it finds is written to r's run directory.  A new run
 * starts every test afresh. */
void drift_attach(struct drift *d, struct results *r);
/* {WORKLOAD: {OP: {METRIC: 0|1}}} for every op tested: borrowed. */
json_t *drift_state(const struct drift *d);
/* The alarms now on, "drift: w/read p99, w/read throughput", or "" when
 * none. */
void drift_status(const struct drift *d, char *buf, size_t len);
/* Alarms raised since the run began. */
uint64_t drift_alarms(const struct drift *d);
/* The run's alarms, as their records of the run's log: borrowed. */
json_t *drift_events(const struct drift *d);
/*
 * A resumed run: one record of its log, in order, from its first (the
 * checkpoint does not hold the tests).  Intervals feed the tests as they
 * did live, without raising their alarms again; the alarms' records are
 * the run's alarms.  So a reference gathered before a restart stays the
 * reference, and a drive that degraded across it is still caught.
 */
void drift_replay(struct drift *d, struct results *r, json_t *rec);

#endif
