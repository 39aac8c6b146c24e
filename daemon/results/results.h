/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_RESULTS_H
#define SOAK_RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "slice_store.h"

#include <jansson.h>

#include "config/config.h"
#include "workload/stats.h"
#include "workload/workload.h"

/*
 * Results of a run: every interval each workload's streams publish is
 * merged here at the tick, reported (journald, the live table on stderr,
 * systemd's STATUS=) and folded into the run's totals.
 */

struct op_summary {
	uint64_t count, errors, bytes;
	uint64_t missed, pending;           /* see struct op_stats */
	double rate_target, rate_achieved;
	uint64_t min, p50, p90, p99, p999, max; /* latency_us, in ns */
	uint64_t svc_p50, svc_p99;          /* service_us, in ns */
	uint64_t corrupt;                   /* object ops: data read back was wrong */
	uint64_t ttfb_p50, ttfb_p99;        /* object ops: ttfb_us, in ns */
	uint64_t issue_count;               /* ops issued: issue_delay_us's count */
	uint64_t issue_p50, issue_p99, issue_max; /* issue_delay_us, in ns */
	uint64_t verify[OP_VERIFY_CLASSES]; /* device ops with "verify": blocks by class */
	struct obj_verify obj_verify;       /* object ops: checks against the ledger */
};

struct interval_row {
	uint64_t start_ns, end_ns;          /* since the run started */
	uint64_t scheduled_ns;              /* of it, with ops scheduled (to a stop's cut) */
	uint64_t lag_max_ns;
	uint64_t cpu_ns;                    /* the workload's threads' CPU time */
	uint64_t main_cpu_ns;               /* the main thread's, since the last record */
	uint64_t frozen_ns;                 /* longest a thread woke late */
	bool generator_late;                /* soakd itself was late (fidelity.h) */
	uint64_t late_ns;                   /* ... by this much */
	struct op_summary ops[STATS_MAX_OPS];
};

/* A slice of the run folded from its intervals, put aside (slice_store.h). */
struct stored_slice {
	uint64_t start_ns, end_ns;          /* since the run started */
	uint64_t count;
	struct slice_text latency, service; /* base64 histograms */
};

struct op_slices {
	struct stored_slice *stored;
	size_t n, cap;
	struct hist *latency, *service;     /* the slice being filled */
	uint64_t count;                     /* its completed ops (latency also holds missed) */
	uint64_t start_ns, end_ns;
	bool open;
};

struct workload_results {
	struct workload *workload;
	size_t n_ops, n_streams;
	struct op_stats *totals;            /* [n_ops] */
	struct op_stats *target_totals;     /* [n_streams * n_ops]; totals itself with one */
	double target_ops_total;
	uint64_t active_ns;
	uint64_t sched_ns;                  /* of active_ns, intervals with ops scheduled */
	uint64_t lag_max_ns;

	/* The interval being merged at this tick. */
	struct op_stats *interval;          /* [n_ops] */
	struct op_stats *target_interval;   /* [n_streams * n_ops], with several targets */
	uint64_t iv_start_ns, iv_end_ns, iv_lag_max_ns;
	uint64_t iv_cpu_ns, iv_frozen_ns;
	uint64_t main_cpu_mark_ns;          /* the main thread's CPU time at the last record */
	bool iv_has_data;
	/* Intervals where soakd itself was late, and the most it was late. */
	uint64_t late_intervals, late_max_ns;
	/* CLOCK_MONOTONIC end of the last interval recorded since the workload
	 * (re)started, 0: none: where a hole left by a frozen soakd begins. */
	uint64_t iv_prev_end_ns;

	struct op_slices *slices;           /* [n_ops] */
	uint64_t slice_index;

	struct interval_row last;
	bool have_last;
	/* Run time up to which this workload is accounted for: the end of
	 * the last interval merged (live or replayed), or when its slot was
	 * set for a new definition (a reload), which drops what ended
	 * before.  Its interval records are appended in the order of their
	 * end, so those ending by then are in and none after. */
	uint64_t merged_end_ns;
	/* After results_restore: its interval records ending at or before
	 * this are in the checkpoint (results_in_checkpoint). */
	uint64_t covered_ns;
	uint64_t intervals;                 /* recorded so far */
	void **stream_userdata;             /* consume callback arguments */

	/* What a resumed run's log says of this workload. */
	bool recorded;
	uint64_t recorded_sched_ns;         /* its schedule position at its last interval */
	char recorded_state[16];
	char recorded_reason[256];
};

struct rundir;
struct probes;

