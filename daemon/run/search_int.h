/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capacity search (the run's "search" block, config_search.h), for
 * search.c (probes and bisection) and search_out.c (its records and
 * replies) only; the run calls them through daemon_int.h.
 *
 * Each probe runs the searched workload open loop at one rate for
 * "windows" windows of "window": the workload is started with a schedule
 * of that length at the probe's rate, and ends by itself (ops due and not
 * done by then are missed, and count as over the target).  Each window's
 * percentile of latency from the intended time is compared with the
 * target; the probe is below it when most windows are.  The first probe
 * runs at "min", the second at "max", then each at the middle of the
 * highest rate below and the lowest above, until they are within
 * "resolution" of each other: the answer is the highest rate below, and
 * the confidence how many windows of the probes on either side agreed.
 * Each probe is a {"type": "search", "probe", "rate", "p50_us", "p99_us",
 * "p999_us", "windows", "agreed", "verdict"} record of the run's log (the
 * curve), the answer a {"type": "search", "answer_rate", ...} record; a
 * resumed run reads them back and goes on with the probe it was in.
 */
#ifndef SOAK_SEARCH_INT_H
#define SOAK_SEARCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "config/config.h"
#include "hist.h"
#include "workload/stats.h"

#include "daemon_int.h"

struct search_window {
	struct hist latency;
	struct hist missed_wait;    /* the missed ops' waits, in latency too */
	uint64_t count, errors, missed, intervals, late_intervals;
	/* Intervals in which an object workload prefilled its pool (each
	 * probe starts it anew): not judged (search.c), only counted. */
	uint64_t prefill_intervals, prefill_count, prefill_missed;
};

/* Ticks a probe that cannot start is tried again before the search ends
 * (a device still holding the last probe's ops lets go within them). */
#define SEARCH_START_TRIES 60u

struct search {
	const struct search_config *cfg;
	const char *run_name;
	uint64_t interval_ns;
	size_t slot;
	const struct workload_config *orig;   /* the workload's definition as configured */
	struct workload_config wcfg;          /* the same, at the probe's rate */
	size_t n_ops;
	const char *op_names[STATS_MAX_OPS];
	double op_share[STATS_MAX_OPS];  /* 0: prefill, cleanup, audit */
	int prefill_op;                  /* the object engine's "prefill" op; -1: none */
	double lo, hi;              /* highest rate below the target, lowest above; 0: none yet */
	json_t *lo_probe, *hi_probe; /* their records */
	size_t probes;              /* probes judged */
	double rate;                /* the probe running (or the soak's rate) */
	struct search_window win[SEARCH_MAX_WINDOWS];
	struct hist all;            /* the probe's latencies, for its curve point */
	struct hist all_missed;     /* the missed ops' waits among them */
	bool soaking;
	/* Resumed between probes, or a probe that could not start: the next
	 * one starts, nothing to judge. */
	bool restart_pending;
	unsigned start_failures;    /* in a row, of the probe at rate */
	const char *gave_up;        /* why the search ended without its bracket */
	uint64_t intervals_seen;     /* since the last probe was judged */
	json_t *curve;              /* the probes' records, in order */
	json_t *answer;             /* NULL: still searching */
};

/* search.c */
void search_interval_seen(void *userdata, size_t slot, bool generator_late,
			  const struct op_stats *ops, size_t n_ops, uint64_t sched_ns);
/* The record of the probe just held (w: the searched workload): its
 * windows, its verdict. */
json_t *search_judge_probe(struct search *s, const struct workload *w);
/* A probe's record: what the bisection does next. */
void search_apply_probe(struct search *s, json_t *probe);
/* The rate of the probe to run next, from what was judged. */
double search_next_rate(const struct search *s);
bool search_done(const struct search *s);
json_t *search_answer_record(const struct search *s);
void search_reset_windows(struct search *s);

/* search_out.c */
void search_publish(struct daemon *d, json_t *record);
int search_read_back(struct search *s, const char *log_path);

#endif
