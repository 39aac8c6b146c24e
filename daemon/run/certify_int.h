/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A certification's state, for certify.c (judging) and certify_out.c (its
 * records, journal entries, replies and resume) only; the run calls them
 * through daemon_int.h.
 *
 * A certification (the run's "certify" block, config_certify.h): the
 * certified workloads' schedules are its steps; this judges each step
 * when its hold ends, from the intervals the results record, and stops
 * the run at the first step that fails.
 *
 * A step fails when, over its intervals, a judged op (reads, or every op
 * of a workload without reads, as soakctl report judges) has a share of
 * ops over a threshold at or above its limit (missed ops count as over
 * every threshold), or when an op failed, read back wrong data (corrupt;
 * an object's stale, lost or resurrected too), an
 * interval was generator_late (soakd itself was late: the step measured
 * soakd, not the device), or the workload ended before the hold did.
 *
 * Each verdict is a record of the run's log, {"type": "certify", "step",
 * "load", "rate", "start_ns", "end_ns", "verdict", "why", "workloads"},
 * and a journal entry; the last record says the answer, {"type":
 * "certify", "answer": the highest load that passed or null, "table"}.
 * With "confirm", the highest step that passed then runs again and is
 * judged the same way (certify_confirm.c) before the answer.  A resumed
 * run reads them back and goes on with the step its schedule is in (or
 * the confirmation), with the intervals of it already recorded.
 */
#ifndef SOAK_CERTIFY_INT_H
#define SOAK_CERTIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/config.h"
#include "hist.h"
#include "workload/stats.h"

#include "daemon_int.h"

/* What a step's intervals add up to, per op. */
struct certify_op {
	uint64_t count, errors, missed, corrupt;
	struct hist latency;
	struct hist missed_wait; /* of the missed ops, in latency too */
};

/* The share of ops over threshold_ns, in %, of those latency holds (the
 * completed and the missed), every missed op counted as over it. */
double certify_pct_over(const struct hist *latency, const struct hist *missed_wait,
			uint64_t missed, uint64_t threshold_ns);

/* The step being held, and the next one (a workload's intervals of the
 * next step may be recorded in the tick that ends this one). */
struct certify_part {
	struct certify_op ops[STATS_MAX_OPS];
	uint64_t intervals, late_intervals;
	/* Intervals in which the object engine prefilled its pool: the
	 * step's clock starts after them; the mix's ops done and missed in
	 * them are not judged (certify.c), only counted for the verdict. */
	uint64_t prefill_intervals, prefill_count, prefill_missed;
};

/* One certified workload. */
struct certify_load {
	size_t slot;
	const struct workload_config *cfg;
	size_t n_ops;
	const char *op_names[STATS_MAX_OPS];
	/* The op's share of the schedule: 0 for the object engine's prefill,
	 * cleanup and audit, which no step's rate drives. */
	double op_share[STATS_MAX_OPS];
	int prefill_op;                  /* the object engine's "prefill" op; -1: none */
	struct certify_part part[2];     /* [0] the step held, [1] the next */
	uint64_t sched_ns;               /* the schedule's position at its last interval */
};

struct certify {
	const struct certify_config *cfg;
	const char *run_name;
	uint64_t interval_ns;
	struct certify_load *loads;
	size_t n_loads;
	size_t step;                     /* the step being held (0-based) */
	json_t *verdicts;                /* the steps' records, in order */
	json_t *answer;                  /* the answer's record; NULL: not over */
	bool answer_unlogged;            /* read back, computed: not in the log yet */
	/* "confirm": once the steps are over, the highest that passed (best)
	 * runs again for confirm_ns, each workload on a copy of its
	 * definition with that one step (confirm_cfg[n_loads]). */
	bool confirming, confirm_started;
	size_t best;
	uint64_t confirm_run_ns;         /* the run time it started */
	struct workload_config *confirm_cfg;
};

/* certify.c */
/* prefill_op: the index of the object engine's "prefill" op, or -1. */
void certify_add_interval(struct certify_part *p, bool generator_late,
			  const struct op_stats *ops, size_t n_ops, int prefill_op);
/* results' interval_seen: an interval of workload slot was recorded. */
void certify_interval_seen(void *userdata, size_t slot, bool generator_late,
			   const struct op_stats *ops, size_t n_ops, uint64_t sched_ns);
/* Whether an interval ending at sched_ns ends the hold of the step held
 * (or of the confirmation), or later. */
bool certify_step_reached(const struct certify *c, uint64_t sched_ns);
/* Which step a schedule position at an interval's end lies in. */
size_t certify_step_of(const struct certify *c, uint64_t sched_ns);
/* The step's rate over every certified workload, ops/s. */
double certify_step_rate(const struct certify *c, size_t step);

/* certify_confirm.c */
/* The steps are over: the confirmation begins (true), or there is none. */
bool certify_confirm_begin(struct daemon *d, struct certify *c, bool stop);
/* While confirming: starts it once the steps' workloads have stopped,
 * judges it when its hold ends. */
void certify_confirm_tick(struct daemon *d, struct certify *c);
/* A resumed run in its confirmation: the workloads on its definitions. */
void certify_confirm_resume(struct daemon *d, struct certify *c);
/* The workloads back on their own definitions (a new run). */
void certify_confirm_release(struct daemon *d, struct certify *c);
/* The index of the last step that passed; false when none did. */
bool certify_best(const struct certify *c, size_t *ret);
/* The verdict's record of the step held (or the confirmation). */
json_t *certify_judge(struct daemon *d, struct certify *c);
/* Every certified workload is past the hold, or will never be. */
bool certify_step_over(const struct daemon *d, const struct certify *c);
void certify_end(struct daemon *d, struct certify *c, bool stop);
void certify_part_reset(struct certify_part *p);

/* certify_out.c */
/* The answer's record from the verdicts: the highest load that passed. */
json_t *certify_answer_record(const struct certify *c);
/* Logs a verdict or answer record: the run's log, the journal, soakd's log. */
void certify_publish(struct daemon *d, json_t *record);
/* A resumed run: the log's verdicts, and the intervals of the step held. */
int certify_read_back(struct certify *c, const char *log_path);

#endif