struct results {
	const struct run_config *cfg;
	int64_t run_start_ns;               /* the run's time 0 on CLOCK_MONOTONIC (mono_since) */
	int64_t wall_offset_ns;             /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	/* A resumed run: when it began (CLOCK_REALTIME, its log's first
	 * record), time down included; 0: run_start_ns tells. */
	uint64_t began_wall_ns;
	struct rundir *rundir;              /* NULL: nothing recorded */
	struct slice_store slices;          /* the closed slices' histograms */
	uint64_t recorded_end_ns;           /* a resumed run: its run time so far */
	uint64_t recorded_wall_ns;          /* ... and the wall time of its last record */
	/* The same of the records this soakd wrote, for checkpoints. */
	uint64_t logged_end_ns, logged_wall_ns;
	/* After results_restore: the run time the checkpoint was taken at;
	 * records other than intervals written by then are in it. */
	uint64_t checkpoint_ns;
	/* Adds fields to a workload's interval record (kernel series). */
	void (*record_extra)(void *userdata, const struct workload *w, uint64_t start_ns,
			     uint64_t end_ns, json_t *record);
	void *record_extra_userdata;
	struct probes *probes;              /* kernel series: journal, status, dump; may be NULL */
	/* Sees each interval of workload slot as it is recorded, before its
	 * stats are reset (certification): ops[n_ops], sched_ns its position
	 * in the workload's schedule at its end.  NULL: none. */
	void (*interval_seen)(void *userdata, size_t slot, bool generator_late,
			      const struct op_stats *ops, size_t n_ops, uint64_t sched_ns);
	void *interval_seen_userdata;
	json_t *host_last;                  /* the host's last record (daemon/host), or NULL */
	/* {WORKLOAD: its last interval record's "endpoints"} (object pools),
	 * for status, the dump and the exports; NULL until one is recorded. */
	json_t *endpoints_last;
	/* {WORKLOAD: {URL: totals}}: the pool's totals in the last record
	 * replayed at a resume, which the engine's counters (from 0 at each
	 * start) are added to in every new record; NULL if none. */
	json_t *endpoints_base;
	/* Called with each closed interval soakd measured (not stalled),
	 * before its record is written, the interval's op_stats still in
	 * wr->interval (daemon/drift). */
	void (*on_interval)(void *userdata, struct results *r, size_t index,
			    const struct interval_row *row, double target_ops);
	void *on_interval_userdata;
	json_t *drift_state;                /* daemon/drift's gauges (borrowed), or NULL */
	bool live_table;
	unsigned table_lines;
	struct workload_results *w;
	size_t n;
};

struct results *results_new(const struct run_config *cfg, struct workload **workloads,
			    size_t n, int64_t run_start_ns, bool live_table);
void results_free(struct results *r);
/* Slot i measures workload w from now on, with nothing measured yet: a
 * new slot when i is the next one (a reload added a workload), else in
 * place of what slot i held (a reload replaced its definition).  Returns
 * 0, -ENOMEM, or -ENOSPC past CONFIG_MAX_WORKLOADS. */
int results_set_workload(struct results *r, size_t i, struct workload *w);
/* Slot i goes on measuring w, built again from the same definition as
 * the workload it held (a replacement that could not start). */
void results_rebind_workload(struct results *r, size_t i, struct workload *w);
/* Folds a record of the run's log into the results (resuming a run).
 * -ENOENT: an interval of a workload the configuration no longer has. */
int results_replay(struct results *r, json_t *record);
/*
 * Checkpoints (results_checkpoint.c): the results as a replay of the log up
 * to run_ns would build them, and back.  A checkpoint that does not fit
 * this run's workloads is refused with -EINVAL; after any error the
 * results are to be set afresh (results_set_workload) and the log
 * replayed whole.
 */
json_t *results_checkpoint(const struct results *r, uint64_t run_ns);
int results_restore(struct results *r, json_t *checkpoint, uint64_t *ret_run_ns);
/*
 * After results_restore: whether a record of the log is in the
 * checkpoint, to be skipped by the replay.  An interval record is if it
 * ends by its workload's covered_ns: a checkpoint taken at the tick holds
 * each workload's intervals up to the last its threads had published,
 * and one published late (after the tick) ends before the checkpoint's
 * run time yet is recorded after it.  Any other record is if written by
 * the checkpoint's run time.
 */
bool results_in_checkpoint(const struct results *r, json_t *record);
/* After results_restore: a run time before which (runlog_seek_run_time)
 * the log holds no record that is not in the checkpoint. */
uint64_t results_checkpoint_seek_ns(const struct results *r);
/* Records a workload's change of state in the run's log. */
void results_record_state(struct results *r, size_t i);

/* Collects what the streams have published and reports each closed
 * interval.  True when an interval waits for a stream whose thread is late
 * to publish it (a second at most): call again soon. */
bool results_tick(struct results *r, uint64_t now_ns);
/* Joins ended threads of workload i, folding in their last slots. */
bool results_reap(struct results *r, size_t i);
/* Waits for workload i's streams to end, until until_ns (mono_ns) at the
 * latest, and closes its interval. */
void results_wait(struct results *r, size_t i, uint64_t until_ns);
/* Workload i's streams are ended and joined however long that takes (a
 * stream past results_wait's deadline too), their last slots recorded,
 * and its targets closed (workload_release): a reload replacing or
 * removing it. */
void results_release(struct results *r, size_t i);

/* systemd STATUS= text: one line of rates and p99s. */
void results_status_line(const struct results *r, char *buf, size_t len);
/* One journal entry per workload and op over the whole run (resumed
 * parts included), SOAK_EVENT=summary: soakd is stopping, for why. */
void results_journal_summary(const struct results *r, const char *why);
/* The summary printed at the end of a foreground run. */
void results_print_summary(const struct results *r, FILE *out);

json_t *results_status_json(const struct results *r, uint64_t now_ns, const char *run_state);
json_t *results_dump_json(const struct results *r);
/* Every op's slices (the one being filled included) with their
 * histograms, for soakctl report. */
json_t *results_report_json(const struct results *r);

#endif
