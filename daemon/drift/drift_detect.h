/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef SOAK_DRIFT_DETECT_H
#define SOAK_DRIFT_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/run_config.h"
#include "hist.h"

/*
 * The change-point test of one op (pure: no clock, no I/O; tests feed it
 * intervals).  Two windows of W intervals are compared: the reference, the
 * first W intervals after the op starts being measured (or after its
 * scheduled rate changes: a new load is a new reference), and the test
 * window, the latest W intervals, once they no longer overlap it.
 *
 *   p99, p999   the reference's merged latency histogram gives its p99
 *               (p99.9); in the test window the share of ops slower than
 *               `ratio` times it is below 1% (0.1%) while nothing
 *               changed.  The alarm needs both an effect (that share at
 *               least `share` times 1% (0.1%): the window's p98.5 or so
 *               `ratio` times the reference's p99) and significance (a
 *               binomial z-score of at least `z` against 1%): the first
 *               keeps huge windows from alarming on a trifle or on the
 *               jitter of a busy host, the second small ones on chance.
 *               Only when the reference had DRIFT_MIN_TAIL ops above its
 *               percentile (2 000 ops for p99, 20 000 for p99.9): a
 *               percentile of fewer is too uncertain to test against.
 *   throughput  ops completed per second fell below (1 - drop) times the
 *               reference's, at the same scheduled rate.
 *   errors      the error rate rose to at least `effect` times the
 *               reference's (with one error added to it, so a clean
 *               reference is not zero), with z at least `z` and at least 5
 *               errors.
 *
 * A test fails only when, besides the window as a whole, most of its
 * intervals (more than half) fail on their own (p99, p999: the share above
 * `ratio` times the reference at least `share` times 1%, with a z-score of 3
 * or more for the interval's ops; throughput: under
 * (1 - drop) of the reference's rate; errors: any): a stall shorter than
 * half the window, which the whole window's sums would show, is no drift.
 * A metric alarms once, when its test starts failing, and is re-armed
 * when no more than a quarter of the window's intervals fail alone.
 */

#define DRIFT_MIN_TAIL 20

struct drift_params {
	unsigned window;            /* intervals per window */
	unsigned metrics;           /* 1 << enum drift_metric */
	double z;
	double ratio, share;        /* p99, p999: how much slower, how many more */
	double effect;              /* errors: how many times the rate */
	double drop;                /* throughput */
};

void drift_params_from_config(const struct drift_config *cfg, uint64_t interval_ns,
			      struct drift_params *ret);

/* One interval of the test window: what the tests need of it. */
struct drift_sample {
	uint64_t n;                 /* latencies recorded */
	uint64_t above99, above999; /* of them, above the reference's p99, p99.9 */
	uint64_t completed, errors;
	double secs;
	unsigned failing;           /* 1 << metric: the interval fails alone */
};

struct drift_op {
	struct drift_params p;
	struct hist ref;            /* the reference being gathered */
	unsigned ref_intervals;
	double ref_rate;            /* scheduled ops/s of the reference */
	uint64_t ref_completed, ref_errors;
	double ref_secs;
	uint64_t thr99, thr999;     /* the reference's p99 and p99.9, ns */
	bool ref_done;
	struct drift_sample *ring;  /* [p.window] */
	unsigned ring_n, ring_pos;
	bool active[DRIFT_METRICS];
};

/* What a test found, for the alarm's message. */
struct drift_finding {
	enum drift_metric metric;
	double observed, expected;  /* share above (p99/p999), ops/s, error rate */
	uint64_t ref_ns;            /* p99/p999: the reference's latency */
	double ratio;               /* p99/p999: ops slower than ratio * ref_ns counted */
	uint64_t n;                 /* ops in the test window */
};

int drift_op_init(struct drift_op *o, const struct drift_params *p);
void drift_op_free(struct drift_op *o);
/* Starts over: a new reference. */
void drift_op_reset(struct drift_op *o);
/*
 * Feeds one closed interval: lat (its latency histogram), completed and
 * errors, its length and its scheduled rate (0: closed loop).  Writes the
 * metrics that began alarming with this interval to ret (at most
 * DRIFT_METRICS) and returns how many.
 */
size_t drift_op_feed(struct drift_op *o, const struct hist *lat, uint64_t completed,
		     uint64_t errors, double secs, double rate, struct drift_finding *ret);

#endif
